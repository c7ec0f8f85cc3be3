"""Reading program text fast: ground facts by one regular expression each, the rest by the grammar.

A program of a hundred thousand facts and a few rules spends nearly all its parse
time on the facts, and a fact such as ``edge("a", 3).`` or ``a12 :: edge("a", "b").``
needs no parse tree. The scanner walks the text statement by statement: a ground
fact goes straight into its relation's table; any other statement (a rule, a
directive, a fact with arithmetic) is left, at its original line and column, for the
lark grammar. Errors name the same file, line and column either way.
"""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass, field

from polygraph_logic.errors import Position, ProgramError
from polygraph_logic.datalog.fact_table import FactTable
from polygraph_logic.datalog.parser import parse_clauses, parse_int, unescape

_NAME = r"(?!not\b)(?:[A-Za-z][A-Za-z0-9_]*|_[A-Za-z0-9_]+)"
_STRING = r'"(?:[^"\\\n]|\\.)*"'
_NUMBER = r"-?(?:[0-9]+\.[0-9]+(?:[eE][-+]?[0-9]+)?|0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)"
_CONST = rf"(?:{_STRING}|{_NUMBER})"
_FACT = re.compile(
    rf"(?:({_NAME}|{_STRING})[ \t]*::[ \t]*)?({_NAME})[ \t]*\([ \t]*"
    rf"({_CONST}(?:[ \t]*,[ \t]*{_CONST})*)?[ \t]*\)[ \t]*\."
)
_ARGUMENT = re.compile(rf"{_STRING}|{_NUMBER}")
_SKIP = re.compile(r"(?:\s+|//[^\n]*|/\*.*?\*/)*", re.S)
# one statement that is not a ground fact: a rule up to its final '.', or a directive
_RULE = re.compile(r"(?:" + _STRING + r"|//[^\n]*|/\*.*?\*/|[0-9]+\.[0-9]" + r"|[^.\"/]|/(?![/*]))*\.", re.S)
_DIRECTIVE = re.compile(r"\.[A-Za-z_]+(?:" + _STRING + r"|\([^()]*\)|\[[^\]]*\]|[^\n\"(\[])*")


@dataclass
class Source:
    """A parsed program text: statements for the grammar (rules, directives) and fact tables."""

    clauses: list = field(default_factory=list)
    tables: dict[str, FactTable] = field(default_factory=dict)


def parse_source(text: str, file: str = "<string>") -> Source:
    """Parses program text, ground facts through the fast path; raises ParseError or ProgramError."""
    source = Source()
    spans = _scan(text, file, source.tables)
    if spans:
        source.clauses = parse_clauses(_blank_outside(text, spans), file)
    return source


def _scan(text: str, file: str, tables: dict[str, FactTable]) -> list[tuple[int, int]]:
    """Fills ``tables`` with the ground facts; returns the spans left for the grammar."""
    spans: list[tuple[int, int]] = []
    batches: dict[str, _Batch] = {}
    skip, fact, rule, directive = _SKIP.match, _FACT.match, _RULE.match, _DIRECTIVE.match
    pos, end, line, line_at, line_start = 0, len(text), 1, 0, 0
    while True:
        pos = skip(text, pos).end()
        if pos >= end:
            break
        found = fact(text, pos)
        if found is None:
            other = (directive if text[pos] == "." else rule)(text, pos)
            stop = other.end() if other is not None and other.end() > pos else end
            spans.append((pos, stop))
            pos = stop
            continue
        newlines = text.count("\n", line_at, pos)
        if newlines:
            line += newlines
            line_start = text.rindex("\n", line_at, pos) + 1
        line_at = pos
        name = found.group(2)
        batch = batches.get(name)
        if batch is None:
            batch = batches[name] = _Batch(name, file)
        args = found.group(3)
        column = pos - line_start + 1
        values = _values(args, file, line, column) if args else ()
        batch.add(values, found.group(1), line, column)
        pos = found.end()
    for name, batch in batches.items():
        batch.flush(tables)
    return spans


def _values(args: str, file: str, line: int, column: int) -> tuple:
    out = []
    for token in _ARGUMENT.findall(args):
        if token[0] == '"':
            out.append(unescape(token, file, line, column) if "\\" in token else token[1:-1])
        elif "." in token:
            out.append(float(token))
        elif "x" in token or "b" in token or "X" in token or "B" in token:
            out.append(-parse_int(token[1:]) if token[0] == "-" else parse_int(token))
        else:
            out.append(int(token))
    return tuple(out)


class _Batch:
    """The facts of one relation met so far in one text, with their lines and columns."""

    __slots__ = ("name", "file", "rows", "variables", "lines", "columns", "arity", "tracked")

    def __init__(self, name: str, file: str):
        self.name, self.file = name, file
        self.rows: list[tuple] = []
        self.variables: list[str | None] = []
        self.lines, self.columns = array("I"), array("I")
        self.arity: int | None = None
        self.tracked = False

    def add(self, values: tuple, variable: str | None, line: int, column: int) -> None:
        if self.arity is None:
            self.arity = len(values)
        elif len(values) != self.arity:
            raise ProgramError(
                "arity_mismatch",
                f"{self.name} is used with {len(values)} argument(s) here but with {self.arity} at "
                f"{Position(self.file, self.lines[0], self.columns[0])}",
                Position(self.file, line, column),
            )
        if variable is not None:
            self.tracked = True
            if variable[0] == '"':
                variable = unescape(variable, self.file, line, column)
        self.rows.append(values)
        self.variables.append(variable)
        self.lines.append(line)
        self.columns.append(column)

    def flush(self, tables: dict[str, FactTable]) -> None:
        table = tables.get(self.name)
        if table is None:
            table = tables[self.name] = FactTable(self.name, self.arity)
        first = len(table.rows)
        table.extend(self.rows, self.variables if self.tracked else None)
        table.origins.add(first, self.file, self.lines, self.columns)


def _blank_outside(text: str, spans: list[tuple[int, int]]) -> str:
    """Returns the text with everything outside ``spans`` blanked, lines and columns kept."""
    pieces, last = [], 0
    for start, stop in spans:
        gap = text[last:start]
        newlines = gap.count("\n")
        if newlines:
            pieces.append("\n" * newlines + " " * (len(gap) - gap.rindex("\n") - 1))
        else:
            pieces.append(" " * len(gap))
        pieces.append(text[start:stop])
        last = stop
    return "".join(pieces)
