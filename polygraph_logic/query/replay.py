"""Replaying a graph's history, and applying a deletion as a version.

``replay(graph, copy)`` rebuilds a graph from what its versions recorded: version 1's
input files and rule files (``build``), then each ``add`` with its files and each
applied deletion with its deletion and policy, in order, into ``copy`` (a file for a
file, a folder built by DuckDB for a folder); then compares the label tables of both
row by row (of files, ``facts`` and ``facts_history``: numbers, arguments, label blobs,
exact flags, versions; of folders, the facts at each version).  Before running it checks every
recorded file against its sha256 and the release that wrote each version, and says
which input changed.

A regenerated version (regenerated.py) is replayed from its recorded receipts file, its
deletion (unless the version before applied it) and the artifacts it replaced.

``apply_version(path, outcome)`` writes what a deletion does (as ``Session.apply``
decides it: dead artifacts dropped, labels restricted, trimmed summaries) as one more
version of the graph at ``path``: the deleted assertions, the dropped artifacts and the
old labels move to the history, so the retraction is part of the record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from polygraph_logic.graph.circuit_build import inherited_circuit
from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.engine_build import build_graph
from polygraph_logic.graph.ledger import add
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.store.backend import compare_labels, copy_graph, graph_digest, store_class, write_version
from polygraph_logic.graph.store.version_write import VersionWriter
from polygraph_logic.graph.store.versions import command_line, release, sha256
from polygraph_logic.query.purge import purge, purged_records
from polygraph_logic.query.applied import applied_rows, write_applied
from polygraph_logic.query.regenerated import regenerate_version
from polygraph_logic.query.whatif import Deletion, what_if


@dataclass
class ReplayReport:
    """What a replay found: the inputs that changed, and whether the label tables are identical."""

    versions: int
    changed: list[str] = field(default_factory=list)  # inputs whose hash differs, missing files, releases
    identical: bool | None = None  # None: not replayed (an input is missing or changed)
    differences: list[str] = field(default_factory=list)
    purged: dict[int, list[str]] = field(default_factory=dict)  # purge version -> the ids it erased

    def to_json(self) -> dict:
        return dict(self.__dict__)


def replay(graph_path: str | Path, out: str | Path, force: bool = False) -> ReplayReport:
    """Rebuilds ``graph_path`` from its recorded inputs into ``out`` and compares the label tables.

    When a recorded file is missing or its hash differs, nothing is replayed unless
    ``force`` (then the current files are used and the comparison shows what changed)."""
    graph_path, out = Path(graph_path), Path(out)
    if out.resolve() == graph_path.resolve():
        raise PolygraphError("in_place", "replay writes a copy; choose a path other than the graph's own")
    with Graph(graph_path) as graph:
        rows = graph.version_rows()
    report = ReplayReport(len(rows))
    report.purged = {v: sorted(ids) for v, ids in purged_records(rows).items()}
    current = release()
    for row in rows:
        record = row["record"]
        for entry in [*record.get("inputs", []), *record.get("rules", [])]:
            found = sha256(entry["file"])
            if found is None:
                report.changed.append(f"version {row['version']}: {entry['file']} is missing")
            elif found != entry["sha256"]:
                report.changed.append(f"version {row['version']}: {entry['file']} changed (sha256 {found[:12]}..., "
                                      f"recorded {entry['sha256'][:12]}...)")
        if record.get("release") not in (None, current):
            report.changed.append(f"version {row['version']}: written by release {record['release']}, "
                                  f"replayed by {current}")
        if row["action"] == "build" and not record.get("inputs"):
            report.changed.append(f"version {row['version']}: its inputs were not recorded")
    missing = [c for c in report.changed if "missing" in c or "not recorded" in c]
    if missing or (report.changed and not force and any("changed" in c for c in report.changed)):
        return report
    for row in rows:
        record, files = row["record"], _files(row["record"])
        if row["action"] == "build":
            _build(graph_path, out, record, files)
        elif row["action"] == "add":
            add(out, files.get("assertions"), files.get("receipts"), full=record.get("mode") == "full"
                and "asked" in (record.get("reason") or ""), command=row["command"])
        elif row["action"] == "apply":
            deletion = Deletion(**{k: tuple(v) for k, v in record["deletion"].items()})
            with Graph(out) as copy:
                outcome = what_if(copy, deletion, record["policy"])
            apply_version(out, outcome, copy_of=None, command=row["command"])
        elif row["action"] == "purge":  # the same ids erased from the copy (those its inputs still hold)
            with Graph(out) as copy:
                held = [name for name in record.get("purged", {}) if copy.has("id", name)]
            if held:
                purge(out, assertions=held, command=row["command"])
        elif row["action"] == "regenerate":  # the deletion (unless applied before) and the rewrites, one version
            outcome = None
            if "policy" in record:
                deletion = Deletion(**{k: tuple(v) for k, v in record["deletion"].items()})
                with Graph(out) as copy:
                    outcome = what_if(copy, deletion, record["policy"])
            regenerate_version(out, files["receipts"], outcome, tuple(record.get("replaced", ())),
                               record=_regenerate_fields(record), command=row["command"])
    report.differences = compare_labels(graph_path, out)
    report.identical = not report.differences
    return report


def _build(graph_path: Path, out: Path, record: dict, files: dict[str, str]) -> None:
    """Builds version 1 again: a graph file by the Python engine, a graph folder by DuckDB (the
    engines build the same graph: tests/test_one_graph.py)."""
    cap = record.get("cap", "8")
    cap = None if cap == "none" else int(cap)
    rules = [e["file"] for e in record.get("rules", [])]
    folder = store_class(graph_path).form == "folder"
    build_graph(files.get("assertions"), files.get("receipts"), rules, cap=cap, engine="duckdb" if folder else "python",
                output=out, tables=folder, labels=record.get("labels", "capped"))


def _regenerate_fields(record: dict) -> dict:
    """The fields of a regenerate version's record that say what asked for it (kept by a replay)."""
    return {k: v for k, v in record.items() if k in ("regeneration", "model", "template_versions")}


def _files(record: dict) -> dict[str, str]:
    return {entry["role"]: entry["file"] for entry in record.get("inputs", [])}


def apply_version(path: str | Path, outcome, copy_of: str | Path | None = None, command: str | None = None) -> int:
    """Writes a deletion's outcome (whatif.Outcome) as a new version of the graph at ``path``
    (first copied from ``copy_of`` when given); returns the version number."""
    path = Path(path)
    if copy_of is not None:
        copy_graph(copy_of, path)
    with Graph(path) as graph:
        rows = applied_rows(graph, outcome)
        expected = graph.version_read()  # another writer's version in between: refused, not overwritten
        had = graph.has_circuit()

    def write(writer: VersionWriter) -> None:
        write_applied(writer, rows)

    deletion = outcome.deletion
    record = {"action": "apply", "policy": outcome.policy, "release": release(),
              "deletion": {k: list(getattr(deletion, k)) for k in ("sources", "relations", "assertions", "kinds")
                           if getattr(deletion, k, ())},
              "deleted_assertions": len(rows.assertions), "dropped_artifacts": len(rows.dead)}
    if copy_of is not None:
        record["applied_to"] = {"file": str(Path(copy_of).resolve()), "sha256": graph_digest(copy_of)}
    # a deletion derives nothing new: the circuit before it serves, committed with the version
    version = write_version(path, "apply", command or command_line(), record, write, expected, inherited_circuit(had))
    return version
