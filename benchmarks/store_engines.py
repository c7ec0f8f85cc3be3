"""Benchmark: the what-if's queries on SQLite (the graph file) against the same tables in DuckDB.

The what-if asks point questions: the assertions of a source (an index lookup), the
facts that mention them (an index range scan), and those facts' labels and artifact
rows.  This script copies a built graph's tables into a DuckDB file with the same
indexes, then times, in fresh processes so that opening counts, one what-if's queries
on each engine for the same sources, and prints the ratio. Printed, never asserted.

    python benchmarks/store_engines.py GRAPH [--sources 20] [--seed 0]

DuckDB is not a dependency of the project: `pip install duckdb` to run this.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUERY = """
SELECT a.num, a.layer, f.label, f.exact FROM artifacts a JOIN facts f ON f.num = a.fact
WHERE a.fact IN (SELECT DISTINCT m.fact FROM mentions m
                 WHERE m.assertion IN (SELECT num FROM assertions WHERE source = ?))
"""

_CHILD = r"""
import sys, time, json
started = time.perf_counter()
engine, path, sources = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
if engine == "sqlite":
    import sqlite3
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
else:
    import duckdb
    db = duckdb.connect(path, read_only=True)
opened = time.perf_counter()
times, rows = [], 0
for source in sources:
    t = time.perf_counter()
    rows += len(db.execute(QUERY, [source]).fetchall())
    times.append(time.perf_counter() - t)
print(json.dumps({"open": opened - started, "first": times[0], "rest": sorted(times[1:])[len(times[1:]) // 2]
                  if len(times) > 1 else times[0], "rows": rows, "process": time.perf_counter() - started}))
"""


def copy_to_duckdb(graph: Path, target: Path) -> float:
    """Copies the tables the what-if reads into DuckDB with the same indexes; returns seconds.

    Rows travel through CSV files (labels hex-coded): DuckDB's sqlite extension would be
    a download at run time, and row-by-row inserts take minutes."""
    import csv
    import duckdb
    started = time.perf_counter()
    source = sqlite3.connect(graph)
    db = duckdb.connect(str(target))
    tables = {
        "assertions": ("num INTEGER PRIMARY KEY, source VARCHAR", "SELECT num, source FROM assertions", ""),
        "mentions": ("assertion INTEGER, fact INTEGER", "SELECT assertion, fact FROM mentions", ""),
        "facts": ("num INTEGER PRIMARY KEY, label BLOB, exact INTEGER", "SELECT num, hex(label), exact FROM facts",
                  "num, unhex(label), exact"),
        "artifacts": ("num INTEGER PRIMARY KEY, layer VARCHAR, fact INTEGER", "SELECT num, layer, fact FROM artifacts",
                      ""),
    }
    for table, (columns, select, convert) in tables.items():
        rows = target.parent / f"{table}.csv"
        with rows.open("w", newline="") as handle:
            csv.writer(handle).writerows(source.execute(select))
        db.execute(f"CREATE TABLE {table}({columns})")
        names = ", ".join(c.split()[0] for c in columns.split(", "))
        reader = f"read_csv('{rows}', header=false, all_varchar=true, names=[{', '.join(repr(n) for n in names.split(', '))}])"
        db.execute(f"INSERT INTO {table} SELECT {convert or names} FROM {reader}")
    db.execute("CREATE INDEX assertions_by_source ON assertions(source)")
    db.execute("CREATE INDEX mentions_by_assertion ON mentions(assertion)")
    db.execute("CREATE INDEX artifacts_by_fact ON artifacts(fact)")
    db.close()
    return time.perf_counter() - started


def run(engine: str, path: Path, sources: list[str]) -> dict:
    code = f"QUERY = {QUERY!r}\n" + _CHILD
    done = subprocess.run([sys.executable, "-c", code, engine, str(path), json.dumps(sources)],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def measure(graph: Path, sources: int = 20, seed: int = 0, out=print) -> dict:
    """Times the what-if's touched-rows query on both engines; returns the figures."""
    with sqlite3.connect(graph) as db:
        names = [row[0] for row in db.execute("SELECT DISTINCT source FROM assertions ORDER BY source")]
    chosen = random.Random(seed).sample(names, min(sources, len(names)))
    with tempfile.TemporaryDirectory(prefix="polygraph-engines-") as name:
        duck = Path(name) / "graph.duckdb"
        copied = copy_to_duckdb(graph, duck)
        sqlite_runs = [run("sqlite", graph, chosen) for _ in range(3)]
        duck_runs = [run("duckdb", duck, chosen) for _ in range(3)]
    figures = {}
    for engine, runs in (("sqlite", sqlite_runs), ("duckdb", duck_runs)):
        figures[engine] = {key: statistics.median(r[key] for r in runs) for key in ("open", "first", "rest", "process")}
        figures[engine]["rows"] = runs[0]["rows"]
    assert figures["sqlite"]["rows"] == figures["duckdb"]["rows"]  # the same rows, found two ways
    out(f"{graph.name}: {len(chosen)} single-source touched-rows queries per process (median of 3 processes; "
        f"DuckDB copy built in {copied:.1f} s)")
    out(f"{'engine':8} {'open ms':>9} {'first query ms':>15} {'median query ms':>16} {'process s':>10}")
    for engine in ("sqlite", "duckdb"):
        f = figures[engine]
        out(f"{engine:8} {f['open'] * 1000:9.2f} {f['first'] * 1000:15.2f} {f['rest'] * 1000:16.2f} {f['process']:10.2f}")
    ratio = figures["duckdb"]["rest"] / figures["sqlite"]["rest"]
    out(f"median query, duckdb / sqlite: {ratio:.1f}x")
    figures["ratio_query"] = ratio
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graph", type=Path)
    parser.add_argument("--sources", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        import duckdb  # noqa: F401
    except ImportError:
        print("duckdb is not installed (pip install duckdb); nothing measured", file=sys.stderr)
        return 2
    measure(args.graph, args.sources, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
