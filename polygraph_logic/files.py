"""Writing files atomically: a reader sees the old file or the complete new one."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from polygraph_logic.errors import PolygraphError, Position

try:
    import fcntl
except ImportError:  # not POSIX: leftovers are not swept (nothing tells a live build from a dead one)
    fcntl = None


@contextmanager
def replacing(path: str | Path, suffix: str = ".tmp") -> Iterator[Path]:
    """Yields a temporary path beside ``path``, renamed over ``path`` when the block succeeds.

    The folder must exist (nothing creates folders behind the user's back: a mistyped path
    is an ``io_error``); the file gets the mode a plain ``open`` would give it.
    On any failure (Ctrl-C included) the temporary file is removed and the old file is
    left as it was; an OSError becomes PolygraphError(io_error) naming the file.  The
    temporary file is locked while it is written, so that the leftovers of a killed
    writer (``.NAME.*SUFFIX``, unlocked) are swept by the next write of the same target.
    """
    target = Path(path)
    folder = target.parent
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise PolygraphError("io_error", f"cannot write {target}: {folder} {what} (create the folder first)")
    try:
        sweep_leftovers(target, suffix)
        handle, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix, dir=target.parent)
    except OSError as error:
        raise PolygraphError("io_error", f"cannot write {target}: {error.strerror or error}") from None
    temporary = Path(name)
    try:
        _lock(handle, blocking=True)
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
    finally:
        os.close(handle)  # releases the lock


def sweep_leftovers(target: Path, suffix: str) -> list[Path]:
    """Removes the temporary files of killed writes of ``target``; returns them.

    A file is a leftover when it matches ``.NAME.*SUFFIX`` and no live writer holds its
    lock: a concurrent write of the same target keeps its file.
    """
    removed = []
    if fcntl is None or not suffix:
        return removed
    for candidate in target.parent.glob(f".{_glob_escape(target.name)}.*{_glob_escape(suffix)}"):
        try:
            handle = os.open(candidate, os.O_RDWR)
        except OSError:
            continue
        try:
            if _lock(handle, blocking=False):
                candidate.unlink(missing_ok=True)
                removed.append(candidate)
        finally:
            os.close(handle)
    return removed


def _lock(handle: int, blocking: bool) -> bool:
    """Takes an exclusive lock on an open file; False when another process holds it."""
    if fcntl is None:
        return True
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        return True
    except OSError:
        return False


def _glob_escape(text: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in text)


def write_text_atomically(path: str | Path, text: str) -> None:
    """Writes ``text`` (UTF-8, ``\\n`` line ends) to ``path`` atomically (see ``replacing``)."""
    with replacing(path) as temporary:
        with temporary.open("w", encoding="utf-8", newline="\n") as out:
            out.write(text)


def read_utf8(path: str | Path) -> str:
    """Returns a text file's contents; bytes that are not UTF-8 are an ``encoding_error`` at
    their line and column, and an unreadable file a ``file_error``."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise PolygraphError("file_error", f"cannot read {path}: {error.strerror or error}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        start = data.rfind(b"\n", 0, error.start) + 1
        column = len(data[start:error.start].decode("utf-8", "replace")) + 1
        raise PolygraphError("encoding_error", f"byte {data[error.start]:#04x} is not UTF-8; save the file as UTF-8",
                             Position(str(path), line, column)) from None


def build_advice(path: str | Path) -> str:
    """Returns what to run when ``path`` is not a readable graph: rebuild it, when it names a
    graph (a ``.graph`` file or a folder), else build one beside it under the stem + ``.graph``,
    so that following the advice never overwrites an input (``assertions.jsonl`` ->
    ``assertions.graph``)."""
    target = Path(path)
    if target.suffix == ".graph" or target.is_dir() or not target.name:
        return f"rebuild it with `polygraph build ... -o {path}`"
    return (f"a graph is built from input files: `polygraph build --assertions A.jsonl ... "
            f"-o {target.with_suffix('.graph')}`, then pass that graph")
