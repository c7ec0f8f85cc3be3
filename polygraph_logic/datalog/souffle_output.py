"""Souffle's ``.output`` and ``.printsize``: a model's relations written as ``REL.csv`` or printed."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterable, Iterator, TextIO

from polygraph_logic.datalog.evaluate import Model
from polygraph_logic.datalog.model import sorted_tuples
from polygraph_logic.datalog.program import Program
from polygraph_logic.datalog.values import domain
from polygraph_logic.datalog.reading.souffle_input import io_path


def format_row(tup: tuple, delimiter: str) -> str:
    """Writes one tuple as Souffle does: symbols raw, integers in decimal, floats as its
    writers' stream writes them (precision ``max_digits10``: printf ``%.9g`` at the domain size
    32, ``0.100000001``; ``%.17g`` at 64, ``0.10000000000000001``; ``3``, ``-0``, ``inf``, ``-nan``);
    the tuple of a nullary relation that holds as ``()`` (Souffle's writeNullary: an empty
    line would read as no row)."""
    if not tup:
        return "()"
    return delimiter.join(domain.float_text(v) if isinstance(v, float) else str(v) for v in tup)


def format_rows(rows: list[tuple], delimiter: str) -> str:
    """Returns the rows as ``format_row`` writes them, one a line (``str`` of each value when no
    row holds a float or is nullary: one call per row, not one per value)."""
    if all(tup for tup in rows) and not any(type(v) is float for tup in rows for v in tup):
        join = delimiter.join
        return "".join([join(map(str, tup)) + "\n" for tup in rows])
    return "".join(format_row(t, delimiter) + "\n" for t in rows)


class ModelRows:
    """What ``write_relations`` reads of a relation of a Model: its size and its rows written."""

    def __init__(self, model: Model):
        self.model = model

    def size(self, relation: str) -> int:
        return len(self.model.facts(relation))

    def text(self, relation: str, delimiter: str) -> Iterator[str]:
        """The relation's rows in ``tuple_key`` order as ``format_row`` writes them, a line
        each, in chunks of 10,000 lines."""
        rows = sorted_tuples(self.model.facts(relation))
        for start in range(0, len(rows), 10_000):
            yield format_rows(rows[start:start + 10_000], delimiter)


def write_outputs(model: Model, output_dir: str | Path, stdout: TextIO | None = None) -> list[Path]:
    """Writes every ``.output`` relation (``REL.csv`` in ``output_dir``; ``-`` means stdout);
    prints ``.printsize`` lines, floats at the program's domain size. Returns the files written."""
    with domain.using(model.program.domain_size):
        return write_relations(model.program, ModelRows(model), output_dir, stdout or sys.stdout)


def write_relations(program: Program, rows, output_dir: str | Path, stdout: TextIO) -> list[Path]:
    """``write_outputs`` of relations read from ``rows`` (``size(relation)``, and ``text(relation,
    delimiter)``: the sorted rows written, in chunks; ``ModelRows`` or an engine's tables, which
    may write a file itself: ``write_file(relation, delimiter, path)``, the same text)."""
    written = []
    for directive in program.declarations.io:
        if directive.kind == "printsize":
            print(f"{directive.relation}\t{rows.size(directive.relation)}", file=stdout)
        if directive.kind != "output":
            continue
        delimiter = directive.get("delimiter", "\t")
        if str(output_dir) == "-" or directive.get("IO") == "stdout":
            _print_table(directive.relation, rows.text(directive.relation, delimiter), stdout)
            continue
        path = io_path(directive, output_dir, ".csv")
        path.parent.mkdir(parents=True, exist_ok=True)
        headers = directive.get("headers", "false") == "true"
        if not headers and getattr(rows, "write_file", None) is not None:  # an engine writing it itself
            rows.write_file(directive.relation, delimiter, path)
            written.append(path)
            continue
        # surrogate escapes: the bytes of a substr that cut a character, written back as they were
        with open(path, "w", encoding="utf-8", errors="surrogateescape", newline="") as out:
            if headers:
                declared = program.declarations.relations.get(directive.relation)
                names = [a.name for a in declared.attributes] if declared else []
                out.write(delimiter.join(names) + "\n")
            for chunk in rows.text(directive.relation, delimiter):  # streamed in chunks
                out.write(chunk)
        written.append(path)
    return written


def _print_table(relation: str, chunks: Iterable[str], out: TextIO) -> None:
    """Souffle's ``IO=stdout`` layout: the relation's name between rules, then its rows."""
    print("---------------", file=out)
    print(relation, file=out)
    print("===============", file=out)
    for chunk in chunks:
        out.write(chunk)
    print("===============", file=out)
