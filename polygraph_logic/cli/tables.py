"""``export-tables``, ``import-tables``, ``sql-whatif``: a graph as Parquet label tables, and a
what-if run as SQL on them by DuckDB or Spark."""

from __future__ import annotations

import argparse
import json
import sys

from polygraph_logic.progress import Progress
from polygraph_logic.cli.arguments import add_deletion, add_graph, add_json, deletion, print_json


def register(commands) -> None:
    """Adds the ``export-tables``, ``import-tables`` and ``sql-whatif`` subcommands."""
    export = commands.add_parser(
        "export-tables", help="write a graph file as Parquet label tables (for DuckDB and Spark)",
        description="Write a graph file's rows as a folder of Parquet files that DuckDB and Spark read "
                    "natively: assertions, facts (label as list<list<int32>> of assertion numbers, exact, "
                    "sets), mentions (assertion, fact, support_set), artifacts, rules, and meta.json. "
                    "An earlier export in DIR is replaced; any other non-empty DIR is refused.")
    add_graph(export)
    export.add_argument("-o", "--output", required=True, metavar="DIR", help="the folder to write the tables to")
    add_json(export, "export-tables")
    export.set_defaults(run=_run_export)

    import_ = commands.add_parser(
        "import-tables", help="write the graph file of a Parquet tables folder",
        description="Write a graph file from a folder written by export-tables (or by an engine that "
                    "writes the same tables): the same assertions, facts, labels, artifacts and rules, so "
                    "that whatif, why and export work on it as on the original.")
    import_.add_argument("tables", metavar="DIR", help="a folder written by export-tables")
    import_.add_argument("-o", "--output", required=True, metavar="GRAPH", help="the graph file to write")
    add_json(import_, "import-tables")
    import_.set_defaults(run=_run_import)

    sql = commands.add_parser(
        "sql-whatif", help="a what-if as SQL on Parquet label tables (DuckDB or Spark)",
        description="Evaluate a deletion by one SQL query over a tables folder: touched artifacts (their "
                    "label mentions a deleted assertion), dead ones (every support set hit) and uncertain "
                    "ones (dead on a capped label). These are the label-level verdicts of `polygraph whatif "
                    "--policy trust-all`, by DuckDB or Spark SQL, for deletions too large to bring their touched rows "
                    "to Python. `polygraph whatif DIR [--engine duckdb|spark]` reads the folder itself with "
                    "every policy, re-derivation (--exact), summary trimming and demotion.")
    sql.add_argument("tables", metavar="DIR", help="a folder written by export-tables")
    add_deletion(sql, policy=False)
    sql.add_argument("--engine", choices=("duckdb", "spark"), default="duckdb",
                     help="duckdb (embedded, default) or spark (pyspark: pip install \"polygraph_logic[spark]\")")
    sql.add_argument("--master", default="local[2]", metavar="URL",
                     help="with --engine spark: local[N] or spark://HOST:PORT (default local[2])")
    add_json(sql, "sql-whatif")
    sql.set_defaults(run=_run_sql_whatif)


def _run_export(args: argparse.Namespace) -> int:
    from polygraph_logic.graph.tables.layout import export_tables  # start-up time: loaded when run
    with Progress(f"writing {args.output}", stream=sys.stderr) as progress:
        progress.phase(f"reading {args.graph}")
        counts = export_tables(args.graph, args.output,
                               progress=lambda table, rows: progress.phase(f"{table}: {rows:,} rows"))
    if args.json:
        print_json({"output": args.output, "rows": dict(counts)})
        return 0
    print(f"wrote {args.output}: " + ", ".join(f"{n:,} {name}" for name, n in counts.items()), file=sys.stderr)
    return 0


def _run_import(args: argparse.Namespace) -> int:
    from polygraph_logic.graph.tables.layout import import_tables  # start-up time: loaded when run
    with Progress(f"writing {args.output}", stream=sys.stderr) as progress:
        progress.phase(f"reading {args.tables}")
        import_tables(args.tables, args.output,
                      progress=lambda stage, rows: progress.phase(f"{stage}: {rows:,} rows"))
    if args.json:
        from polygraph_logic.graph.store.graph_file import Graph  # start-up time: loaded when run
        with Graph(args.output) as graph:
            info = graph.info()
        print_json({"tables": args.tables, "output": args.output, "assertions": info["assertions"],
                    "artifacts": info["artifacts"]})
        return 0
    print(f"wrote {args.output} from {args.tables}", file=sys.stderr)
    return 0


def _viewed(asked, tables: str):
    """The deletion under the current view when the tables are a graph folder holding items it leaves
    out (the SQL what-if then refuses it, as any view: --raw counts every assertion)."""
    from polygraph_logic.errors import PolygraphError  # noqa: PLC0415
    from polygraph_logic.graph.store.graph_file import Graph  # noqa: PLC0415
    if asked.raw or asked.evidence is not None:
        return asked
    try:
        with Graph(tables) as graph:
            return asked.viewed(graph)
    except PolygraphError:  # tables that are not a graph folder: no evidence metadata to read
        return asked


def _run_sql_whatif(args: argparse.Namespace) -> int:
    from polygraph_logic.graph.store.sql_whatif import open_tables  # start-up time: loaded when run
    with Progress(f"sql-whatif on {args.engine}", stream=sys.stderr) as progress:
        progress.phase("starting a Spark session" if args.engine == "spark" else f"opening {args.tables}")
        with open_tables(args.tables, args.engine, args.master) as tables:
            progress.phase("running the what-if query")
            outcome = tables.what_if(_viewed(deletion(args), args.tables))
    if args.json:
        print(json.dumps(outcome.to_json(), ensure_ascii=False, indent=1))
        return 0
    print(f"deletion: {outcome.deletion.summary()} ({outcome.deleted:,} assertions); engine {outcome.engine}; "
          f"label-level verdicts (trust-all)")
    for layer, counts in outcome.by_layer().items():
        print(f"  {layer:<9} touched {counts['touched']:>7,}  dead {counts['dead']:>7,}  kept {counts['kept']:>7,}")
    if outcome.uncertain:
        print(f"  {len(outcome.uncertain):,} dead verdicts rest on capped labels (uncertain): "
              "`polygraph whatif GRAPH --exact` settles them")
    print(f"  {outcome.elapsed_ms:.1f} ms")
    return 0
