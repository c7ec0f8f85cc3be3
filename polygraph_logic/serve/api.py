"""The JSON functions of the explorer: one method per endpoint, each over the Python API.

``GraphApi`` holds one open graph and a lock: the graph's SQLite connection and the
explainer's proof state are shared, so requests from the server's threads take turns.
Every method takes the request's parameters (see params.py) and returns JSON-ready
data, or raises ``ApiError``; nothing here writes to the graph file.
"""

from __future__ import annotations

import io
import threading
from collections import OrderedDict
from pathlib import Path

from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.store.rows import LAYERS
from polygraph_logic.query.whatif import POLICIES, Deletion, Outcome, what_if
from polygraph_logic.serve import params as P
from polygraph_logic.graph.store.search import (
    describe_ids,
    entity_artifacts,
    explain,
    find_entities,
    find_named_artifacts,
    known,
    name_counts,
    sentences_of,
    sentences_of_many,
)
from polygraph_logic.serve.params import ApiError, Params

FORMATS = {"trig": ("application/trig", ".trig"), "nquads": ("application/n-quads", ".nq"),
           "turtle": ("text/turtle", ".ttl"), "jsonld": ("application/ld+json", ".jsonld")}
_CACHED_OUTCOMES = 64
_CACHED_SENTENCES = 10_000
MAX_DESCRIBED = 10_000
# what the page leaves out of the chosen policy's outcome (``lean=1``): it reads neither
_LEAN_OMITS = ("triples", "kept")


