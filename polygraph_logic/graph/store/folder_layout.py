"""A graph as a folder of Parquet files: its layout, declared once, and what writers and readers share.

The folder (format ``polygraph-tables/1``) holds the graph file's tables as columns (declared,
with their types in both forms, in table_schema.py):

- ``assertions.parquet``: ``num, id, source, subject, predicate, object, text`` and, as the
  graph has them, ``kind, negated, evidence, since``;
- ``facts.parquet``: ``num, relation, args`` (the graph file's JSON key), ``label`` as
  ``list<list<int32>>`` (support sets of assertion numbers, ascending, in stored order),
  ``exact`` and ``sets`` (the number of support sets);
- ``mentions.parquet``: ``assertion, fact, support_set``, one row per assertion of each support
  set, sorted by assertion (the what-if index: row groups are skipped by their min/max);
- ``artifacts.parquet``: ``num, id, layer, content, fact, summary``;
- ``rules.parquet``: ``num, tree`` and, written since graphs are read in place, ``relation, c0,
  c1, c2`` (the head relation and its first three head constants as JSON, for goal lookups) and,
  since, ``ground`` (a ground rule's atoms: stored_rules.ground_atoms);
- ``meta.json``: the format and the graph file's ``meta`` rows (cap, build record, statistics);
  ``rules.dl`` the rules as text (in meta.json in folders written before);
- look-up files derived from the tables by ``write_indexes``, the last step of every writer:
  ``assertions_by_id.parquet`` and ``assertions_by_source.parquet`` (assertion numbers by id
  and by source), ``artifacts_by_id.parquet`` (ids sorted), ``rules_by_head.parquet`` (the rules
  by head relation and constants, in small row groups), ``rule_atoms.parquet`` (every atom of the
  ground rules, sorted: stored_rules.py), ``facts_by_k2.parquet`` (facts sorted by their
  third argument) and ``background_facts.parquet`` (the facts of background knowledge alone,
  label one: what an explanation may use besides the facts its support set mentions).  A
  folder without them is read by scans.

Later versions (``add``, an applied deletion) are files beside these: folder_versions.py.
folder.py reads a folder in place.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.store.stored_rules import rule_rows

FOLDER_FORMAT = "polygraph-tables/1"
FILES = ("assertions", "facts", "mentions", "artifacts", "rules")
#: the order each file is written in (mentions by assertion: row groups then skip by min/max)
ORDER = {"assertions": "num", "facts": "num", "mentions": "assertion, fact, support_set", "artifacts": "num",
         "rules": "num"}
#: look-up files derived from the tables (write_indexes): sorted copies of a column or two, so
#: that a look-up by artifact id, or by a fact's third argument, reads a row group or two
INDEXES = {
    "assertions_by_id": "SELECT id, num FROM {assertions} ORDER BY id",
    "assertions_by_source": "SELECT source, num, id FROM {assertions} ORDER BY source",
    "artifacts_by_id": "SELECT id, num FROM {artifacts} ORDER BY id",
    "facts_by_k2": "SELECT relation, args->>'$[2]' AS k2, args, num FROM {facts} "
                   "WHERE json_array_length(args) >= 3 ORDER BY relation, k2",
    "rules_by_head": "SELECT relation, c0, c1, c2, num, tree FROM {rules} ORDER BY relation, c0, num",
    # each atom of every ground rule (stored_rules.ground_atoms), the head's with body false
    "rule_atoms": "SELECT a->>'$[0]' AS relation, a->>'$[1]' AS args, num, head, i > 1 AS body FROM ("
                  "SELECT num, relation AS head, unnest(CAST(ground AS JSON[])) AS a, "
                  "generate_subscripts(CAST(ground AS JSON[]), 1) AS i FROM {rules} WHERE ground IS NOT NULL) "
                  "ORDER BY relation, args, num",
    "background_facts": "SELECT num, relation, args FROM {facts} WHERE len(label) = 1 AND len(label[1]) = 0 "
                        "ORDER BY num",
}
#: how every file of a folder is written: zstd at its fastest level (at x40 under 130MB the facts
#: and artifacts files were written in 0.65 and 0.84 s against 0.73 and 0.97 s at the default
#: level 3, no larger: 11.6 and 15.4 MiB against 11.3 and 16.1; snappy took as long and wrote
#: twice the bytes)
PARQUET = "FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1"
#: files written in smaller row groups than DuckDB's 122,880 rows, where a look-up reads (and decodes)
#: one or two of them: the facts in 32,768 (an add of 50 assertions at x400, 3.3-3.5 s -> 3.0-3.1 s;
#: 16,384 was faster at x40, 2.8-3.0 -> 2.1-2.3 s, but slower at x400, 3.4-3.8 s, and wrote each file
#: 30% slower), the rules by head in 2,048
ROW_GROUPS = {"facts": 32_768, "rules_by_head": 2048, "rule_atoms": 8192}


def parquet_options(name: str) -> str:
    """The COPY options of the folder's file ``name`` (a table or a look-up file)."""
    return f"{PARQUET}, ROW_GROUP_SIZE {ROW_GROUPS[name]}" if name in ROW_GROUPS else PARQUET
