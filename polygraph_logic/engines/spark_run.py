"""Running a plan (sql_plan.py) on Apache Spark SQL: local[N] or a cluster (spark://HOST:PORT).

The same statements as DuckDB's, in the Spark dialect, driven by the same semi-naive
loop (driver.py).  What is Spark's own:

- tables are temporary views of DataFrames in a session of their own (``newSession``:
  its views never meet another evaluation's or a what-if's);
- a round's results are materialised with ``localCheckpoint``: each delta once, each
  relation once when its delta is merged; the lineage is cut there, so a round's plan
  does not grow with the rounds before it, and every statement reads the state before
  the round (a DataFrame is bound to the views it was analysed against);
- a round is one job per changed relation for its delta (its facts and monomials are
  observed while it is checkpointed, not counted by another job) and one for the merge;
- on a local master a round's cost is fixed costs, not data (see LOCAL_CONF): no code
  generation, no broadcast jobs, and as many partitions as cores;
- the facts and parameters travel from this process: through CSV files Spark reads
  natively for a local master, through ``createDataFrame`` (the driver's rows shipped to
  the executors) for a cluster, where this machine's files are not the executors';
- a failure in the JVM is one ``spark_error`` line, never a Java trace.
"""

from __future__ import annotations

import csv
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from polygraph_logic.errors import PolygraphError
from polygraph_logic.datalog.evaluate import Model, StratumStats
from polygraph_logic.datalog.program import Program
from polygraph_logic.engines import sql_labels as labels
from polygraph_logic.engines.dialect import SPARK
from polygraph_logic.engines.driver import RoundStats, Runner
from polygraph_logic.engines.sql_plan import Plan, make_plan


#: a round's statements are many small joins over lambda-heavy projections: their cost is
#: planning and scheduling, not data.  Measured on Figure 1 (18 rounds, local[2]): 222 s with
#: Spark's defaults, 157 s without whole-stage code generation and adaptive re-planning.
#: Optimizer rules left out: PushProjectionThroughUnion copied a round's label products (the
#: fold above a union of ~50 joins) into every branch (Figure 1's edge statement: 271 lambda
#: functions in the optimised plan instead of 73; optimised in 0.65-0.87 s instead of 0.41-0.68 s);
#: InferFiltersFromConstraints derives not-null filters from those projections; the others
#: changed nothing in these plans (Spark's rule metrics) but walked them every round
SESSION_CONF = {"spark.sql.codegen.wholeStage": "false", "spark.sql.adaptive.enabled": "false",
                "spark.sql.optimizer.excludedRules": ",".join(
                    [f"org.apache.spark.sql.catalyst.optimizer.{rule}" for rule in (
                        "PushProjectionThroughUnion", "InferFiltersFromConstraints", "EliminateOuterJoin",
                        "SimplifyBinaryComparison")]
                    + [f"org.apache.spark.sql.execution.datasources.{rule}" for rule in (
                        "SchemaPruning", "PruneFileSourcePartitions", "PushVariantIntoScan")])}

#: a local master's data is small beside its fixed costs per task and per job (profiled on
#: Figure 1, local[2], docs/bench/notebook.md): each task generated and compiled code for the plan's
#: projections (Janino) and deserialised the stage's expression trees, a round ran about 25
#: broadcast jobs (the checkpointed tables' estimated sizes are not their real sizes), and
#: each of a round's unions read 4 partitions per branch.  Interpreted expressions, shuffled
#: joins and one partition per core instead (_Runner.partitions)
LOCAL_CONF = {"spark.sql.codegen.factoryMode": "NO_CODEGEN", "spark.sql.autoBroadcastJoinThreshold": "-1"}


def local_cores(master: str) -> int | None:
    """The worker threads of a local master (``local``, ``local[N]``, ``local[*]``,
    ``local[N,F]``), or None for a cluster (``local-cluster[...]`` included)."""
    if not master.startswith("local") or master.startswith("local-cluster"):
        return None
    inside = master[master.index("[") + 1:master.index("]")] if "[" in master else "1"
    first = inside.split(",")[0].strip()
    return (os.cpu_count() or 1) if first == "*" else max(int(first), 1)


