"""Benchmark: writing a graph file, the writer of a baseline commit beside the working tree's.

For each size (``--copies``: the synthetic paper-scale graph and N-1 disjoint copies), the
inputs are generated once; then child processes build the graph (Python engine, rules/ro.dl,
cap 8) and time ``Build.write`` alone, alternately with the package as of ``--base`` (a
``git archive`` of it in a temporary folder, first on the child's path) and with the working
tree.  Printed: each write's seconds and peak RSS, the ratio base / working tree, and whether
the two files hold the same rows: every table of both files (schema, ``sqlite_stat1``
included) compared row by row in a fixed order, the clock aside (``meta.built`` and
``versions.time``).  Both children run with the same PYTHONHASHSEED, so that the pickled
rule trees come out byte for byte alike.

With the graph's Parquet tables (export-tables, by the working tree) written back to a graph
file by ``import-tables`` the same way, base vs working tree (``--no-import`` skips it).

    python benchmarks/write_graph.py [--copies 1 10] [--repeat 1] [--base 2008a95] [--no-import]

The default base is the commit before the writer was made fast (issue 18's measurement).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = os.environ.get("WRITE_GRAPH_PACKAGE")  # set in a child: the package to measure
sys.path.insert(0, PACKAGE or str(ROOT))

BASE = "2008a950ce722989ac215150e227656b31dbb936"  # the writer measured in issue 18
#: columns that hold the clock, not the graph
CLOCK = {("meta", "value", "built"), ("versions", "time", None)}


def child(task: str, directory: Path, output: Path, repeat: int) -> None:
    """Builds the graph once and writes it ``repeat`` times (task "build"), or writes the graph of
    the tables folder ``directory`` (task "import"); prints the costs as one JSON line."""
    import polygraph_logic
    from polygraph_logic.graph.build import build_graph

    if task == "build":
        build = build_graph(directory / "assertions.jsonl", directory / "receipts.jsonl",
                            [ROOT / "rules" / "ro.dl"])
        write = build.write
    else:
        from polygraph_logic.engines.tables import import_tables

        def write(path):
            import_tables(directory, path)
    writes = []
    for _ in range(repeat):
        started = time.perf_counter()
        write(output)
        writes.append(time.perf_counter() - started)
    print(json.dumps({"package": polygraph_logic.__file__, "writes": writes,
                      "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def run_child(package: Path, task: str, directory: Path, output: Path, repeat: int) -> dict:
    env = {**os.environ, "WRITE_GRAPH_PACKAGE": str(package), "PYTHONHASHSEED": "0"}
    done = subprocess.run([sys.executable, __file__, "--child", task, str(directory), str(output), str(repeat)],
                          env=env, capture_output=True, text=True, cwd=directory)
    if done.returncode:
        sys.exit(f"a child failed:\n{done.stderr}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    if not figures["package"].startswith(str(package)):
        sys.exit(f"the child imported {figures['package']}, not the package under {package}")
    return figures


def table_digests(path: Path) -> dict[str, tuple[int, str]]:
    """Returns every table's row count and a digest of its rows (schema and statistics included),
    the clock's columns left out."""
    db = sqlite3.connect(path)
    try:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        out = {"sqlite_master": _digest(db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master "
                                                   "ORDER BY type, name"))}
        for table in tables:
            names = [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
            keep = [n for n in names if (table, n, None) not in CLOCK]
            order = ", ".join(names)
            rows = db.execute(f"SELECT {', '.join(keep)} FROM {table} ORDER BY {order}")
            if table == "meta":
                rows = (row for row in rows if row[0] != "built")
            out[table] = _digest(rows)
        return out
    finally:
        db.close()


def _digest(rows) -> tuple[int, str]:
    digest, count = hashlib.sha256(), 0
    for row in rows:
        digest.update(repr(row).encode())
        count += 1
    return count, digest.hexdigest()[:16]


def extract(base: str, folder: Path) -> Path:
    """Writes the package as of commit ``base`` to ``folder`` (git archive); returns the folder."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", base, "polygraph_logic", "grammar", "rules", "prompts"],
                             capture_output=True, check=True).stdout
    with tempfile.TemporaryFile() as handle:
        handle.write(archive)
        handle.seek(0)
        with tarfile.open(fileobj=handle) as tar:
            tar.extractall(folder, filter="data")
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, nargs="+", default=[1, 10])
    parser.add_argument("--repeat", type=int, default=1, help="writes per child (the fastest is compared)")
    parser.add_argument("--base", default=BASE, help="the commit whose writer is the baseline")
    parser.add_argument("--no-import", action="store_true", help="skip import-tables (the graph's Parquet "
                                                                   "tables written back to a graph file)")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]), Path(args.child[2]), int(args.child[3]))
        return

    from polygraph_logic.graph.synthetic import generate_copies

    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", args.base],
                            capture_output=True, text=True, check=True).stdout.strip()
    load = os.getloadavg()[0]
    print(f"Writing a graph file: base {commit} vs the working tree; Python engine, rules ro, cap 8; "
          f"load average {load:.1f} on {os.cpu_count()} cores at the start")
    with tempfile.TemporaryDirectory() as temporary:
        temporary = Path(temporary)
        base = extract(args.base, temporary / "base")
        for copies in args.copies:
            directory = temporary / f"x{copies}"
            directory.mkdir()
            generate_copies(copies).write(directory)
            files = compare(f"x{copies} build", base, "build", directory, directory, args.repeat)
            if not args.no_import:
                from polygraph_logic.engines.tables import export_tables
                tables = directory / "tables"
                export_tables(files["new"], tables)
                compare(f"x{copies} import-tables", base, "import", tables, directory, args.repeat)
            for path in directory.glob("*.graph"):
                path.unlink()


def compare(what: str, base: Path, task: str, source: Path, directory: Path, repeat: int) -> dict[str, Path]:
    """Runs ``task`` with the base package, then with the working tree; prints the write times and
    whether both files hold the same rows; returns the two files."""
    figures, files = {}, {}
    for name, package in (("base", base), ("new", ROOT)):
        # both write g.graph (the command line is recorded in the file), then it is renamed
        figures[name] = run_child(package, task, source, directory / "g.graph", repeat)
        files[name] = (directory / "g.graph").rename(directory / f"{task}-{name}.graph")
    old, new = min(figures["base"]["writes"]), min(figures["new"]["writes"])
    same = table_digests(files["base"]) == table_digests(files["new"])
    sizes = {name: path.stat().st_size / 2**20 for name, path in files.items()}
    facts = sqlite3.connect(files["new"]).execute("SELECT COUNT(*) FROM facts").fetchone()[0]
    print(f"{what}: {facts:,} facts; write base {old:.2f} s (RSS {figures['base']['rss_mb']:.0f} MB, "
          f"{sizes['base']:.1f} MiB), working tree {new:.2f} s (RSS {figures['new']['rss_mb']:.0f} MB, "
          f"{sizes['new']:.1f} MiB): {old / new:.2f}x faster; same rows in every table: {same}", flush=True)
    return files


if __name__ == "__main__":
    main()