class GraphApi:
    """The explorer's endpoints over one graph file, opened read-only; ``authorization`` (a policy
    file or Policy, graph/authorization.py): a ``require`` counts only the assertions it authorizes."""

    def __init__(self, path: str | Path, at: int | None = None, authorization=None):
        if authorization is not None:  # read once, and a bad policy refused before the graph opens
            from polygraph_logic.graph.authorization import as_policy  # noqa: PLC0415  (only with a policy)
            authorization = as_policy(authorization)
        self.authorization = authorization
        self.graph = Graph(path, at=at)
        self.lock = threading.RLock()
        self._explainer = None
        self._outcomes: OrderedDict[tuple, Outcome] = OrderedDict()
        self._jsons: dict[tuple, dict] = {}       # (outcome key, "full"|"brief") -> its JSON (made once)
        self._sentences: dict[str, list[dict]] = {}  # summary id -> its sentences (fixed for the graph)
        self._top: dict[str, list[dict]] = {}

    def close(self) -> None:
        self.graph.close()

    # --- the graph ---------------------------------------------------------------------
    def info(self, params: Params) -> dict:
        """Returns the graph's counts per layer, assertions, sources, and the policies it knows."""
        with self.lock:
            info = self.graph.info()
            versions = self.graph.version_rows()
        latest = versions[-1]["version"]
        return {"file": Path(info["file"]).name, "assertions": info["assertions"], "sources": info["sources"],
                "artifacts": info["artifacts"], "layers": {k: v["artifacts"] for k, v in info["layers"].items()},
                "inexact": {k: v.get("inexact", 0) for k, v in info["layers"].items()},
                "policies": list(POLICIES), "formats": list(FORMATS),
                "version": self.graph.at or latest, "latest": latest, "at": self.graph.at,
                "versions": [{k: v[k] for k in ("version", "time", "action", "parent")} for v in versions]}

    def search(self, params: Params) -> dict:
        """Returns completions for ``q``: artifacts (by id, or claims and edges by an entity's
        name), entities, sources and relations; prefix matches through the indexes."""
        query = P.one(params, "q").strip()
        limit = P.integer(params, "limit", 10, 1, 100)
        if not query:
            return {"query": query, "artifacts": [], "entities": [], "sources": [], "relations": []}
        with self.lock:
            graph = self.graph
            variants = _variants(query)
            ids = list(dict.fromkeys(i for v in variants for i in graph.artifact_ids(v, limit)))[:limit]
            if len(ids) < limit:
                ids += [i for i in find_named_artifacts(graph, variants, limit) if i not in ids][:limit - len(ids)]
            artifacts = [_brief(graph.artifact(i)) for i in ids]
            sources = sorted({s for v in variants for s in graph.complete("source", v, limit)})[:limit]
            relations = sorted({s for v in variants for s in graph.complete("predicate", v, limit)})[:limit]
            return {"query": query, "artifacts": artifacts, "entities": find_entities(graph, variants, limit),
                    "sources": name_counts(graph, "source", sources),
                    "relations": name_counts(graph, "predicate", relations)}

    def names(self, params: Params) -> dict:
        """Returns the sources (``kind=source``) or relations (``kind=relation``) starting with
        ``prefix``, each with its number of assertions, for the deletion checkboxes."""
        kind = P.one(params, "kind", "source")
        column = {"source": "source", "relation": "predicate"}.get(kind)
        if column is None:
            raise ApiError(400, "bad_parameter", f"kind must be source or relation, not {kind[:40]!r}")
        prefix = P.one(params, "prefix", "")
        limit = P.integer(params, "limit", 200, 1, P.MAX_LIMIT)
        with self.lock:
            names = self.graph.complete(column, prefix, limit + 1)
            return {"kind": kind, "prefix": prefix, "more": len(names) > limit,
                    "names": name_counts(self.graph, column, names[:limit])}

    def resolve(self, params: Params) -> dict:
        """Sorts a pasted list (``names``: separated by commas or white space) into the sources,
        relations and assertion ids the graph knows, and the names it does not."""
        names = P.pasted(params, "names")
        if len(names) > 100_000:
            raise ApiError(413, "too_many_names", "paste at most 100,000 names at once")
        found: dict[str, list[str]] = {"sources": [], "relations": [], "assertions": []}
        with self.lock:
            for field, column in (("sources", "source"), ("relations", "predicate"), ("assertions", "id")):
                names_known = known(self.graph, column, names)
                found[field] = [n for n in names if n in names_known]
        matched = {n for v in found.values() for n in v}
        return {**found, "unknown": [n for n in names if n not in matched]}

    def artifact(self, params: Params) -> dict:
        """Returns one artifact: content, label, support sets with each assertion's source and
        evidence, a derivation tree, robustness, its sentences, and the entities and edges around it."""
        from polygraph_logic.query.explain import Explainer, robustness, why  # loaded on the first request that needs it (start-up time)
        artifact_id = P.one(params, "id")
        with self.lock:
            graph = self.graph
            if not graph.has_artifact(artifact_id):
                close = graph.artifact_ids(artifact_id[:max(1, len(artifact_id) - 3)], 5)
                hint = f"; did you mean {', '.join(close)}?" if close else ""
                raise ApiError(404, "not_found", f"no artifact named {artifact_id[:80]!r}{hint}")
            artifact = graph.artifact(artifact_id)
            if self._explainer is None:
                self._explainer = Explainer(graph)
            result = why(graph, artifact_id, self._explainer)
            tree = result["derivations"][0] if result["derivations"] else None
            supports = [[_evidence(graph, a["id"]) for a in support] for support in result["support_sets"]]
            around = _around(graph, artifact)
            extra = {"contradiction": _contradiction(graph, artifact)} if artifact.layer == "contradiction" else {}
            return {**_brief(artifact), **extra, "content": artifact.content, "label": result["label"],
                    "exact": result["exact"], "support_sets": supports,
                    "derivation": _tree(tree) if tree is not None else None,
                    "robustness": robustness(graph, artifact_id),
                    "sentences": sentences_of(graph, artifact_id) if artifact.layer == "summary" else [],
                    **around}

    def entity(self, params: Params) -> dict:
        """Returns the claims, edges and merges about an entity (``name``), by layer."""
        name = P.one(params, "name")
        limit = P.integer(params, "limit", 200, 1, P.MAX_LIMIT)
        with self.lock:
            found = entity_artifacts(self.graph, name, limit)
            if not any(found.values()):
                raise ApiError(404, "not_found", f"no claim, edge or merge mentions an entity named {name[:80]!r}")
            named = self.graph.artifacts_named(i for ids in found.values() for i in ids)
            return {"name": name, **{layer: [_brief(named[i]) for i in ids] for layer, ids in found.items()}}

    # --- what-if -----------------------------------------------------------------------
    def outcome(self, deletion: Deletion, policy: str, exact: bool, require=None) -> Outcome:
        """Returns the what-if outcome of a deletion (the last few are cached: undo is free); with
        ``require`` (a query.evidence.Requirement) it marks what does not meet it."""
        key = (deletion, policy, exact, require)
        with self.lock:
            if key in self._outcomes:
                self._outcomes.move_to_end(key)
                return self._outcomes[key]
            try:
                outcome = what_if(self.graph, deletion, policy, exact=exact, require=require)
            except PolygraphError as error:
                raise ApiError(400, error.code, error.message) from None
            self._outcomes[key] = outcome
            for kind in ("full", "brief"):
                self._jsons.pop((key, kind), None)
            while len(self._outcomes) > _CACHED_OUTCOMES:
                old, _ = self._outcomes.popitem(last=False)
                for kind in ("full", "brief"):
                    self._jsons.pop((old, kind), None)
            return outcome

    def _json_of(self, deletion: Deletion, policy: str, exact: bool, kind: str, require=None) -> dict:
        """Returns an outcome's JSON (``full``: as ``whatif --json`` prints it; ``brief``: counts),
        made once per cached outcome: a policy shown again, or an undo, costs no serialising."""
        outcome = self.outcome(deletion, policy, exact, require)
        key = ((deletion, policy, exact, require), kind)
        with self.lock:
            data = self._jsons.get(key)
            if data is None or data["_outcome"] is not outcome:
                made = outcome.to_json(listing=False) if kind == "full" else _brief_outcome(outcome)
                data = self._jsons[key] = {"_outcome": outcome, "json": made}
            return data["json"]

    def whatif(self, params: Params) -> dict:
        """Returns the what-if of a deletion under each requested policy (``policy`` repeated): the
        first in full, with the first ``shown`` touched artifacts described (dead first) and each
        touched summary's sentences; the others (for a side-by-side) as counts only. ``lean=1``
        leaves ``triples`` and ``kept`` out of the first (the page reads neither)."""
        deletion, exact, require = P.deletion(params), P.flag(params, "exact"), P.requirement(params, self.authorization)
        shown = P.integer(params, "shown", 2000, 0, 10**6)
        lean = P.flag(params, "lean")
        outcomes = []
        for i, policy in enumerate(P.policies(params)):
            if i:
                outcomes.append(self._json_of(deletion, policy, exact, "brief", require))
                continue
            data = dict(self._json_of(deletion, policy, exact, "full", require))
            if lean:
                for field in _LEAN_OMITS:
                    data.pop(field, None)
            with self.lock:
                outcomes.append(self._outcome_json(data, shown))
        return {"deletion": str(deletion), "outcomes": outcomes}

    def describe(self, params: Params) -> dict:
        """Returns ``described``: the one-line description of each artifact named by ``id``
        (repeatable; at most 10,000), in the order asked; unknown ids are left out."""
        ids = P.many(params, "id")
        if len(ids) > MAX_DESCRIBED:
            raise ApiError(413, "too_many_ids", f"describe at most {MAX_DESCRIBED:,} artifacts at once")
        with self.lock:
            found = describe_ids(self.graph, ids)
        return {"described": {i: found[i] for i in ids if i in found}}

    def whatif_download(self, params: Params) -> dict:
        """Returns one policy's what-if as ``polygraph whatif --json --list`` prints it."""
        outcome = self.outcome(P.deletion(params), P.policy(P.one(params, "policy", "trust-all")),
                               P.flag(params, "exact"), P.requirement(params, self.authorization))
        return outcome.to_json(listing=True)

    def _outcome_json(self, data: dict, shown: int) -> dict:
        """Adds to an outcome's JSON the first ``shown`` touched artifacts described (dead ones
        first: they are what changes; one query) and each touched summary's sentences."""
        dead = set(data["dead"])
        touched = data["touched"]
        first = ([n for n in touched if n in dead] + [n for n in touched if n not in dead])[:shown]
        found = describe_ids(self.graph, first)
        data["described"] = {n: found[n] for n in first if n in found}
        missing = [s for s in data["summaries"] if s not in self._sentences]
        if missing:
            if len(self._sentences) + len(missing) > _CACHED_SENTENCES:
                self._sentences.clear()
            self._sentences.update(sentences_of_many(self.graph, missing))
        data["summary_sentences"] = {s: [{**entry, "dead": entry["id"] in dead} for entry in self._sentences[s]]
                                     for s in data["summaries"]}
        return data

    def export(self, params: Params) -> tuple[bytes, str, str]:
        """Returns the RDF export (``format``) after the deletion under ``policy``, with its
        content type and file name: what ``polygraph export --retract-source ...`` writes."""
        from polygraph_logic.export import export_graph  # loaded on the first request that needs it (start-up time)
        fmt = P.one(params, "format", "trig")
        if fmt not in FORMATS:
            raise ApiError(400, "bad_parameter", f"format must be one of {', '.join(FORMATS)}, not {fmt[:40]!r}")
        deletion, policy, exact = (P.deletion(params), P.policy(P.one(params, "policy", "trust-all")),
                                   P.flag(params, "exact"))
        buffer = io.BytesIO()
        with self.lock:
            try:
                deletion.numbers(self.graph)
                export_graph(self.graph, buffer, fmt, deletion=deletion or None, policy=policy, exact=exact,
                             require=P.requirement(params, self.authorization))
            except PolygraphError as error:
                raise ApiError(400, error.code, error.message) from None
        content_type, extension = FORMATS[fmt]
        name = Path(self.graph.path).stem + ("-cleaned" if deletion else "") + extension
        return buffer.getvalue(), content_type, name

    def top_sources(self, params: Params) -> dict:
        """Returns the sources whose retraction would kill the most artifacts, with counts per
        layer, under ``policy`` (computed once per policy: one what-if per source)."""
        policy = P.policy(P.one(params, "policy", "trust-all"))
        limit = P.integer(params, "limit", 20, 1, P.MAX_LIMIT)
        from polygraph_logic.query.explain import top_sources  # loaded on the first request that needs it (start-up time)
        with self.lock:
            if policy not in self._top:
                self._top[policy] = top_sources(self.graph, limit=10**9, policy=policy)
            rows = self._top[policy]
        return {"policy": policy, "layers": list(LAYERS), "sources": rows[:limit], "of": len(rows)}


