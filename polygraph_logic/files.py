"""Writing text files atomically: a reader sees the old file or the complete new one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .errors import PolygraphError


def write_text_atomically(path: str | Path, text: str) -> None:
    """Writes ``text`` to a temporary file beside ``path``, then renames it over ``path``.

    Parent folders are created; the file gets the mode a plain ``open`` would give it.
    An OSError becomes PolygraphError(io_error) naming the file.
    """
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as error:
        raise PolygraphError("io_error", f"cannot write {target}: {error.strerror or error}") from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # mkstemp makes 0600
        os.replace(temporary, target)
    except BaseException as error:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise PolygraphError("io_error", f"cannot write {target}: {error.strerror or error}") from None
        raise
