"""The questions an agent asks of a graph it keeps as memory, as tools: a name, a description, a
JSON schema of the inputs, and a function over the Python API returning JSON.

Each tool answers what a command answers with ``--json`` (``whatif``, ``why``, ``whynot``,
``robustness``, ``contradictions``, ``show``, ``ask``, ``add``), through the same functions, so
its answer is the command's; ``search`` ranks what stands (retrieval/standing.py).  A call opens
the graph as the command would (opening reads metadata only), so every answer reads the graph's
latest version, or the version ``at`` names.  ``add`` is listed only when the server was started
with it allowed.  Nothing here knows MCP: ``MemoryTools.call`` raises PolygraphError on a bad
question and server.py turns that into a tool error.
"""

from __future__ import annotations

import itertools

from pathlib import Path

from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.kinds import KINDS, check_kinds
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.store.rows import LAYERS
from polygraph_logic.memory.schema import check_arguments, tool_schemas
from polygraph_logic.query.evidence import EvidenceView, Requirement
from polygraph_logic.query.whatif import POLICIES, Deletion, check_policy, requirement_marks, what_if


class MemoryTools:
    """The tools over one graph: ``specs()`` lists them, ``call(name, arguments)`` answers one."""

    def __init__(self, graph: str | Path, at: int | None = None, policy: str = "trust-all",
                 allow_add: bool = False, authorization: str | Path | None = None):
        if allow_add and at is not None:
            raise PolygraphError("bad_argument", "--allow-add appends to the latest version: it cannot be "
                                                 "given with --at")
        self.path, self.at, self.policy, self.allow_add = str(graph), at, check_policy(policy), allow_add
        # ``authorization`` (a policy file, graph/authorization.py): add refuses what it does not
        # authorize (and records the file), a require counts only what it authorizes
        self.authorization, self.requirements = authorization, None
        if authorization is not None:
            from polygraph_logic.graph.authorization import as_policy  # start-up time: only with a policy
            self.requirements = as_policy(authorization)
        with self._open() as opened:  # a graph that does not open is refused now, not at the first call
            opened.counts()
        self._standing = None  # (version, StandingSearch): built on the first search, again after a version

    def _open(self) -> Graph:
        return Graph(self.path, at=self.at)

    def specs(self) -> list[dict]:
        """Returns the tools offered: ``{"name", "description", "input_schema"}`` each."""
        return [spec for spec in tool_schemas(self.policy, POLICIES, KINDS, LAYERS)
                if spec["name"] != "add" or self.allow_add]

    def call(self, name: str, arguments: dict | None) -> dict:
        """Returns the JSON answer of one tool; a bad question raises PolygraphError."""
        specs = {spec["name"]: spec for spec in self.specs()}
        if name not in specs:
            hint = " (started without --allow-add)" if name == "add" else ""
            raise PolygraphError("unknown_tool", f"no tool named {name!r}{hint}; the tools are: {', '.join(specs)}")
        arguments = check_arguments(specs[name]["input_schema"], arguments or {})
        return getattr(self, f"_{name}")(arguments)

    # --- the questions ---------------------------------------------------------------------
    def _whatif(self, a: dict) -> dict:
        with self._open() as graph:
            outcome = what_if(graph, _deletion(a), self._policy(a), exact=a.get("exact", False),
                              require=_requirement(a, self.requirements))
            return outcome.to_json(listing=a.get("list", False), graph=graph)

    def _why(self, a: dict) -> dict:
        from polygraph_logic.query.explain import Explainer, why  # start-up time: loaded when asked
        with self._open() as graph:
            _known(graph, a["artifact"])
            result = why(graph, a["artifact"], Explainer(graph), trees=a.get("trees", 1),
                         distrust=check_kinds(a.get("distrust_kinds", ())), sets=a.get("sets"))
            require = _requirement(a, self.requirements)
            if require:
                result.update(requirement_marks(graph, result, require))
        result["derivations"] = [tree.lines() if tree else None for tree in result["derivations"]]
        return result

    def _whynot(self, a: dict) -> dict:
        from polygraph_logic.query.explain import whynot  # start-up time: loaded when asked
        with self._open() as graph:
            _known(graph, a["artifact"])
            return whynot(graph, a["artifact"], _deletion(a), self._policy(a))

    def _robustness(self, a: dict) -> dict:
        from polygraph_logic.query.explain import robustness  # start-up time: loaded when asked
        with self._open() as graph:
            _known(graph, a["artifact"])
            return robustness(graph, a["artifact"], distrust=check_kinds(a.get("distrust_kinds", ())))

    def _contradictions(self, a: dict) -> dict:
        from polygraph_logic.query.contradictions import contradictions, count  # start-up time: loaded when asked
        asked = _deletion(a) or None
        with self._open() as graph:
            total = count(graph)
            listed = [found.to_json() for found in contradictions(graph, a.get("limit"), a.get("hitting", 3),
                                                                  prefer=a.get("prefer"), deletion=asked)]
        return {"contradictions": total, **({} if asked is None else {"deletion": str(asked)}), "listed": listed}

    def _show(self, a: dict) -> dict:
        from polygraph_logic.query.listing import Listing  # start-up time: loaded when asked
        with self._open() as graph:
            report = Listing(graph, a.get("layers"), a.get("limit"), _requirement(a, self.requirements)).to_json()
            report["artifacts"] = list(report["artifacts"])
            return report

    def _ask(self, a: dict) -> dict:
        from polygraph_logic.query.lazy_facts import answers  # start-up time: loaded when asked
        with self._open() as graph:
            found = itertools.islice(answers(graph, a["atom"], _deletion(a) or None), a.get("limit"))
            return {"question": a["atom"], "answers": [answer.to_json(a.get("sets", 3)) for answer in found]}

    def _search(self, a: dict) -> dict:
        from polygraph_logic.retrieval.standing import StandingSearch  # start-up time: numpy and BM25, when asked
        with self._open() as graph:
            version = graph.version_read()
            if self._standing is None or self._standing[0] != version:
                self._standing = (version, StandingSearch(graph))
            return self._standing[1].search(a["query"], a.get("limit", 10), _deletion(a), self._policy(a),
                                            _requirement(a, self.requirements), a.get("layers"), graph=graph)

    def _add(self, a: dict) -> dict:
        from polygraph_logic.graph.ledger import add  # start-up time: loaded when asked
        if "assertions_file" not in a and "receipts_file" not in a:
            raise PolygraphError("bad_argument", "add needs assertions_file, receipts_file or both")
        paths = {role: str(Path(a[f"{role}_file"]).resolve()) for role in ("assertions", "receipts")
                 if f"{role}_file" in a}
        command = "polygraph mcp (tool add)" + "".join(f" --{role} {path}" for role, path in paths.items())
        report = add(self.path, paths.get("assertions"), paths.get("receipts"), full=a.get("full", False),
                     command=command, authorization=self.authorization)
        self._standing = None
        return report.to_json()

    def _policy(self, a: dict) -> str:
        return check_policy(a.get("policy", self.policy))


def _known(graph: Graph, artifact: str) -> None:
    """An unknown artifact is ``unknown_artifact`` with close ids, as the commands say it."""
    if not graph.has_artifact(artifact):
        raise PolygraphError("unknown_artifact", f"no artifact named {artifact!r}{graph.artifact_hint(artifact)}")


def _deletion(a: dict) -> Deletion:
    """The deletion the arguments name, as the deletion flags of the commands name it."""
    raw = bool(a.get("raw", False))
    view = EvidenceView.parse(a.get("as_of"), a.get("stale_after"), a.get("scope"), raw)
    names = [tuple(dict.fromkeys(a.get(key, ()))) for key in ("retract_sources", "revoke_relations", "assertions")]
    return Deletion(*names, check_kinds(a.get("distrust_kinds", ())), view, raw)


def _requirement(a: dict, authorization=None) -> Requirement | None:
    """``require`` as ``--require`` takes it; ``authorization`` (a Policy): only what it authorizes counts."""
    return Requirement.parse(a.get("require"), authorization if a.get("require") else None)
