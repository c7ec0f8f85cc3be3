"""Reading a program file as Soufflé does: the C preprocessor, then ``.include "file"`` and ``.once``.

``.include "f"`` reads ``f`` where the directive stands, looked for as Soufflé looks
(an absolute path; beside the including file; in each ``-I`` folder, by default the
current one). The included text is not preprocessed (Soufflé's scanner reads it raw,
skipping ``#`` lines), and a file that holds ``.once`` is read past it only the first
time (a file may then include itself, or be included twice, harmlessly).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Sequence

from polygraph_logic.datalog.fact_table import merge_tables
from polygraph_logic.datalog.reading.include_syntax import Include
from polygraph_logic.datalog.reading.preprocess import check_include_dirs, needs_preprocessing, parse_preprocessed
from polygraph_logic.datalog.reading.source import Source, parse_source
from polygraph_logic.errors import ParseError
from polygraph_logic.files import read_utf8

MAX_DEPTH = 64  # files within files
_ONCE = re.compile(r"^[ \t]*\.once\b", re.M)
_HASH_LINE = re.compile(r"^[ \t]*#[^\n]*", re.M)


def read_source(text: str, file: str = "<string>", include_dirs: Sequence[str | Path] = (),
                macros: Sequence[str] = ()) -> Source:
    """Parses a program file's text: preprocessed when it needs it (``macros``: Soufflé's
    ``-M``), its ``.include`` directives replaced by the files they name. Raises ParseError
    (``include_error`` for a file not found) or ProgramError."""
    directories = check_include_dirs(include_dirs)
    return _Reader(directories).read(text, file, macros, 0)


class _Reader:
    """The files read for one program, and the ``.once`` lines already passed."""

    def __init__(self, directories: list[Path]):
        self.directories = directories
        self.passed: set[tuple[str, int]] = set()

    def read(self, text: str, file: str, macros: Sequence[str], depth: int) -> Source:
        once = _ONCE.search(text)
        if once is not None:
            key = (os.path.realpath(file), text.count("\n", 0, once.start()) + 1)
            if key in self.passed:
                text = text[: once.start()]
            self.passed.add(key)
        if needs_preprocessing(text, macros):
            source = parse_preprocessed(text, file, self.directories, macros)
        else:
            source = parse_source(text, file)
        if not any(isinstance(c, Include) for c in source.clauses):
            return source
        clauses = []
        for clause in source.clauses:
            if not isinstance(clause, Include):
                clauses.append(clause)
                continue
            if depth >= MAX_DEPTH:
                raise ParseError("include_error", f"{clause} nests files more than {MAX_DEPTH} deep (does a file "
                                 "include itself? .once at its top reads it once)", clause.position)
            path = self.find(clause)
            included = self.read(_HASH_LINE.sub("", read_utf8(path)), str(path), (), depth + 1)
            clauses.extend(included.clauses)
            merge_tables(source.tables, included.tables)
        source.clauses = clauses
        return source

    def find(self, clause: Include) -> Path:
        """The file ``clause`` names; raises ParseError (``include_error``) when there is none."""
        request = Path(clause.path)
        if request.is_absolute():
            places = [request]
        else:
            here = Path(clause.position.file).parent if clause.position else Path(".")
            places = [here / request, *(d / request for d in self.directories or [Path(".")])]
        for place in places:
            if place.is_file():
                return place
        searched = ", ".join(dict.fromkeys(str(p.parent) for p in places))
        raise ParseError("include_error", f"{clause}: no such file (searched {searched}; add a folder "
                         "with -I DIR)", clause.position)
