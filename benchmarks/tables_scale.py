"""Benchmark: a graph no Python build holds, built by DuckDB into tables and asked what-ifs by SQL.

The synthetic paper-scale graph and N-1 further copies (``--copies 400``: 1.12 M assertions),
built by ``build --engine duckdb --tables`` in a child process (its own peak RSS), then:

- single-source retractions of the first copy's sources, each one SQL what-if on DuckDB
  over the Parquet files (the first query of a fresh connection, then warm ones), and the
  same retraction as a whole ``polygraph sql-whatif`` process;
- the whole retracted list at once;
- the check: the first copy is ``generate(seed)`` itself and the copies share no entity,
  so each single-source verdict (touched and dead artifact ids) must equal the Python
  what-if on the x1 graph file built by the Python engine, an independent build.

    python benchmarks/tables_scale.py [--copies 400] [--work DIR] [--sources 5] [--memory-limit 12GB]

With ``--work`` the inputs and the folder are kept there and reused when present (the
build's figures are then those recorded beside the folder when it was built).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from polygraph_logic.allocation import peak_rss_mb  # noqa: E402
from polygraph_logic.engines.sql_whatif import DuckDBTables  # noqa: E402
from polygraph_logic.graph.build import build_graph  # noqa: E402
from polygraph_logic.graph.store import Graph  # noqa: E402
from polygraph_logic.graph.synthetic import generate, generate_copies  # noqa: E402
from polygraph_logic.resources import rule_file  # noqa: E402
from polygraph_logic.whatif import Deletion, what_if  # noqa: E402


def child(directory: Path, memory_limit: str | None) -> None:
    """Builds the tables folder; prints its costs as one JSON line."""
    from polygraph_logic.engines import build_tables
    rounds = []
    started = time.perf_counter()
    built = build_tables(directory / "assertions.jsonl", directory / "receipts.jsonl", [rule_file("ro")],
                         directory / "graph.tables", memory_limit=memory_limit, rounds=rounds.append)
    total = time.perf_counter() - started
    print(json.dumps({"total": total, "seconds": built.seconds, "rows": built.rows, "layers": built.layers,
                      "rss_mb": peak_rss_mb(),
                      "rounds": len(rounds), "strata": len({r.stratum for r in rounds}),
                      "max_round": max((r.seconds for r in rounds), default=0.0)}))


def inputs(directory: Path, copies: int) -> int:
    if (directory / "assertions.jsonl").is_file():
        return sum(1 for _ in open(directory / "assertions.jsonl", encoding="utf-8"))
    started = time.perf_counter()
    graph = generate_copies(copies)
    graph.write(directory)
    print(f"generated x{copies}: {len(graph.assertions):,} assertions in {time.perf_counter() - started:.1f} s")
    return len(graph.assertions)


def build(directory: Path, memory_limit: str | None) -> dict:
    record = directory / "graph.tables.build.json"
    if (directory / "graph.tables" / "meta.json").is_file() and record.is_file():
        print(f"reusing {directory / 'graph.tables'} (built before; its figures as recorded then)")
        return json.loads(record.read_text())
    command = [sys.executable, __file__, "--child", str(directory)]
    if memory_limit:
        command += ["--memory-limit", memory_limit]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"build failed: {done.stderr.strip().splitlines()[-3:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    record.write_text(json.dumps(result))
    return result


def same_verdicts(sql, python) -> bool:
    """The SQL what-if's label-level verdicts against the Python what-if's (as tests/test_tables.py
    compares them): the same touched artifacts; the same dead ones but for claims the Python
    what-if demotes (still entailed) and summaries it trims (sentence by sentence)."""
    trimmed = set(python.summaries)
    demoted = {entry["artifact"] for entry in python.demoted}
    return (sorted(sql.touched) == sorted(python.touched)
            and set(python.dead) - trimmed == set(sql.dead) - demoted - trimmed)


def whole_process(folder: Path, source: str) -> float:
    started = time.perf_counter()
    subprocess.run([shutil.which("polygraph") or "polygraph", "sql-whatif", str(folder), "--retract-source", source],
                   check=True, capture_output=True)
    return time.perf_counter() - started


def run(directory: Path, copies: int, sources: int, memory_limit: str | None) -> None:
    count = inputs(directory, copies)
    result = build(directory, memory_limit)
    rows = result["rows"]
    stages = ", ".join(f"{k} {v:.1f}" for k, v in result["seconds"].items())
    print(f"x{copies}: {count:,} assertions -> {rows['facts']:,} facts, {sum(result['layers'].values()):,} "
          f"artifacts, {rows['mentions']:,} mentions")
    print(f"  build --engine duckdb --tables: {result['total']:.1f} s, peak RSS {result['rss_mb']:,.0f} MB "
          f"({stages}); {result['rounds']} rounds in {result['strata']} strata, slowest round "
          f"{result['max_round']:.2f} s")
    folder = directory / "graph.tables"
    size = sum(p.stat().st_size for p in folder.iterdir()) / 2 ** 20
    print(f"  tables folder: {size:,.1f} MiB")

    # the first copy's sources (no copy prefix), and the reference: the x1 graph built by Python
    retracted = [line.strip() for line in open(directory / "retracted.txt", encoding="utf-8") if line.strip()]
    first = [s for s in retracted if not s.startswith("copy")]
    chosen = random.Random(0).sample(first, min(sources, len(first)))
    with tempfile.TemporaryDirectory(prefix="polygraph-scale-") as work:
        generate(seed=0).write(Path(work))
        python = build_graph(Path(work) / "assertions.jsonl", Path(work) / "receipts.jsonl", [rule_file("ro")])
        python.write(Path(work) / "x1.graph")
        with Graph(Path(work) / "x1.graph") as graph:
            expected = {s: what_if(graph, Deletion(sources=(s,))) for s in chosen}

    started = time.perf_counter()
    tables = DuckDBTables(folder)
    opened = time.perf_counter() - started
    cold, warm, equal = [], [], True
    for source in chosen:
        deletion = Deletion(sources=(source,))
        started = time.perf_counter()
        outcome = tables.what_if(deletion)
        cold.append(time.perf_counter() - started)
        times = []
        for _ in range(3):
            started = time.perf_counter()
            tables.what_if(deletion)
            times.append(time.perf_counter() - started)
        warm.append(min(times))
        equal &= same_verdicts(outcome, expected[source])
    print(f"  single-source what-if by SQL, {len(chosen)} sources of the first copy: first query median "
          f"{statistics.median(cold) * 1000:.0f} ms (max {max(cold) * 1000:.0f}), warm median "
          f"{statistics.median(warm) * 1000:.0f} ms; opening the folder {opened * 1000:.0f} ms (target <= 1 s)")
    print(f"  verdicts equal to the Python what-if on the Python engine's x1 graph file: {'yes' if equal else 'NO'}")
    processes = [whole_process(folder, source) for source in chosen[:3]]
    print(f"  polygraph sql-whatif as a whole process (start-up included): median "
          f"{statistics.median(processes):.2f} s")
    everything = Deletion(sources=tuple(retracted))
    started = time.perf_counter()
    outcome = tables.what_if(everything)
    print(f"  all {len(retracted):,} retracted sources at once: {(time.perf_counter() - started) * 1000:.0f} ms, "
          f"{len(outcome.touched):,} touched, {len(outcome.dead):,} dead")
    tables.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=400)
    parser.add_argument("--work", type=Path, help="keep inputs and tables here (reused when present)")
    parser.add_argument("--sources", type=int, default=5)
    parser.add_argument("--memory-limit", default=None)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.memory_limit)
        return
    if args.work:
        args.work.mkdir(parents=True, exist_ok=True)
        run(args.work, args.copies, args.sources, args.memory_limit)
        return
    with tempfile.TemporaryDirectory(prefix="polygraph-scale-") as work:
        run(Path(work), args.copies, args.sources, args.memory_limit)


if __name__ == "__main__":
    main()
