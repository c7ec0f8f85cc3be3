"""Soufflé's C preprocessor: ``#include``, ``#define`` (with arguments), ``#if``/``#ifdef`` and ``-I``/``-M``.

Soufflé runs every program through a C preprocessor (mcpp) before reading it; here the
pure-Python ``pcpp`` does it, only for a text that has a line starting with ``#`` or
when macros are given or a predefined one is named (any other text is read exactly as
before, at the same speed).
The preprocessor's ``#line`` markers map every line back to its file and line, so an
error in an included file names that file and its line. A column on a line where a
macro was expanded counts in the expanded line.
"""

from __future__ import annotations

import io
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from polygraph_logic.datalog.values import domain
from polygraph_logic.datalog.fact_table import FactTable, Origins
from polygraph_logic.datalog.rewrite import rewrite
from polygraph_logic.datalog.reading.source import Source, parse_source
from polygraph_logic.errors import ParseError, PolygraphError, Position

_DIRECTIVE_LINE = re.compile(r"^[ \t]*#", re.M)
# the markers pcpp writes (#line N "file"), and those a program writes itself (#line N, # N "file" ...)
_LINE_MARKER = re.compile(r'[ \t]*#[ \t]*(?:line[ \t]+)?(\d+)(?:[ \t]+"((?:[^"\\]|\\.)*)")?[ \t\d]*\Z')
# a directive that needs an argument, written without one (pcpp would fail on it)
_BARE = re.compile(r"^[ \t]*#[ \t]*(ifdef|ifndef|if|elif|define|undef|include|line)[ \t]*(?://[^\n]*)?$", re.M)
_NEEDS = {"if": "an expression", "elif": "an expression", "ifdef": "a macro name", "ifndef": "a macro name",
          "define": "a macro name", "undef": "a macro name", "include": 'a file ("file" or <file>)',
          "line": "a line number"}
_MACRO = re.compile(r"([A-Za-z_][A-Za-z0-9_]*(?:\([A-Za-z0-9_, .]*\))?)(?:=(.*))?\Z", re.S)


# Soufflé defines RAM_DOMAIN_SIZE (32 or 64, its build's value size): here the width in
# force when the program is read (datalog/values/domain.py)
_PREDEFINED_NAMES = ("RAM_DOMAIN_SIZE", "__LINE__", "__FILE__")


def needs_preprocessing(text: str, macros: Sequence[str] = ()) -> bool:
    """True when ``text`` has a preprocessor line (``#`` first on a line), names a predefined
    macro (``RAM_DOMAIN_SIZE``, ``__LINE__``, ``__FILE__``) or macros are given."""
    if macros or any(name in text for name in _PREDEFINED_NAMES):
        return True
    return "#" in text and _DIRECTIVE_LINE.search(text) is not None


def macro_definitions(values: Iterable[str]) -> list[tuple[str, str]]:
    """Reads ``-M`` values as Soufflé does: blank-separated ``NAME=VALUE`` or ``NAME`` (then 1),
    ``F(x)=x+1`` for a macro with arguments; returns ``(name, body)`` pairs."""
    found = []
    for value in values:
        for word in value.split():
            match = _MACRO.match(word)
            if match is None:
                raise PolygraphError("bad_argument", f"-M {word!r}: write NAME=VALUE, NAME or F(x)=BODY")
            found.append((match.group(1), "1" if match.group(2) is None else match.group(2)))
    return found


def check_include_dirs(include_dirs: Sequence[str | Path]) -> list[Path]:
    """Returns the ``-I`` directories as paths; raises ``file_error`` for one that does not exist."""
    directories = [Path(d) for d in include_dirs]
    for directory in directories:
        if not directory.is_dir():
            raise PolygraphError("file_error", f"include directory {directory} does not exist")
    return directories


@dataclass
class Preprocessed:
    """The program text after preprocessing, and where each of its lines came from."""

    text: str
    origins: list[tuple[str, int]]

    def position(self, position: Position | None) -> Position | None:
        """The position in the original file of a position in ``text``."""
        if position is None or not self.origins:
            return position
        file, line = self.origins[min(max(position.line, 1), len(self.origins)) - 1]
        return Position(file, line, position.column)


