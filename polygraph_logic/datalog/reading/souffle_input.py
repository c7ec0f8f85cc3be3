"""Souffle's ``.input``: ``REL.facts`` files read into fact tables (``souffle_output`` writes ``.output``).

As Souffle does with ``-F DIR -D DIR``: input files are tab-separated, one fact a
line, symbols raw (no quotes), numbers in decimal (``0x``/``0b`` accepted); the
parameters ``IO=file``, ``filename``, ``delimiter``, ``headers=true`` and
``rfc4180=true`` (quoted fields) are honoured. Output files hold one fact a line, the
same way, without headers unless ``headers=true``. Rows are written sorted (numbers
in numeric order, symbols by code point): Souffle's own order follows its symbol
table, so compare Souffle's files sorted, as its test suite does.

Tracked facts: ``.input edge(provenance=1)`` reads column 1 of each line as the
assertion id of the fact made of the remaining columns (a 1-based column number,
or a column name with ``headers=true``), so millions of source assertions load
without passing through rule text.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from polygraph_logic.datalog.values import domain
from polygraph_logic.datalog.checks.declarations import Declarations, article
from polygraph_logic.datalog.directives import IODirective
from polygraph_logic.datalog.rewrite import rewrite
from polygraph_logic.datalog.syntax import Atom, Rule
from polygraph_logic.datalog.fact_table import FactTable, merge_tables
from polygraph_logic.datalog.reading.parser import parse_int
from polygraph_logic.datalog.reading.record_text import RecordTextError, read_value, split_fields
from polygraph_logic.datalog.checks.record_types import Structures
from polygraph_logic.errors import Position, ProgramError

_CONVERT = {"number": int, "unsigned": int, "float": float}


def read_inputs(declarations: Declarations, fact_dir: str | Path,
                needed: set[str] | None = None) -> dict[str, FactTable]:
    """Reads every ``.input`` relation from ``fact_dir``; raises ProgramError with file and line.

    A relation not in ``needed`` (no output depends on it) whose file is absent stays empty:
    Soufflé removes such a relation before it reads anything."""
    tables: dict[str, FactTable] = {}
    for directive in declarations.io:
        if directive.kind != "input":
            continue
        kinds = declarations.kinds(directive.relation)
        if kinds is None:
            raise ProgramError("undeclared_relation", f".input {directive.relation} needs a .decl "
                               "(its columns and types)", directive.position)
        if needed is not None and directive.relation not in needed \
                and directive.get("IO", "file") == "file" and not io_path(directive, fact_dir, ".facts").exists():
            continue
        table = read_facts(directive, kinds, declarations.relations[directive.relation], fact_dir,
                           declarations.structures)
        if directive.relation in tables:
            merge_tables(tables, {directive.relation: table})
        else:
            tables[directive.relation] = table
    return tables


def needed_relations(clauses, declarations: Declarations) -> set[str] | None:
    """Returns the relations an ``.output`` or ``.printsize`` relation depends on (itself
    included), as Soufflé's redundant-relations analysis finds them; None when the program
    has neither (then every relation is shown, so every one is needed)."""
    shown = {d.relation for d in declarations.io if d.kind in ("output", "printsize")}
    if not shown:
        return None
    reads: dict[str, set[str]] = {}
    for clause in clauses:
        head = clause.head.relation if isinstance(clause, Rule) else getattr(clause, "relation", None)
        body = clause.body if isinstance(clause, Rule) else getattr(clause, "body", None)
        if head is not None and body is not None:
            reads.setdefault(head, set()).update(_atom_relations(body))
    needed, work = set(), list(shown)
    while work:
        relation = work.pop()
        if relation not in needed:
            needed.add(relation)
            work.extend(reads.get(relation, ()))
    return needed


def _atom_relations(body) -> set[str]:
    found: set[str] = set()

    def note(node):
        if isinstance(node, Atom):
            found.add(node.relation)
        return node

    rewrite(body, note)
    return found


def io_path(directive: IODirective, folder: str | Path, suffix: str) -> Path:
    io_kind = directive.get("IO", "file")
    if io_kind != "file":
        raise ProgramError("unsupported_directive", f"IO={io_kind} is not supported for "
                           f".{directive.kind} (only IO=file, and IO=stdout for .output)", directive.position)
    name = directive.get("filename", f"{directive.relation}{suffix}")
    return Path(name) if Path(name).is_absolute() else Path(folder) / name


def read_facts(directive: IODirective, kinds: tuple[str, ...], declaration, fact_dir: str | Path,
               structures: Structures | None = None) -> FactTable:
    """Reads one ``.input`` file into a fact table, columns converted to their declared types
    (``structures``: the program's record and ADT types, for columns of those types)."""
    path = io_path(directive, fact_dir, ".facts")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ProgramError("file_error", f"cannot read the facts of {directive.relation} from {path}: "
                           f"{error.strerror} (set the folder with -F)", directive.position) from None
    delimiter = directive.get("delimiter", "\t")
    headers = directive.get("headers", "false") == "true"
    first_line = 2 if headers else 1
    if directive.get("rfc4180", "false") == "true":
        records = [tuple(r) for r in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)]
    else:
        if "\r" in text:
            text = text.replace("\r\n", "\n")
        records = [tuple(line.split(delimiter)) for line in text.split("\n")]
        if records and records[-1] == ("",):
            records.pop()
    header = records[0] if headers and records else None
    records = records[1:] if headers else records
    if structures is not None and any(k in structures.types for k in kinds) and not directive.get("provenance"):
        # a record or ADT value may hold the delimiter: each is read whole, then the delimiter
        records = [split_fields(delimiter.join(r), delimiter, kinds, structures, c_float_text) or r for r in records]
    lines: int | list[int] = first_line
    if ("",) in records and len(kinds) + bool(directive.get("provenance")) != 1:  # skip blank lines
        lines = [i + first_line for i, r in enumerate(records) if r != ("",)]
        records = [r for r in records if r != ("",)]
    table = FactTable(directive.relation, len(kinds))
    table.origins.add(0, str(path), lines)
    column = _provenance_column(directive, header, len(kinds), str(path))
    width = len(kinds) + (column is not None)
    if any(n != width for n in set(map(len, records))):
        row = next(i for i, r in enumerate(records) if len(r) != width)
        raise ProgramError("arity_mismatch", f"{directive.relation} has {width} column(s) here "
                           f"({len(records[row])} found, delimiter {delimiter!r})", table.position(row))
    variables = None
    if column is not None:
        variables = [r[column] for r in records]
        records = [r[:column] + r[column + 1:] for r in records]
    table.extend(_convert(records, kinds, table, declaration, structures), variables)
    return table


