"""Benchmark: the what-if as SQL on Parquet label tables (DuckDB, Spark local[2]) against the
Python what-if on the graph file, side by side in one run; printed, never asserted.

  python     what_if(graph, deletion, "trust-all") on the graph file, read in place
  duckdb     the SQL what-if (engines/sql_whatif.py) run by DuckDB over the Parquet files
  spark      the same SQL text run by Spark SQL, local[2], one warm session

on the synthetic paper-scale graph (x1) and its copies (x10, x40 with --scales), for
single-source retractions and for the whole retracted list at once.  Every SQL verdict is
checked against the Python touched set while timing.  Also: the tables writer (DuckDB's
COPY from numpy batches, and pyarrow when it is installed), import back, Spark start-up.

    python benchmarks/sql_whatif.py [--scales 1,10] [--sources 10] [--repeat 3] [--no-spark] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from polygraph_logic.engines.sql_whatif import DuckDBTables, SparkTables  # noqa: E402
from polygraph_logic.engines.tables import export_tables, import_tables  # noqa: E402
from polygraph_logic.graph.build import build_graph  # noqa: E402
from polygraph_logic.graph.store import Graph  # noqa: E402
from polygraph_logic.graph.synthetic import generate_copies  # noqa: E402
from polygraph_logic.resources import rule_file  # noqa: E402
from polygraph_logic.whatif import Deletion, what_if  # noqa: E402

try:
    from .whatif import timed  # imported as polygraph_logic.benchmarks.sql_whatif
except ImportError:
    from whatif import timed  # noqa: E402  (run as a script: its folder is on sys.path)


def graph_of(factor: int, work: Path) -> tuple[Path, list[str]]:
    """Builds (or reuses from ``work``) the x``factor`` synthetic graph; returns it and its retracted sources."""
    inputs = generate_copies(factor, 0)
    path = work / f"x{factor}.graph"
    if not path.exists():
        started = time.perf_counter()
        build_graph(inputs.assertions, inputs.receipts, [rule_file("ro")]).write(path)
        print(f"  built {path.name} in {time.perf_counter() - started:.1f} s")
    return path, list(inputs.retracted)


def pyarrow_export(graph: Graph, directory: Path) -> None:
    """The alternative writer measured against DuckDB's: facts and mentions through pyarrow."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    nums, relations, args, labels, exact, sets, m_assertion, m_fact, m_set = [], [], [], [], [], [], [], [], []
    for num, relation, arguments, blob, flag in graph.query("SELECT num, relation, args, label, exact FROM facts "
                                                            "ORDER BY num"):
        groups = graph.decode(blob)
        nums.append(num), relations.append(relation), args.append(arguments), labels.append(groups)
        exact.append(bool(flag)), sets.append(len(groups))
        for i, group in enumerate(groups):
            m_assertion.extend(group), m_fact.extend([num] * len(group)), m_set.extend([i] * len(group))
    directory.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"num": pa.array(nums, pa.int64()), "relation": relations, "args": args,
                             "label": pa.array(labels, pa.list_(pa.list_(pa.int32()))), "exact": exact,
                             "sets": pa.array(sets, pa.int32())}), directory / "facts.parquet", compression="zstd")
    mentions = pa.table({"assertion": pa.array(m_assertion, pa.int32()), "fact": pa.array(m_fact, pa.int64()),
                         "support_set": pa.array(m_set, pa.int32())})
    pq.write_table(mentions.sort_by([("assertion", "ascending"), ("fact", "ascending")]),
                   directory / "mentions.parquet", compression="zstd")


def duckdb_facts_only(graph: Graph, directory: Path) -> None:
    """DuckDB's writer for the same two tables (the rest of export_tables is the same for both)."""
    from polygraph_logic.engines import tables
    con = tables.duckdb_connection()
    con.execute(f"CREATE TABLE facts ({tables._SCHEMA['facts']})")
    con.execute(f"CREATE TABLE mentions ({tables._SCHEMA['mentions']})")
    for batch, mentions in tables._fact_batches(graph):
        con.register("m", mentions)
        con.execute("INSERT INTO mentions SELECT * FROM m")
        con.register("b", batch)
        con.execute("INSERT INTO facts SELECT * REPLACE (CAST(label AS INTEGER[][]) AS label) FROM b")
    directory.mkdir(parents=True, exist_ok=True)
    con.execute(f"COPY (SELECT * FROM facts ORDER BY num) TO '{directory / 'facts.parquet'}' (FORMAT parquet, "
                "COMPRESSION zstd)")
    con.execute(f"COPY (SELECT * FROM mentions ORDER BY assertion, fact, support_set) TO "
                f"'{directory / 'mentions.parquet'}' (FORMAT parquet, COMPRESSION zstd)")
    con.close()


