"""Writing what importers produce: assertion files (JSON Lines) and background facts, atomically."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Iterable

from ..errors import PolygraphError
from ..graph.assertions import Assertion


def write_assertions(path: str | Path, assertions: Iterable[Assertion]) -> int:
    """Writes one JSON object a line in DESIGN.md's assertion format; returns how many.

    The file is replaced atomically: a reader sees the old file or the complete new one.
    """
    lines = [json.dumps(assertion.to_json(), ensure_ascii=False) + "\n" for assertion in assertions]
    write_text_atomically(path, "".join(lines))
    return len(lines)


def write_text_atomically(path: str | Path, text: str) -> None:
    """Writes ``text`` to a temporary file beside ``path``, then renames it over ``path``."""
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as error:
        raise PolygraphError("io_error", f"cannot write {target}: {error.strerror or error}") from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
        os.replace(temporary, target)
    except BaseException as error:
        os.unlink(temporary)
        if isinstance(error, OSError):
            raise PolygraphError("io_error", f"cannot write {target}: {error.strerror or error}") from None
        raise
