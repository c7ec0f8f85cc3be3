"""``polygraph eval --engine duckdb``: a program's Boolean closure, set at a time, on DuckDB.

The plan is sql_plan's with ``boolean`` (sql_boolean.py): every relation a table of interned
keys, each semi-naive round a handful of joins and one anti-join per relation, the rules of
one shape one statement.  The relations are read back from the tables: their sizes counted
there, their ``.output`` rows decoded, ordered and written as text there too (``text``, in
the order ``sorted_tuples`` gives: numbers first, by value, then symbols, by code point), so
a million facts never pass through Python one tuple at a time; ``model()`` reads them into a
Model when every relation is to be printed.

What the plan cannot evaluate exactly is refused by name (``engine_unsupported``): values
other than numbers and symbols (floats, records), comparisons by order, arithmetic, aggregates.
"""

from __future__ import annotations

from collections import defaultdict
from contextlib import contextmanager
from typing import Callable, Iterable, Iterator

from polygraph_logic.allocation import collector_paused
from polygraph_logic.datalog.budget import Budget
from polygraph_logic.datalog.evaluate import Model, StratumStats
from polygraph_logic.datalog.joins.join_plan import Store
from polygraph_logic.datalog.program import Program
from polygraph_logic.engines.duckdb_run import DuckDBRunner, session
from polygraph_logic.engines.sql_plan import make_plan
from polygraph_logic.errors import NotFound, PolygraphError
from polygraph_logic.provenance.boolean import BooleanSemiring

#: rows fetched from DuckDB at a time when writing a relation
BATCH = 100_000


class BooleanTables:
    """The relations of a Boolean evaluation, held by DuckDB while its connection is open."""

    def __init__(self, runner: DuckDBRunner):
        self.runner, self.plan, self.con = runner, runner.plan, runner.con
        self._decoded = False

    def size(self, relation: str) -> int:
        self._require(relation)
        return self.runner.count(relation)

    def _require(self, relation: str) -> None:
        """An unknown relation is the error Model.facts gives."""
        if relation not in self.plan.relations:
            known = ", ".join(sorted(self.plan.relations)) or "none"
            raise NotFound("unknown_relation", f"no relation named {relation!r}; the program has: {known}")

    def text(self, relation: str, delimiter: str) -> Iterator[str]:
        """The relation's rows written as souffle_output.format_row writes them, a line each,
        in ``sorted_tuples`` order, in chunks (souffle_output.write_relations reads them)."""
        self._require(relation)
        if self.plan.arity(relation) == 0:
            if self.size(relation):
                yield "()\n"
            return
        cursor = self.con.execute(self._lines(relation, delimiter))
        while batch := cursor.fetchmany(BATCH):
            yield "\n".join([row[0] for row in batch]) + "\n"

    def write_file(self, relation: str, delimiter: str, path) -> None:
        """Writes ``text``'s lines to ``path`` from DuckDB (no row passes through Python)."""
        self._require(relation)
        if self.plan.arity(relation) == 0:
            path.write_text("".join(self.text(relation, delimiter)), encoding="utf-8")
            return
        target = str(path).replace("'", "''")
        # one column, never quoted nor escaped, no compression whatever the file's name: the lines as made
        self.con.execute(f"COPY ({self._lines(relation, delimiter)}) TO '{target}' "
                         "(FORMAT csv, HEADER false, QUOTE '', ESCAPE '', DELIMITER '\x01', COMPRESSION 'none')")

    def _lines(self, relation: str, delimiter: str) -> str:
        """The query of the relation's rows as lines of text (arity > 0), in order."""
        self._decode()
        arity = self.plan.arity(relation)
        joins = " ".join(f"JOIN vals AS v{i} ON t.k{i} = v{i}.id" for i in range(arity))
        sep = "'" + delimiter.replace("'", "''") + "'"
        line = f"concat_ws({sep}, {', '.join(f'v{i}.txt' for i in range(arity))})" if arity > 1 else "v0.txt"
        order = ", ".join(f"v{i}.rank" for i in range(arity))
        return f"SELECT {line} AS line FROM {self.plan.table(relation)} AS t {joins} ORDER BY {order}"

    def holding(self, batches: Iterable[list[tuple[int, str, tuple]]]) -> set[int]:
        """The numbers of the facts of ``batches`` (``(num, relation, args)``) that these relations
        hold: each batch's interned into a table of asked keys, then one semi-join per relation
        (the facts never held in Python all at once)."""
        plan, con = self.plan, self.con
        asked: set[str] = set()
        for batch in batches:
            known: dict[str, list[tuple[int, list]]] = defaultdict(list)
            for num, relation, args in batch:
                if relation in plan.relations:
                    ids = [plan.values.get(v) for v in args] if plan.arity(relation) else [0]
                    if None not in ids:  # a value the program never holds: no fact of it does
                        known[relation].append((num, ids))
            for relation, rows in known.items():
                keys = plan.keys(relation)
                table = f"asked{plan.relations[relation]}"
                if relation not in asked:
                    con.execute(f"CREATE TEMP TABLE {table} (num BIGINT, {', '.join(f'{k} INTEGER' for k in keys)})")
                    asked.add(relation)
                columns = ", ".join(f"unnest(${i + 2})" for i in range(len(keys)))
                con.execute(f"INSERT INTO {table} SELECT unnest($1), {columns}",
                            [[num for num, _ in rows], *([ids[i] for _, ids in rows] for i in range(len(keys)))])
        held: set[int] = set()
        for relation in sorted(asked):
            keys = ", ".join(plan.keys(relation))
            held.update(row[0] for row in con.execute(
                f"SELECT num FROM asked{plan.relations[relation]} SEMI JOIN {plan.table(relation)} USING ({keys})"
            ).fetchall())
        return held

    def model(self) -> Model:
        """Every relation read into a Model of the Boolean semiring."""
        plan = self.plan
        decode = list(plan.values)  # ids are the values' places (as driver.Runner.model reads them)
        store = Store(plan.program.arities)
        for relation in plan.relations:
            arity, rows = plan.arity(relation), store.relations[relation]
            keys = ", ".join(plan.keys(relation)[:arity]) or "1"
            cursor = self.con.execute(f"SELECT {keys} FROM {plan.table(relation)}")
            while batch := cursor.fetchmany(BATCH):
                for row in batch:
                    rows[tuple(map(decode.__getitem__, row[:arity]))] = True
        return Model(plan.program, BooleanSemiring(), store)

    def _decode(self) -> None:
        """Makes ``vals(id, rank, txt)``: each interned value's text and its place in the order."""
        if self._decoded:
            return
        values = list(self.plan.values)
        ranked = sorted(range(len(values)), key=lambda i: _order(values[i]))
        rank = [0] * len(values)
        for place, i in enumerate(ranked):
            rank[i] = place
        self.con.execute("CREATE TABLE vals (id INTEGER, rank INTEGER, txt VARCHAR)")
        for start in range(0, len(values), BATCH):
            ids = list(range(start, min(start + BATCH, len(values))))
            self.con.execute("INSERT INTO vals SELECT unnest($1), unnest($2), unnest($3)",
                             [ids, [rank[i] for i in ids], [str(values[i]) for i in ids]])
        self._decoded = True


