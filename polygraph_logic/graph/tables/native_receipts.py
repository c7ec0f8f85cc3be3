"""Receipts compiled into rows DuckDB holds, for builds that write the tables folder.

A receipt becomes rules (graph/compile.py, ``receipt_rules``): one per support set of a
merge or a flat summary, a ``member`` rule per merged member, one per support set of each
sentence and the summary as the conjunction of its sentences.  As Rule objects the 34,594
rules of the x40 graph held about 50 MB of Python objects for the whole build, outside
``--memory-limit`` (x400: 334,370 rules, most of the 740 MB its peak was above the limit).

Here each receipt is read and checked in Python as every build checks it
(``records.receipt_records``), one at a time; its rules go to DuckDB as rows and the
receipt is dropped.  Of each *kind* of rule (head relation and arity, body relation and
length) the first stays a Rule, the kind's exemplar: the program holds the exemplars, so
its strata and the plan's shapes are those of the program with every rule, and the other
rules of a kind join their exemplar's parameter table (``load``).  Every rule is made
again, a batch at a time, when the writer stores the rules (``rules``).

Rows: ``rc_rules`` (section: 0 merges, 1 summaries, as compile_inputs groups them; seq:
the rule's place in its section; kind), ``rc_vals`` (a rule's constants: the body's values,
then the head's, the parameter positions plan._lift gives them; ``cite``: an assertion id), ``rc_receipts`` (artifact id, content JSON text), ``rc_sentences`` (as the writer's
sentences).  Checks that need every receipt (an unknown assertion id, an artifact id given
twice, an artifact id that is a sentence's) are SQL; when one fails the build reads its
inputs in Python, which reports each problem with its file and line.
"""

from __future__ import annotations

from itertools import chain
from pathlib import Path
from typing import Iterator

from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.compile import receipt_rules, rule_of
from polygraph_logic.graph.records import receipt_records
from polygraph_logic.graph.store.writer import json_text
from polygraph_logic.datalog.syntax import Rule

#: receipts per batch sent to DuckDB, and rules per batch read back (``rules``)
BATCH = 5_000
FETCH = 5_000

_TABLES = {
    "rc_rules": "section TINYINT, seq INTEGER, kind SMALLINT",
    "rc_vals": "section TINYINT, seq INTEGER, pos SMALLINT, value VARCHAR, cite BOOLEAN",
    "rc_receipts": "artifact VARCHAR, content VARCHAR",
    "rc_sentences": "n_order BIGINT, id VARCHAR, args VARCHAR, content VARCHAR",
}


