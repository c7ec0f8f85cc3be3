"""Where a DuckDB tables build spends its time, statement by statement.

Runs one ``build --engine duckdb --tables`` of the synthetic graph (``--copies N``) or of an
inputs folder (``--inputs DIR`` with assertions.jsonl and receipts.jsonl), under
``--memory-limit`` if given, with every statement on the build's connections (its cursors and
their threads included) timed, and prints the seconds per kind of statement: the rounds'
derivations (``derive``) and merges (``merge``), the relations' updates, the writer's files and
tables.  With ``--profile`` DuckDB's own profile of every derive and merge statement is kept
(JSON, one file a statement, in a temporary folder) and summed: planning (binding and the
optimiser) against running, and the running time by operator (CPU seconds, summed over
threads).  A profile is what DuckDB measured; the statements' seconds are wall time.

    python benchmarks/statements.py [--copies 40 | --inputs DIR] [--memory-limit 130MB] [--profile]
                                    [--top 25]

Seen on this 2-core machine (x40 under 130MB, docs/bench/report.md): the rounds' derivations
take most of the evaluation, and a tenth to a fifth of them is planning.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: (kind, pattern at the start of a statement, whitespace collapsed); the first that matches
KINDS = [
    ("derive", r"(CREATE OR REPLACE TEMP TABLE|INSERT INTO) c\d+ "),
    ("merge", r"INSERT INTO d\d+ "),
    ("delta count", r"SELECT count\(\*\), coalesce\(sum\(len\(label\)\)"),
    ("relation update", r"(DELETE FROM r\d+ USING|INSERT INTO r\d+ SELECT \* FROM d\d+)"),
    ("tables made or dropped", r"(DROP TABLE|CREATE TABLE [dr]\d+ \()"),
    ("file written", r"COPY \("),
    ("digests", r"INSERT INTO digests "),
]
PROFILED = ("derive", "merge")


def kind(sql: str) -> str:
    """The kind of a statement: one of KINDS, else its first words (60 characters)."""
    text = " ".join(sql.split())
    for name, pattern in KINDS:
        if re.match(pattern, text):
            return name
    return text[:60]


class Timed:
    """A DuckDB connection (or cursor) whose statements are timed into ``log``; everything
    else is the connection's own.  ``profiles``: a folder for DuckDB's JSON profile of each
    statement of the PROFILED kinds (None: no profiles)."""

    def __init__(self, con, log: list, profiles: Path | None = None, counter=None):
        self._con, self._log, self._profiles = con, log, profiles
        self._counter = counter if counter is not None else iter(range(10 ** 9))

    def execute(self, sql, *args, **kwargs):
        what = kind(sql)
        profile = self._profiles is not None and what in PROFILED
        if profile:
            path = self._profiles / f"{what}-{next(self._counter)}.json"
            self._con.execute("SET enable_profiling = 'json'")
            self._con.execute(f"SET profiling_output = '{path}'")
        started = time.perf_counter()
        result = self._con.execute(sql, *args, **kwargs)
        self._log.append((what, time.perf_counter() - started, threading.current_thread().name))
        if profile:  # derive and merge statements return no rows a caller reads
            self._con.execute("PRAGMA disable_profiling")
        return result

    def cursor(self):
        return Timed(self._con.cursor(), self._log, self._profiles, self._counter)

    def __getattr__(self, name):
        return getattr(self._con, name)


def profile_summary(folder: Path) -> dict:
    """Sums the JSON profiles in ``folder``: statements, planning and running seconds, and
    operator CPU seconds by operator name."""
    planning = running = 0.0
    operators: Counter = Counter()
    count = 0

    def walk(node) -> None:
        operators[node.get("name", "?")] += node.get("timing", 0.0)
        for child in node.get("children", []):
            walk(child)

    for path in folder.glob("*.json"):
        profile = json.loads(path.read_text())
        count += 1
        plan = sum(profile.get(part, {}).get("total_time", 0.0) for part in ("planner", "optimizer", "physical_planner"))
        planning += plan
        running += profile.get("query", {}).get("total_time", 0.0) - plan
        for node in profile.get("operator", []):
            walk(node)
    return {"statements": count, "planning": planning, "running": running, "operators": dict(operators)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--copies", type=int, default=1, help="the synthetic graph and N-1 disjoint copies")
    where.add_argument("--inputs", type=Path, help="a folder with assertions.jsonl and receipts.jsonl")
    parser.add_argument("--memory-limit", default=None)
    parser.add_argument("--cap", default="8")
    parser.add_argument("--profile", action="store_true", help="DuckDB's profile of every derive and merge statement")
    parser.add_argument("--top", type=int, default=25, help="kinds of statement printed")
    args = parser.parse_args()
    from polygraph_logic.allocation import peak_rss_mb
    from polygraph_logic.engines import build_tables, duckdb_run
    from polygraph_logic.graph.synthetic import generate_copies
    from polygraph_logic.resources import rule_file

    log: list = []
    with tempfile.TemporaryDirectory(prefix="polygraph-statements-") as work:
        work = Path(work)
        inputs = args.inputs
        if inputs is None:
            inputs = work / "inputs"
            generate_copies(args.copies).write(inputs)
        profiles = work / "profiles" if args.profile else None
        if profiles is not None:
            profiles.mkdir()
        connect = duckdb_run.connect
        duckdb_run.connect = lambda *a, **k: Timed(connect(*a, **k), log, profiles)
        try:
            started = time.perf_counter()
            built = build_tables(inputs / "assertions.jsonl", inputs / "receipts.jsonl", [rule_file("ro")],
                                 work / "out.tables", cap=None if args.cap == "none" else int(args.cap),
                                 memory_limit=args.memory_limit)
            total = time.perf_counter() - started
        finally:
            duckdb_run.connect = connect
        summary = profile_summary(profiles) if profiles is not None else None
    stages = ", ".join(f"{k} {v:.2f}" for k, v in built.seconds.items())
    print(f"tables build of {inputs if args.inputs else f'x{args.copies}'} under --memory-limit "
          f"{args.memory_limit or 'none'}: {total:.2f} s, peak RSS {peak_rss_mb():.0f} MB ({stages}); "
          f"{len(log)} statements")
    seconds: Counter = Counter()
    counts: Counter = Counter()
    for what, spent, _ in log:
        seconds[what] += spent
        counts[what] += 1
    print("  seconds  statements  kind (wall time; statements on the writer's threads overlap the others)")
    for what, spent in seconds.most_common(args.top):
        print(f"  {spent:7.2f}  {counts[what]:10d}  {what}")
    if summary is not None:
        print(f"  DuckDB's profiles of {summary['statements']} derive and merge statements: planning "
              f"{summary['planning']:.2f} s, running {summary['running']:.2f} s; operators (CPU s, summed over threads):")
        for name, spent in sorted(summary["operators"].items(), key=lambda item: -item[1])[:8]:
            print(f"    {spent:7.2f}  {name}")


if __name__ == "__main__":
    main()
