"""Erasure: ``purge`` removes the content of assertions from every version of a graph, keeping their
ids and hashes, as one recorded version.

    report = purge("g.graph", sources=["PMID:1"])     # or assertions=["a12"]
    report.version, report.purged                      # 5, {"a12": "<sha256 of its record>"}

A takedown must not leave the text readable at an earlier version, nor break the history.  The
purging version does what applying the deletion of those assertions does (query/applied.py, under
``trust-all``: they are retired, the artifacts resting only on them dropped, the other labels
restricted), so the graph it leaves is the graph built without them; and it erases, in every
version, the assertions' subject, predicate, object and text and the content of each fact (and
its artifact) that the deletion kills, since those rested only on the purged content.  Ids,
numbers, labels and sources stay, so a what-if at any version gives the verdicts it gave; each
purged assertion's record is kept as its sha256 (``purged`` in the version's record), so one
holding the text can show it was the one purged.  The hash chain still verifies: each rewritten
version's new content digest is recorded by the purge (graph/store/chain.py).  It is one write on
either form (a file's transaction; a folder's version folder, renamed into place, holding the
rewritten tables until they replace the old ones), and the old bytes are gone from the disk's
files: a file is compacted after the commit, a folder's old Parquet files are replaced.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.circuit_build import inherited_circuit
from polygraph_logic.graph.store.backend import compact_graph, write_version
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.store.versions import command_line, release
from polygraph_logic.query.applied import applied_rows, write_applied
from polygraph_logic.query.whatif import Deletion, what_if


@dataclass
class PurgeReport:
    """What a purge did: its version, the purged ids with their records' sha256, what it erased."""

    version: int
    purged: dict[str, str] = field(default_factory=dict)
    facts: int = 0  # facts (and their artifacts) whose content was erased
    artifacts: int = 0  # artifact rows (every version) whose content was erased
    rewritten: list[int] = field(default_factory=list)  # earlier versions whose rows changed

    def to_json(self) -> dict:
        return dict(self.__dict__)


def record_hash(record: dict) -> str:
    """The sha256 of an assertion's JSON Lines record (keys sorted): what a purge keeps of it."""
    return hashlib.sha256(json.dumps(record, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def purge(graph_path: str | Path, assertions=(), sources=(), command: str | None = None) -> PurgeReport:
    """Erases the named assertions (by id, or every one of a source) from every version of the graph
    at ``graph_path`` as one new version; returns what it did (see the module)."""
    path = Path(graph_path)
    deletion = Deletion(sources=tuple(dict.fromkeys(sources)), assertions=tuple(dict.fromkeys(assertions)), raw=True)
    if not (deletion.sources or deletion.assertions):  # the raw view alone names nothing to purge
        raise PolygraphError("bad_argument", "name what to purge: --assertion ID or --source S")
    with Graph(path) as graph:
        outcome = what_if(graph, deletion, "trust-all")  # unknown names: an error, nothing written
        rows = applied_rows(graph, outcome)
        hashes = {}
        for name in sorted(outcome.deleted, key=lambda a: (len(a), a)):
            hashes[name] = record_hash(graph.assertions[name].to_json())
        expected = graph.version_read()
        had = graph.has_circuit()
    killed = [(relation, args) for relation, args, groups, _ in rows.facts if not groups]
    report = PurgeReport(0, hashes)
    record = {"action": "purge", "release": release(), "purged": hashes,
              "asked": {k: list(getattr(deletion, k)) for k in ("sources", "assertions") if getattr(deletion, k)},
              "dropped_artifacts": len(rows.dead)}

    def write(writer) -> None:
        write_applied(writer, rows)
        digests, report.facts, report.artifacts = writer.erase(rows.assertions, killed)
        record["rewritten"] = {str(v): d for v, d in digests.items()}
        record["erased"] = {"facts": report.facts, "artifact_rows": report.artifacts}
        report.rewritten = sorted(digests)

    report.version = write_version(path, "purge", command or command_line(), record, write, expected,
                                   inherited_circuit(had))
    compact_graph(path)
    return report


def purged_records(rows: list[dict]) -> dict[int, dict[str, str]]:
    """{version: {assertion id: sha256}} of the purges among a graph's version rows."""
    return {row["version"]: row["record"].get("purged", {}) for row in rows if row["action"] == "purge"}


__all__ = ["PurgeReport", "purge", "purged_records", "record_hash"]
