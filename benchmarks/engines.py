"""Benchmark: building the synthetic graph with the Python engine, DuckDB and Spark, side by side.

DuckDB runs twice: writing the graph file (labels read back into Python, the shared SQLite
writer) and writing the tables folder itself (``build --tables``); the folder is compared
row for row with ``export-tables`` of the Python engine's graph file.

For each size (``--copies``: the paper-scale graph and N-1 disjoint copies), the inputs
are generated once, then each engine builds and writes the graph in its own child
process (so that each peak RSS is that engine's own), one after the other in this run.
Printed: seconds per stage, peak RSS, the ratios Python / DuckDB, whether the two graph
files hold identical fact tables, and DuckDB's semi-naive rounds (delta facts,
monomials, seconds) for the largest stratum.

With ``--hubs H`` the copies share the H busiest located_in / part_of targets of the
first copy instead of being disjoint, as a real graph's hub entities are: RO chains through a hub
(located_in ∘ inverse(located_in), has_part ∘ part_of) then relate every pair of their
neighbours, and the closure grows faster than the input (benchmarks/hubs.py measures how much).

With ``--limits`` the tables build runs again under each memory limit given, after the
three builds: the trade of time for memory, each folder compared with the Python export.

With ``--pairs N --pair-limit SIZE`` the Python build and the tables build under that limit then
run alternately, N pairs: this machine's speed drifts by tens of percent within minutes (the
same build under 140MB took 15.4 s and 19.5 s an hour apart), so a ratio of two builds made
minutes apart measures the drift as much as the engines.  Each pair's ratio is of two adjacent
builds; printed per pair and as their median and range, with the verdict on the issue's target
(at least 5x faster at no more than 25% of the Python engine's peak) for the median and for
every pair.

With ``--statements`` one tables build instead (of ``--copies N``, or of ``--inputs DIR``), in
this process, under ``--memory-limit`` if given, with every statement on the build's
connections (its cursors and their threads included) timed: the seconds per kind of statement,
the rounds' derivations (``derive``) and merges (``merge``), the relations' updates, the
writer's files and tables.  With ``--profile`` DuckDB's own profile of every derive and merge
statement is kept (JSON, one file a statement, in a temporary folder) and summed: planning
(binding and the optimiser) against running, and the running time by operator (CPU seconds,
summed over threads).  Seen on this 2-core machine (x40 under 130MB, docs/bench/notebook.md): the
rounds' derivations take most of the evaluation, and a tenth to a fifth of them is planning.

With ``--spark`` the tables folder written by Spark (``build --engine spark --tables``) against
the graph file from Spark's labels (``build --engine spark -o FILE.graph``: every label read
back into the driver, SQLite written from Python), each in a child of its own: seconds per
stage, the driver's peak RSS (``VmHWM``) and the Spark JVM's (on a local master the driver
and the executors in one process), the ratios graph file / tables, and whether the two hold
the same rows.  Skipped, saying why, without pyspark or Java.

    python -m benchmarks.engines [--copies 1 10 40] [--hubs 0] [--cap 8] [--memory-limit 4GB]
                                 [--limits 300MB 400MB 600MB] [--pairs 3 --pair-limit 130MB]
    python -m benchmarks.engines --statements [--copies 40 | --inputs DIR] [--memory-limit 130MB]
                                 [--profile] [--top 25]
    python -m benchmarks.engines --spark [--copies 1 10 | --inputs DIR] [--master local[2]]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sqlite3
import sys
import tempfile
import threading
from collections import Counter
from pathlib import Path

from polygraph_logic.allocation import peak_rss_mb
from benchmarks.harness import Stopwatch, child_json, median
from polygraph_logic.graph.synthetic_copies import generate_copies
from polygraph_logic.resources import rule_file
from polygraph_logic.graph.tables.compare import differences
from polygraph_logic.graph.tables.layout import export_tables
from polygraph_logic.engines import duckdb_run
from polygraph_logic.graph.engine_build import build_graph
from polygraph_logic.engines.spark import spark_available, spark_session
from polygraph_logic.engines.spark_run import evaluation
from polygraph_logic.graph import build as python_build

#: the builds a child makes: the graph file by each engine, and the tables folder by DuckDB and by Spark
ENGINES = ("python", "duckdb", "tables", "spark", "spark-tables")


def child(engine: str, directory: Path, cap: int | None, memory_limit: str | None, master: str = "local[2]") -> None:
    """Builds and writes one graph (``engine``: one of ENGINES) from the inputs in ``directory``
    with rules/ro.dl (and ``lazy.dl`` when the directory has one); prints its costs as one JSON line."""
    if engine.startswith("spark"):
        spark_child(engine, directory, cap, master)
        return

    rounds = []
    clock = Stopwatch()
    rules = [rule_file("ro")] + ([directory / "lazy.dl"] if (directory / "lazy.dl").exists() else [])
    if engine == "tables":  # DuckDB writing the tables folder itself
        built = build_graph(directory / "assertions.jsonl", directory / "receipts.jsonl", rules, cap=cap,
                            engine="duckdb", memory_limit=memory_limit, rounds=rounds.append,
                            output=directory / "direct.tables", tables=True)
        total = clock()
        print(json.dumps({"seconds": built.seconds, "total": total, "rss_mb": peak_rss_mb(),
                          "facts": built.rows["facts"],
                          "rounds": [[r.stratum, r.round, r.delta_facts, r.monomials, r.seconds] for r in rounds]}))
        return
    build = build_graph(directory / "assertions.jsonl", directory / "receipts.jsonl", rules,
                        cap=cap, engine=engine, memory_limit=memory_limit,
                        rounds=rounds.append if engine == "duckdb" else None)
    build.write(directory / f"{engine}.graph")
    total = clock()
    print(json.dumps({"seconds": build.seconds, "total": total, "rss_mb": peak_rss_mb(),
                      "facts": sum(len(build.model.facts(n)) for n in build.model.relations()),
                      "rounds": [[r.stratum, r.round, r.delta_facts, r.monomials, r.seconds] for r in rounds]}))


#: the chains that grow through a hub: located_in ∘ inverse(located_in) and has_part ∘ part_of
#: meet at the object of located_in and part_of (the subject of has_part)
def fact_rows(path: Path) -> list:
    with sqlite3.connect(path) as db:
        return sorted(db.execute("SELECT relation, args, label, exact FROM facts"))


#: the issue's target for the tables build against the Python engine: at least this much faster...
TARGET_SPEEDUP = 5.0
#: ... at no more than this share of the Python engine's peak memory
TARGET_PEAK = 0.25


def pair_summary(pairs: list[tuple[dict, dict]]) -> dict:
    """The ratios of alternated (python, tables) builds: each pair's speed-up (python's seconds
    over the tables build's) and peak share (the tables build's peak RSS over python's), their
    medians and ranges, and whether the target holds for the medians and for every pair."""
    speedups = [p["total"] / t["total"] for p, t in pairs]
    peaks = [t["rss_mb"] / p["rss_mb"] for p, t in pairs]
    met = [s >= TARGET_SPEEDUP and q <= TARGET_PEAK for s, q in zip(speedups, peaks)]
    return {"speedups": speedups, "peaks": peaks, "median_speedup": median(speedups), "median_peak": median(peaks),
            "met_median": median(speedups) >= TARGET_SPEEDUP and median(peaks) <= TARGET_PEAK,
            "met_every": all(met), "met": met}


def write_inputs(directory: Path, copies: int, hubs: int, hub_sides: str = "hub", hub_cycles: str = "keep"):
    """Generates the synthetic graph with ``copies`` (sharing ``hubs`` on ``hub_sides``, their
    cycles kept or broken: ``synthetic_copies.share_hubs``) and writes its inputs."""
    graph = generate_copies(copies, hubs=hubs, hub_sides=hub_sides, hub_cycles=hub_cycles)
    graph.write(directory)
    return graph


def child_run(directory: Path, engine: str, cap, memory_limit: str | None,
              timeout: float | None = None, master: str = "local[2]") -> dict | list:
    """One build in a child process (``child``): its JSON line, or (a list) what it said last when
    it failed (or that it did not finish within ``timeout`` seconds: it is then stopped)."""
    arguments = ["--child", engine, directory, "--cap", cap if cap is not None else "none", "--master", master]
    if memory_limit:
        arguments += ["--memory-limit", memory_limit]
    return child_json("engines", *arguments, timeout=timeout)


def run_pairs(copies: int, hubs: int, cap: int | None, limit: str, pairs: int) -> None:
    """The Python build and the tables build under ``limit``, alternately, ``pairs`` times."""
    with tempfile.TemporaryDirectory(prefix="polygraph-engines-") as work:
        directory = Path(work)
        graph = write_inputs(directory, copies, hubs)
        label = f"x{copies}" + (f" with {hubs} shared hubs" if hubs else "")
        print(f"{label}: {len(graph.assertions):,} assertions; {pairs} alternated pairs, python -> graph file "
              f"then duckdb -> tables under --memory-limit {limit}", flush=True)
        done: list[tuple[dict, dict]] = []
        for number in range(1, pairs + 1):
            python = child_run(directory, "python", cap, None)
            if number == 1 and isinstance(python, dict):
                export_tables(directory / "python.graph", directory / "python.tables")
            tables = child_run(directory, "tables", cap, limit)
            if isinstance(python, list) or isinstance(tables, list):
                print(f"  pair {number}: failed: {python if isinstance(python, list) else tables}")
                return
            differ = differences(directory / "python.tables", directory / "direct.tables")
            shutil.rmtree(directory / "direct.tables")
            (directory / "python.graph").unlink()
            done.append((python, tables))
            print(f"  pair {number}: python {python['total']:7.2f} s {python['rss_mb']:6.0f} MB; tables "
                  f"{tables['total']:6.2f} s {tables['rss_mb']:5.0f} MB; ratio {python['total'] / tables['total']:.2f}x, "
                  f"peak {tables['rss_mb'] / python['rss_mb']:.0%} of python's; folder "
                  f"{'identical' if not differ else 'DIFFERENT: ' + '; '.join(differ)}", flush=True)
    summary = pair_summary(done)
    print(f"  median ratio {summary['median_speedup']:.2f}x (range {min(summary['speedups']):.2f}-"
          f"{max(summary['speedups']):.2f}x), median peak {summary['median_peak']:.0%} of python's (range "
          f"{min(summary['peaks']):.0%}-{max(summary['peaks']):.0%}); target ({TARGET_SPEEDUP:g}x at "
          f"{TARGET_PEAK:.0%}): {'met' if summary['met_median'] else 'NOT met'} by the medians, "
          f"{'met' if summary['met_every'] else 'NOT met'} by every pair "
          f"({sum(summary['met'])} of {len(summary['met'])})")


def run(copies: int, hubs: int, cap: int | None, memory_limit: str | None, limits=()) -> None:
    with tempfile.TemporaryDirectory(prefix="polygraph-engines-") as work:
        directory = Path(work)
        graph = write_inputs(directory, copies, hubs)
        results = {}
        for engine in ("python", "duckdb", "tables"):
            outcome = child_run(directory, engine, cap, memory_limit if engine != "python" else None)
            if isinstance(outcome, list):
                print(f"  {engine}: failed: {outcome}")
                return
            results[engine] = outcome
        same = fact_rows(directory / "python.graph") == fact_rows(directory / "duckdb.graph")
        export_tables(directory / "python.graph", directory / "python.tables")
        differ = differences(directory / "python.tables", directory / "direct.tables")
        limited = {}
        for limit in limits:
            shutil.rmtree(directory / "direct.tables")
            outcome = child_run(directory, "tables", cap, limit)
            limited[limit] = outcome if isinstance(outcome, list) else (  # a list: what the build said last
                outcome, differences(directory / "python.tables", directory / "direct.tables"))
    label = f"x{copies}" + (f" with {hubs} shared hubs" if hubs else "")
    print(f"{label}: {len(graph.assertions):,} assertions, {results['python']['facts']:,} facts; "
          f"fact tables identical: {'yes' if same else 'NO'}")
    print(f"  tables folder written by DuckDB vs export-tables of the python graph file: "
          f"{'identical' if not differ else 'DIFFERENT: ' + '; '.join(differ)}")
    names = {"python": "python -> graph file", "duckdb": "duckdb -> graph file", "tables": "duckdb -> tables"}
    for engine, r in results.items():
        stages = ", ".join(f"{k} {v:.2f}" for k, v in r["seconds"].items())
        print(f"  {names[engine]:21s} {r['total']:8.2f} s  peak RSS {r['rss_mb']:7.0f} MB  ({stages})")
    p = results["python"]
    for engine in ("duckdb", "tables"):
        d = results[engine]
        print(f"  ratio python / {names[engine]}: whole build {p['total'] / d['total']:.2f}x, "
              f"evaluate {p['seconds']['evaluate'] / d['seconds']['evaluate']:.2f}x, "
              f"peak RSS {d['rss_mb'] / p['rss_mb']:.0%} of python's (targets: 5x, 25%)")
    for limit, outcome in limited.items():
        if isinstance(outcome, list):
            print(f"  duckdb -> tables under --memory-limit {limit}: failed: {outcome}")
            continue
        d, differ = outcome
        stages = ", ".join(f"{k} {v:.2f}" for k, v in d["seconds"].items())
        print(f"  duckdb -> tables under --memory-limit {limit}: {d['total']:.2f} s, peak RSS {d['rss_mb']:.0f} MB "
              f"({stages}); ratio python / it: {p['total'] / d['total']:.2f}x, peak RSS {d['rss_mb'] / p['rss_mb']:.0%} "
              f"of python's; folder {'identical' if not differ else 'DIFFERENT: ' + '; '.join(differ)}")
    d = results["tables"]
    rounds = d["rounds"]
    if rounds:
        biggest = max({r[0] for r in rounds}, key=lambda s: sum(r[4] for r in rounds if r[0] == s))
        rows = [r for r in rounds if r[0] == biggest]
        print(f"  duckdb rounds of its largest stratum ({len(rows)} rounds, "
              f"{sum(r[4] for r in rows):.2f} s of {sum(r[4] for r in rounds):.2f} s in all rounds):")
        for _, number, facts, monomials, seconds in rows:
            print(f"    round {number:3d}: {facts:9,} delta facts {monomials:9,} monomials {seconds:7.3f} s")


# --- --statements: where a DuckDB tables build spends its time --------------------------------

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


def statement_kind(sql: str) -> str:
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
        what = statement_kind(sql)
        profile = self._profiles is not None and what in PROFILED
        if profile:
            path = self._profiles / f"{what}-{next(self._counter)}.json"
            self._con.execute("SET enable_profiling = 'json'")
            self._con.execute(f"SET profiling_output = '{path}'")
        clock = Stopwatch()
        result = self._con.execute(sql, *args, **kwargs)
        self._log.append((what, clock(), threading.current_thread().name))
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


def run_statements(copies: int, inputs: Path | None, cap: int | None, memory_limit: str | None, profile: bool,
                   top: int) -> None:
    """One tables build in this process, every statement timed (``--statements``)."""

    log: list = []
    with tempfile.TemporaryDirectory(prefix="polygraph-statements-") as work:
        work = Path(work)
        if inputs is None:
            inputs = work / "inputs"
            generate_copies(copies).write(inputs)
            what = f"x{copies}"
        else:
            what = str(inputs)
        profiles = work / "profiles" if profile else None
        if profiles is not None:
            profiles.mkdir()
        connect = duckdb_run.connect
        duckdb_run.connect = lambda *a, **k: Timed(connect(*a, **k), log, profiles)
        try:
            clock = Stopwatch()
            built = build_graph(inputs / "assertions.jsonl", inputs / "receipts.jsonl", [rule_file("ro")], cap=cap,
                                engine="duckdb", memory_limit=memory_limit, output=work / "out.tables", tables=True)
            total = clock()
        finally:
            duckdb_run.connect = connect
        summary = profile_summary(profiles) if profiles is not None else None
    stages = ", ".join(f"{k} {v:.2f}" for k, v in built.seconds.items())
    print(f"tables build of {what} under --memory-limit {memory_limit or 'none'}: {total:.2f} s, peak RSS "
          f"{peak_rss_mb():.0f} MB ({stages}); {len(log)} statements")
    seconds: Counter = Counter()
    counts: Counter = Counter()
    for kind, spent, _ in log:
        seconds[kind] += spent
        counts[kind] += 1
    print("  seconds  statements  kind (wall time; statements on the writer's threads overlap the others)")
    for kind, spent in seconds.most_common(top):
        print(f"  {spent:7.2f}  {counts[kind]:10d}  {kind}")
    if summary is not None:
        print(f"  DuckDB's profiles of {summary['statements']} derive and merge statements: planning "
              f"{summary['planning']:.2f} s, running {summary['running']:.2f} s; operators (CPU s, summed over threads):")
        for name, spent in sorted(summary["operators"].items(), key=lambda item: -item[1])[:8]:
            print(f"    {spent:7.2f}  {name}")


# --- --spark: the tables folder written by Spark against the graph file from Spark's labels ----

SPARK_NAMES = {"spark-tables": "spark -> tables folder", "spark": "spark -> graph file"}


def _jvm_peak_mb() -> float | None:
    """The peak RSS (VmHWM) of the java process among this process's descendants, in MB."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    stack, peak = [os.getpid()], None
    while stack:
        pid = stack.pop()
        stack += children.get(pid, [])
        try:
            if (Path("/proc") / str(pid) / "comm").read_text().strip() == "java":
                for line in (Path("/proc") / str(pid) / "status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        peak = max(peak or 0.0, int(line.split()[1]) / 1024)
        except OSError:
            continue
    return peak


def spark_child(engine: str, directory: Path, cap: int | None, master: str) -> None:
    """One Spark build (the session started first, its own stage); prints its stages, the
    driver's and the JVM's peaks and its counts as one JSON line."""
    seconds: dict[str, float] = {}
    clock = Stopwatch()
    spark_session(master)
    seconds["start Spark"] = clock.restart()
    inputs, rules = (directory / "assertions.jsonl", directory / "receipts.jsonl"), [rule_file("ro")]
    if engine == "spark-tables":
        stages: list[tuple[str, float]] = []
        built = build_graph(*inputs, rules, cap=cap, engine="spark", master=master, output=directory / "spark.tables",
                            tables=True, writing=lambda stage: stages.append((stage, clock())))
        ended = clock()
        seconds.update({k: v for k, v in built.seconds.items() if k != "write"})
        for (stage, at), (_, then) in zip(stages, stages[1:] + [("", ended)]):
            seconds[f"write: {stage}"] = then - at
        facts, rounds = built.rows["facts"], len(built.rounds)
    else:
        prepared = python_build.prepare_build(*inputs, rules, cap)
        seconds.update(prepared.seconds)
        clock.restart()
        with evaluation(prepared.program, cap, master) as runner:
            seconds["evaluate"] = clock.restart()
            model = runner.model()
            seconds["read labels into the driver"] = clock.restart()
            rounds = len(runner.stats)
        prepared.build(model).write(directory / "spark.graph")
        seconds["write the graph file"] = clock.restart()
        facts = sum(len(model.facts(name)) for name in model.relations())
    print(json.dumps({"seconds": seconds, "total": sum(seconds.values()), "facts": facts, "rounds": rounds,
                      "rss_mb": peak_rss_mb(), "jvm_mb": _jvm_peak_mb()}))


def run_spark(copies: int, inputs: Path | None, cap: int | None, master: str) -> None:
    """The Spark tables build against the Spark graph-file build, each a child (``--spark``)."""
    with tempfile.TemporaryDirectory(prefix="polygraph-spark-tables-") as work:
        directory = Path(work)
        if inputs is not None:
            for name in ("assertions.jsonl", "receipts.jsonl"):
                shutil.copyfile(inputs / name, directory / name)
        else:
            write_inputs(directory, copies, 0)
        assertions = sum(1 for _ in open(directory / "assertions.jsonl", encoding="utf-8"))
        results = {}
        for engine in ("spark-tables", "spark"):
            outcome = child_run(directory, engine, cap, None, master=master)
            if isinstance(outcome, list):
                print(f"x{copies} {SPARK_NAMES[engine]}: failed: {outcome}")
                return
            results[engine] = outcome
        export_tables(directory / "spark.graph", directory / "graph.tables")
        differ = differences(directory / "graph.tables", directory / "spark.tables")
    label = str(inputs) if inputs is not None else f"x{copies}"
    print(f"{label}: {assertions:,} assertions, {results['spark-tables']['facts']:,} facts, "
          f"{results['spark-tables']['rounds']} rounds; the tables folder vs export-tables of the graph file: "
          f"{'identical' if not differ else 'DIFFERENT: ' + '; '.join(differ)}")
    for engine, r in results.items():
        jvm = f"{r['jvm_mb']:7.0f} MB" if r["jvm_mb"] else "    n/a"
        print(f"  {SPARK_NAMES[engine]:23s} {r['total']:8.2f} s  python peak RSS {r['rss_mb']:6.0f} MB  "
              f"JVM peak RSS {jvm}")
        for stage, value in r["seconds"].items():
            print(f"      {stage:36s} {value:8.2f} s")
    t, g = results["spark-tables"], results["spark"]
    after = {engine: r["total"] - r["seconds"]["evaluate"] - r["seconds"]["start Spark"]
             for engine, r in results.items()}
    print(f"  ratio graph file / tables: whole build {g['total'] / t['total']:.2f}x, after the evaluation "
          f"{after['spark'] / after['spark-tables']:.2f}x, python peak RSS {g['rss_mb'] / t['rss_mb']:.2f}x"
          + (f", JVM peak RSS {g['jvm_mb'] / t['jvm_mb']:.2f}x" if g["jvm_mb"] and t["jvm_mb"] else ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, nargs="+", default=[1, 10])
    parser.add_argument("--hubs", type=int, default=0, help="entities shared by every copy (0: disjoint copies)")
    parser.add_argument("--cap", default="8")
    parser.add_argument("--memory-limit", default=None)
    parser.add_argument("--limits", nargs="*", default=[], metavar="SIZE",
                        help="run the tables build again under each of these memory limits")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--pairs", type=int, default=0, metavar="N",
                      help="instead: N alternated pairs of the Python build and the tables build under --pair-limit")
    mode.add_argument("--statements", action="store_true",
                      help="instead: one tables build of the first --copies (or --inputs), every statement timed")
    mode.add_argument("--spark", action="store_true",
                      help="instead: Spark writing the tables folder against Spark's labels written as a graph file")
    parser.add_argument("--pair-limit", default="130MB", metavar="SIZE")
    parser.add_argument("--inputs", type=Path, metavar="DIR",
                        help="--statements, --spark: a folder with assertions.jsonl and receipts.jsonl instead of "
                             "the synthetic graph")
    parser.add_argument("--profile", action="store_true",
                        help="--statements: DuckDB's profile of every derive and merge statement")
    parser.add_argument("--top", type=int, default=25, help="--statements: kinds of statement printed")
    parser.add_argument("--master", default="local[2]", help="--spark: the Spark master")
    parser.add_argument("--child", nargs=2, metavar=("ENGINE", "DIR"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    cap = None if args.cap == "none" else int(args.cap)
    if args.child:
        child(args.child[0], Path(args.child[1]), cap, args.memory_limit, args.master)
        return 0
    if args.statements:
        run_statements(args.copies[0], args.inputs, cap, args.memory_limit, args.profile, args.top)
        return 0
    if args.spark:
        problem = spark_available()
        if problem:
            print(f"skipped: {problem}")
            return 0
        print(f"Spark {args.master}, builds one after the other, each in a child process (cap {args.cap}, rules/ro.dl)")
        for copies in ([args.copies[0]] if args.inputs else args.copies):
            run_spark(copies, args.inputs, cap, args.master)
        return 0
    for copies in args.copies:
        if args.pairs:
            run_pairs(copies, args.hubs, cap, args.pair_limit, args.pairs)
        else:
            run(copies, args.hubs, cap, args.memory_limit, args.limits)
    return 0


if __name__ == "__main__":
    sys.exit(main())
