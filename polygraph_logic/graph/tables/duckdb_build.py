"""Building straight into label tables: DuckDB evaluates and writes the tables folder itself.

``build --engine duckdb -o FILE.graph`` reads every label back into Python to write the
SQLite graph file (at x40, 1.3 M facts, most of the build).  ``build --engine duckdb
--tables DIR`` writes the folder of layout.py instead, from the evaluation's own tables,
in SQL: nothing per fact passes through Python except the digests of artifact ids.  The
folder is the one ``export-tables`` writes from a graph file built by the Python engine,
row for row (tests/test_tables_build.py compares them); every command reads it in place, and
``add`` grows it by versions (graph/store/folder_versions.py).

How the rows are made (see graph/build.py and graph/store/writer.py for the rows they match):

- every interned value gets its JSON text and a rank in ``evaluate.tuple_key``'s order, so
  ``args`` and content are string concatenations and artifacts sort by ranks;
- facts are numbered by relation name then arguments; a label's assertion ranks (the
  plan's numbers) become the graph's assertion numbers by unnesting it into mentions and
  grouping back, each support set ascending and the sets in the label's own order;
- artifacts as ``iter_artifacts`` lists them (artifacts.py): claims, merges,
  summaries, sentences (the receipts' order), entailed edges that are no claim and rest on
  an assertion, then contradictions; ids of claims, edges and contradictions are digests computed in
  batches in Python (DuckDB has no blake2b), those of claims and edges on a thread of
  their own while the labels are written (digests.py), in fx's order, and paired with
  their facts by position: each layer's artifacts are stored in their order with their
  places in it, and the artifacts file is their union, numbered from those places, with no
  sort of its rows;
- meta.json holds the meta rows a graph file would (the build record, the rules' text,
  statistics per layer with label bytes counted as encode_label's varints).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Callable, Iterable

from polygraph_logic.graph.circuit_build import store_circuit
from polygraph_logic.allocation import collector_paused
from polygraph_logic.errors import PolygraphError
from polygraph_logic.datalog.evaluate import StratumStats
from polygraph_logic.graph import build as python_build
from polygraph_logic.engines import sql_witness as witnesses
from polygraph_logic.graph.store.circuit_rows import TABLE as CIRCUIT
from polygraph_logic.graph.store.folder_layout import PARQUET, folder_rule_rows, quoted, table_path
from polygraph_logic.graph.tables import native_inputs
from polygraph_logic.graph.tables.digests import Background, Digests
from polygraph_logic.engines.driver import RoundStats
from polygraph_logic.graph.tables.folder_rows import ASSERTIONS, folder_meta, round_collector, value_json, value_ranks
from polygraph_logic.graph.tables.native_receipts import ReceiptRows
from polygraph_logic.graph.tables.layout import (
    _SCHEMA,
    FILES,
    _quoted,
    check_target,
    copy_out,
    write_meta,
    writing_folder,
)
from polygraph_logic.graph.tables.artifacts import DIGESTED, ArtifactTables
from polygraph_logic.engines.duckdb_run import session
from polygraph_logic.engines.duckdb_run import evaluation



@dataclass
class TablesBuild:
    """What ``build_tables`` wrote: rows per table, artifacts per layer, costs."""

    directory: Path
    rows: dict[str, int]
    layers: dict[str, int]
    truncated: int
    over_cap: int
    background_edges: int
    seconds: dict[str, float] = field(default_factory=dict)
    rounds: list[RoundStats] = field(default_factory=list)


def build_tables(assertions, receipts=None, rules: Iterable[str | Path] = (), directory: str | Path = "",
                 cap: int | None = 8, memory_limit: str | None = None,
                 progress: Callable[[StratumStats], None] | None = None,
                 rounds: Callable[[RoundStats], None] | None = None,
                 writing: Callable[[str], None] | None = None, origins=None, circuit: bool = True,
                 labels: str = "capped", inputs: Iterable[dict] = ()) -> TablesBuild:
    """Evaluates the inputs on DuckDB and writes the tables folder ``directory`` (the helper of
    the public ``build_graph(..., engine="duckdb", tables=True)``, graph/engine_build.py; atomically:
    an earlier folder survives a failure); ``writing(stage)`` hears each writing stage.
    ``circuit``: store the derivations of the capped facts (graph/circuit_build.py).  ``labels``
    "witness": witness labels evaluated set at a time (engines/sql_witness.py), the evaluation's
    own derivations of every inexact fact written as the circuit.  ``inputs``: more input files
    version 1 records (an authorization policy).

    An assertions file of the plain shape is read by DuckDB itself (native_inputs.py);
    any other, and assertions given as records, are read in Python as every build reads them."""
    if not str(directory):
        raise PolygraphError("bad_argument", "build_tables needs the tables folder to write")
    target = Path(directory)
    check_target(target)  # before the evaluation: a wrong folder is said at once
    with writing_folder(target) as partial:
        with session(memory_limit) as opened:
            found = native_inputs.prepare(opened[0], assertions, receipts, rules, cap)
            prepared, native = found or (python_build.prepare_build(assertions, receipts, rules, cap), None)
            prepared.inputs.extend(inputs)
            built = _evaluated(prepared, native, opened, memory_limit, target, partial, progress, rounds, writing,
                               origins, labels)
        if circuit and labels != "witness":  # once DuckDB's session is closed (its memory freed), read from the files written
            (writing or (lambda stage: None))("circuit of the capped labels")
            started = time.perf_counter()
            store_circuit(partial)
            built.seconds["circuit"] = time.perf_counter() - started
    return built


def _evaluated(prepared, native, opened, memory_limit, target: Path, partial: Path, progress, rounds, writing,
               origins, labels: str = "capped") -> TablesBuild:
    """Evaluates ``prepared`` in the open session ``opened`` and writes its files into ``partial``
    (the folder that becomes ``target``)."""
    cap = prepared.cap
    stats, counted = round_collector(rounds)
    started = time.perf_counter()
    with evaluation(prepared.program, cap, memory_limit, progress, counted, opened=opened, inputs=native,
                    witness=labels == "witness") as runner:
        prepared.seconds["evaluate"] = time.perf_counter() - started
        started = time.perf_counter()
        writer = _Writer(runner, prepared, writing or (lambda stage: None), native)
        counts = writer.write(partial)
        meta = writer.meta(origins, labels)
        write_meta(partial, meta, counts)
        prepared.seconds["write"] = time.perf_counter() - started
    return TablesBuild(target, counts, writer.layers, writer.inexact, prepared.compiled.over_cap,
                       writer.background, prepared.seconds, stats)


class _Writer(ArtifactTables):
    """The tables of one evaluation (``runner.con``), made in SQL."""

    def __init__(self, runner, prepared, stage: Callable[[str], None], native=None):
        self.runner, self.prepared, self.stage, self.native = runner, prepared, stage, native
        # the receipts' rows (native_receipts.py); made by _write when read in Python
        self.receipts = native.receipts if native is not None else None
        self.rules_text = ""
        self.con, self.plan = runner.con, runner.plan
        self.layers: dict[str, int] = {}
        self.inexact = self.background = 0
        self.stats: dict = {}
        self.counts: dict[str, int] = {}  # rows of the files written so far
        self.facts_view = False  # facts: a view of fx and facts_more (_labels_shifted), or a table
        # every assertion's number is its rank plus one (ranks_are_numbers): fx's labels are then
        # in numbers already, shifted as fx is made, else in ranks (mapped by _labels)
        self.shifted = False

    def write(self, folder: Path) -> dict[str, int]:
        # tables made in their order keep it (fx, facts; the artifacts view numbers arts in
        # order), so that their files are written without a sort of their own (tables.copy_out
        # checks that they were)
        self.con.execute("SET preserve_insertion_order = true")
        with collector_paused():  # the rows made in Python all live on (allocation.py)
            return self._write(folder)

    def _write(self, folder: Path) -> dict[str, int]:
        if self.receipts is None:  # read in Python: their contents and sentences as rows here
            self.receipts = ReceiptRows(self.con)
            for receipt in self.prepared.receipts:
                self.receipts.content(receipt)
            self.receipts.flush()
        self.stage("values and assertions")
        self._values()
        self._assertions()
        self.shifted = ranks_are_numbers(self.con)
        self.stage("facts and mentions")
        self._numbered()
        if self.plan.witness:
            self.stage("circuit of the witness labels")
            self._circuit(folder)
        digests = Digests(self.con, list(DIGESTED)).start()
        try:
            self._labels()
            self._written(folder, "mentions")
            self.stage("artifacts")
            self._artifacts(digests, folder)
        finally:
            digests.cancel()
        self.stage("rules")
        # the rules are made in Python (0.55 s at x40) on a thread of their own, while DuckDB
        # counts the statistics and writes the other files (it releases the interpreter meanwhile)
        rules = Background(self._rules, self.con)
        try:
            self.stage("statistics")
            self._statistics()
            self.stage("Parquet files")
            self.counts.update(copy_out(self.con, folder, [name for name in FILES if name not in self.counts
                                                           and name != "rules"], ordered={"artifacts"}))
        finally:
            rules.wait()
        self.receipts.drop()
        for drop in ("VIEW artifacts", "VIEW arts_all", "TABLE arts_sorted", "TABLE art_claim", "TABLE art_edge"):
            self.con.execute(f"DROP {drop}")
        self.counts.update(copy_out(self.con, folder, ["rules"]))
        return {name: self.counts[name] for name in FILES}

    def _written(self, folder: Path, name: str, ordered: bool = False) -> None:
        """Writes the finished table ``name`` as its file and drops it: what the writer still
        makes (artifacts, statistics) then runs with that much less held under a memory limit
        (x40: mentions 45 MB)."""
        self.counts.update(copy_out(self.con, folder, [name], ordered={name} if ordered else frozenset()))
        if name == "facts" and self.facts_view:
            self.con.execute("DROP VIEW facts")
            self.con.execute("DROP TABLE facts_more")
        else:
            self.con.execute(f"DROP TABLE {name}")

    def _register(self, name: str, columns: dict, con=None) -> None:
        import numpy as np
        arrays = {key: np.array(values, dtype=np.int64 if key.startswith(("n_", "i_")) else object)
                  for key, values in columns.items()}
        (con or self.con).register(name, arrays)

    # -- values: JSON text and sort rank

    def _values(self) -> None:
        """``vals``: each value's id, JSON text, text (strings) and rank in tuple_key's order
        (numbers first, by value, then strings as they compare).  The values the plan holds are
        sent from Python; those DuckDB kept (native_inputs.py) are written in SQL, their JSON
        text too but for the few that need escapes."""
        con = self.con
        values = list(self.plan.values.items())
        numbers = [v for v, _ in values if type(v) is not str]
        rank = dict(zip(numbers, value_ranks(numbers)))
        self._register("values_in", {"n_id": [i for _, i in values], "json": [value_json(v) for v, _ in values],
                                     "text": [v if type(v) is str else None for v, _ in values],
                                     "n_rank": [rank.get(v, -1) for v, _ in values]})
        held = ""
        if self.native is not None:  # no ", \\ or control character: the JSON text is the string in quotes
            held = (f" UNION ALL SELECT id, CASE WHEN regexp_matches(v, '[\"\\\\\\x00-\\x1f]') THEN NULL "
                    f"ELSE '\"' || v || '\"' END, v, -1 FROM ({self.native.values_sql()})")
        con.execute(f"CREATE TABLE vals AS SELECT id, json, text, CAST(CASE WHEN text IS NULL THEN n_rank ELSE "
                    f"{len(numbers)} + row_number() OVER (PARTITION BY text IS NULL ORDER BY text) - 1 END AS INTEGER) "
                    "AS srt "  # ids are INTEGER (engines/sql_plan.py): so are ranks, 4 bytes a fact's argument in fx
                    f"FROM (SELECT n_id AS id, json, text, n_rank FROM values_in{held})")
        con.unregister("values_in")
        escaped = con.execute("SELECT id, text FROM vals WHERE json IS NULL").fetchall()
        if escaped:
            self._register("escaped_in", {"n_id": [i for i, _ in escaped], "json": [value_json(v) for _, v in escaped]})
            con.execute("UPDATE vals SET json = e.json FROM escaped_in e WHERE vals.id = e.n_id")
            con.unregister("escaped_in")

    def _assertions(self) -> None:
        if self.native is not None:  # read by DuckDB: the table is there already
            self.con.execute(f"CREATE TABLE assertions ({ASSERTIONS})")
            self.con.execute(f"INSERT INTO assertions {self.native.assertions_sql()}")
            self.con.execute(f"CREATE TABLE amap AS {self.native.numbers_sql()}")
            self.native.release()
            return
        rows = self.prepared.assertions
        numbers = self.runner.numbers
        self._register("assertions_in", {
            "n_num": list(range(1, len(rows) + 1)), "id": [a.id for a in rows], "source": [a.source for a in rows],
            "subject": [a.subject for a in rows], "predicate": [a.predicate for a in rows],
            "object": [a.object for a in rows], "text": [a.text for a in rows], "kind": [a.kind for a in rows],
            "n_negated": [int(a.negated) for a in rows], "n_rank": [numbers[a.id] for a in rows],
            "evidence": [a.evidence.dumps() if a.evidence is not None else None for a in rows]})
        con = self.con
        con.execute(f"CREATE TABLE assertions ({ASSERTIONS})")
        con.execute("INSERT INTO assertions SELECT n_num, id, source, subject, predicate, object, text, kind, "
                    "n_negated, CAST(evidence AS VARCHAR), 1 FROM assertions_in")
        con.execute("CREATE TABLE amap AS SELECT CAST(n_rank AS INTEGER) AS rank, CAST(n_num AS INTEGER) AS num "
                    "FROM assertions_in")
        con.unregister("assertions_in")

    # -- facts, numbered by relation then arguments; labels in assertion numbers; mentions

    def _numbered(self) -> None:
        """``fx``: every fact numbered, with its arguments' JSON text and ranks and its label
        (in assertion numbers if ``shifted``: a shift as fx is made costs 0.04 s at x40, the same
        shift in the view the facts file is written from 0.4 s; else in the plan's ranks)."""
        plan, con = self.plan, self.con
        label = ("list_transform(t.label, lambda m: list_transform(m, lambda x: x + 1))" if self.shifted
                 else "t.label")
        parts = []
        # a fact's arguments in tuple_key order are its values' ranks in turn: every position ranked
        width = max([3, *(plan.arity(relation) for relation in plan.relations)])
        for position, relation in enumerate(sorted(plan.relations)):
            arity = plan.arity(relation)
            table = plan.table(relation)
            joins = "".join(f" JOIN vals v{i} ON v{i}.id = t.k{i}" for i in range(arity))
            args = " || ', ' || ".join(f"v{i}.json" for i in range(arity)) or "''"
            keys = [f"t.k{i}" if i < arity else "CAST(NULL AS INTEGER)" for i in range(3)]
            if plan.witness:  # the fact's id in the evaluation: its derivations name it so
                keys.append("t.id")
            ranks = [f"v{i}.srt" if i < arity else "CAST(NULL AS INTEGER)" for i in range(width)]
            # the lengths of the first two arguments' text: a claim's or edge's content is made from
            # its args without a join (tables_artifacts._CONTENT)
            lengths = ("CAST(length(v0.json) AS INTEGER) AS n0, CAST(length(v1.json) AS INTEGER) AS n1" if arity == 3
                       else "CAST(NULL AS INTEGER) AS n0, CAST(NULL AS INTEGER) AS n1")
            parts.append((relation, f"SELECT {position} AS rel_order, {_quote(relation)} AS relation, "
                          f"'[' || {args} || ']' AS args, {lengths}, "
                          f"{', '.join(f'{k} AS {_key_name(i)}' for i, k in enumerate(keys))}, "
                          f"{', '.join(f'{r} AS s{i}' for i, r in enumerate(ranks))}, "
                          f"{label} AS label, t.exact FROM {table} t{joins}"))
        order = ", ".join(f"s{i}" for i in range(width))
        # a relation at a time, in its order, numbered on from the last (the writer keeps
        # insertion order): the facts file is then written in its order without a sort of its own
        # (tables.copy_out), and no sort holds every relation's rows at once
        # ``claimed``: an edge that is also a claim (no entailed-edge artifact of its own)
        done = 0
        for position, (relation, part) in enumerate(parts):
            claimed = (f"c.k0 IS NOT NULL AS claimed FROM ({part}) x LEFT JOIN "
                       f"(SELECT DISTINCT k0, k1, k2 FROM {plan.table('claim')}) c "
                       f"ON c.k0 = x.k0 AND c.k1 = x.k1 AND c.k2 = x.k2"
                       if relation == "edge" and "claim" in plan.relations else f"FALSE AS claimed FROM ({part}) x")
            select = (f"SELECT {done} + row_number() OVER () AS num, u.*, "
                      f"(len(label) = 1 AND len(label[1]) = 0) AS one, (len(label) = 1 AND len(label[1]) = 1) AS single "
                      f"FROM (SELECT x.*, {claimed} ORDER BY {order}) u")
            con.execute(f"CREATE TABLE fx AS {select}" if position == 0 else f"INSERT INTO fx {select}")
            done = con.execute("SELECT count(*) FROM fx").fetchall()[0][0]
        con.execute(f"DROP VIEW IF EXISTS {witnesses.WITNESSES}")
        for (table,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE regexp_matches(table_name, "
                                    "'^[rdp][0-9]+$')").fetchall():
            con.execute(f"DROP TABLE {table}")  # the evaluation's tables: fx holds what is written

    def _circuit(self, folder: Path) -> None:
        """The evaluation's derivations of every inexact fact, as the folder's circuit (version 1)."""
        target = table_path(folder, CIRCUIT)
        witnesses.copy_circuit(self.con, quoted(target), "fx", PARQUET)

    def _labels(self) -> None:
        """``mentions`` and ``facts``: labels in assertion numbers (fx's labels are in the plan's
        ranks unless ``shifted``)."""
        con = self.con
        if self.shifted:
            self._labels_shifted()
            return
        # most labels are one assertion (x40: 78%): a join; the others unnested and grouped back
        con.execute(f"CREATE TABLE mentions ({_SCHEMA['mentions']})")
        con.execute("INSERT INTO mentions SELECT a.num, f.num, 0 FROM fx f JOIN amap a ON a.rank = f.label[1][1] "
                    "WHERE f.single")
        con.execute("CREATE TABLE several AS SELECT a.num AS assertion, s.fact, s.support_set FROM "
                    f"({_UNNESTED}) s JOIN amap a ON a.rank = s.n")
        con.execute("INSERT INTO mentions SELECT * FROM several")
        con.execute(f"CREATE TABLE facts ({_SCHEMA['facts']})")
        con.execute("""
            INSERT INTO facts
            SELECT f.num, f.relation, f.args, CASE WHEN f.single THEN [[a.num]] ELSE coalesce(n.label, f.label) END,
                   f.exact, CAST(len(f.label) AS INTEGER)
            FROM fx f LEFT JOIN amap a ON f.single AND a.rank = f.label[1][1] LEFT JOIN (
                SELECT fact, list(numbers ORDER BY support_set) AS label FROM (
                    SELECT fact, support_set, list(assertion ORDER BY assertion) AS numbers
                    FROM several GROUP BY fact, support_set) GROUP BY fact) n ON n.fact = f.num
            ORDER BY f.num""")
        con.execute("DROP TABLE several")

    def _labels_shifted(self) -> None:
        """``_labels`` when every assertion's number is its rank plus one (the file lists the ids
        in natural order): fx's labels are in numbers (shifted as fx was made), each support set
        still ascending and the sets in their order, so nothing is joined or grouped back (x40
        under 150MB: 1.66 -> 0.71 s)."""
        con = self.con
        self.facts_view = True
        con.execute(f"CREATE TABLE mentions ({_SCHEMA['mentions']})")
        con.execute("INSERT INTO mentions SELECT f.label[1][1], f.num, 0 FROM fx f WHERE f.single")
        con.execute(f"INSERT INTO mentions SELECT n, fact, support_set FROM ({_UNNESTED}) s")
        # ``facts`` is a view of fx and the sentences without a fact (``_sentences``): a table
        # of its own was written only to be copied into its file (x40, 1.3 M rows: 150 MB)
        con.execute(f"CREATE TABLE facts_more ({_SCHEMA['facts']})")
        con.execute("CREATE VIEW facts AS SELECT num, relation, args, label, exact, CAST(len(label) AS INTEGER) "
                    "AS sets FROM fx UNION ALL SELECT * FROM facts_more")

    def _rules(self, con) -> None:
        """The rules table (a syntax tree per rule) and the meta's text of the rules, in the
        program's order; a batch of rules at a time, on ``con`` (a cursor of the writer's)."""
        con.execute(f"CREATE TABLE rules ({_SCHEMA['rules']})")
        rules = self.receipts.program_rules(self.prepared.program.rules, len(self.prepared.compiled.bridge), con)
        texts, number = [], 0
        while batch := list(islice(rules, 5_000)):
            texts.append("\n".join(map(str, batch)))
            columns = zip(*folder_rule_rows(batch, number + 1))
            self._register("rules_in", {name: list(values) for name, values in
                                        zip(("n_num", "tree", "relation", "c0", "c1", "c2", "ground"), columns)}, con)
            con.execute("INSERT INTO rules SELECT n_num, tree, relation, c0, c1, c2, ground FROM rules_in")
            con.unregister("rules_in")
            number += len(batch)
        self.rules_text = "\n".join(texts)

    # -- statistics and meta, as write_graph records them

    def _statistics(self) -> None:
        con = self.con
        layers: dict[str, dict] = {}
        # one join of arts and fstat for every layer's counts, label bytes and histogram
        for layer, _, sets, count, inexact, bytes_ in con.execute(
                "SELECT a.layer, a.o0, f.sets, count(*), count(*) FILTER (WHERE NOT f.exact), sum(f.bytes) "
                "FROM arts_all a JOIN fstat f ON f.fact = a.fact GROUP BY a.layer, a.o0, f.sets "
                "ORDER BY a.o0, f.sets").fetchall():
            entry = layers.setdefault(layer, {"artifacts": 0, "inexact": 0, "label_bytes": 0, "support_sets": {}})
            entry["artifacts"] += count
            entry["inexact"] += inexact
            entry["label_bytes"] += int(bytes_)
            entry["support_sets"][sets] = entry["support_sets"].get(sets, 0) + count
        for layer, entry in layers.items():
            self.layers[layer] = entry["artifacts"]
            self.inexact += entry["inexact"]
        con.execute("DROP TABLE fstat")
        sources = con.execute("SELECT count(DISTINCT source) FROM assertions").fetchall()[0][0]
        count = self.native.count if self.native is not None else len(self.prepared.assertions)
        self.stats = {"assertions": count, "sources": sources, "layers": layers}

    def meta(self, origins=None, labels: str = "capped") -> dict[str, str]:
        return folder_meta(self.prepared, self.background, self.stats, origins, self.rules_text, labels)


#: the assertions of every label of fx but those of one assertion (ranks or numbers, as fx's
#: labels are): (fact, support_set, n) rows
_UNNESTED = ("SELECT fact, CAST(i - 1 AS INTEGER) AS support_set, unnest(m) AS n FROM "
             "(SELECT num AS fact, unnest(label) AS m, generate_subscripts(label, 1) AS i FROM fx WHERE NOT single)")


def _key_name(i: int) -> str:
    """fx's columns of a fact's first three arguments (k0..k2), then its evaluation id (fid)."""
    return f"k{i}" if i < 3 else "fid"


def ranks_are_numbers(con) -> bool:
    """True when every assertion's number in the folder (``amap``) is its rank plus one."""
    return bool(con.execute("SELECT coalesce(bool_and(num = rank + 1), TRUE) FROM amap").fetchall()[0][0])


def _quote(text: str) -> str:
    return f"'{_quoted(text)}'"


__all__ = ["TablesBuild", "build_tables", "ranks_are_numbers"]
