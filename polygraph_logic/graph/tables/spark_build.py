"""Building straight into label tables on Spark: the evaluation's views written as the tables folder.

``build --engine spark -o FILE.graph`` reads every label back into this process (the
runner's ``model()``) to write the SQLite graph file.  ``build --engine spark --tables DIR``
writes the folder of layout.py instead, as duckdb_build.py does on DuckDB: the same rows,
made by Spark SQL from the evaluation's ``r<n>`` views, so that no row per fact passes
through this process.  What does: the values (one row per interned value, with its JSON
text and its rank in ``evaluate.tuple_key``'s order, as DuckDB's writer makes them), the
inputs this process read and compiled anyway (assertions, receipts, sentences, rules), and
a few aggregates (rows per partition, statistics per layer).

- facts are numbered by relation then argument ranks: a global sort, then each partition's
  rows counted and the partitions' offsets added (``_numbered``); labels go from assertion
  ranks to assertion numbers by exploding them into mentions and grouping back;
- artifacts in ``iter_artifacts``' order; the ids of claims, edges and contradictions are
  ``graph.artifact_ids.digest_id`` computed on the executors by a Python UDF (Spark has no
  blake2b): a cluster's executors need this package installed;
- each table is one Parquet file, ``<name>.parquet``, as every reader of a tables folder
  opens it (layout.py, graph/store/sql_whatif.py, compare.py): the sorted rows coalesced into one
  partition, written by one task, its part file renamed.  The sort and everything before it
  run on every executor; the file is written by one.  The folder must be on a file system
  the executors and this process share (a cluster: a shared mount), and it appears
  atomically (``tables.writing_folder``).
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Callable, Iterable

from polygraph_logic.graph.circuit_build import store_circuit
from polygraph_logic.graph.artifact_ids import content_args, digest_id, long_id
from polygraph_logic.errors import PolygraphError
from polygraph_logic.datalog.evaluate import StratumStats
from polygraph_logic.graph import build as python_build
from polygraph_logic.graph.artifact_rule import sql_condition
from polygraph_logic.graph.contradiction_layer import LAYER as CONTRADICTION, content as contradiction_content
from polygraph_logic.graph.store.folder_layout import folder_rule_rows
from polygraph_logic.graph.store.writer import json_text
from polygraph_logic.engines.driver import RoundStats
from polygraph_logic.graph.tables.layout import (
    _SCHEMA,
    _ORDER,
    FILES,
    check_target,
    table_path,
    write_meta,
    writing_folder,
)
from polygraph_logic.graph.tables.folder_rows import (
    ASSERTIONS,
    folder_meta,
    round_collector,
    value_json,
    value_ranks,
    varint,
)
from polygraph_logic.graph.tables.duckdb_build import TablesBuild
from polygraph_logic.engines.spark_run import evaluation, one_line

#: DuckDB's column types (graph/store/table_schema.py's) as Spark SQL's
_TYPES = {"BIGINT": "BIGINT", "INTEGER": "INT", "VARCHAR": "STRING", "BOOLEAN": "BOOLEAN", "BLOB": "BINARY",
          "INTEGER[][]": "ARRAY<ARRAY<INT>>"}


def build_spark_tables(assertions, receipts=None, rules: Iterable[str | Path] = (), directory: str | Path = "",
                       cap: int | None = 8, master: str | None = None,
                       progress: Callable[[StratumStats], None] | None = None,
                       rounds: Callable[[RoundStats], None] | None = None,
                       writing: Callable[[str], None] | None = None, origins=None,
                       circuit: bool = True, inputs: Iterable[dict] = ()) -> TablesBuild:
    """The helper of the public ``build_graph(..., engine="spark", tables=True)`` (graph/engine_build.py):
    evaluates the inputs on Spark (``master``: local[2] by default, or spark://HOST:PORT) and
    writes the tables folder ``directory`` with Spark (atomically: an earlier folder survives a
    failure); ``writing(stage)`` hears each writing stage.  ``circuit``: store the derivations of
    the capped facts (graph/circuit_build.py); ``inputs``: more input files version 1 records."""
    if not str(directory):
        raise PolygraphError("bad_argument", "build_spark_tables needs the tables folder to write")
    target = Path(directory)
    check_target(target)  # before the evaluation: a wrong folder is said at once
    prepared = python_build.prepare_build(assertions, receipts, rules, cap)
    prepared.inputs.extend(inputs)
    stats, counted = round_collector(rounds)
    started = time.perf_counter()
    with evaluation(prepared.program, cap, master or "local[2]", progress, counted) as runner:
        prepared.seconds["evaluate"] = time.perf_counter() - started
        started = time.perf_counter()
        with writing_folder(target) as partial_folder:
            writer = _Writer(runner, prepared, writing or (lambda stage: None))
            try:
                counts = writer.write(partial_folder)
            except (PolygraphError, OSError):
                raise
            except Exception as error:  # a Java exception through py4j, a Python worker's failure
                raise PolygraphError("spark_error", f"Spark could not write {target}: {one_line(error)}") from None
            write_meta(partial_folder, writer.meta(origins), counts)
            if circuit:
                store_circuit(partial_folder)
        prepared.seconds["write"] = time.perf_counter() - started
    return TablesBuild(target, counts, writer.layers, writer.inexact, prepared.compiled.over_cap,
                       writer.background, prepared.seconds, stats)


class _Writer:
    """The tables of one Spark evaluation (``runner.spark``: its views), made in Spark SQL."""

    def __init__(self, runner, prepared, stage: Callable[[str], None]):
        self.runner, self.prepared, self.stage = runner, prepared, stage
        self.spark, self.plan = runner.spark, runner.plan
        self.layers: dict[str, int] = {}
        self.inexact = self.background = 0
        self.stats: dict = {}
        self.counts: dict[str, int] = {}

    def write(self, folder: Path) -> dict[str, int]:
        self.folder = folder
        spark = self.spark
        spark.udf.register("digest_id", digest_id, "string")
        spark.udf.register("contradiction_content", _contradiction_content, "string")
        self.stage("values and assertions")
        self._values()
        self._assertions()
        self.stage("facts and mentions")
        self._facts()
        self.stage("artifacts")
        self._artifacts()
        self.stage("rules")
        self._rules()
        self.stage("statistics")
        self._statistics()
        return {name: self.counts[name] for name in FILES}

    # -- frames from this process's rows, and Parquet files out

    def _frame(self, name: str, schema: str, rows: list[tuple]):
        """A DataFrame of ``rows``: a JSON Lines file Spark reads (local master), or shipped to
        the executors (a cluster, whose executors do not see this machine's files)."""
        work = self.runner.work
        if work is None:
            return self.spark.createDataFrame(rows, schema)
        names = [column.strip().split(" ")[0] for column in schema.split(",")]
        path = Path(work) / f"{name}.jsonl"
        with open(path, "w", encoding="utf-8") as out:
            for row in rows:
                out.write(json.dumps(dict(zip(names, row))))
                out.write("\n")
        return self.spark.read.schema(schema).json(str(path))

    def _view(self, name: str, frame, keep: bool = False):
        """Registers ``frame`` as view ``name`` (computed once and cut from its lineage when ``keep``)."""
        if keep:
            frame = frame.localCheckpoint(eager=True)
        frame.createOrReplaceTempView(name)
        return frame

    def _write(self, name: str, sql: str) -> None:
        """Writes the rows of ``sql`` as ``<name>.parquet``: table_schema.py's columns and types, sorted
        as readers expect, one file (see the module docstring)."""
        columns = [c.strip().rsplit(" ", 1) for c in self._schema(name).split(",")]
        select = ", ".join(f"CAST({c} AS {_TYPES[t]}) AS {c}" for c, t in columns)
        frame = self.spark.sql(f"SELECT {select} FROM ({sql}) w")
        order = [column.strip() for column in _ORDER.get(name, "num").split(",")]
        parts = self.folder / f".{name}.parts"
        frame.orderBy(*order).coalesce(1).write.option("compression", "zstd").parquet(str(parts))
        written = sorted(parts.glob("part-*.parquet"))
        if len(written) != 1:
            raise PolygraphError("io_error", f"Spark wrote {len(written)} files for {name}, not one")
        written[0].replace(table_path(self.folder, name))
        shutil.rmtree(parts)
        self.counts[name] = self.spark.read.parquet(str(table_path(self.folder, name))).count()

    def _schema(self, name: str) -> str:
        return ASSERTIONS if name == "assertions" else _SCHEMA[name]

    # -- values: JSON text and sort rank; assertions; ranks -> numbers

    def _values(self) -> None:
        values = list(self.plan.values)
        rank = value_ranks(values)
        rows = [(i, value_json(v), v if type(v) is str else None, rank[i]) for i, v in enumerate(values)]
        self._view("vals", self._frame("values", "id INT, json STRING, text STRING, srt INT", rows), keep=True)

    def _assertions(self) -> None:
        columns = [c.strip().rsplit(" ", 1) for c in ASSERTIONS.split(",")]
        special = {"num": lambda n, a: n, "negated": lambda n, a: int(a.negated), "since": lambda n, a: 1,
                   "evidence": lambda n, a: a.evidence.dumps() if a.evidence is not None else None}
        getters = [special.get(name, lambda n, a, name=name: getattr(a, name)) for name, _ in columns]
        numbers = self.runner.numbers
        rows = [tuple(get(n, a) for get in getters) + (numbers[a.id],)
                for n, a in enumerate(self.prepared.assertions, 1)]
        schema = ", ".join(f"{name} {_TYPES[kind]}" for name, kind in columns) + ", rank INT"
        self._view("assertions_in", self._frame("assertions", schema, rows), keep=True)
        self._write("assertions", "SELECT * FROM assertions_in")
        self._view("amap", self.spark.sql("SELECT CAST(rank AS INT) AS rank, CAST(num AS INT) AS num "
                                          "FROM assertions_in"))

    # -- facts, numbered by relation then arguments; labels in assertion numbers; mentions

    def _facts(self) -> None:
        plan, spark = self.plan, self.spark
        parts = []
        for position, relation in enumerate(sorted(plan.relations)):
            arity = plan.arity(relation)
            joins = "".join(f" JOIN vals v{i} ON v{i}.id = t.k{i}" for i in range(arity))
            hint = f"/*+ BROADCAST({', '.join(f'v{i}' for i in range(arity))}) */ " if arity else ""
            args = f"concat('[', concat_ws(', ', {', '.join(f'v{i}.json' for i in range(arity))}), ']')" \
                if arity else "'[]'"
            keys = [f"t.k{i}" if i < arity else "CAST(NULL AS INT)" for i in range(3)]
            ranks = [f"v{i}.srt" if i < arity else "CAST(NULL AS INT)" for i in range(3)]
            parts.append(f"SELECT {hint}{position} AS rel_order, {_literal(relation)} AS relation, {args} AS args, "
                         f"{', '.join(f'{k} AS k{i}' for i, k in enumerate(keys))}, "
                         f"{', '.join(f'{r} AS s{i}' for i, r in enumerate(ranks))}, "
                         f"t.label AS ranks, t.exact FROM {plan.table(relation)} t{joins}")
        union = spark.sql(" UNION ALL ".join(parts))
        fx = _numbered(spark, union, ["rel_order", "s0", "s1", "s2", "args"])
        fx = fx.selectExpr("*", "(size(ranks) = 1 AND size(element_at(ranks, 1)) = 0) AS one",
                           "(size(ranks) = 1 AND size(element_at(ranks, 1)) = 1) AS single")
        self._view("fx", fx)  # _numbered checkpointed its rows
        # most labels are one assertion: a join; the others exploded and grouped back
        self._view("several", spark.sql(
            "SELECT a.num AS assertion, s.fact, s.support_set FROM ("
            "SELECT fact, support_set, explode(m) AS rank FROM ("
            "SELECT num AS fact, CAST(i AS INT) AS support_set, m FROM "
            "(SELECT num, posexplode(ranks) AS (i, m) FROM fx WHERE NOT single))) s "
            "JOIN amap a ON a.rank = s.rank"), keep=True)
        self._write("mentions", "SELECT a.num AS assertion, f.num AS fact, 0 AS support_set FROM fx f "
                                "JOIN amap a ON a.rank = element_at(element_at(f.ranks, 1), 1) WHERE f.single "
                                "UNION ALL SELECT assertion, fact, support_set FROM several")
        self._view("facts_out", spark.sql("""
            SELECT f.num, f.relation, f.args,
                   CASE WHEN f.single THEN array(array(a.num)) ELSE coalesce(n.label, f.ranks) END AS label,
                   f.exact, size(f.ranks) AS sets
            FROM fx f LEFT JOIN amap a ON f.single AND a.rank = element_at(element_at(f.ranks, 1), 1) LEFT JOIN (
                SELECT fact, transform(array_sort(collect_list(struct(support_set, numbers))), x -> x.numbers) AS label
                FROM (SELECT fact, support_set, array_sort(collect_list(assertion)) AS numbers
                      FROM several GROUP BY fact, support_set) GROUP BY fact) n ON n.fact = f.num"""))

    # -- artifacts, in iter_artifacts' order

    def _artifacts(self) -> None:
        spark = self.spark
        content = ("concat('{\"subject\": ', v0.json, ', \"predicate\": ', v1.json, ', \"object\": ', v2.json, '}')")
        triples = ("FROM fx f JOIN vals v0 ON v0.id = f.k0 JOIN vals v1 ON v1.id = f.k1 JOIN vals v2 ON v2.id = f.k2")
        hint = "/*+ BROADCAST(v0, v1, v2) */"
        parts = [f"SELECT {hint} 0 AS o0, f.s0 AS o1, f.s1 AS o2, f.s2 AS o3, f.num AS fact, "
                 f"digest_id('claim', f.args) AS id, 'claim' AS layer, {content} AS content {triples} "
                 "WHERE f.relation = 'claim'"]
        receipts = [r for r in self.prepared.receipts if r.layer in ("merge", "summary")]
        self._view("receipts_in", self._frame("receipts", "artifact STRING, content STRING",
                                              [(r.artifact, json_text(r.content)) for r in receipts]))
        for o0, layer in ((1, "merge"), (2, "summary")):
            select = (f"SELECT /*+ BROADCAST(v) */ {o0} AS o0, f.s0 AS o1, 0 AS o2, 0 AS o3, f.num AS fact, "
                      f"v.text AS id, '{layer}' AS layer, r.content FROM fx f JOIN vals v ON v.id = f.k0 "
                      f"JOIN receipts_in r ON r.artifact = v.text WHERE f.relation = '{layer}'")
            found = spark.sql(f"SELECT (SELECT count(*) FROM fx WHERE relation = '{layer}') - "
                              f"(SELECT count(*) FROM ({select}))").collect()[0][0]
            if found:
                raise PolygraphError("bad_program", f"{found} {layer} facts come from no receipt (a rule "
                                                    f"derives them): a {layer} is an artifact only as its receipt "
                                                    "states it")
            parts.append(select)
        parts.append(self._sentences())
        # an edge's triple stated by a claim (claimed: the claim is its artifact); the edges that are
        # artifacts are those artifact_rule.py's condition keeps
        claimed = "LEFT JOIN (SELECT k0, k1, k2 FROM fx WHERE relation = 'claim') c " \
                  "ON c.k0 = f.k0 AND c.k1 = f.k1 AND c.k2 = f.k2"
        is_claimed = "(c.k0 IS NOT NULL)"
        self.background = spark.sql(f"SELECT count(*) FROM fx f {claimed} WHERE f.relation = 'edge' "
                                    f"AND f.one AND NOT {is_claimed}").collect()[0][0]
        parts.append(f"SELECT {hint} 4, f.s0, f.s1, f.s2, f.num, digest_id('edge', f.args), 'edge', {content} "
                     f"FROM (SELECT f.* FROM fx f {claimed} WHERE {sql_condition('edge', claimed=is_claimed)}) f "
                     "JOIN vals v0 ON v0.id = f.k0 JOIN vals v1 ON v1.id = f.k1 JOIN vals v2 ON v2.id = f.k2")
        if CONTRADICTION in self.plan.relations and self.plan.arity(CONTRADICTION) == 3:
            parts.append(f"SELECT 5, f.s0, f.s1, f.s2, f.num, digest_id('{CONTRADICTION}', f.args), "
                         f"'{CONTRADICTION}', contradiction_content(f.args) FROM fx f "
                         f"WHERE {sql_condition(CONTRADICTION)}")
        arts = _numbered(spark, spark.sql(" UNION ALL ".join(parts)), ["o0", "o1", "o2", "o3"])
        self._view("arts", arts)  # _numbered checkpointed its rows
        duplicate = spark.sql("SELECT id FROM arts GROUP BY id HAVING count(*) > 1 LIMIT 1").collect()
        if duplicate:  # an id one before holds: the long id (artifact_ids.py), then checked again
            self._lengthened()
            duplicate = spark.sql("SELECT id FROM arts GROUP BY id HAVING count(*) > 1 LIMIT 1").collect()
        if duplicate:
            raise PolygraphError("duplicate_artifact", f"artifact id {duplicate[0][0]!r} is given twice "
                                                       "(a digest collision or a receipt's id reused)")
        self._write("facts", "SELECT * FROM facts_out")
        self._write("artifacts", """
            WITH links AS (
                SELECT a.num, s.num AS summary FROM arts a JOIN arts s ON a.layer = 'sentence'
                AND s.layer = 'summary' AND s.id = get_json_object(a.content, '$.summary'))
            SELECT a.num, a.id, a.layer, a.content, a.fact,
                   CASE WHEN a.layer = 'sentence' THEN l.summary WHEN s.summary IS NOT NULL THEN a.num END AS summary
            FROM arts a LEFT JOIN links l ON l.num = a.num
            LEFT JOIN (SELECT DISTINCT summary FROM links) s ON a.layer = 'summary' AND s.summary = a.num""")

    def _lengthened(self) -> None:
        """Makes ``arts`` give the long id to each claim, edge or contradiction whose short id one
        before it in its layer holds (artifact_ids.py)."""
        rows = self.spark.sql("""SELECT num, layer, content FROM (
                                    SELECT num, layer, content, row_number() OVER (PARTITION BY id ORDER BY num) AS k
                                    FROM arts WHERE id IN (SELECT id FROM arts GROUP BY id HAVING count(*) > 1))
                                WHERE k > 1 AND layer IN ('claim', 'edge', 'contradiction')""").collect()
        if not rows:
            return
        self._view("lengthened", self._frame("lengthened", "num BIGINT, long STRING", [
            (row[0], long_id(row[1], content_args(row[1], row[2]))) for row in rows]))
        self._view("arts", self.spark.sql("SELECT a.o0, a.o1, a.o2, a.o3, a.fact, coalesce(l.long, a.id) AS id, a.layer, "
                                          "a.content, a.num FROM arts a LEFT JOIN lengthened l ON l.num = a.num"), keep=True)

    def _sentences(self) -> str:
        """The sentences in the receipts' order (a SELECT of ``arts``' columns); a sentence without
        a fact gets one (label zero), numbered after every other fact."""
        rows = [(order, r.sentence_id(i), json_text([r.sentence_id(i)]),
                 json_text({"summary": r.artifact, "index": i, "text": s.text}))
                for order, (r, i, s) in enumerate((r, i, s) for r in self.prepared.receipts
                                                  for i, s in enumerate(r.sentences, 1))]
        self._view("sentences_in", self._frame("sentences", "n_order INT, id STRING, args STRING, content STRING",
                                                rows), keep=True)
        spark = self.spark
        last = spark.sql("SELECT coalesce(max(num), 0) FROM fx").collect()[0][0]
        missing = spark.sql("SELECT s.n_order, s.args FROM sentences_in s LEFT ANTI JOIN "
                            "(SELECT v.text FROM fx f JOIN vals v ON v.id = f.k0 WHERE f.relation = 'sentence') t "
                            "ON t.text = s.id")
        added = _numbered(spark, missing, ["n_order"], start=last)
        self._view("sentence_facts", added, keep=True)
        self._view("facts_out", spark.sql(
            "SELECT * FROM facts_out UNION ALL SELECT num, 'sentence', args, CAST(array() AS ARRAY<ARRAY<INT>>), "
            "TRUE, 0 FROM sentence_facts"))
        return ("SELECT 3, s.n_order, 0, 0, f.num, s.id, 'sentence', s.content FROM sentences_in s JOIN ("
                "SELECT num, args FROM fx WHERE relation = 'sentence' UNION ALL SELECT num, args FROM sentence_facts"
                ") f ON f.args = s.args")

    def _rules(self) -> None:
        rules = self.prepared.program.rules
        rows = [(num, bytearray(tree), *heads) for num, tree, *heads in folder_rule_rows(rules)]
        self._view("rules_in", self.spark.createDataFrame(
            rows, "num BIGINT, tree BINARY, relation STRING, c0 STRING, c1 STRING, c2 STRING, ground STRING"))
        self._write("rules", "SELECT num, tree, relation, c0, c1, c2, ground FROM rules_in")

    # -- statistics and meta, as write_graph records them (read back from the files written)

    def _statistics(self) -> None:
        spark = self.spark
        for name in ("facts", "mentions", "artifacts", "assertions"):
            spark.read.parquet(str(table_path(self.folder, name))).createOrReplaceTempView(f"{name}_written")
        label_bytes = {layer: n for layer, n in spark.sql(f"""
            SELECT a.layer, sum({varint('m.n')} + m.gaps) FROM artifacts_written a JOIN (
                SELECT fact, support_set, count(*) AS n, sum({varint('gap')}) AS gaps FROM (
                    SELECT fact, support_set, assertion - coalesce(lag(assertion) OVER
                        (PARTITION BY fact, support_set ORDER BY assertion), 0) AS gap FROM mentions_written)
                GROUP BY fact, support_set) m ON m.fact = a.fact GROUP BY a.layer""").collect()}
        rows = spark.sql("""
            SELECT a.layer, f.sets, min(a.num), count(*), count_if(NOT f.exact),
                   count_if(f.sets = 1 AND size(element_at(f.label, 1)) = 0)
            FROM artifacts_written a JOIN facts_written f ON f.num = a.fact GROUP BY a.layer, f.sets""").collect()
        layers: dict[str, dict] = {}
        first: dict[str, int] = {}
        for layer, sets, smallest, count, inexact, ones in sorted(rows, key=lambda r: (r[0], r[1])):
            first[layer] = min(first.get(layer, smallest), smallest)
            entry = layers.setdefault(layer, {"artifacts": 0, "inexact": 0, "label_bytes": 0, "support_sets": {}})
            entry["artifacts"] += count
            entry["inexact"] += inexact
            entry["label_bytes"] += ones  # an empty support set (label 1) is one byte; label zero none
            entry["support_sets"][sets] = count
        for layer, entry in layers.items():
            entry["label_bytes"] = int((label_bytes.get(layer) or 0) + entry["label_bytes"])
            self.layers[layer] = entry["artifacts"]
            self.inexact += entry["inexact"]
        ordered = {layer: layers[layer] for layer in sorted(layers, key=first.__getitem__)}
        sources = spark.sql("SELECT count(DISTINCT source) FROM assertions_written").collect()[0][0]
        self.stats = {"assertions": len(self.prepared.assertions), "sources": sources, "layers": ordered}
        self.layers = {layer: self.layers[layer] for layer in ordered}

    def meta(self, origins=None) -> dict[str, str]:
        return folder_meta(self.prepared, self.background, self.stats, origins)


def _numbered(spark, frame, order: list[str], column: str = "num", start: int = 0):
    """``frame`` with ``column`` numbering its rows start + 1, start + 2, ... in ``order`` (unique):
    a global sort, each partition's rows counted (one row per partition to this process) and
    its offset added; no single task sees every row."""
    from pyspark.sql import functions as F
    ranked = (frame.orderBy(*order).withColumn("_row", F.monotonically_increasing_id())
              .withColumn("_part", F.spark_partition_id()).localCheckpoint(eager=True))
    counts = ranked.groupBy("_part").agg(F.count(F.lit(1)), F.min("_row")).collect()
    shifts, total = [], start
    for part, count, smallest in sorted(counts):
        shifts.append(f"WHEN {part} THEN {total - smallest + 1}")  # _row - smallest: the place in the partition
        total += count
    shift = f"CASE _part {' '.join(shifts)} END" if shifts else "0"
    return ranked.selectExpr("*", f"CAST(_row + {shift} AS BIGINT) AS {column}").drop("_row", "_part")


def _contradiction_content(args: str) -> str:
    """A contradiction artifact's content from its fact's arguments (the JSON key)."""
    return json_text(contradiction_content(tuple(json.loads(args))))


def _literal(text: str) -> str:
    """A Spark SQL string literal (backslashes are escapes there)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


__all__ = ["build_spark_tables"]
