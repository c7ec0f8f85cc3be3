"""Benchmark: building the synthetic graph with the Python engine and with DuckDB, side by side.

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
neighbours, and the closure grows faster than the input; the counts show how much.

With ``--limits`` the tables build runs again under each memory limit given, after the
three builds: the trade of time for memory, each folder compared with the Python export.

With ``--pairs N --pair-limit SIZE`` the Python build and the tables build under that limit then
run alternately, N pairs: this machine's speed drifts by tens of percent within minutes (the
same build under 140MB took 15.4 s and 19.5 s an hour apart), so a ratio of two builds made
minutes apart measures the drift as much as the engines.  Each pair's ratio is of two adjacent
builds; printed per pair and as their median and range, with the verdict on the issue's target
(at least 5x faster at no more than 25% of the Python engine's peak) for the median and for
every pair.

    python benchmarks/engines.py [--copies 1 10 40] [--hubs 0] [--cap 8] [--memory-limit 4GB]
                                 [--limits 300MB 400MB 600MB] [--pairs 3 --pair-limit 130MB]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from polygraph_logic.allocation import peak_rss_mb  # noqa: E402
from polygraph_logic.engines.tables import export_tables  # noqa: E402
from polygraph_logic.engines.tables_compare import differences  # noqa: E402
from polygraph_logic.graph.assertions import Assertion  # noqa: E402
from polygraph_logic.graph.synthetic import generate_copies  # noqa: E402
from polygraph_logic.resources import rule_file  # noqa: E402


def child(engine: str, directory: Path, cap: int | None, memory_limit: str | None) -> None:
    """Builds and writes one graph; prints its costs as one JSON line."""
    from polygraph_logic.engines import build_graph, build_tables

    rounds = []
    started = time.perf_counter()
    if engine == "tables":  # DuckDB writing the tables folder itself
        built = build_tables(directory / "assertions.jsonl", directory / "receipts.jsonl", [rule_file("ro")],
                             directory / "direct.tables", cap=cap, memory_limit=memory_limit, rounds=rounds.append)
        total = time.perf_counter() - started
        peak = peak_rss_mb()
        print(json.dumps({"seconds": built.seconds, "total": total, "rss_mb": peak, "facts": built.rows["facts"],
                          "rounds": [[r.stratum, r.round, r.delta_facts, r.monomials, r.seconds] for r in rounds]}))
        return
    build = build_graph(directory / "assertions.jsonl", directory / "receipts.jsonl", [rule_file("ro")],
                        cap=cap, engine=engine, memory_limit=memory_limit,
                        rounds=rounds.append if engine == "duckdb" else None)
    build.write(directory / f"{engine}.graph")
    total = time.perf_counter() - started
    peak = peak_rss_mb()
    print(json.dumps({"seconds": build.seconds, "total": total, "rss_mb": peak,
                      "facts": sum(len(build.model.facts(n)) for n in build.model.relations()),
                      "rounds": [[r.stratum, r.round, r.delta_facts, r.monomials, r.seconds] for r in rounds]}))


#: the chains that grow through a hub: located_in ∘ inverse(located_in) and has_part ∘ part_of
#: meet at the object of located_in and part_of (the subject of has_part)
HUB_SIDES = {"RO:0001025": "object", "BFO:0000050": "object", "BFO:0000051": "subject"}


def share_hubs(graph, hubs: int):
    """The copies with the ``hubs`` busiest located_in / part_of targets of the first copy
    shared (their copy prefix dropped), so that every copy's edges meet there."""
    degree = Counter()
    for a in graph.assertions:
        side = HUB_SIDES.get(a.predicate)
        if side and not a.id.startswith("copy"):
            degree[getattr(a, side)] += 1
    shared = {name for name, _ in degree.most_common(hubs)}

    def unprefix(name: str) -> str:
        head, _, rest = name.partition("/")
        return rest if head.startswith("copy") and rest in shared else name

    graph.assertions = [Assertion(a.id, a.source, unprefix(a.subject), a.predicate, unprefix(a.object), a.text)
                        for a in graph.assertions]
    return graph


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
    from statistics import median
    speedups = [p["total"] / t["total"] for p, t in pairs]
    peaks = [t["rss_mb"] / p["rss_mb"] for p, t in pairs]
    met = [s >= TARGET_SPEEDUP and q <= TARGET_PEAK for s, q in zip(speedups, peaks)]
    return {"speedups": speedups, "peaks": peaks, "median_speedup": median(speedups), "median_peak": median(peaks),
            "met_median": median(speedups) >= TARGET_SPEEDUP and median(peaks) <= TARGET_PEAK,
            "met_every": all(met), "met": met}


def write_inputs(directory: Path, copies: int, hubs: int):
    """Generates the synthetic graph with ``copies`` (sharing ``hubs``) and writes its inputs."""
    graph = generate_copies(copies)
    if hubs:
        graph = share_hubs(graph, hubs)
    graph.write(directory)
    return graph


def child_run(directory: Path, engine: str, cap, memory_limit: str | None,
              timeout: float | None = None) -> dict | list:
    """One build in a child process: its JSON line, or (a list) what it said last when it failed
    (or that it did not finish within ``timeout`` seconds: it is then stopped)."""
    command = [sys.executable, __file__, "--child", engine, str(directory), "--cap", str(cap)]
    if memory_limit:
        command += ["--memory-limit", memory_limit]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return [f"did not finish in {timeout:g} s (stopped)"]
    if done.returncode:
        return done.stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
    return json.loads(done.stdout.strip().splitlines()[-1])


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, nargs="+", default=[1, 10])
    parser.add_argument("--hubs", type=int, default=0, help="entities shared by every copy (0: disjoint copies)")
    parser.add_argument("--cap", default="8")
    parser.add_argument("--memory-limit", default=None)
    parser.add_argument("--limits", nargs="*", default=[], metavar="SIZE",
                        help="run the tables build again under each of these memory limits")
    parser.add_argument("--pairs", type=int, default=0, metavar="N",
                        help="instead: N alternated pairs of the Python build and the tables build under --pair-limit")
    parser.add_argument("--pair-limit", default="130MB", metavar="SIZE")
    parser.add_argument("--child", nargs=2, metavar=("ENGINE", "DIR"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    cap = None if args.cap == "none" else int(args.cap)
    if args.child:
        child(args.child[0], Path(args.child[1]), cap, args.memory_limit)
        return
    for copies in args.copies:
        if args.pairs:
            run_pairs(copies, args.hubs, cap, args.pair_limit, args.pairs)
        else:
            run(copies, args.hubs, cap, args.memory_limit, args.limits)


if __name__ == "__main__":
    main()