def writers(path: Path, work: Path) -> None:
    with Graph(path) as graph:
        duck = timed(lambda: duckdb_facts_only(graph, work / "w-duckdb"))
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            print(f"  facts+mentions writer: duckdb {duck:.2f} s; pyarrow not installed (not measured)")
            return
        arrow = timed(lambda: pyarrow_export(graph, work / "w-pyarrow"))
    size = {name: sum(f.stat().st_size for f in (work / name).iterdir()) for name in ("w-duckdb", "w-pyarrow")}
    print(f"  facts+mentions writer: duckdb {duck:.2f} s ({size['w-duckdb'] / 1e6:.1f} MB), pyarrow {arrow:.2f} s "
          f"({size['w-pyarrow'] / 1e6:.1f} MB); pyarrow/duckdb time {arrow / duck:.2f}x")


def run_scale(factor: int, work: Path, args, spark) -> None:
    print(f"\n== x{factor}")
    path, retracted = graph_of(factor, work)
    tables = work / f"x{factor}.tables"
    export = timed(lambda: export_tables(path, tables))
    back = timed(lambda: import_tables(tables, work / f"x{factor}.back.graph"))
    rows = json.loads((tables / "meta.json").read_text())["rows"]
    print(f"  {rows['artifacts']:,} artifacts, {rows['facts']:,} facts, {rows['mentions']:,} mention rows; "
          f"export-tables {export:.2f} s, import-tables {back:.2f} s; graph {path.stat().st_size / 1e6:.1f} MB, "
          f"tables {sum(f.stat().st_size for f in tables.iterdir()) / 1e6:.1f} MB")
    writers(path, work)
    rng = random.Random(factor)
    first_copy = [s for s in retracted if not s.startswith("copy")]
    deletions = [("single source", Deletion(sources=(s,))) for s in rng.sample(first_copy, min(args.sources,
                                                                                               len(first_copy)))]
    deletions.append((f"all {len(retracted)} retracted sources", Deletion(sources=tuple(retracted))))
    with Graph(path) as graph, DuckDBTables(tables) as duck:
        engines = [("duckdb", duck)]
        if spark is not None:
            engines.append(("spark", SparkTables(tables, session=spark)))
            engines[-1][1].what_if(deletions[0][1])  # the views' first job (schema, file listing)
        times: dict[str, dict[str, list[float]]] = {}
        for kind, deletion in deletions:
            group = "single source" if kind == "single source" else kind
            python = what_if(graph, deletion, "trust-all")
            entry = times.setdefault(group, {"python": [], "touched": []})
            entry["python"].append(timed(lambda: what_if(graph, deletion, "trust-all"), args.repeat))
            entry["touched"].append(len(python.touched))
            for name, engine in engines:
                outcome = engine.what_if(deletion)
                assert outcome.touched == python.touched, (name, str(deletion))  # the same verdicts as timed
                entry.setdefault(name, []).append(timed(lambda: engine.what_if(deletion),
                                                        args.repeat if name == "duckdb" else 1))
        for group, entry in times.items():
            python = statistics.median(entry["python"])
            print(f"  {group} ({len(entry['python'])} deletions, median touched "
                  f"{statistics.median(entry['touched']):,.0f}), median per what-if:")
            print(f"    python {python * 1000:10.1f} ms")
            for name, _ in engines:
                value = statistics.median(entry[name])
                print(f"    {name:<6} {value * 1000:10.1f} ms   {name}/python {value / python:8.1f}x")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", default="1,10", help="copies of the paper-scale graph, e.g. 1,10,40")
    parser.add_argument("--sources", type=int, default=10, help="single-source retractions per scale")
    parser.add_argument("--repeat", type=int, default=3, help="best of N for python and duckdb (spark: 1)")
    parser.add_argument("--no-spark", action="store_true")
    parser.add_argument("--work", type=Path, help="keep graphs and tables here (reused when present)")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="sql-whatif-"))
    work.mkdir(parents=True, exist_ok=True)
    spark = None
    if not args.no_spark:
        from polygraph_logic.engines.spark import spark_available, spark_session
        problem = spark_available()
        if problem:
            print(f"spark: skipped ({problem})")
        else:
            started = time.perf_counter()
            spark = spark_session("local[2]")
            print(f"spark local[2] session started in {time.perf_counter() - started:.1f} s")
    for factor in (int(x) for x in args.scales.split(",")):
        run_scale(factor, work, args, spark)
    return 0


if __name__ == "__main__":
    sys.exit(main())