def preprocess(text: str, file: str = "<string>", include_dirs: Sequence[str | Path] = (),
               macros: Sequence[str] = ()) -> Preprocessed:
    """Runs the C preprocessor over ``text`` (read from ``file``); ``#include "f"`` is looked
    for beside the including file, then in ``include_dirs`` (default: the current directory);
    ``macros`` are ``-M`` values. Raises ParseError (``preprocessor_error``) with a position."""
    try:
        from pcpp import Preprocessor  # the preprocessor is loaded only for a text that needs it
    except ImportError:
        raise PolygraphError("missing_dependency", f"{file} needs the C preprocessor (it has # lines or -M "
                             "macros), and pcpp is not installed: pip install pcpp") from None

    class _Preprocessor(Preprocessor):
        including = None

        def on_error(self, source, line, message):
            raise ParseError("preprocessor_error", message.strip(), Position(_name(source, file), max(line, 1), 1))

        def include(self, tokens, original_line):
            self.including = tokens[0] if tokens else None
            yield from super().include(tokens, original_line)

        def on_include_not_found(self, is_malformed, is_system_include, curdir, includepath):
            where = self.including
            position = Position(_name(where.source, file), where.lineno, 1) if where is not None else None
            places = [*([curdir or "."] if not is_system_include else []), *map(str, directories)]
            searched = ", ".join(dict.fromkeys(places))
            raise ParseError("preprocessor_error", f"#include {includepath}: no such file (searched {searched}; "
                             "add a directory with -I DIR)", position)

        def on_directive_unknown(self, directive, tokens, ifpassthru, preceding):
            text = "".join(t.value for t in tokens).strip()
            position = Position(_name(directive.source, file), directive.lineno, 1)
            if directive.value == "error":
                raise ParseError("preprocessor_error", f"#error {text}", position)
            if directive.value == "warning":
                print(f"{position}: warning: #warning {text}", file=sys.stderr)
                return True
            if directive.value == "pragma":
                return True
            if directive.value == "line" or directive.value.isdigit():  # kept: _mapped reads it
                if _LINE_MARKER.match(f"#{directive.value} {text}") is None:
                    raise ParseError("preprocessor_error", f"#line {text}: write #line NUMBER \"file\"", position)
                return None
            raise ParseError("preprocessor_error", f"unknown preprocessor directive #{directive.value} (known: "
                             "#include, #define, #undef, #if, #ifdef, #ifndef, #elif, #else, #endif, "
                             "#error, #warning, #pragma)", position)

    directories = check_include_dirs(include_dirs) or [Path(".")]
    bare = _BARE.search(text)
    if bare is not None:
        line = text.count("\n", 0, bare.start()) + 1
        raise ParseError("preprocessor_error", f"#{bare.group(1)} needs {_NEEDS[bare.group(1)]}",
                         Position(file, line, 1))
    processor = _Preprocessor()
    processor.line_directive = "#line"
    for directory in directories:
        processor.add_path(str(directory))
    for name, body in [("RAM_DOMAIN_SIZE", domain.macro()), *macro_definitions(macros)]:
        processor.define(f"{name} {body}")
    processor.parse(text, file)
    out = io.StringIO()
    try:
        processor.write(out)
    except (IndexError, KeyError, TypeError, ValueError, AttributeError) as error:  # pcpp's own failures
        raise ParseError("preprocessor_error", f"the preprocessor could not read this text ({error!r}); "
                         "check its # lines", Position(file, 1, 1)) from None
    return _mapped(out.getvalue(), file)


def _mapped(output: str, file: str) -> Preprocessed:
    """Drops the ``#line`` markers of ``output``, noting each remaining line's file and line."""
    lines, origins = [], []
    current, number = file, 1
    for line in output.split("\n"):
        marker = _LINE_MARKER.match(line)
        if marker is not None:
            number = int(marker.group(1))
            if marker.group(2) is not None:
                current = _name(marker.group(2), file)
            continue
        lines.append(line)
        origins.append((current, number))
        number += 1
    return Preprocessed("\n".join(lines), origins)


def _name(source: str | None, file: str) -> str:
    """The file name to report: the program's own as given, an included one as the preprocessor found it."""
    if not source or os.path.abspath(source) == os.path.abspath(file):
        return file
    return source


def parse_preprocessed(text: str, file: str = "<string>", include_dirs: Sequence[str | Path] = (),
                       macros: Sequence[str] = ()) -> Source:
    """Preprocesses and parses program text (ground facts through the fast reader, as without the
    preprocessor); clauses, fact tables and errors carry the original files and lines."""
    result = preprocess(text, file, include_dirs, macros)
    try:
        source = parse_source(result.text, file)
    except PolygraphError as error:
        raise type(error)(error.code, error.message, result.position(error.position)) from None
    source.clauses = [rewrite(clause, lambda node: result.position(node) if isinstance(node, Position) else node)
                      for clause in source.clauses]
    for table in source.tables.values():
        table.origins = _mapped_origins(table, result)
    return source


def _mapped_origins(table: FactTable, result: Preprocessed) -> Origins:
    """The table's row positions mapped back to their files, a segment for each run of one file."""
    mapped = Origins()
    old = table.origins
    ends = [*old.starts[1:], len(table.rows)]
    for start, end, (_, lines, columns) in zip(old.starts, ends, old.segments):
        run_file, run_first, run_lines, run_columns = None, start, [], []
        for offset in range(end - start):
            line = lines + offset if isinstance(lines, int) else lines[offset]
            origin_file, origin_line = result.origins[min(max(line, 1), len(result.origins)) - 1]
            if origin_file != run_file and run_lines:
                mapped.add(run_first, run_file, run_lines, run_columns)
                run_first, run_lines, run_columns = start + offset, [], []
            run_file = origin_file
            run_lines.append(origin_line)
            run_columns.append(columns[offset] if columns is not None else 1)
        if run_lines:
            mapped.add(run_first, run_file, run_lines, run_columns)
    return mapped
