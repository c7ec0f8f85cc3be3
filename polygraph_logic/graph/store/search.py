"""Search look-ups (the explorer's): entities, their artifacts, merges and sentences, each through an index.

Entities are the subjects and objects of claims and edges: the facts table indexes the
first and third argument of every fact (``facts_by_k0``, ``facts_by_k2``), so an entity's
claims and edges, and names by prefix, are found without a scan. Merges are found by
member in the merge layer (indexed by layer), the sentences of a summary by
``artifacts_by_summary``.
"""

from __future__ import annotations

import json

from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.store.rows import Artifact, describe

_TRIPLE_LAYERS = ("claim", "edge")


def _ids_of_facts(graph: Graph, numbers: list[int], limit: int) -> list[str]:
    """The ids of the artifacts of these fact numbers, in the order of the numbers given."""
    if not numbers:
        return []
    ids = dict(graph.query("SELECT fact, id FROM artifacts WHERE fact IN (SELECT value FROM json_each(?))",
                           (json.dumps(numbers),)))
    return [ids[n] for n in numbers if n in ids][:limit]


def _holds(graph: Graph, args: str, position: int, name: str) -> bool:
    """True when the fact's argument at ``position`` is ``name`` (a stored key may match more)."""
    decoded = graph.args(args)
    return len(decoded) > position and decoded[position] == name


def find_named_artifacts(graph: Graph, prefixes: list[str], limit: int) -> list[str]:
    """Returns ids of claims, then edges, whose subject starts with one of ``prefixes``."""
    found: list[str] = []
    for relation in _TRIPLE_LAYERS:
        for prefix in prefixes:
            numbers = graph.store.fact_prefix(relation, prefix, 4 * limit)
            found.extend(i for i in _ids_of_facts(graph, numbers, limit) if i not in found)
            if len(found) >= limit:
                return found[:limit]
    return found


def find_entities(graph: Graph, prefixes: list[str], limit: int) -> list[str]:
    """Returns entity names (subjects or objects of claims and edges) starting with a prefix."""
    names: set[str] = set()
    for prefix in prefixes:
        for position in (0, 2):
            for relation in _TRIPLE_LAYERS:
                names.update(name for name in graph.store.argument_names(relation, position, prefix, limit)
                             if isinstance(name, str) and name.startswith(prefix))
    return sorted(names)[:limit]


def entity_artifacts(graph: Graph, name: str, limit: int) -> dict[str, list[str]]:
    """Returns ``{"claim": ids, "edge": ids, "merge": ids}`` of the artifacts about ``name``:
    claims and edges with it as subject or object, merges with it as a member."""
    out: dict[str, list[str]] = {}
    for relation in _TRIPLE_LAYERS:
        ids: list[str] = []
        for position in (0, 2):
            numbers = sorted(row[0] for row in graph.bound_facts(relation, [(position, name)], "num, args")
                             if _holds(graph, row[1], position, name))
            ids.extend(i for i in _ids_of_facts(graph, numbers, limit) if i not in ids)
        out[relation] = ids[:limit]
    rows = graph.query("SELECT id FROM artifacts WHERE layer = 'merge' AND EXISTS (SELECT 1 FROM "
                       "json_each(content, '$.members') WHERE value = ?) ORDER BY num LIMIT ?", (name, limit))
    out["merge"] = [row[0] for row in rows]
    return out


def sentences_of(graph: Graph, summary_id: str) -> list[dict]:
    """Returns the sentences of a sentence-level summary in order: ``{"id", "text"}`` each."""
    rows = graph.query("SELECT s.id, s.content FROM artifacts s JOIN artifacts m ON s.summary = m.num "
                       "WHERE m.id = ? AND s.layer = 'sentence' ORDER BY s.num", (summary_id,))
    return [{"id": id_, "text": _sentence_text(content)} for id_, content in rows]


def sentences_of_many(graph: Graph, summary_ids: list[str]) -> dict[str, list[dict]]:
    """Returns ``{summary id: its sentences}`` (as ``sentences_of``) of many summaries in one query."""
    out: dict[str, list[dict]] = {s: [] for s in summary_ids}
    rows = graph.query("SELECT m.id, s.id, s.content FROM artifacts m JOIN artifacts s ON s.summary = m.num "
                       "WHERE m.id IN (SELECT value FROM json_each(?)) AND s.layer = 'sentence' ORDER BY s.num",
                       (json.dumps(summary_ids),))
    for summary, id_, content in rows:
        out[summary].append({"id": id_, "text": _sentence_text(content)})
    return out


def _sentence_text(content: str) -> str:
    try:
        return json.loads(content).get("text", "")
    except (ValueError, AttributeError):
        return ""


def known(graph: Graph, column: str, names: list[str]) -> set[str]:
    """Returns the ``names`` that occur in an assertion column (source, predicate or id)."""
    assert column in ("source", "predicate", "id")
    rows = graph.query(f"SELECT DISTINCT {column} FROM assertions WHERE {column} IN (SELECT value FROM json_each(?))",
                       (json.dumps(sorted(set(names))),))
    return {row[0] for row in rows}


def name_counts(graph: Graph, column: str, names: list[str]) -> list[dict]:
    """Returns ``[{"name", "assertions"}]``: how many assertions each source or relation has."""
    assert column in ("source", "predicate")
    rows = dict(graph.query(f"SELECT {column}, COUNT(*) FROM assertions WHERE {column} IN "
                            f"(SELECT value FROM json_each(?)) GROUP BY {column}", (json.dumps(names),)))
    return [{"name": n, "assertions": rows.get(n, 0)} for n in names]


def describe_ids(graph: Graph, ids: list[str]) -> dict[str, str]:
    """Returns ``{id: one-line description}`` of artifacts, read by number (labels are not read)."""
    rows = graph.query("SELECT id, layer, content FROM artifacts WHERE num IN (SELECT value FROM json_each(?))",
                       (json.dumps(graph.artifact_numbers(ids)),))
    out = {}
    for id_, layer, content in rows:
        try:
            out[id_] = explain(Artifact(id_, layer, json.loads(content), (), True))
        except (ValueError, KeyError, TypeError, AttributeError):
            out[id_] = ""
    return out


def explain(artifact: Artifact) -> str:
    """Returns an artifact's one-line description (store.describe), a contradiction as its two
    sides and its reason, as `polygraph contradictions` prints it, instead of its JSON content."""
    content = artifact.content
    if artifact.layer != "contradiction" or not content.get("sides"):
        return describe(artifact)

    def side(s: dict) -> str:
        return f"{s['subject']} {'NOT ' if s['negated'] else ''}{s['predicate']} {s['object']}"
    reason = str(content.get("reason", ""))
    why = reason.split(": ", 1)[1] if ": " in reason else ""
    why = why or ("stated and negated" if content["sides"][1]["negated"] else "")
    return f"{side(content['sides'][0])}  vs  {side(content['sides'][1])}" + (f"  ({why})" if why else "")
