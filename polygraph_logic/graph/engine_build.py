"""``build_graph``, the one build of the public API: any engine, a graph file, a folder or none.

The engine (``python``, the reference; ``duckdb``; ``spark``) evaluates the inputs; the output
is a graph file (the SQLite writer, the same rows whatever the engine), a graph folder written
straight from DuckDB or Spark (``tables=True``; graph/tables/), or nothing: the ``Build`` in
memory, to ``write`` later.  ``polygraph build`` calls this and nothing else; the helpers it
routes to (graph/build.py's ``build_python``, graph/tables/'s ``build_tables`` and
``build_spark_tables``) are internal.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Iterable

from polygraph_logic.errors import PolygraphError
from polygraph_logic.datalog.evaluate import StratumStats
from polygraph_logic.graph import build as python_build
from polygraph_logic.graph.assertions import Assertion
from polygraph_logic.graph.authorization import check_authorized
from polygraph_logic.graph.store.versions import file_entry
from polygraph_logic.graph.records import Receipt
from polygraph_logic.engines import ENGINES
from polygraph_logic.engines.driver import RoundStats
from polygraph_logic.resources import rule_file



def build_graph(
    assertions: str | Path | Iterable[Assertion | dict],
    receipts: str | Path | Iterable[Receipt | dict] | None = None,
    rules: Iterable[str | Path] = (),
    cap: int | None = 8,
    progress: Callable[[StratumStats], None] | None = None,
    engine: str = "python",
    memory_limit: str | None = None,
    rounds: Callable[[RoundStats], None] | None = None,
    master: str | None = None,
    *,
    output: str | Path | None = None,
    tables: bool = False,
    origins=None,
    circuit: bool = True,
    writing: Callable[[str], None] | None = None,
    labels: str = "capped",
    authorization=None,
):
    """Evaluates assertions, receipts and rules under why-provenance capped at ``cap`` with
    ``engine``; returns the ``Build`` (``output`` None: nothing written, ``build.write(path)``
    writes it; a graph file path: written there) or, with ``tables=True``, the ``TablesBuild``
    of the graph folder ``output`` written straight from the engine (duckdb or spark).

    ``assertions`` and ``receipts``: JSON Lines paths, or records (``Assertion``/``Receipt``
    objects or dicts of the documented JSON form, checked as a file's lines are).  ``rules``:
    rule file paths or the names of shipped ones (``"ro"``, ``"contradictions"``).
    ``memory_limit`` (duckdb: "4GB") bounds DuckDB's memory (it spills beyond); ``master``
    (spark: "local[2]", the default, or "spark://HOST:PORT") is where Spark runs.
    ``progress`` hears each stratum evaluated, ``rounds`` each semi-naive round (duckdb, spark),
    ``writing`` each stage of writing ``output``.  ``origins`` (query.origins.Origins) are
    stored with the graph; ``circuit=False`` leaves out the circuit of the capped labels.
    ``labels="witness"`` (engine python, or duckdb with ``tables``): one support set per fact and
    the evaluation's circuit of every fact with more (graph/build.py's LABELS), a build at the
    Boolean closure's price.
    ``authorization`` (a policy file or graph.authorization.Policy; None: nothing refused): every
    assertion it does not authorize is refused at its file and line (``unauthorized``), nothing built;
    version 1 (of a graph file or folder) records the policy file among its inputs.
    A combination that does not apply is refused (``bad_argument``, naming the option).
    """
    _check(engine, output, tables, memory_limit, master, cap)
    _check_labels(labels, engine, circuit, tables)
    rules = rule_paths(rules)
    if authorization is not None:
        if not isinstance(assertions, (str, Path)):
            assertions = list(assertions)  # read twice: by the check and by the build
        policy = check_authorized(assertions, authorization)
    recorded = ([file_entry(authorization, "authorization", len(policy.rules))]
                if authorization is not None and isinstance(authorization, (str, Path)) else [])
    if tables:
        return _build_folder(assertions, receipts, rules, cap, progress, engine, memory_limit, rounds, master,
                             Path(output), origins, circuit, writing, labels, recorded)
    build = _evaluate(assertions, receipts, rules, cap, progress, engine, memory_limit, rounds, master, labels)
    build.origins, build.circuit = origins, circuit
    build.inputs.extend(recorded)
    if output is not None:
        say = writing or (lambda stage: None)
        say("collecting the artifacts")
        build.write(output, progress=lambda stage, rows: say(f"{stage}: {rows:,} rows"))
    return build


def _check(engine, output, tables: bool, memory_limit, master, cap) -> None:
    """Refuses what does not apply, naming the option (the keyword and the CLI's flag)."""
    if engine not in ENGINES:
        raise PolygraphError("bad_argument", f"unknown engine {engine!r} (engine, --engine); "
                                             f"choose one of {', '.join(ENGINES)}")
    if memory_limit is not None and engine != "duckdb":
        raise PolygraphError("bad_argument", "memory_limit (--memory-limit) applies to engine duckdb only")
    if master is not None and engine != "spark":
        raise PolygraphError("bad_argument", "master (--master) applies to engine spark only")
    if cap is not None and (type(cap) is not int or cap < 1):
        raise PolygraphError("bad_argument", f"cap must be a positive integer or None (no cap), got {cap!r}")
    if output is not None and (not isinstance(output, (str, Path)) or not str(output)):
        raise PolygraphError("bad_argument", f"output must be a path (str or Path), got {output!r}")
    if tables and output is None:
        raise PolygraphError("bad_argument", "tables (--tables) writes a graph folder: give the folder as output")
    if tables and engine == "python":
        raise PolygraphError("bad_argument", "tables (--tables) is written straight from DuckDB or Spark: choose "
                                             "engine duckdb or spark (or write a graph file and export_tables it)")


def _check_labels(labels, engine: str, circuit: bool, tables: bool = False) -> None:
    """Refuses labels that are not one of LABELS, or witness labels where they cannot be built."""
    if labels not in python_build.LABELS:
        raise PolygraphError("bad_argument", f"labels (--labels) is one of {', '.join(python_build.LABELS)}, "
                                             f"not {labels!r}")
    if labels == "witness" and engine == "spark":
        raise PolygraphError("bad_argument", "labels='witness' (--labels witness) is built by engine python (a "
                                             "graph file) or duckdb (a graph folder, --tables), not spark")
    if labels == "witness" and engine == "duckdb" and not tables:
        raise PolygraphError("bad_argument", "labels='witness' (--labels witness) with engine duckdb writes a "
                                             "graph folder: add tables=True (--tables), or build a graph file "
                                             "with engine python")
    if labels == "witness" and not circuit:
        raise PolygraphError("bad_argument", "labels='witness' (--labels witness) keeps the circuit that settles "
                                             "its verdicts: it cannot be left out (circuit=False, --no-circuit)")


def rule_paths(rules: Iterable[str | Path]) -> list[str]:
    """Each rule file as a path: a path that exists as given, else the shipped rule file of that
    name (``"ro"``: rules/ro.dl); a ``file_error`` names one that is neither."""
    if isinstance(rules, (str, Path)):
        raise PolygraphError("bad_argument", f"rules is a list of rule files, got the one path {str(rules)!r}: "
                                             f"write rules=[{str(rules)!r}]")
    try:
        return [str(rule_file(name)) for name in rules or ()]
    except FileNotFoundError as error:
        raise PolygraphError("file_error", str(error)) from None


def _evaluate(assertions, receipts, rules, cap, progress, engine, memory_limit, rounds, master, labels="capped"):
    """The Build of the inputs evaluated by ``engine`` (its ``rounds``: the SQL engines' rounds)."""
    if engine == "python":
        return python_build.build_python(assertions, receipts, rules, cap=cap, progress=progress, labels=labels)
    from polygraph_logic.engines.duckdb_run import evaluate_duckdb  # start-up time: DuckDB only when asked
    from polygraph_logic.engines.spark_run import evaluate_spark  # start-up time: Spark only when asked
    prepared = python_build.prepare_build(assertions, receipts, rules, cap)  # as the Python engine's build
    started = time.perf_counter()
    if engine == "duckdb":
        model, stats = evaluate_duckdb(prepared.program, cap, memory_limit, progress, rounds)
    else:
        model, stats = evaluate_spark(prepared.program, cap, master or "local[2]", progress, rounds)
    prepared.seconds["evaluate"] = time.perf_counter() - started
    build = prepared.build(model)
    build.rounds = stats  # per semi-naive round: delta facts, monomials, seconds
    return build


def _build_folder(assertions, receipts, rules, cap, progress, engine, memory_limit, rounds, master, folder: Path,
                  origins, circuit, writing, labels="capped", inputs=()):
    """The graph folder written straight from DuckDB or Spark (graph/tables/); ``inputs``: more
    input files its version 1 records."""
    if engine == "spark":
        from polygraph_logic.graph.tables.spark_build import build_spark_tables  # start-up time: Spark when asked
        return build_spark_tables(assertions, receipts, rules, folder, cap=cap, master=master, progress=progress,
                                  origins=origins, rounds=rounds, writing=writing, circuit=circuit, inputs=inputs)
    from polygraph_logic.graph.tables.duckdb_build import build_tables  # start-up time: DuckDB when asked
    return build_tables(assertions, receipts, rules, folder, cap=cap, memory_limit=memory_limit, progress=progress,
                        origins=origins, rounds=rounds, writing=writing, circuit=circuit, labels=labels,
                        inputs=inputs)
