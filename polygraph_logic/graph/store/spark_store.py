"""A graph folder read by Spark SQL: ``whatif --engine spark`` asks it what DuckDB is asked.

``SparkStore`` is the folder backend (folder_store.py, registered as ``spark``: chosen by name
only) with ``SparkFolderDB`` where DuckDB's ``FolderDB`` (folder.py) stands: the folder's Parquet
files as views with the graph file's table and column names, asked the store's own query texts
(questions.py), translated here to Spark SQL.  So the what-if is one
implementation (query/whatif.py: every policy, ``--exact``, demotion, summary trimming, the
same JSON) whichever engine reads the labels; only the reading differs.

The translation covers what the store's questions use: ``INDEXED BY`` dropped; a list sent as
JSON (``SELECT value FROM json_each(?)``) exploded from the JSON by Spark (``from_json``), typed
by its values; ``LIMIT ?`` written into the text; the assertions' columns from the view's
schema.  A query outside it (the explorer's search) is refused by name: the explorer reads a
folder through DuckDB.

Spark answers a query in tens to hundreds of milliseconds where DuckDB takes a few: this reader
is for folders on a cluster's storage, or too large for one machine's DuckDB, not for speed.
"""

from __future__ import annotations

import json
from pathlib import Path

from polygraph_logic.engines.spark import spark_session
from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.store.folder import INDEXED_BY, FolderDB
from polygraph_logic.graph.store.folder_layout import INDEXES, read_meta, table_path
from polygraph_logic.graph.store.backend import Store
from polygraph_logic.graph.store.folder_store import FolderStore
from polygraph_logic.graph.store.label_kills import KILLS_SQL, UNPACKED_KEYS
from polygraph_logic.graph.store.folder_versions import refuse_versions

_LIST = "(SELECT value FROM json_each(?))"


def translate(sql: str, parameters=()) -> tuple[str, list]:
    """A store question as Spark SQL runs it, with its parameters (positional ``?`` markers)."""
    if "json_each(content" in sql or "->>" in sql:
        raise PolygraphError("unsupported", "this question is not asked of a folder through Spark "
                                            "(the explorer and search read folders through DuckDB)")
    sql = INDEXED_BY.sub("", sql)
    parts, out, kept = sql.split("?"), [], []
    for i, value in enumerate(parameters):
        part = parts[i]
        if (part + "?" + parts[i + 1][:2]).endswith(_LIST):
            values = json.loads(value)
            kind = "bigint" if values and all(type(v) is int for v in values) else "string"
            out.append(part[:-len("SELECT value FROM json_each(")] +
                       f"SELECT explode(from_json(?, 'array<{kind}>')) AS value")
            kept.append(value)
            parts[i + 1] = parts[i + 1][1:]  # json_each's closing parenthesis
            continue
        if part.endswith("LIMIT "):
            out.append(part + str(int(value)))
            continue
        out.append(part + "?")
        kept.append(value)
    out.append(parts[len(parameters)])
    return "".join(out), kept


class SparkFolderDB(FolderDB):
    """A graph folder as Spark SQL views (in a session of its own: views are per session): a
    FolderDB whose ``execute`` asks Spark (``rules_text`` and ``in_ranges`` are FolderDB's)."""

    def __init__(self, directory: Path, session):
        from py4j.protocol import Py4JError  # pyspark's bridge: present with Spark
        from pyspark.errors import PySparkException
        self.errors = (PySparkException, Py4JError)
        self._read_meta(Path(directory))
        refuse_versions(directory, "Spark reads a graph folder of one version (its build)",
                        "read it with --engine duckdb, the default for a folder")
        self.spark = session.newSession()
        self.version = 1  # the build (later versions are refused above)
        self._views()

    def _views(self) -> None:
        spark, directory = self.spark, self.path.resolve()
        self._names: list[str] = []

        def frame(name: str):
            return spark.read.parquet(str(table_path(directory, name)))

        def view(name: str, made) -> None:
            made.createOrReplaceTempView(name)
            self._names.append(name)

        assertions = frame("assertions")
        view("assertions", assertions)
        self.assertion_columns = assertions.columns
        keys = [f"get_json_object(args, '$[{i}]') AS k{i}" for i in range(3)]
        view("facts", frame("facts").selectExpr("num", "relation", "args", *keys,
                                                "to_json(label) AS label", "exact", "sets"))
        for name in ("mentions", "artifacts"):
            view(name, frame(name))
        rules = frame("rules")
        if not {"relation", "c0", "c1", "c2"} <= set(rules.columns):
            raise PolygraphError("bad_tables", f"{self.path}: its rules file predates rule heads; write it again "
                                               f"with `polygraph export-tables GRAPH -o {self.path}`")
        view("rules", rules)
        circuit = table_path(directory, "derivations")
        self.circuit = circuit.is_file()  # the build's derivations of its capped facts (graph/store/circuit_rows.py)
        if self.circuit:
            view("derivations", spark.read.parquet(str(circuit)).selectExpr("fact", "rule", "body", "1 AS since"))
        self.indexes = {name for name in INDEXES if table_path(directory, name).is_file()}
        for name in self.indexes:
            extra = ["get_json_object(args, '$[0]') AS k0", "get_json_object(args, '$[1]') AS k1"] \
                if name == "facts_by_k2" else []
            view(name, frame(name).selectExpr("*", *extra))

    def execute(self, sql: str, parameters=()) -> "SparkRows":
        if "pragma_table_info('assertions')" in sql:
            return SparkRows([(name,) for name in self.assertion_columns])
        text, values = translate(sql, parameters)
        return SparkRows([tuple(row) for row in self.spark.sql(text, args=values or None).collect()])

    def close(self) -> None:
        for name in self._names:
            self.spark.catalog.dropTempView(name)


class SparkRows:
    """A Spark result, collected, read as sqlite3's cursor is."""

    def __init__(self, rows: list[tuple]):
        self._rows, self._at = rows, 0

    def __iter__(self) -> "SparkRows":
        return self

    def __next__(self):
        if self._at == len(self._rows):
            raise StopIteration
        self._at += 1
        return self._rows[self._at - 1]

    def fetchone(self):
        return next(self, None)

    def fetchall(self) -> list:
        rest, self._at = self._rows[self._at:], len(self._rows)
        return rest


class SparkStore(FolderStore):
    """A graph folder whose questions Spark SQL answers (``master``: ``local[N]``, the default
    ``local[2]``, or a cluster's ``spark://HOST:PORT``; ``at``: a folder read by Spark has one
    version; ``session``: a Spark session already started, instead of ``master``)."""

    form = "spark"
    checks_in_sql = False  # Spark SQL spells lists and JSON its own way: check reads the rows
    bounded = Store.bounded  # Spark bounds its executors' memory itself

    def __init__(self, path: Path, at: int | None = None, master: str | None = None, session=None):
        path = Path(path)
        if not path.is_dir():
            raise PolygraphError("bad_argument", f"{path} is a graph file: Spark reads graph folders "
                                                 f"(`polygraph export-tables {path} -o FOLDER` writes one)")
        read_meta(path)  # a foreign folder is refused before Spark starts
        super().__init__(path, at, db=SparkFolderDB(path, session or spark_session(master or "local[2]")))

    def _kills_sql(self) -> str:
        # Spark SQL before 4.0 spells shifts as functions, and DuckDB's lambdas otherwise: the keys unpacked
        return KILLS_SQL.format(**UNPACKED_KEYS)


__all__ = ["SparkFolderDB", "SparkStore", "translate"]
