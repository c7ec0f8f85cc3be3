"""Reading program text fast: ground facts by one regular expression each, the rest by the grammar.

A program of a hundred thousand facts and a few rules spends nearly all its parse
time on the facts, and a fact such as ``edge("a", 3).`` or ``a12 :: edge("a", "b").``
needs no parse tree. The scanner walks the text statement by statement: a ground
fact goes straight into its relation's table; a *plain rule* (one head, a body of
positive atoms, arguments that are variables, strings or decimal integers: every rule
the RO compiler writes) becomes its syntax tree by regular expressions too; any other
statement (a directive, negation, arithmetic, a fact with arithmetic) is left, at its
original line and column, for the lark grammar. Clauses keep the text's order, and
errors name the same file, line and column either way (tests/test_source.py compares
both paths, positions included).
"""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass, field

from polygraph_logic.datalog.values import domain
from polygraph_logic.errors import Position, ProgramError
from polygraph_logic.datalog.fact_table import FactTable
from polygraph_logic.datalog.reading.parser import parse_clauses, parse_int, unescape
from polygraph_logic.datalog.syntax import Atom, Constant, Rule, Variable

_NAME = r"(?!not\b)(?:[A-Za-z][A-Za-z0-9_]*|_[A-Za-z0-9_]+)"
_STRING = r'"(?:[^"\\\n]|\\.)*"'
_NUMBER = r"-?(?:[0-9]+\.[0-9]+(?:[eE][-+]?[0-9]+)?|0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)"
_CONST = rf"(?:{_STRING}|{_NUMBER})"
_FACT = re.compile(
    rf"(?:({_NAME}|{_STRING})[ \t]*::[ \t]*)?({_NAME})[ \t]*\([ \t]*"
    rf"({_CONST}(?:[ \t]*,[ \t]*{_CONST})*)?[ \t]*\)[ \t]*\."
)
_ARGUMENT = re.compile(rf"{_STRING}|{_NUMBER}")
_NEWLINE = re.compile("\n")
_SKIP = re.compile(r"(?:\s+|//[^\n]*|/\*.*?\*/)*", re.S)
# one statement that is not a ground fact: a rule up to its final '.', or a directive (a dot
# between two name characters, as in inst.rel, does not end it)
_RULE = re.compile(r"(?:" + _STRING + r"|//[^\n]*|/\*.*?\*/|[0-9]+\.[0-9]" + r"|[^.\"/]|/(?![/*])"
                   r"|(?<=[A-Za-z0-9_])\.(?=[A-Za-z_]))*\.", re.S)
# a plain rule: head :- atom, ..., atom.  (arguments: variables, strings, decimal integers)
_PLAIN_ARG = rf"(?:{_STRING}|[0-9]+|[A-Za-z][A-Za-z0-9_]*)"
_PLAIN_ATOM = rf"{_NAME}[ \t]*\([ \t]*{_PLAIN_ARG}(?:[ \t]*,[ \t]*{_PLAIN_ARG})*[ \t]*\)"
_PLAIN_RULE = re.compile(rf"{_PLAIN_ATOM}[ \t]*:-[ \t\n]*{_PLAIN_ATOM}(?:[ \t]*,[ \t\n]*{_PLAIN_ATOM})*[ \t]*\.")
_PLAIN_PART = re.compile(rf"({_NAME})[ \t]*\(|({_STRING})|([0-9]+)|([A-Za-z][A-Za-z0-9_]*)")
# names the grammar reads otherwise in argument position (aggregates, nil), or never as a variable
_NOT_PLAIN = frozenset({"count", "sum", "min", "max", "mean", "not", "nil"})
_DIRECTIVE = re.compile(r"\.[A-Za-z_]+(?:" + _STRING + r"|\([^()]*\)|\[[^\]]*\]|[^\n\"(\[])*")
# a component, .comp Name { ... }, is one statement for the grammar, up to its closing brace
_COMPONENT = re.compile(r"\.comp\b")
_BRACES = re.compile(_STRING + r"|//[^\n]*|/\*.*?\*/|([{}])", re.S)


@dataclass
class Source:
    """A parsed program text: statements for the grammar (rules, directives) and fact tables."""

    clauses: list = field(default_factory=list)
    tables: dict[str, FactTable] = field(default_factory=dict)


