"""The tools' descriptions and JSON schemas, and the check of a call's arguments against them.

The schemas use the keywords every MCP client reads (``type``, ``properties``, ``required``,
``enum``, ``items``, ``minimum``, ``maximum``, ``default``, ``description``); a call is checked
here, by the same schema, so that a bad argument is a ``bad_argument`` naming it (an unknown
policy ``unknown_policy``, an unknown kind ``unknown_kind``, as the commands say them).
"""

from __future__ import annotations

from polygraph_logic.errors import PolygraphError
from polygraph_logic.query.policies import check_policy


def _text(description: str) -> dict:
    return {"type": "string", "description": description}


def _names(description: str, choices=None) -> dict:
    items = {"type": "string", **({"enum": list(choices)} if choices else {})}
    return {"type": "array", "items": items, "description": description}


def _count(description: str, default: int | None = None, minimum: int = 1, maximum: int | None = None) -> dict:
    bounds = {"minimum": minimum, **({"maximum": maximum} if maximum is not None else {})}
    return {"type": "integer", **bounds, **({"default": default} if default is not None else {}),
            "description": description}


def _flag(description: str) -> dict:
    return {"type": "boolean", "default": False, "description": description}


def _tool(name: str, description: str, properties: dict, required=()) -> dict:
    return {"name": name, "description": description,
            "input_schema": {"type": "object", "properties": properties, "required": list(required),
                             "additionalProperties": False}}


def tool_schemas(policy: str, policies, kinds, layers) -> list[dict]:
    """Returns every tool's ``{"name", "description", "input_schema"}`` (``policy``: the default policy)."""
    artifact = {"artifact": _text("an artifact id, e.g. merge:mapk-erk (search finds ids)")}
    chosen = {"policy": {"type": "string", "enum": list(policies), "default": policy,
                         "description": "cleanup policy: trust-all trusts every label; deployed deletes only claims "
                                        "all of whose assertions are gone; flat deletes whatever a deletion's flat "
                                        "lineage touches; distrust:LAYER removes every touched artifact of a layer"}}
    distrust = {"distrust_kinds": _names("kinds of assertions that cannot support (as --distrust-kind)", kinds)}
    deletion = {
        "retract_sources": _names("delete every assertion of these sources (as --retract-source)"),
        "revoke_relations": _names("delete every assertion with these predicates (as --revoke-relation)"),
        "assertions": _names("delete these assertions by id (as --assertion)"),
        **distrust,
        "as_of": _text("read the evidence as known at this time (ISO 8601, or 'now'), as --as-of"),
        "stale_after": _text("leave out evidence older than this (90d, 12h, 2w, P30D), as --stale-after"),
        "scope": _text("only evidence authorized for this scope, as --scope"),
        "raw": _flag("count every stored assertion, superseded, retracted and expired ones too (the history "
                     "view), as --raw; by default a question leaves out what is invalidated or expired now"),
    }
    require = {"require": _names("keep (or mark) only artifacts with a support set made only of these kinds "
                                 "(as --require; a verification promotes what it names)", kinds)}
    only = {"layers": _names("only these layers", layers)}
    return [
        _tool("search", "What the graph holds about a question, among the artifacts that stand: BM25 over every "
                        "artifact's text (a claim's or edge's triple, a merge's names, a summary's sentences), "
                        "serving only what stands under the policy after the deletion and evidence view (nothing "
                        "dead), and with require only what has a support set of the required kinds; a summary "
                        "some of whose sentences fall is served trimmed to the others. Answers results (id, "
                        "layer, score, text) and how many artifacts were left out.",
              {"query": _text("words to search for"),
               "limit": _count("at most this many results", 10, maximum=100), **chosen, **deletion, **require,
               **only}, ["query"]),
        _tool("whatif", "What stands and what falls if sources, relations or assertions were deleted, under a "
                        "cleanup policy; nothing changes. The answer of `polygraph whatif --json` (with list: "
                        "`--list`): touched, dead and kept artifacts, counts by layer, trimmed summaries.",
              {**deletion, **chosen, **require, "list": _flag("each dead artifact as {id, layer, triple}"),
               "exact": _flag("on a graph written before circuits: settle capped dead verdicts by re-derivation")}),
        _tool("why", "An artifact's label: each support set with its assertions (id, source, kind, triple) and "
                     "derivation trees. The answer of `polygraph why --json`.",
              {**artifact, "trees": _count("derivation trees for this many support sets", 1, minimum=0),
               "sets": _count("list at most this many support sets, the smallest first (a capped label's "
                              "expanded from the circuit)", minimum=0),
               **distrust, **require}, ["artifact"]),
        _tool("whynot", "Under a deletion and a policy: whether an artifact stands, and which deleted assertions "
                        "(and sources) broke each of its support sets. The answer of `polygraph whynot --json`.",
              {**artifact, **deletion, **chosen}, ["artifact"]),
        _tool("robustness", "How robust an artifact is: the fewest sources (and evidential origins) whose "
                            "retraction kills it, its paths, distinct origins, independent supports and the echo "
                            "flag (many paths, one origin). The answer of `polygraph robustness --json`.",
              {**artifact, **distrust}, ["artifact"]),
        _tool("contradictions", "The graph's contradictions, each with its two sides, its label, the fewest "
                                "sources (and assertions) whose retraction resolves it and its balance of "
                                "origins; with a deletion, the balance after it. The answer of "
                                "`polygraph contradictions --json`.",
              {"limit": _count("at most this many contradictions"),
               "hitting": _count("at most this many resolving sets per contradiction", 3),
               "prefer": {"type": "string", "enum": list(kinds),
                          "description": "also list the smallest sets of assertions less authoritative than this "
                                         "kind whose deletion resolves each"},
               **deletion}),
        _tool("show", "The graph's artifacts with their labels, layer by layer; with require, whether each meets "
                      "the requirement. The answer of `polygraph show --json`: every artifact unless limit says "
                      "how many per layer (give one on a large graph; search finds artifacts by their text).",
              {**only, "limit": _count("at most this many artifacts per layer"), **require}),
        _tool("ask", "The facts matching an atom such as edge(\"MAPK/ERK\", _, _) (a variable or _ matches any "
                     "value), stored or lazy, each with its support sets and, with a deletion, whether it holds. "
                     "The answer of `polygraph ask --json`: every matching fact unless limit says how many "
                     "(give one when the atom binds few arguments on a large graph).",
              {"atom": _text("an atom, e.g. edge(\"a\", \"RO:0002211\", _)"),
               "sets": _count("support sets shown per fact", 3, minimum=0),
               "limit": _count("at most this many facts, the first in the order of their arguments"),
               **deletion}, ["atom"]),
        _tool("add", "Append new assertions and receipts (JSON Lines files on the server's machine) to the graph "
                     "as a new version, as `polygraph add --json` does: checked first (nothing is written if a "
                     "line is bad), atomic, nothing overwritten. Offered only when the server was started with "
                     "--allow-add.",
              {"assertions_file": _text("a JSON Lines file of new assertions (a path on the server's machine; "
                                        "relative to the server's working folder)"),
               "receipts_file": _text("a JSON Lines file of new receipts"),
               "full": _flag("re-evaluate the union in full (as build would)")}),
    ]


