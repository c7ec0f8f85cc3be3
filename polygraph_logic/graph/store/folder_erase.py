"""Erasure in a graph folder: the content of purged assertions, and of the facts and artifacts that
rested only on them, rewritten out of every version's Parquet files (erase.py does it in a file).

A folder's files are never changed in place, so each file holding such content is written again
without it, with the same rows, numbers, labels, columns and order, into the purge's hidden
version folder under ``purged/`` at its path in the graph folder (``purged/facts.parquet``,
``purged/versions/3/artifacts.parquet``), with the look-up files that copy a rewritten column
(``facts_by_k2``, ``background_facts``).  The content digest each rewritten version will have is
computed from those files and recorded by the purge (chain.py), so that the rename of the
version's folder commits the erasure whole; the files are then moved into place one rename each,
and a reader that finds the move unfinished finishes it before reading (folder_versions.settle).
The version's own rows are erased in memory before they are written (``erase_version``).
"""

from __future__ import annotations

import re
from pathlib import Path

from polygraph_logic.graph.store.chain import folder_content
from polygraph_logic.graph.store.erase import ERASED_CONTENT, PURGED, purged_args
from polygraph_logic.graph.store.folder_layout import INDEXES, ORDER, duckdb_connection, parquet_options, quoted, \
    table_path
from polygraph_logic.graph.store.folder_versions import INDEX_TABLE, STAGED, VERSIONS

#: each table's erased columns, and the rows (of the file ``t``, the purged ones in ``gone``) erased
ERASED = {
    "assertions": (("subject", "predicate", "object", "text"), f"t.num IN (SELECT num FROM gone) "
                                                               f"AND t.subject IS DISTINCT FROM '{PURGED}'"),
    "facts": (("args",), "t.num IN (SELECT num FROM gone_facts)"),
    "artifacts": (("content",), "t.fact IN (SELECT num FROM gone_facts)"),
}


def _replacements(table: str, where: str) -> str:
    """The REPLACE list of a rewritten ``table``: its erased columns where ``where`` holds."""
    if table == "assertions":
        values = {"subject": f"'{PURGED}'", "predicate": f"'{PURGED}'", "object": f"'{PURGED}'", "text": "NULL"}
    elif table == "facts":
        values = {"args": "(SELECT g.args FROM gone_facts g WHERE g.num = t.num)"}
    else:
        values = {"content": "'" + ERASED_CONTENT.replace("'", "''") + "'"}
    return ", ".join(f"CASE WHEN {where} THEN {value} ELSE t.{column} END AS {column}"
                     for column, value in values.items())


def _copying(table: str) -> list[str]:
    """The look-up files that copy an erased column of ``table`` (written again from its new file)."""
    columns = ERASED[table][0]
    return [name for name, sql in INDEXES.items() if INDEX_TABLE[name] == table
            and any(re.search(rf"\b{column}\b", sql) for column in columns)]


def erase_folder(directory: Path, version: int, staging: Path, assertions: list[int],
                 facts: dict[int, int]) -> tuple[dict[int, str], int]:
    """Writes into ``staging`` each file of versions 1 to ``version - 1`` of the folder at
    ``directory`` that holds the content of the assertions numbered ``assertions`` or of the facts
    ``{number: arity}`` (with their artifacts), erased; returns ({version: its content digest once
    they are in place}, artifact rows erased)."""
    con = duckdb_connection()
    try:
        con.execute("CREATE TABLE gone(num BIGINT)")
        con.executemany("INSERT INTO gone VALUES (?)", [(n,) for n in assertions])
        con.execute("CREATE TABLE gone_facts(num BIGINT, args VARCHAR)")
        con.executemany("INSERT INTO gone_facts VALUES (?, ?)", [(n, purged_args(n, a)) for n, a in facts.items()])
        digests, artifacts = {}, 0
        for v in range(1, version):
            place = Path() if v == 1 else Path(VERSIONS) / str(v)
            base, replaced = directory / place, {}
            for table, (_, where) in ERASED.items():
                source = table_path(base, table)
                if not source.is_file():
                    continue
                read = f"read_parquet('{quoted(source)}') t"
                found, = con.execute(f"SELECT count(*) FROM {read} WHERE {where}").fetchone()
                if not found:
                    continue
                artifacts += found if table == "artifacts" else 0
                target = table_path(staging / place, table)
                target.parent.mkdir(parents=True, exist_ok=True)
                con.execute(f"COPY (SELECT t.* REPLACE ({_replacements(table, where)}) FROM {read} "
                            f"ORDER BY {ORDER[table]}) TO '{quoted(target)}' ({parquet_options(table)})")
                replaced[source.name] = target
                if v == 1:
                    for name in (n for n in _copying(table) if table_path(directory, n).is_file()):
                        sql = INDEXES[name].format(**{table: f"read_parquet('{quoted(target)}')"})
                        con.execute(f"COPY ({sql}) TO '{quoted(table_path(staging, name))}' ({parquet_options(name)})")
            if replaced:
                digests[v] = folder_content(base, v, replaced)
        return digests, artifacts
    finally:
        con.close()


def erase_version(writer, staging: Path, assertions: list[int],
                  facts: list[tuple[str, tuple]]) -> tuple[dict[int, str], int, int]:
    """VersionWriter.erase on a folder's writer (folder_version_write.py): the rows the version
    writes erased in memory, the earlier versions' files rewritten into ``staging``; returns
    ({earlier version: its content digest now}, facts erased, artifact rows erased)."""
    numbers = {}
    for relation, args in facts:
        num = writer.fact_number(relation, args)
        if num is not None:
            numbers[num] = len(args)
    for num, row in writer.new_facts.items():
        if num in numbers:
            writer.fact_numbers.pop((row[0], row[1]), None)
            row[1] = purged_args(num, numbers[num])
            writer.fact_numbers[(row[0], row[1])] = num
    written = 0
    for row in writer.new_artifacts.values():
        if row[3] in numbers:
            row[2], written = ERASED_CONTENT, written + 1
    for num, row in writer.new_assertions.items():
        if num in assertions:
            row.update(subject=PURGED, predicate=PURGED, object=PURGED, text=None)
    digests, artifacts = erase_folder(writer.directory, writer.version, staging, assertions, numbers)
    return digests, len(numbers), artifacts + written


__all__ = ["ERASED", "STAGED", "erase_folder", "erase_version"]
