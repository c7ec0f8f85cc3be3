"""What GPAD and GAF share: the line loop, header lines, column checks, evidence text.

A format module supplies a ``Layout`` per version: how many columns a line has, how
many it must have at least (trailing optional columns are often left off), and a
line reader that returns an ``Assertion`` (negated for a NOT-qualified line) or
raises ``MalformedLine``. The loop accounts for every physical line in the report.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from polygraph_logic.files import read_utf8
from polygraph_logic.errors import PolygraphError, Position
from polygraph_logic.graph.assertions import Assertion
from polygraph_logic.importers.relations import ANNOTATION_RELATIONS, relation_curie
from polygraph_logic.importers.import_report import ImportReport

_CURIE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*:\S+$")


class MalformedLine(Exception):
    """A data line that cannot be read; ``reason`` says why."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# (id, fields padded to the layout's column count) -> Assertion (negated if NOT-qualified)
LineReader = Callable[[str, list[str]], Assertion]


@dataclass(frozen=True)
class Layout:
    """One version of a tab-separated format: its name, column counts and line reader."""

    name: str
    columns: int
    required_columns: int
    read_line: LineReader


@dataclass(frozen=True)
class Format:
    """A family of versions: ``choose`` maps the header's version (None when there is no
    header) to a Layout, or to None when the version is not supported."""

    family: str
    version_keys: tuple[str, ...]
    supported: str
    choose: Callable[["str | None"], "Layout | None"]


def read_annotation_file(
    path: str | Path, form: Format, id_prefix: str, strict: bool
) -> tuple[list[Assertion], ImportReport]:
    """Returns the assertions of a GPAD or GAF file and the report accounting for every line.

    The version comes from the first header line ``!KEY: X`` with KEY one of
    ``form.version_keys``. The assertion of physical line N (counting from 1) has id
    ``f"{id_prefix}{N}"``.
    """
    path = str(path)
    report = ImportReport(path=path, format=form.family)
    assertions: list[Assertion] = []
    version: tuple[str, int] | None = None
    layout: Layout | None = None
    keys = "|".join(re.escape(key) for key in form.version_keys)
    header = re.compile(rf"^!\s*(?:{keys})\s*:\s*(\S+)", re.IGNORECASE)
    for number, line in enumerate(_lines(path), 1):
        report.read += 1
        text = line.rstrip("\r\n")
        if not text.strip() or text.startswith("!"):
            report.comments += 1
            match = header.match(text)
            if match and version is None:
                version = (match.group(1), number)
            continue
        if layout is None:
            layout = _layout(path, form, version, report)
        try:
            assertion = _read_line(layout, f"{id_prefix}{number}", text, report)
        except MalformedLine as error:
            report.malformed.append((number, error.reason))
            if strict:
                raise PolygraphError("malformed_line", error.reason, Position(path, number, 1)) from None
            continue
        assertions.append(assertion)
        report.imported += 1
        report.negated += assertion.negated
        report.relations[assertion.predicate] += 1
    if layout is None:
        _layout(path, form, version, report)
    return assertions, report


def _lines(path: str):
    # read whole (annotation files are megabytes): bytes that are not UTF-8 are an
    # encoding_error at their line and column (files.read_utf8)
    yield from read_utf8(path).splitlines(keepends=True)


def _layout(path: str, form: Format, version: tuple[str, int] | None, report: ImportReport) -> Layout:
    layout = form.choose(version[0] if version else None)
    if layout is None:
        assert version is not None  # without a version header the default layout applies
        raise PolygraphError(
            "unsupported_version",
            f"{form.family} version {version[0]} is not supported (supported: {form.supported})",
            Position(path, version[1], 1),
        )
    report.format = layout.name if version else f"{layout.name}, assumed: no !{form.version_keys[0]} header"
    return layout


def _read_line(layout: Layout, identifier: str, text: str, report: ImportReport) -> Assertion:
    fields = [field.strip() for field in text.split("\t")]
    count = len(fields)
    if not layout.required_columns <= count <= layout.columns:
        wanted = (
            f"{layout.columns}"
            if layout.required_columns == layout.columns
            else f"{layout.required_columns} to {layout.columns}"
        )
        raise MalformedLine(f"wrong column count: {count} tab-separated columns ({layout.name} has {wanted})")
    if count < layout.columns:
        report.short_lines += 1
        fields += [""] * (layout.columns - count)
    return layout.read_line(identifier, fields)


def require(fields: list[str], columns: dict[int, str]) -> None:
    """Raises MalformedLine naming the first empty required column (``{index: name}``, 0-based)."""
    for index, name in columns.items():
        if not fields[index]:
            raise MalformedLine(f"empty {name} (column {index + 1})")


def require_curie(value: str, name: str, column: int) -> str:
    """Returns ``value`` if it is a CURIE (``GO:0005634``); raises MalformedLine otherwise."""
    if not _CURIE.match(value):
        raise MalformedLine(f"{name} {value!r} is not a CURIE such as GO:0005634 (column {column + 1})")
    return value


def split_references(field: str, column: int) -> tuple[str, list[str]]:
    """Returns the first reference of a ``|``-separated reference column and the others.

    The first is the assertion's source; GO lists several references mostly as aliases of
    one document (a PMID and its DOI), so the others go into the evidence text.
    """
    references = [reference.strip() for reference in field.split("|") if reference.strip()]
    if not references:
        raise MalformedLine(f"empty reference (column {column + 1})")
    return references[0], references[1:]


def evidence_text(evidence: str, with_from: str, other_references: list[str]) -> str:
    """Returns the short evidence description kept as an assertion's ``text``."""
    text = evidence
    if with_from:
        text += f" with {with_from}"
    if other_references:
        text += f"; also {', '.join(other_references)}"
    return text


def qualifier_relation(qualifier: str, column: int) -> tuple[bool, str | None]:
    """Returns (NOT-qualified?, relation CURIE or None) of a ``|``-separated qualifier.

    Raises MalformedLine for an unknown label or more than one relation.
    """
    flags = [flag.strip() for flag in qualifier.split("|") if flag.strip()]
    negated = "NOT" in flags
    labels = [flag for flag in flags if flag != "NOT"]
    for label in labels:
        if relation_curie(label) is None:
            raise MalformedLine(
                f"unknown relation label {label!r} in qualifier {qualifier!r} (column {column + 1}; "
                f"known: NOT, {', '.join(ANNOTATION_RELATIONS)})"
            )
    if len(labels) > 1:
        raise MalformedLine(f"more than one relation in qualifier {qualifier!r} (column {column + 1})")
    return negated, relation_curie(labels[0]) if labels else None