def _brief_outcome(outcome: Outcome) -> dict:
    """Returns an outcome's counts: per layer, summaries, uncertain and demoted (no id lists)."""
    return {"brief": True, "deletion": str(outcome.deletion), "policy": outcome.policy, "exact": outcome.exact,
            "deleted": len(outcome.deleted), "by_layer": outcome.by_layer(), "summaries": outcome.summaries,
            "uncertain": len(outcome.uncertain_ranks), "demoted": len(outcome.demotions),
            "elapsed_ms": round(outcome.elapsed_ms, 3)}


def _variants(query: str) -> list[str]:
    """Returns the query as typed, lower-cased, capitalised and upper-cased (indexed prefixes are
    case-sensitive; these cover how names are usually written)."""
    return list(dict.fromkeys([query, query.lower(), query[:1].upper() + query[1:], query.upper()]))


def _brief(artifact) -> dict:
    out = {"id": artifact.id, "layer": artifact.layer, "text": explain(artifact)}
    if artifact.layer in ("claim", "edge"):
        out["triple"] = list(artifact.fact[1])
    return out


def _evidence(graph: Graph, assertion_id: str) -> dict:
    a = graph.assertions[assertion_id]
    return {"id": a.id, "source": a.source, "triple": [a.subject, a.predicate, a.object], "text": a.text,
            "kind": a.kind, "negated": a.negated}