class ReceiptRows:
    """The receipts of one build as rows of ``con`` (see the module docstring)."""

    def __init__(self, con, sender=None):
        # ``sender``: the connection the rows are sent on while reading (a cursor of ``con``'s
        # database, when ``con`` is busy meanwhile); everything after uses ``con``
        self.con, self.sender = con, sender or con
        self.count = self.over_cap = 0
        self.kinds: dict[tuple, int] = {}  # (head, head arity, body, body length) -> kind
        self.exemplars: list[tuple[int, int, Rule]] = []  # per kind: section, seq, the rule
        self.sizes = [0, 0]  # rules per section
        self.sentences = 0
        self._batch: dict[str, list[tuple]] = {name: [] for name in _TABLES}
        for name, columns in _TABLES.items():
            self.sender.execute(f"CREATE OR REPLACE TABLE {name} ({columns})")  # not TEMP: read on cursors

    def add(self, receipt, cap) -> None:
        """Adds one receipt's rules, content and sentences."""
        self.content(receipt)
        over, rows = receipt_rules(receipt, cap)
        self.over_cap += over
        self.count += 1
        section = 0 if receipt.layer == "merge" else 1
        batch = self._batch
        for head, head_values, body, body_values in rows:
            seq = self.sizes[section]
            self.sizes[section] += 1
            key = (head, len(head_values), body, len(body_values))
            kind = self.kinds.get(key)
            if kind is None:
                kind = self.kinds[key] = len(self.kinds)
                self.exemplars.append((section, seq, rule_of(head, head_values, body, body_values)))
            batch["rc_rules"].append((section, seq, kind))
            cite = body == "assertion"
            batch["rc_vals"].extend((section, seq, pos, value, cite) for pos, value in enumerate(body_values))
            batch["rc_vals"].extend((section, seq, pos, value, False)
                                    for pos, value in enumerate(head_values, len(body_values)))
        if self.count % BATCH == 0:
            self.flush()

    def content(self, receipt) -> None:
        """Adds one receipt's content and sentences (the writer's rows; a build whose receipts
        were read in Python adds them alone)."""
        batch = self._batch
        batch["rc_receipts"].append((receipt.artifact, json_text(receipt.content)))
        for i, sentence in enumerate(receipt.sentences, 1):
            sid = receipt.sentence_id(i)
            batch["rc_sentences"].append((self.sentences, sid, json_text([sid]), json_text(
                {"summary": receipt.artifact, "index": i, "text": sentence.text})))
            self.sentences += 1

    def flush(self) -> None:
        """Sends the rows gathered so far to DuckDB."""
        import numpy as np
        for name, rows in self._batch.items():
            if not rows:
                continue
            names = [column.split()[0] for column in _TABLES[name].split(", ")]
            self.sender.register("rc_batch", {column: np.array([row[i] for row in rows], dtype=object)
                                              for i, column in enumerate(names)})
            self.sender.execute(f"INSERT INTO {name} SELECT * FROM rc_batch")
            self.sender.unregister("rc_batch")
            rows.clear()

    def problem(self) -> bool:
        """Whether a check that needs every receipt fails: a cited id that is no assertion of
        ``a_in``, an artifact id given twice, an artifact id that is a sentence's."""
        return bool(self.con.execute("""SELECT
            EXISTS (SELECT 1 FROM rc_vals WHERE cite AND value NOT IN (SELECT id FROM a_in))
            OR EXISTS (SELECT 1 FROM rc_receipts GROUP BY artifact HAVING count(*) > 1)
            OR EXISTS (SELECT 1 FROM rc_receipts r JOIN rc_sentences s ON s.id = r.artifact)""").fetchall()[0][0])

    def split(self) -> tuple[list[Rule], list[Rule]]:
        """The exemplars of the merges' and the summaries' sections, in their order."""
        ordered = sorted(self.exemplars, key=lambda e: e[:2])
        return [e[2] for e in ordered if e[0] == 0], [e[2] for e in ordered if e[0] == 1]

    def values_sql(self) -> str:
        """The receipts' values (strings all)."""
        return "SELECT DISTINCT value AS v FROM rc_vals"

    def load(self, runner) -> None:
        """Adds every rule but the exemplars to its kind's parameter table (the exemplar's
        shape); the values are ids in ``a_vals`` (native_inputs.py)."""
        con, plan = self.con, runner.plan
        shapes = {rule: shape for shape in plan.shapes() for rule in shape.rules}
        number = self._renumber(plan, shapes) if plan.witness else None
        for kind, (section, seq, rule) in enumerate(self.exemplars):
            shape = shapes[rule]
            columns = ", ".join(f"max(x.id) FILTER (WHERE v.pos = {i}) AS c{i}" for i in range(shape.width))
            if number is not None:  # witness labels: each rule's number as the rules are stored
                columns += f", CAST({number} AS INTEGER) AS rn"
            rows = (f"SELECT {columns} FROM rc_rules r JOIN rc_vals v ON v.section = r.section AND v.seq = r.seq "
                    f"JOIN a_vals x ON x.v = v.value WHERE r.kind = {kind} {{}} GROUP BY r.section, r.seq")
            # the positions are plan._lift's (the body's constants, then the head's): the exemplar's
            # row, as the plan made it, says whether they still are
            found = con.execute(rows.format(f"AND r.section = {section} AND r.seq = {seq}")).fetchall()
            if number is not None:
                found = [row[:-1] for row in found]
                con.execute(f"DELETE FROM {shape.table} WHERE rn = {shape.numbers[shape.rules.index(rule)]}")
            if found != [shape.params[shape.rules.index(rule)]]:
                raise PolygraphError("engine_error", f"the receipt rule '{rule}' is not planned as its rows "
                                                     "say (native_receipts.py and plan._lift disagree)")
            con.execute(f"INSERT INTO {shape.table} SELECT * FROM ({rows.format('')} "
                        f"EXCEPT SELECT * FROM {shape.table})")

    def _renumber(self, plan, shapes: dict) -> str:
        """Under witness labels each parameter row carries its rule's number (``rn``), and the rules
        are stored with every receipt rule in place of its kind's exemplar (``program_rules``): the
        program's rules after the exemplars move on by the receipt rules their exemplars stand for.
        Returns the SQL of a receipt rule's number from its ``r.section`` and ``r.seq``."""
        first = min(shapes[rule].numbers[shapes[rule].rules.index(rule)] for _, _, rule in self.exemplars)
        bridge, exemplars, total = first - 1, len(self.exemplars), sum(self.sizes)
        last = bridge + exemplars
        for shape in plan.shapes():
            shape.numbers = [n - exemplars + total if n > last else n for n in shape.numbers]
            if shape.params and shape.width:
                self.con.execute(f"UPDATE {shape.table} SET rn = rn - {exemplars} + {total} WHERE rn > {last}")
        return f"{bridge} + CASE WHEN r.section = 1 THEN {self.sizes[0]} ELSE 0 END + r.seq + 1"

    def rules(self, con=None) -> Iterator[Rule]:
        """Every receipt rule in the program's order (merges, then summaries, each in file order),
        read on a cursor of ``con`` (default: the rows' connection)."""
        kinds = {kind: key for key, kind in self.kinds.items()}
        cursor = (con or self.con).cursor()  # its own connection: the writer inserts each batch meanwhile
        cursor.execute("SELECT r.kind, list(v.value ORDER BY v.pos) FROM rc_rules r JOIN rc_vals v "
                       "ON v.section = r.section AND v.seq = r.seq GROUP BY r.section, r.seq, r.kind "
                       "ORDER BY r.section, r.seq")
        while batch := cursor.fetchmany(FETCH):
            for kind, values in batch:
                head, _, body, length = kinds[kind]
                yield rule_of(head, tuple(values[length:]), body, tuple(values[:length]), shared=False)
        cursor.close()

    def program_rules(self, rules: list[Rule], bridge: int, con=None) -> Iterator[Rule]:
        """The program's rules (``rules``: the program's, whose first ``bridge`` are compile.py's
        bridge rules) with every receipt rule made again in place of its kind's exemplar (read
        on a cursor of ``con``, as ``rules``)."""
        if not self.exemplars:
            return iter(rules)
        return chain(rules[:bridge], self.rules(con), rules[bridge + len(self.exemplars):])

    def drop(self) -> None:
        """Drops the rows (once the writer has made what it makes of them)."""
        for name in _TABLES:
            self.con.execute(f"DROP TABLE IF EXISTS {name}")


def read_receipts(con, path: str | Path, cap, sender=None, check: bool = True) -> ReceiptRows | None:
    """The receipts of ``path`` as rows of ``con`` (after native_inputs.read_assertions made
    ``a_in``); None when any receipt has a problem (the build then reads the inputs in Python).

    ``sender``: a cursor the rows are sent on (``con`` is busy: native_inputs.prepare reads the
    assertions on it meanwhile); without ``check`` the checks that need ``a_in`` are left to the
    caller (``ReceiptRows.problem``)."""
    if not Path(path).is_file():
        return None  # records.py says what is missing
    problems: list = []
    rows = ReceiptRows(con, sender)
    for receipt in receipt_records(path, problems):
        if problems:
            return None
        rows.add(receipt, cap)
    if problems:
        return None
    rows.flush()
    rows.sender = con
    return None if check and rows.problem() else rows
