"""Writing files atomically: a reader sees the old file or the complete new one."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .errors import PolygraphError


@contextmanager
def replacing(path: str | Path, suffix: str = ".tmp") -> Iterator[Path]:
    """Yields a temporary path beside ``path``, renamed over ``path`` when the block succeeds.

    Parent folders are created; the file gets the mode a plain ``open`` would give it.
    On any failure the temporary file is removed and the old file is left as it was;
    an OSError becomes PolygraphError(io_error) naming the file.
    """
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix, dir=target.parent)
        os.close(handle)
    except OSError as error:
        raise PolygraphError("io_error", f"cannot write {target}: {error.strerror or error}") from None
    temporary = Path(name)
    try:
        yield temporary
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # mkstemp makes 0600; this is an ordinary file
        os.replace(temporary, target)
    except BaseException as error:
        temporary.unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise PolygraphError("io_error", f"cannot write {target}: {error.strerror or error}") from None
        raise


def write_text_atomically(path: str | Path, text: str) -> None:
    """Writes ``text`` (UTF-8, ``\\n`` line ends) to ``path`` atomically (see ``replacing``)."""
    with replacing(path) as temporary:
        with temporary.open("w", encoding="utf-8", newline="\n") as out:
            out.write(text)