#: the most numbers a streamed read of a folder's table asks for at once (FolderDB.in_ranges)
RANGE = 100_000
#: the rules as rule-language text, beside meta.json (at x400, 31 MB that opening need not parse)
RULES_TEXT = "rules.dl"
#: DuckDB's memory when reading a folder (beyond it, a query spills to a temporary folder)
READER_MEMORY = "1GB"
#: lists of numbers up to this long are written into a query's text (translate)
LITERAL_LIST = 10_000
#: how many rows a streamed read fetches at a time
BATCH = 100_000


def table_path(directory: str | Path, name: str) -> Path:
    """Returns the Parquet file of one table in a graph folder."""
    return Path(directory) / f"{name}.parquet"


def quoted(path) -> str:
    """A path (or any text) inside a single-quoted SQL literal."""
    return str(path).replace("'", "''")


def duckdb_connection(memory_limit: str | None = None, spill: Path | None = None):
    """Returns an in-memory DuckDB connection (an import error names the package to install)."""
    try:
        import duckdb  # an optional extra: only folders and the SQL engines need it
    except ImportError:
        raise PolygraphError("missing_dependency", 'DuckDB is not installed: pip install "polygraph_logic[duckdb]"') \
            from None
    con = duckdb.connect()
    if memory_limit:
        con.execute(f"SET memory_limit = '{memory_limit}'")
    if spill is not None:
        con.execute(f"SET temp_directory = '{quoted(spill)}'")
    return con


def bad_folder(directory, what: str) -> PolygraphError:
    return PolygraphError("bad_tables", f"{directory}: {what}; write it again with "
                                        f"`polygraph export-tables GRAPH -o {directory}`")


def read_meta(directory: str | Path) -> dict:
    """Returns a graph folder's meta.json; a missing or foreign folder is a bad_tables error."""
    directory = Path(directory)
    if not directory.is_dir():
        raise PolygraphError("file_error", f"no tables folder at {directory}")
    try:
        meta = json.loads((directory / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise bad_folder(directory, f"meta.json cannot be read ({error})") from None
    if not isinstance(meta, dict) or meta.get("format") != FOLDER_FORMAT or not isinstance(meta.get("meta"), dict):
        raise bad_folder(directory, f"meta.json does not declare format {FOLDER_FORMAT!r}")
    missing = [name for name in FILES if not table_path(directory, name).is_file()]
    if missing:
        raise bad_folder(directory, f"{', '.join(f'{m}.parquet' for m in missing)} missing")
    return meta


def check_target(target: Path) -> None:
    """Refuses a tables folder that cannot be written: no parent folder, or something else there."""
    folder = target.parent
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise PolygraphError("io_error", f"cannot write {target}: {folder} {what} (create the folder first)")
    if target.exists() and not (target / "meta.json").is_file():
        if not target.is_dir() or any(target.iterdir()):
            raise PolygraphError("file_exists", f"{target} exists and is not a tables folder; "
                                                "name a new folder or an earlier export")


@contextmanager
def writing_folder(target: Path) -> Iterator[Path]:
    """Yields a hidden folder beside ``target`` to write a tables folder in; it replaces
    ``target`` only when the block completes (a failure leaves any earlier folder intact)."""
    check_target(target)
    partial = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent))
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(partial, 0o777 & ~umask)  # mkdtemp makes 0700; this is an ordinary folder
        yield partial
        if target.exists():
            # the new folder and the old swap names in one step: at every moment one of them is
            # the target, whole; the old is removed only then (where the system cannot swap: the
            # old renamed aside first, so that a crash between the two renames loses nothing)
            if not exchange(partial, target):
                aside = partial.with_name(partial.name + ".old")
                os.replace(target, aside)
                os.replace(partial, target)
                partial = aside
            shutil.rmtree(partial, ignore_errors=True)
        else:
            os.replace(partial, target)
    except BaseException as error:
        shutil.rmtree(partial, ignore_errors=True)
        if type(error).__name__ == "OutOfMemoryException":
            raise  # the evaluation that writes says so (duckdb_run.evaluation: out_of_memory)
        if isinstance(error, OSError) or type(error).__module__.lstrip("_").startswith("duckdb"):
            reason = getattr(error, "strerror", None) or str(error).splitlines()[0]
            raise PolygraphError("io_error", f"cannot write {target}: {reason}") from None
        raise


