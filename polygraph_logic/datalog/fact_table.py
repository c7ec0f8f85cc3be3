"""Ground facts in bulk: one table of tuples per relation, without a parse tree per fact.

Facts from ``.facts`` files and the fast path of ``.dl`` text land here directly;
facts given as ``Fact`` objects are added too, so a program keeps every ground fact
in one place. ``FactView`` shows the tables as the sequence of ``Fact`` objects the
rest of the API expects, built only when someone iterates it.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Iterable, Iterator, Sequence

from polygraph_logic.errors import Position, ProgramError
from polygraph_logic.datalog.syntax import Atom, Constant, Fact


class Origins:
    """Where the rows of a table came from: segments of rows, each with its positions."""

    __slots__ = ("starts", "segments")

    def __init__(self):
        self.starts: list[int] = []
        self.segments: list[tuple[str, object, object]] = []  # (file, lines, columns)

    def add(self, first_row: int, file: str, lines, columns=None) -> None:
        """Records that rows from ``first_row`` on come from ``file`` at these lines (and columns).

        ``lines`` is a sequence aligned with the rows, or an int: the line of the first
        row, the others following one a line (a fact file without blank lines).
        """
        self.starts.append(first_row)
        self.segments.append((file, lines, columns))

    def position(self, row: int) -> Position | None:
        """Returns the position of a row, or None when it is unknown."""
        k = bisect_right(self.starts, row) - 1
        if k < 0:
            return None
        file, lines, columns = self.segments[k]
        offset = row - self.starts[k]
        line = lines + offset if isinstance(lines, int) else lines[offset]
        return Position(file, line, columns[offset] if columns is not None else 1)


class FactTable:
    """The ground facts of one relation: ``rows`` (tuples), optional provenance ``variables``."""

    __slots__ = ("relation", "arity", "rows", "variables", "origins")

    def __init__(self, relation: str, arity: int):
        self.relation = relation
        self.arity = arity
        self.rows: list[tuple] = []
        self.variables: list[str | None] | None = None  # None: no row is tracked
        self.origins = Origins()

    def __len__(self) -> int:
        return len(self.rows)

    def extend(self, rows: list[tuple], variables: list[str | None] | None = None) -> None:
        """Appends rows (and their provenance variables, aligned, when any is tracked)."""
        if variables is not None:
            if self.variables is None:
                self.variables = [None] * len(self.rows)
            self.variables.extend(variables)
        elif self.variables is not None:
            self.variables.extend([None] * len(rows))
        self.rows.extend(rows)

    def add_facts(self, facts: Iterable[Fact]) -> None:
        """Appends ground ``Fact`` objects (their arguments already constants)."""
        facts = list(facts)
        first = len(self.rows)
        rows = [tuple(arg.value for arg in f.atom.args) for f in facts]
        tracked = any(f.variable for f in facts)
        self.extend(rows, [f.variable for f in facts] if tracked else None)
        lines = [f.position.line if f.position else 0 for f in facts]
        columns = [f.position.column if f.position else 0 for f in facts]
        self.origins.add(first, facts[0].position.file if facts and facts[0].position else "<facts>",
                         lines, columns)

    def position(self, row: int) -> Position | None:
        """Returns where row ``row`` was written, when known."""
        return self.origins.position(row)

    def facts(self) -> Iterator[Fact]:
        """Yields the rows as ``Fact`` objects (built on demand)."""
        variables = self.variables or [None] * len(self.rows)
        for row, (tup, variable) in enumerate(zip(self.rows, variables)):
            position = self.position(row)
            atom = Atom(self.relation, tuple(Constant(v) for v in tup), position)
            yield Fact(atom, variable, position)


class FactView(Sequence[Fact]):
    """The tables of a program seen as a sequence of ``Fact`` objects (built on first use)."""

    def __init__(self, tables: dict[str, FactTable]):
        self.tables = tables
        self._facts: list[Fact] | None = None

    def _all(self) -> list[Fact]:
        if self._facts is None:
            self._facts = [fact for table in self.tables.values() for fact in table.facts()]
        return self._facts

    def __len__(self) -> int:
        return sum(len(t) for t in self.tables.values())

    def __iter__(self) -> Iterator[Fact]:
        return iter(self._all())

    def __getitem__(self, index):
        return self._all()[index]

    def __eq__(self, other) -> bool:
        return list(self) == list(other) if isinstance(other, (list, FactView)) else NotImplemented

    def __repr__(self) -> str:
        return f"FactView({len(self)} facts in {len(self.tables)} relations)"


def tables_from_facts(facts: Iterable[Fact], tables: dict[str, FactTable] | None = None) -> dict[str, FactTable]:
    """Adds ground facts to tables (one per relation), each relation's in the order given.

    Facts are grouped by relation first (each relation's rows in the order given), then
    added once per run of one source file: compiled inputs interleave relations (an
    assertion, then its claim), and one addition per fact cost more than the facts."""
    tables = {} if tables is None else tables
    groups: dict[str, list[Fact]] = {}
    for fact in facts:
        groups.setdefault(fact.atom.relation, []).append(fact)
    for group in groups.values():
        start = 0
        for i in range(1, len(group) + 1):
            if i == len(group) or _file(group[i]) != _file(group[start]):
                _flush(group[start:i], tables)
                start = i
    return tables


def _file(fact: Fact):
    return fact.position.file if fact.position else None


def _flush(run: list[Fact], tables: dict[str, FactTable]) -> None:
    atom = run[0].atom
    table = tables.get(atom.relation)
    if table is None:
        table = tables[atom.relation] = FactTable(atom.relation, atom.arity)
    table.add_facts(run)

def merge_tables(into: dict[str, FactTable], tables: dict[str, FactTable],
                 adopt: bool = True) -> dict[str, FactTable]:
    """Adds the rows of ``tables`` to ``into`` (relation by relation); raises on an arity clash.

    With ``adopt`` a table new to ``into`` is taken over as is (the caller gives it up).
    """
    for name, table in tables.items():
        mine = into.get(name)
        if mine is None and adopt:
            into[name] = table
            continue
        if mine is None:
            mine = into[name] = FactTable(name, table.arity)
        elif mine.arity != table.arity:
            raise ProgramError("arity_mismatch", f"{name} is used with {table.arity} argument(s) here but "
                               f"with {mine.arity} at {mine.position(0)}", table.position(0))
        first = len(mine.rows)
        mine.extend(table.rows, table.variables)
        for start, (file, lines, columns) in zip(table.origins.starts, table.origins.segments):
            mine.origins.add(first + start, file, lines, columns)
    return into