def evaluate_spark(program: Program, cap: int | None = 8, master: str = "local[2]",
                   progress: Callable[[StratumStats], None] | None = None,
                   rounds: Callable[[RoundStats], None] | None = None,
                   session=None) -> tuple[Model, list[RoundStats]]:
    """Evaluates ``program`` under why-provenance capped at ``cap`` on Spark; returns the Model
    (the same labels as ``evaluate(program, "why", cap)``) and per-round statistics.

    ``session``: a SparkSession to evaluate in (a new session of its context is used);
    by default the process's session for ``master`` (engines/spark.py)."""
    with evaluation(program, cap, master, progress, rounds, session) as runner:
        try:
            return runner.model(), runner.stats
        except Exception as error:  # a Java exception through py4j, or the JVM gone
            raise PolygraphError("spark_error", f"Spark could not evaluate the program: {one_line(error)}") from None


@contextmanager
def evaluation(program: Program, cap: int | None = 8, master: str = "local[2]",
               progress: Callable[[StratumStats], None] | None = None,
               rounds: Callable[[RoundStats], None] | None = None,
               session=None) -> Iterator["_Runner"]:
    """Evaluates ``program`` on Spark and yields the runner while its session is alive: its
    ``r<n>`` views hold every relation's labels (``runner.spark.table(plan.table(relation))``;
    graph/tables/spark_build.py writes them as Parquet without a round trip through this process).
    A failure of the evaluation is one ``spark_error``; the block's own errors are its own."""
    from polygraph_logic.engines.spark import spark_session  # Spark starts only when a plan runs on it
    program.check_provenance_negation()
    plan = make_plan(program, cap)
    spark = (session or spark_session(master)).newSession()
    cores = local_cores(spark.sparkContext.master)
    conf = dict(SESSION_CONF)
    if cores is not None:
        conf.update(LOCAL_CONF)
        conf["spark.sql.shuffle.partitions"] = str(cores)
    for key, value in conf.items():
        spark.conf.set(key, value)
    with tempfile.TemporaryDirectory(prefix="polygraph-spark-") as work:
        try:
            runner = _Runner(spark, plan, Path(work) if cores is not None else None, rounds, cores)
            runner.load()
            runner.run(progress)
        except PolygraphError:
            raise
        except Exception as error:  # a Java exception through py4j, or the JVM gone
            raise PolygraphError("spark_error", f"Spark could not evaluate the program: {one_line(error)}") from None
        yield runner