def parse_source(text: str, file: str = "<string>") -> Source:
    """Parses program text, ground facts through the fast path; raises ParseError or ProgramError."""
    source = Source()
    plain: list[tuple[int, Rule]] = []
    spans = _scan(text, file, source.tables, plain)
    parsed = parse_clauses(_blank_outside(text, spans), file) if spans else []
    if not plain:
        source.clauses = parsed
    elif not parsed:
        source.clauses = [rule for _, rule in plain]
    else:  # the text's order: each grammar statement's clauses where its span began
        merged = [(offset, n, rule) for n, (offset, rule) in enumerate(plain)]
        starts = [0, *(m.end() for m in _NEWLINE.finditer(text))]  # line starts, found in C
        cursor = 0
        for n, clause in enumerate(parsed):
            position = getattr(clause, "position", None)
            if position is not None and position.line and position.line <= len(starts):
                cursor = max(cursor, starts[position.line - 1] + max(position.column, 1) - 1)
            merged.append((cursor, len(plain) + n, clause))
        source.clauses = [clause for *_, clause in sorted(merged, key=lambda item: item[:2])]
    return source


def _scan(text: str, file: str, tables: dict[str, FactTable], plain: list) -> list[tuple[int, int]]:
    """Fills ``tables`` with the ground facts and ``plain`` with ``(offset, rule)`` of the plain
    rules; returns the spans left for the grammar."""
    spans: list[tuple[int, int]] = []
    batches: dict[str, _Batch] = {}
    skip, fact, rule, directive, plain_rule = _SKIP.match, _FACT.match, _RULE.match, _DIRECTIVE.match, _PLAIN_RULE.match
    pos, end, line, line_at, line_start = 0, len(text), 1, 0, 0
    while True:
        pos = skip(text, pos).end()
        if pos >= end:
            break
        found = fact(text, pos)
        if found is None:
            simple = plain_rule(text, pos) if text[pos] != "." else None
            if simple is not None:
                newlines = text.count("\n", line_at, pos)
                if newlines:
                    line += newlines
                    line_start = text.rindex("\n", line_at, pos) + 1
                line_at = pos
                made = _plain(text, pos, simple.end(), file, line, line_start)
                if made is not None:
                    plain.append((pos, made))
                    pos = simple.end()
                    continue
            if text[pos] == "." and _COMPONENT.match(text, pos):
                stop = _component_end(text, pos)
            else:
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


def _component_end(text: str, start: int) -> int:
    """The offset just after the brace that closes the component starting at ``start`` (braces
    in strings and comments do not count); the end of the text if none does."""
    depth = 0
    for found in _BRACES.finditer(text, start):
        brace = found.group(1)
        if brace == "{":
            depth += 1
        elif brace == "}":
            depth -= 1
            if depth == 0:
                return found.end()
    return len(text)


def _plain(text: str, start: int, stop: int, file: str, line: int, line_start: int) -> Rule | None:
    """The syntax tree of the plain rule ``text[start:stop]`` (its first character on ``line``,
    which starts at ``line_start``), as the grammar would make it; None when a name in it is
    one the grammar reads otherwise (then the grammar reads the rule)."""
    atoms: list[Atom] = []
    relation, at, args = None, None, []
    for part in _PLAIN_PART.finditer(text, start, stop):
        offset = part.start()
        if text.count("\n", start, offset):
            line_here = line + text.count("\n", start, offset)
            column = offset - text.rindex("\n", start, offset)
        else:
            line_here, column = line, offset - line_start + 1
        name, string, integer, variable = part.groups()
        if name is not None:
            if relation is not None:
                atoms.append(Atom(relation, tuple(args), at))
            relation, at, args = name, Position(file, line_here, column), []
        elif string is not None:
            args.append(Constant(unescape(string, file, line_here, column) if "\\" in string else string[1:-1]))
        elif integer is not None:
            args.append(Constant(int(integer)))
        elif variable in _NOT_PLAIN:
            return None
        else:
            args.append(Variable(variable, Position(file, line_here, column)))
    atoms.append(Atom(relation, tuple(args), at))
    head, *body = atoms
    return Rule(head, tuple(body), head.position)


def _values(args: str, file: str, line: int, column: int) -> tuple:
    out = []
    for token in _ARGUMENT.findall(args):
        if token[0] == '"':
            out.append(unescape(token, file, line, column) if "\\" in token else token[1:-1])
        elif "." in token:
            out.append(domain.float_constant(token, Position(file, line, column)))
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