def _contradiction(graph: Graph, artifact) -> dict:
    """Returns a contradiction's sides (each with its claim or edge artifact) and the smallest
    sets of sources and of assertions whose retraction resolves it (contradictions.resolve)."""
    from polygraph_logic.query.contradictions import resolve  # loaded on the first request that needs it (start-up time)
    found = resolve(graph, artifact).to_json()
    return {k: found[k] for k in ("reason", "sides", "resolve_by_sources", "resolve_by_assertions", "truncated",
                                  "note")}


def _tree(node) -> dict:
    relation, args = node.fact
    return {"fact": f"{relation}({', '.join(map(str, args))})", "rule": node.rule, "assertion": node.assertion,
            "premises": [_tree(p) for p in node.premises]}


def _around(graph: Graph, artifact) -> dict:
    """Returns the entities an artifact is about and a few claims and edges around each."""
    content = artifact.content
    if artifact.layer in ("claim", "edge"):
        entities = [content["subject"], content["object"]]
    elif artifact.layer == "merge":
        entities = list(dict.fromkeys([content.get("canonical"), *content.get("members", [])]))
    else:
        entities = []
    around = {}
    for name in [e for e in entities if isinstance(e, str)][:8]:
        found = entity_artifacts(graph, name, 6)
        around[name] = [i for i in found["claim"] + found["edge"] if i != artifact.id][:6]
    named = graph.artifacts_named(i for ids in around.values() for i in ids)
    neighbours = {name: [_brief(named[i]) for i in ids] for name, ids in around.items()}
    return {"entities": list(neighbours), "neighbours": neighbours}