def _order(value) -> tuple:
    return (0, value, "") if type(value) is int else (1, 0, value)


def _refuse_values(plan) -> None:
    """Numbers and symbols only: a float, a record or a symbol DuckDB cannot hold is refused."""
    for value in plan.values:
        if type(value) is int:
            continue
        if type(value) is not str:
            raise PolygraphError("engine_unsupported", f"the DuckDB engine evaluates numbers and symbols; the value "
                                 f"{value!r} is a {type(value).__name__}: use --engine python")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise PolygraphError("engine_unsupported", f"the symbol {value!r} is not valid UTF-8, which DuckDB "
                                 "holds: use --engine python") from None


@contextmanager
def boolean_closure(program: Program, memory_limit: str | None = None, threads: int | None = None,
                    progress: Callable[[StratumStats], None] | None = None,
                    max_facts: int | None = None, timeout: float | None = None) -> Iterator[BooleanTables]:
    """Evaluates ``program``'s Boolean closure on DuckDB and yields its tables while the
    connection is open.  ``max_facts`` (per relation) and ``timeout`` (seconds) stop it with
    ``limit_exceeded``, as ``evaluate`` does, checked after every round."""
    budget = Budget(max_facts, timeout)
    with collector_paused():
        plan = make_plan(program, None, boolean=True)
    with session(memory_limit, threads) as (con, work):
        totals: dict[str, int] = {}

        def on_round(stats) -> None:
            stratum = sorted(plan.strata[stats.stratum][0])
            for relation in stratum:
                totals[relation] = totals.get(relation, 0) + runner.delta_facts.get(relation, 0)
                budget.check_size(relation, totals[relation], program.rules)
            budget.check_time(stratum[0], program.rules)

        with collector_paused():
            runner = DuckDBRunner(con, plan, work, on_round)
            runner.load()
        _refuse_values(plan)  # the facts' values are interned as they load
        for stratum, _ in plan.strata:
            for relation in stratum:
                totals[relation] = runner.count(relation)
        runner.run(progress)
        yield BooleanTables(runner)


__all__ = ["BATCH", "BooleanTables", "boolean_closure"]
