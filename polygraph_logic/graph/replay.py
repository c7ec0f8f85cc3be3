"""Replaying a graph's history, and applying a deletion as a version.

``replay(graph, copy)`` rebuilds a graph from what its versions recorded: version 1's
input files and rule files (``build``), then each ``add`` with its files and each
applied deletion with its deletion and policy, in order, into ``copy``; then compares
the label tables of both files row by row (``facts`` and ``facts_history``: numbers,
arguments, label blobs, exact flags, versions).  Before running it checks every
recorded file against its sha256 and the release that wrote each version, and says
which input changed.

``apply_version(path, outcome)`` writes what a deletion does (as ``Session.apply``
decides it: dead artifacts dropped, labels restricted, trimmed summaries) as one more
version of the file at ``path``: the deleted assertions, the dropped artifacts and the
old labels move to the history, so the retraction is part of the record.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import PolygraphError
from .store import Graph
from .version_write import VersionWriter
from .versions import command_line, release, sha256, version_rows


@dataclass
class ReplayReport:
    """What a replay found: the inputs that changed, and whether the label tables are identical."""

    versions: int
    changed: list[str] = field(default_factory=list)  # inputs whose hash differs, missing files, releases
    identical: bool | None = None  # None: not replayed (an input is missing or changed)
    differences: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return dict(self.__dict__)


def replay(graph_path: str | Path, out: str | Path, force: bool = False) -> ReplayReport:
    """Rebuilds ``graph_path`` from its recorded inputs into ``out`` and compares the label tables.

    When a recorded file is missing or its hash differs, nothing is replayed unless
    ``force`` (then the current files are used and the comparison shows what changed)."""
    from .build import build_graph
    from .ledger import add
    graph_path, out = Path(graph_path), Path(out)
    if out.resolve() == graph_path.resolve():
        raise PolygraphError("in_place", "replay writes a copy; choose a path other than the graph's own")
    with Graph(graph_path) as graph:
        rows = version_rows(graph._db)
    report = ReplayReport(len(rows))
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
            cap = record.get("cap", "8")
            build_graph(files.get("assertions"), files.get("receipts"), [e["file"] for e in record.get("rules", [])],
                        cap=None if cap == "none" else int(cap)).write(out)
        elif row["action"] == "add":
            add(out, files.get("assertions"), files.get("receipts"), full=record.get("mode") == "full"
                and "asked" in (record.get("reason") or ""), command=row["command"])
        elif row["action"] == "apply":
            from ..whatif import Deletion, what_if
            deletion = Deletion(**{k: tuple(v) for k, v in record["deletion"].items()})
            with Graph(out) as copy:
                outcome = what_if(copy, deletion, record["policy"])
            apply_version(out, outcome, copy_of=None, command=row["command"])
    report.differences = compare_labels(graph_path, out)
    report.identical = not report.differences
    return report


def _files(record: dict) -> dict[str, str]:
    return {entry["role"]: entry["file"] for entry in record.get("inputs", [])}


_LABEL_TABLES = (("facts", "num, relation, args, label, exact, since"),
                 ("facts_history", "num, relation, args, label, exact, since, until"))


def compare_labels(first: str | Path, second: str | Path, limit: int = 10) -> list[str]:
    """Returns the differences between the label tables of two graph files (row by row, byte for byte)."""
    out = []
    dbs = [sqlite3.connect(f"file:{Path(p).resolve()}?mode=ro", uri=True) for p in (first, second)]
    try:
        for table, columns in _LABEL_TABLES:
            a, b = (db.execute(f"SELECT {columns} FROM {table} ORDER BY num, since") for db in dbs)
            for n, (x, y) in enumerate(zip(a, b)):
                if x != y and len(out) < limit:
                    out.append(f"{table} row {n + 1}: {x[:3]} differs")
            count = [db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] for db in dbs]
            if count[0] != count[1]:
                out.append(f"{table}: {count[0]} rows against {count[1]}")
    finally:
        for db in dbs:
            db.close()
    return out


def apply_version(path: str | Path, outcome, copy_of: str | Path | None = None, command: str | None = None) -> int:
    """Writes a deletion's outcome (whatif.Outcome) as a new version of the graph at ``path``
    (first copied from ``copy_of`` when given); returns the version number."""
    from ..session import applied_rows
    path = Path(path)
    if copy_of is not None:
        source = sqlite3.connect(f"file:{Path(copy_of).resolve()}?mode=ro", uri=True)
        from ..files import replacing
        with replacing(path, ".partial") as temporary:
            target = sqlite3.connect(temporary)
            source.backup(target)
            target.close()
        source.close()
    with Graph(path) as graph:
        rows = applied_rows(graph, outcome)
    db = sqlite3.connect(path)
    try:
        writer = VersionWriter(db)
        for num in rows.assertions:
            writer.retire_assertion(num)
        for artifact_id in rows.dead:
            writer.retire_artifact(artifact_id)
        for relation, args, groups, exact in rows.facts:
            writer.fact(relation, args, groups, exact)
        for artifact_id, content in rows.contents:
            num = db.execute("SELECT fact FROM artifacts WHERE id = ?", (artifact_id,)).fetchone()[0]
            layer = db.execute("SELECT layer FROM artifacts WHERE id = ?", (artifact_id,)).fetchone()[0]
            writer.retire_artifact(artifact_id)
            writer.artifact(artifact_id, layer, content, num)
        deletion = outcome.deletion
        record = {"action": "apply", "policy": outcome.policy, "release": release(),
                  "deletion": {k: list(getattr(deletion, k)) for k in ("sources", "relations", "assertions", "kinds")
                               if getattr(deletion, k, ())},
                  "deleted_assertions": len(rows.assertions), "dropped_artifacts": len(rows.dead)}
        if copy_of is not None:
            record["applied_to"] = {"file": str(Path(copy_of).resolve()), "sha256": sha256(copy_of)}
        version = writer.finish("apply", command or command_line(), record)
        db.commit()
    finally:
        db.close()
    return version