def exchange(first: Path, second: Path) -> bool:
    """Swaps the names of two paths atomically (Linux's renameat2 with RENAME_EXCHANGE); False
    where the system or its file system cannot."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    at_cwd, rename_exchange = -100, 2
    if renameat2(at_cwd, os.fsencode(first), at_cwd, os.fsencode(second), rename_exchange) == 0:
        return True
    error = ctypes.get_errno()
    if error in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(error, os.strerror(error), str(second))


def folder_rule_rows(rules, start: int = 1):
    """Yields ``(num, tree, relation, c0, c1, c2, ground)``: the rules table of a folder, numbered from ``start``."""
    for num, (relation, c0, c1, c2, tree, ground) in enumerate(rule_rows(rules), start):
        yield (num, tree, relation, *(None if c is None else json.dumps(c, ensure_ascii=False) for c in (c0, c1, c2)),
               ground)


def head_value(text):
    """The head constant a folder stores as JSON text (None stays None)."""
    if text is None:
        return None
    if text[:1] == '"' and "\\" not in text:  # a plain string, the common case: no parse
        return text[1:-1]
    return json.loads(text)


def write_indexes(directory: Path, memory_limit: str = "2GB") -> None:
    """Writes the folder's look-up files (INDEXES) from its tables, sorting under ``memory_limit``
    (DuckDB spills beyond it)."""
    with spilling(directory, memory_limit) as con:
        names = {name: f"read_parquet('{quoted(table_path(directory, name))}')" for name in FILES}
        for index, sql in INDEXES.items():
            con.execute(f"COPY ({sql.format(**names)}) TO '{quoted(table_path(directory, index))}' "
                        f"({parquet_options(index)})")


@contextmanager
def spilling(directory: Path, memory_limit: str) -> Iterator:
    """A DuckDB connection that spills beyond ``memory_limit`` into a hidden folder of ``directory``,
    removed when it closes."""
    spill = directory / ".index-spill"
    con = duckdb_connection(memory_limit, spill)
    con.execute("SET enable_progress_bar = false")
    try:
        yield con
    finally:
        con.close()
        if spill.exists():
            for leftover in spill.iterdir():
                leftover.unlink()
            spill.rmdir()


def rules_text(directory: Path, meta: dict) -> str:
    """A folder's rules as text: its rules.dl, or (written before rules.dl) meta.json's ``rules``."""
    path = Path(directory) / RULES_TEXT
    if path.is_file():
        return path.read_text(encoding="utf-8")
    text = meta.get("rules")
    return text if isinstance(text, str) else ""


def folder_bytes(directory: Path) -> int:
    """The bytes of a graph folder's files (its later versions' included)."""
    return sum(p.stat().st_size for p in Path(directory).rglob("*") if p.is_file())