def check_arguments(schema: dict, arguments: dict) -> dict:
    """Returns the arguments when they fit the tool's schema; raises PolygraphError naming the first
    that does not (``unknown_policy`` and ``unknown_kind`` for names the enums do not hold)."""
    if not isinstance(arguments, dict):
        raise PolygraphError("bad_argument", "a tool's arguments are a JSON object")
    properties = schema["properties"]
    for name in schema["required"]:
        if name not in arguments:
            raise PolygraphError("bad_argument", f"the argument {name!r} is required")
    for name, value in arguments.items():
        if name not in properties:
            raise PolygraphError("bad_argument", f"no argument named {name!r}; the arguments are: "
                                                 f"{', '.join(properties)}")
        _check(name, properties[name], value)
    return arguments


def _check(name: str, spec: dict, value) -> None:
    kind = spec["type"]
    if kind == "array":
        if not isinstance(value, list):
            raise PolygraphError("bad_argument", f"{name} is a list of strings, not {_shown(value)}")
        for item in value:
            _check(name, spec["items"], item)
        return
    fits = {"string": isinstance(value, str), "boolean": isinstance(value, bool),
            "integer": isinstance(value, int) and not isinstance(value, bool)}[kind]
    if not fits:
        raise PolygraphError("bad_argument", f"{name} is {'an' if kind == 'integer' else 'a'} {kind}, not "
                                             f"{_shown(value)}")
    if name == "policy" and value not in spec.get("enum", ()):  # or one composed per layer, as the commands take
        check_policy(value)
        return
    if "enum" in spec and value not in spec["enum"]:
        code = "unknown_policy" if name == "policy" else "unknown_kind" if "verification" in spec["enum"] else \
            "bad_argument"
        what = {"policy": "policy", "layers": "layer", "prefer": "kind"}.get(name, "kind" if code == "unknown_kind"
                                                                              else name)
        raise PolygraphError(code, f"unknown {what} {value!r}; choose one of: {', '.join(spec['enum'])}")
    if kind == "integer" and not spec["minimum"] <= value <= spec.get("maximum", value):
        bounds = f"between {spec['minimum']} and {spec['maximum']}" if "maximum" in spec else \
            f"at least {spec['minimum']}"
        raise PolygraphError("bad_argument", f"{name} must be {bounds}, not {value}")


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
