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

    python benchmarks/engines.py [--copies 1 10 40] [--hubs 0] [--cap 8] [--memory-limit 4GB]
                                 [--limits 300MB 400MB 600MB]
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


def run(copies: int, hubs: int, cap: int | None, memory_limit: str | None, limits=()) -> None:
    with tempfile.TemporaryDirectory(prefix="polygraph-engines-") as work:
        directory = Path(work)
        graph = generate_copies(copies)
        if hubs:
            graph = share_hubs(graph, hubs)
        graph.write(directory)
        results = {}
        for engine in ("python", "duckdb", "tables"):
            command = [sys.executable, __file__, "--child", engine, str(directory), "--cap", str(cap)]
            if memory_limit and engine in ("duckdb", "tables"):
                command += ["--memory-limit", memory_limit]
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode:
                print(f"  {engine}: failed: {done.stderr.strip().splitlines()[-1:]}")
                return
            results[engine] = json.loads(done.stdout.strip().splitlines()[-1])
        same = fact_rows(directory / "python.graph") == fact_rows(directory / "duckdb.graph")
        export_tables(directory / "python.graph", directory / "python.tables")
        differ = differences(directory / "python.tables", directory / "direct.tables")
        limited = {}
        for limit in limits:
            shutil.rmtree(directory / "direct.tables")
            done = subprocess.run([sys.executable, __file__, "--child", "tables", str(directory), "--cap", str(cap),
                                   "--memory-limit", limit], capture_output=True, text=True)
            if done.returncode:  # a list: what the build said last
                limited[limit] = done.stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
            else:
                limited[limit] = (json.loads(done.stdout.strip().splitlines()[-1]),
                                  differences(directory / "python.tables", directory / "direct.tables"))
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
    parser.add_argument("--child", nargs=2, metavar=("ENGINE", "DIR"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    cap = None if args.cap == "none" else int(args.cap)
    if args.child:
        child(args.child[0], Path(args.child[1]), cap, args.memory_limit)
        return
    for copies in args.copies:
        run(copies, args.hubs, cap, args.memory_limit, args.limits)


if __name__ == "__main__":
    main()