def _provenance_column(directive: IODirective, header, arity: int, file: str) -> int | None:
    """Returns the 0-based index of the provenance column, or None."""
    given = directive.get("provenance")
    if given is None:
        return None
    if given.isdigit() and 1 <= int(given) <= arity + 1:
        return int(given) - 1
    if header is not None and given in header:
        return header.index(given)
    raise ProgramError("type_error", f"provenance={given} names no column of {directive.relation}'s file "
                       f"(a column number 1..{arity + 1}, or a header name with headers=true)",
                       directive.position)


def _convert(records: list[tuple], kinds: tuple[str, ...], table: FactTable, declaration,
             structures: Structures | None = None) -> list[tuple]:
    """Converts the numeric, record and ADT columns, a column at a time; raises type_error at the first bad field."""
    numeric = [i for i, kind in enumerate(kinds) if kind != "symbol"]
    if not numeric or not records:
        return records
    columns = list(zip(*records))
    for i in numeric:
        kind = kinds[i]
        if structures is not None and kind in structures.types:
            columns[i] = [_structured(value, kind, structures, row, i, table, declaration)
                          for row, value in enumerate(columns[i])]
            continue
        try:
            if kind == "float" and any("_" in v or v[-1:].isspace() for v in columns[i]):
                raise ValueError  # Python's float reads 1_000 and a trailing space, C's strtod does not
            converted = list(map(_CONVERT[kind], columns[i]))
            if kind == "float" and (_INF in converted or -_INF in converted):
                raise ValueError  # read again by c_float_text, which refuses an overflow
            if kind == "float" and domain.size() == 32:  # strtof: each text rounded once to a single
                converted = [domain.read_single(t, d) for t, d in zip(columns[i], converted)]
                if None in converted:
                    raise ValueError  # beyond a single's range: refused by c_float_text
            columns[i] = converted
        except ValueError:
            columns[i] = [_slow(kind, value, row, i, table, declaration) for row, value in enumerate(columns[i])]
        if kind == "unsigned" and any(v < 0 for v in columns[i]):
            row = next(r for r, v in enumerate(columns[i]) if v < 0)
            _bad(kind, columns[i][row], row, i, table, declaration)
    return list(zip(*columns))


def _structured(value: str, kind: str, structures: Structures, row: int, column: int, table: FactTable,
                declaration):
    try:
        return read_value(value, kind, structures, c_float_text)
    except (RecordTextError, RecursionError) as error:
        if isinstance(error, RecursionError):
            error = "it nests deeper than this reader follows (a few thousand levels)"
        where = table.position(row)
        shown = value if len(value) <= 80 else value[:60] + "..."
        raise ProgramError("type_error", f"{shown!r} is not a value of {kind}: {error} (column {column + 1}, "
                           f"{declaration.attributes[column]} of {table.relation})",
                           Position(where.file, where.line, 1) if where else None) from None


def _slow(kind: str, value: str, row: int, column: int, table: FactTable, declaration):
    if kind == "float":
        number = c_float_text(value)
        if number is None:
            _bad(kind, value, row, column, table, declaration)
        return number
    try:
        return _CONVERT[kind](value)
    except ValueError:
        pass
    try:
        if kind != "float":
            text = value.strip()
            return -parse_int(text[1:]) if text.startswith("-") else parse_int(text)
    except ValueError:
        pass
    _bad(kind, value, row, column, table, declaration)


_INF = float("inf")
_HEX_FLOAT = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?")


def c_float_text(text: str) -> float | None:
    """Returns the float C's ``strtod`` (``strtof`` at the domain size 32) reads from the whole
    of ``text`` (Souffle's RamFloatFromString, every character consumed), or None: leading blanks, ``inf``,
    ``infinity``, ``nan`` and hexadecimal floats (``0x1.8p1``) are read; underscores and
    trailing blanks are not."""
    if "_" in text or not text or text[-1].isspace():
        return None
    try:
        number = float(text)
    except ValueError:
        pass
    else:  # strtod reports an overflow (ERANGE): Souffle refuses 1e400 rather than read inf
        if number in (_INF, -_INF) and "inf" not in text.lower():
            return None
        return domain.read_float(text, number)
    body = text.lstrip(" \t\n\v\f\r")
    if _HEX_FLOAT.fullmatch(body):
        sign, digits = (-1.0, body[1:]) if body[0] == "-" else (1.0, body.lstrip("+"))
        return domain.read_float(body, sign * float.fromhex(digits))
    return None


def _bad(kind, value, row, column, table: FactTable, declaration):
    where = table.position(row)
    raise ProgramError("type_error", f"{value!r} is not {article(kind)} (column {column + 1}, "
                       f"{declaration.attributes[column]} of {table.relation})",
                       Position(where.file, where.line, 1) if where else None)
