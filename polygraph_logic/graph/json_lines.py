"""The lines of a JSON Lines input as records: decoded, parsed and bounded, each problem with its
line; or records given in memory (``Given``), read as a file's lines are."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from polygraph_logic.errors import PolygraphError, Position

#: deepest nesting of lists and objects a record may have (deeper is an error, not a crash)
MAX_DEPTH = 64


@dataclass(frozen=True)
class Given:
    """Records given in memory, read as a file's lines are: item i as line i of ``name``."""

    name: str  # "<assertions>", "<receipts>": the file a Position names
    items: tuple

    def __str__(self) -> str:
        return self.name


def source_of(path) -> Path | Given:
    return path if isinstance(path, Given) else Path(path)


def read_records(path: Path | Given, problems: list) -> Iterator[tuple[int, dict]]:
    if isinstance(path, Given):
        for number, item in enumerate(path.items, 1):
            if isinstance(item, dict):
                yield number, item
            else:
                problems.append(PolygraphError(
                    "invalid_record", f"item {number} is not a record (a dict of the JSON Lines form, or the "
                                      f"record object): got {type(item).__name__}", Position(path.name, number, 1)))
        return
    try:
        handle = path.open("rb")
    except OSError as error:
        raise PolygraphError("file_error", f"cannot read {path}: {error.strerror}") from None
    with handle:
        for number, raw in enumerate(handle, 1):
            line = _decode(raw, path, number, problems)
            if line is None or not line.strip():
                continue
            record = _parse(line, path, number, problems)
            if record is not None:
                yield number, record


def _decode(raw: bytes, path: Path, number: int, problems: list) -> str | None:
    """Returns a line as text, or None with an ``encoding_error`` at the first bad byte."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        column = len(raw[:error.start].decode("utf-8", "replace")) + 1
        problems.append(PolygraphError(
            "encoding_error", f"byte {raw[error.start]:#04x} is not UTF-8; save the file as UTF-8",
            Position(str(path), number, column)))
        return None
    return line[1:] if number == 1 and line.startswith("\ufeff") else line  # a byte-order mark


def _parse(line: str, path: Path, number: int, problems: list) -> dict | None:
    """Returns a line's JSON object, or None with the problem (bad JSON, too deep, too large, not text)."""
    start = Position(str(path), number, 1)
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        problems.append(PolygraphError(
            "invalid_json", f"not valid JSON: {error.msg}", Position(str(path), number, error.colno)))
        return None
    except RecursionError:
        problems.append(PolygraphError("too_deep", f"lists and objects nest deeper than {MAX_DEPTH} levels", start))
        return None
    except ValueError:  # an integer beyond Python's digit limit
        problems.append(PolygraphError("too_large", "a number has more than 4,300 digits", start))
        return None
    if not isinstance(record, dict):
        problems.append(PolygraphError(
            "invalid_record", f"expected a JSON object, got {type(record).__name__}", start))
        return None
    flat = all(type(v) not in (dict, list) for v in record.values())  # an assertion: depth 1
    if not flat and _depth(record) > MAX_DEPTH:
        problems.append(PolygraphError("too_deep", f"lists and objects nest deeper than {MAX_DEPTH} levels", start))
        return None
    if "\\u" in line:  # only an escape can make a lone surrogate
        try:
            json.dumps(record, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as error:
            problems.append(PolygraphError(
                "encoding_error", f"a string holds a lone surrogate ({error.object[error.start]!r}), "
                                  "which is not text", start))
            return None
    return record


def _depth(value) -> int:
    """Returns how deeply lists and objects nest in a JSON value (iteratively)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth)
            if depth <= MAX_DEPTH:
                stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest
