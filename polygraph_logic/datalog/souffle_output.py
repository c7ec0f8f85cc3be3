"""Souffle's ``.output`` and ``.printsize``: a model's relations written as ``REL.csv`` or printed."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from polygraph_logic.datalog.evaluate import Model
from polygraph_logic.datalog.model import sorted_tuples
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


def write_outputs(model: Model, output_dir: str | Path, stdout: TextIO | None = None) -> list[Path]:
    """Writes every ``.output`` relation (``REL.csv`` in ``output_dir``; ``-`` means stdout);
    prints ``.printsize`` lines, floats at the program's domain size. Returns the files written."""
    with domain.using(model.program.domain_size):
        return _write(model, output_dir, stdout or sys.stdout)


def _write(model: Model, output_dir: str | Path, stdout: TextIO) -> list[Path]:
    written = []
    for directive in model.program.declarations.io:
        if directive.kind == "printsize":
            print(f"{directive.relation}\t{len(model.facts(directive.relation))}", file=stdout)
        if directive.kind != "output":
            continue
        rows = sorted_tuples(model.facts(directive.relation))
        delimiter = directive.get("delimiter", "\t")
        if str(output_dir) == "-" or directive.get("IO") == "stdout":
            _print_table(directive.relation, rows, delimiter, stdout)
            continue
        path = io_path(directive, output_dir, ".csv")
        path.parent.mkdir(parents=True, exist_ok=True)
        # surrogate escapes: the bytes of a substr that cut a character, written back as they were
        with open(path, "w", encoding="utf-8", errors="surrogateescape", newline="") as out:
            if directive.get("headers", "false") == "true":
                declared = model.program.declarations.relations.get(directive.relation)
                names = [a.name for a in declared.attributes] if declared else []
                out.write(delimiter.join(names) + "\n")
            for start in range(0, len(rows), 10_000):  # streamed in chunks
                out.write(format_rows(rows[start:start + 10_000], delimiter))
        written.append(path)
    return written


def _print_table(relation: str, rows: list[tuple], delimiter: str, out: TextIO) -> None:
    """Souffle's ``IO=stdout`` layout: the relation's name between rules, then its rows."""
    print("---------------", file=out)
    print(relation, file=out)
    print("===============", file=out)
    for tup in rows:
        print(format_row(tup, delimiter), file=out)
    print("===============", file=out)
