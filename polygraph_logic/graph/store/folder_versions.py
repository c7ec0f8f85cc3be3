"""A graph folder's versions: the build, then each ``add`` and applied deletion, in files beside it.

A folder grows by versions as a graph file does (versions.py), and no file is changed in place
(a purge alone replaces whole files: folder_erase.py): version N (N >= 2) is the folder ``versions/N/``, holding

- the rows version N wrote, one Parquet file per table with the build's columns in the
  build's order (folder.py): new assertions, artifacts and rules, and every fact whose label
  N changed, written again whole under its number, with all its mentions;
- ``retired.parquet`` (``tbl, num, since``): the rows N removed or replaced, each named by its
  table, its number and the version that wrote it (1: the build's file);
- ``version.json``: N's record, as a graph file's ``versions`` table keeps it (time, command,
  action, record, parent, statistics).

A version is written in a hidden folder and renamed into place when complete (its number is
then taken; a version half written is never read).  Reading version V (the latest unless
``--at``): each table is the union of the rows versions 1..V wrote, less those retired by a
version up to V; a mention goes with its fact's row (a fact's mentions are written with it).
A look-up file (folder.INDEXES) is read the same way: the build's file less what was
retired, and the look-up's query over the rows each later version wrote.  A folder without
versions beyond its build reads its build's files as they are, with nothing in between.

A purge's version folder holds, until they are moved into place, the earlier versions' files it
wrote again without the purged content (``purged/``, at their paths in the graph folder); its
rename commits them, and ``settle``, which every reader and writer calls on opening, finishes
moving them if its writer was stopped first.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.store.folder_layout import FILES, INDEXES, quoted, table_path

#: the folder of versions 2 and later, inside a graph folder
VERSIONS = "versions"
#: the rows a version removed or replaced, in its folder
RETIRED = "retired"
#: a version's record, in its folder
RECORD = "version.json"
#: the table whose rows each look-up file sorts
INDEX_TABLE = {name: re.search(r"\{(\w+)\}", sql).group(1) for name, sql in INDEXES.items()}
#: in a purge's version folder: the rewritten files of earlier versions (their paths in the graph
#: folder), until each is moved into place (settle)
STAGED = "purged"
#: the extra column of a tagged read (FolderDB(tagged=True)): the version that wrote each row
VERSION_COLUMN = "version_"


#: a version being written, readable by its writer alone (``reading_pending``): folder -> (version, its folder)
_PENDING: dict[str, tuple[int, Path]] = {}


@contextmanager
def reading_pending(directory: str | Path, version: int, folder: Path) -> Iterator[None]:
    """Within it, this process reads the folder at ``directory`` with version ``version``, whose
    files are in ``folder`` (hidden until renamed into place): its writer reads it so, to find
    what is committed with it (its circuit), before any other reader can see it."""
    key = str(Path(directory).resolve())
    _PENDING[key] = (version, Path(folder))
    try:
        yield
    finally:
        _PENDING.pop(key, None)


def _pending(directory: str | Path) -> tuple[int, Path] | None:
    return _PENDING.get(str(Path(directory).resolve())) if _PENDING else None


def version_folder(directory: str | Path, version: int) -> Path:
    pending = _pending(directory)
    if pending is not None and pending[0] == version:
        return pending[1]
    return Path(directory) / VERSIONS / str(version)


def later_versions(directory: str | Path) -> list[int]:
    """The numbers of a folder's complete versions after its build, ascending (and the version
    its writer is reading before it is in place: ``reading_pending``)."""
    root = Path(directory) / VERSIONS
    if not root.is_dir():
        return []
    found = sorted(int(p.name) for p in root.iterdir() if p.name.isdigit() and (p / RECORD).is_file())
    pending = _pending(directory)
    if pending is not None and pending[0] not in found:
        found.append(pending[0])
    for expected, number in enumerate(found, 2):
        if number != expected:
            raise PolygraphError("bad_tables", f"{directory}: versions/{expected} is missing (found {found}); "
                                               "a graph folder's versions are numbered from 2 without gaps")
    return found


def latest_version(directory: str | Path) -> int:
    versions = later_versions(directory)
    return versions[-1] if versions else 1


def version_record(directory: str | Path, version: int) -> dict:
    """Version ``version``'s row, as versions.version_rows gives a graph file's."""
    path = version_folder(directory, version) / RECORD
    try:
        row = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise PolygraphError("bad_tables", f"{path} cannot be read ({error})") from None
    if not isinstance(row, dict) or row.get("version") != version:
        raise PolygraphError("bad_tables", f"{path} is not the record of version {version}")
    return row


def check_version(directory: str | Path, at: int | None) -> int:
    """The version to read (``at``, or the latest); an unknown one is a no_version error."""
    newest = latest_version(directory)
    if at is None:
        return newest
    if not isinstance(at, int) or isinstance(at, bool) or not 1 <= at <= newest:
        raise PolygraphError("no_version", f"{directory} has versions 1 to {newest}; there is no version {at!r} "
                                           f"(see `polygraph log {directory}`)")
    return at


class VersionedTables:
    """The FROM text of each table and look-up of a folder read at version ``at``, on ``con``
    (a DuckDB connection, which gains the table ``retired`` when there are later versions)."""

    def __init__(self, con, directory: Path, at: int, tagged: bool = False):
        self.directory, self.tagged = Path(directory), tagged
        self.versions = [v for v in later_versions(directory) if v <= at]
        self.retiring: set[tuple[str, int]] = set()  # (table, version that wrote the rows)
        if self.versions:
            con.execute("CREATE TABLE retired AS " + " UNION ALL ".join(
                f"SELECT tbl, num, since, {v} AS until FROM "
                f"read_parquet('{quoted(version_folder(directory, v) / f'{RETIRED}.parquet')}')" for v in self.versions))
            self.retiring = {(t, s) for t, s in con.execute("SELECT DISTINCT tbl, since FROM retired").fetchall()}

    def _file(self, version: int, name: str) -> str:
        path = table_path(self.directory, name) if version == 1 else table_path(version_folder(self.directory,
                                                                                              version), name)
        return f"read_parquet('{quoted(path)}')"

    def _arm(self, name: str, version: int, source: str, tagged: bool = False) -> str:
        """The rows of ``source`` (written by ``version`` into table ``name``) not retired since."""
        table, key = ("facts", "fact") if name == "mentions" else (name, "num")
        tag = f", {version} AS {VERSION_COLUMN}" if tagged else ""
        where = (f" WHERE {key} NOT IN (SELECT num FROM retired WHERE tbl = '{table}' AND since = {version})"
                 if (table, version) in self.retiring else "")
        return f"SELECT *{tag} FROM {source}{where}"

    def table(self, name: str, base: str | None = None) -> str:
        """The FROM text of table ``name`` (``base``: the build's rows, if not its file)."""
        base = base or self._file(1, name)
        if not self.versions:
            return f"(SELECT *, 1 AS {VERSION_COLUMN} FROM {base})" if self.tagged else base
        arms = [self._arm(name, 1, base, self.tagged),
                *(self._arm(name, v, self._file(v, name), self.tagged) for v in self.versions)]
        return "(" + " UNION ALL ".join(arms) + ")"

    def index(self, name: str) -> str:
        """The FROM text of the look-up ``name``: the build's file less what was retired, and the
        look-up's query over the rows of each later version."""
        base = self._file(1, name)
        if not self.versions:
            return base
        table = INDEX_TABLE[name]
        written = " UNION ALL ".join(self._arm(table, v, self._file(v, table)) for v in self.versions)
        query = INDEXES[name].format(**{table: f"({written})"})
        return f"({self._arm(table, 1, base)} UNION ALL SELECT * FROM ({query}))"


def clear_stale(root: Path) -> None:
    """Removes the hidden folders of writes killed before their rename (``.N.partial-PID`` whose
    process is gone): what a killed write leaves, the next one clears."""
    for partial in root.glob(".*.partial-*"):
        pid = partial.name.rpartition("-")[2]
        if pid.isdigit() and not _running(int(pid)):
            shutil.rmtree(partial, ignore_errors=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: running
        return True
    return True


def settle(directory: str | Path) -> None:
    """Finishes a committed purge whose rewritten files are not all in place (its writer stopped
    after its version's rename): moves each into place.  Every reader and writer of a folder calls
    it on opening, so that none reads a version whose files are half replaced."""
    root = Path(directory) / VERSIONS
    if not root.is_dir():
        return
    for folder in sorted(root.iterdir()):
        if folder.name.isdigit() and (folder / STAGED).is_dir() and (folder / RECORD).is_file():
            place_staged(directory, folder / STAGED)


def place_staged(directory: str | Path, staged: Path) -> None:
    """Moves each file under ``staged`` to its path in the graph folder ``directory`` (one rename
    each), then removes ``staged``; another process moving them meanwhile is no error."""
    try:
        for path in sorted(p for p in staged.rglob("*.parquet")):
            try:
                os.replace(path, Path(directory) / path.relative_to(staged))
            except FileNotFoundError:  # moved by another reader meanwhile
                continue
        shutil.rmtree(staged, ignore_errors=True)
    except OSError as error:
        raise PolygraphError("io_error", f"{directory}: the purge recorded as {staged.parent.name} is committed but "
                                         f"its rewritten files are not all in place, and cannot be moved there "
                                         f"({error.strerror or error}); open the folder once with write access to "
                                         "finish it") from None


def refuse_versions(directory: str | Path, what: str, instead: str) -> None:
    """Refuses a folder with versions after its build where only its build can be read."""
    versions = later_versions(directory)
    if versions:
        raise PolygraphError("versioned_folder", f"{directory} has versions 1 to {versions[-1]}: {what}; {instead}")


def version_files(directory: str | Path) -> list[str]:
    """The files of a folder's later versions, relative to it (for copying a folder)."""
    root = Path(directory)
    return [str(p.relative_to(root)) for v in later_versions(root) for p in sorted(version_folder(root, v).iterdir())]


__all__ = ["FILES", "INDEX_TABLE", "RECORD", "RETIRED", "STAGED", "VERSIONS", "VERSION_COLUMN", "VersionedTables",
           "check_version", "clear_stale", "later_versions", "latest_version", "place_staged", "reading_pending",
           "refuse_versions", "settle", "version_folder", "version_record"]