def one_line(error: BaseException) -> str:
    """The line of a (py4j) exception that says what went wrong, at most 300 characters."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    cause = next((line for line in lines if "Exception:" in line), lines[0] if lines else type(error).__name__)
    return cause[:300]


class _Runner(Runner):
    """One evaluation in one Spark session: r<n>, d<n>, c<n>, p<n> are temporary views."""

    dialect = SPARK

    def __init__(self, spark, plan: Plan, work: Path | None, on_round, partitions: int | None = None):
        super().__init__(plan, on_round)
        self.spark, self.work = spark, work
        #: a local master's partitions per table and per round's union (its cores); None: Spark's
        self.partitions = partitions

    def _narrow(self, frame):
        """``frame`` in at most ``partitions`` partitions, without a shuffle (a local master):
        a task per partition deserialises its stage's whole plan, whatever its rows."""
        return frame if self.partitions is None else frame.coalesce(self.partitions)

    def _materialise(self, frame):
        """``frame`` computed once (one job) and cut from its lineage."""
        return self._narrow(frame.localCheckpoint(eager=True))

    def _frame(self, name: str, columns: list[str], rows):
        """A DataFrame of integer ``columns`` holding ``rows``: read from a CSV file (local
        master) or shipped from this process (cluster)."""
        schema = ", ".join(f"{c} INT" for c in columns)
        if self.work is not None:
            path = self.work / f"{name}.csv"
            with open(path, "w", newline="") as out:
                csv.writer(out).writerows(rows)
            return self.spark.read.schema(schema).csv(str(path))
        return self.spark.createDataFrame([tuple(row) for row in rows], schema)

    def _empty(self, relation: str):
        keys = ", ".join(f"CAST(NULL AS INT) AS {k}" for k in self.plan.keys(relation))
        return self.spark.sql(f"SELECT {keys}, CAST(NULL AS ARRAY<ARRAY<INT>>) AS label, "
                              f"CAST(NULL AS BOOLEAN) AS exact WHERE FALSE")

    def _view(self, name: str, frame) -> None:
        frame.createOrReplaceTempView(name)

    def load(self) -> None:
        plan, d = self.plan, SPARK
        loaded = set()
        for relation, rows in self.fact_rows():
            keys = plan.keys(relation)
            self._view("raw", self._frame(f"facts{plan.relations[relation]}", keys + ["v"], rows))
            raw = (f"SELECT {', '.join(keys)}, array_distinct(collect_list(CASE WHEN v < 0 "
                   f"THEN CAST(array() AS ARRAY<INT>) ELSE array(v) END)) AS p, TRUE AS e "
                   f"FROM raw GROUP BY {', '.join(keys)}")
            table = self._materialise(self.spark.sql(labels.normalize(d, raw, keys, plan.cap)))
            self._view(plan.table(relation), table)
            loaded.add(relation)
        self.spark.catalog.dropTempView("raw")
        for relation in plan.relations:
            if relation not in loaded:
                self._view(plan.table(relation), self._empty(relation))
            self._view(plan.table(relation, delta=True), self._empty(relation))
        for shape in self.parameter_shapes():
            columns = [f"c{i}" for i in range(shape.width)]
            frame = self._frame(f"params{shape.number}", columns, shape.params).distinct()
            self._view(shape.table, self._materialise(frame))

    def derive(self, relation: str, parts: list[str]) -> None:
        # analysed now, against the views as they are before the round's merges; a union of
        # many joins, its branches' partitions read by a few tasks
        self._view(f"c{self.plan.relations[relation]}", self._narrow(self.spark.sql(" UNION ALL ".join(parts))))

    def replace_delta(self, relation: str, sql: str) -> tuple[int, int]:
        from pyspark.sql import Observation
        from pyspark.sql import functions as F
        rows = Observation()  # the delta's facts and monomials, gathered by the checkpoint's job
        frame = self.spark.sql(sql).observe(rows, F.count(F.lit(1)).alias("facts"),
                                            F.coalesce(F.sum(F.size("label")), F.lit(0)).alias("monomials"))
        delta = self._materialise(frame)
        self._view(self.plan.table(relation, delta=True), delta)
        self.spark.catalog.dropTempView(f"c{self.plan.relations[relation]}")
        counted = rows.get
        return int(counted["facts"]), int(counted["monomials"])

    def clear_delta(self, relation: str) -> None:
        self._view(self.plan.table(relation, delta=True), self._empty(relation))

    def apply_delta(self, relation: str) -> None:
        plan = self.plan
        table, delta = plan.table(relation), plan.table(relation, delta=True)
        on = " AND ".join(f"o.{k} = n.{k}" for k in plan.keys(relation))
        merged = self.spark.sql(f"SELECT o.* FROM {table} o LEFT ANTI JOIN {delta} n ON {on} "
                                f"UNION ALL SELECT * FROM {delta}")
        self._view(table, self._materialise(merged))

    def count(self, relation: str) -> int:
        return self.spark.table(self.plan.table(relation)).count()

    def label_rows(self, relation: str):
        text = ("array_join(transform(label, m -> array_join(transform(m, x -> CAST(x AS STRING)), ',')), ';')")
        keys = ", ".join(self.plan.keys(relation)[:self.plan.arity(relation)])
        yield self.spark.sql(f"SELECT {keys}{', ' if keys else ''}{text} AS t, exact "
                             f"FROM {self.plan.table(relation)}").collect()
