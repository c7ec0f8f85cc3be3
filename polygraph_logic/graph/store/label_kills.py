"""How many artifacts each source kills on its labels alone, counted once and kept per version.

A source *kills* a fact's label when every support set holds an assertion of it (a label with
no set, or with an empty set, is killed by none).  ``top-sources`` bounds every source's dead
count by these counts over the facts artifacts carry (query/explain.py).  A folder counts them
in SQL over its mentions (``KILLS_SQL``: x400, about 4 s of a 10 s command), so its writers keep
them: the build writes ``label_kills.parquet`` beside its look-up files (folder_layout.py), and
each later version writes its own, its parent's counts changed by the artifacts it retired,
added or relabelled (folder_version_write.py), as it keeps its statistics.  A folder without
the file (written before it, or by Spark) is counted by the query.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Callable

from polygraph_logic.graph.store.folder_layout import FILES, PARQUET, duckdb_connection, quoted, spilling, table_path
from polygraph_logic.graph.store.folder_versions import version_folder

#: the file of a version's counts (the build's in the folder, a later version's in its own folder)
KILLS_FILE = "label_kills"

# per fact and source, the support sets the source's assertions hit; all of them: the fact dies.  The
# sources numbered first, and each (fact, source) packed in one integer: the aggregates hash integers,
# not text (x100 under 256 MB, as x400 under READER_MEMORY: 4.0-5.0 s -> 1.8-2.3 s); the sets hit as
# the bits of one integer where every label has at most 64 (one aggregate, not a DISTINCT and a count:
# x400 4.9-5.0 -> 3.9-4.2 s).  Before the text's grouping: x400 10.1 s -> 7.4 s against a
# count(DISTINCT support_set) per fact and source joined with every fact and every artifact.  A
# version carries each fact by one artifact at most.
KILLS_SQL = """
WITH sources AS (SELECT source, row_number() OVER (ORDER BY source) AS s FROM (SELECT DISTINCT source FROM assertions)),
numbered AS (SELECT a.num, s.s FROM assertions a JOIN sources s USING (source)),
carried AS (SELECT f.num, f.sets FROM facts f SEMI JOIN artifacts r ON r.fact = f.num),
hits AS ({hits}),
kills AS (SELECT {source} AS s, count(*) AS n FROM hits h JOIN carried c ON c.num = {fact} AND c.sets = h.sets_hit
          GROUP BY 1)
SELECT s.source, k.n FROM kills k JOIN sources s USING (s)
"""
_MENTIONED = "FROM mentions m JOIN numbered n ON n.num = m.assertion"
#: bits for a source's number in KILLS_SQL's packed keys
SOURCE_BITS = 24


def kill_keys(packed: bool, bits: bool) -> dict[str, str]:
    """KILLS_SQL's parts: (fact, source) packed in one integer or side by side; the support sets
    hit as bits of an integer (every label with at most 64) or counted after a DISTINCT."""
    key, grouped = ((f"(m.fact << {SOURCE_BITS}) | n.s AS k", "k") if packed else ("m.fact AS fact, n.s AS s", "fact, s"))
    hits = (f"SELECT {key}, bit_count(bit_or(1::UBIGINT << m.support_set)) AS sets_hit {_MENTIONED} GROUP BY {grouped}"
            if bits else f"SELECT {grouped}, count(*) AS sets_hit FROM (SELECT DISTINCT {key}, m.support_set "
                         f"{_MENTIONED}) AS d GROUP BY {grouped}")
    if packed:
        return {"hits": hits, "source": f"h.k & {2**SOURCE_BITS - 1}", "fact": f"h.k >> {SOURCE_BITS}"}
    return {"hits": hits, "source": "h.s", "fact": "h.fact"}


#: a graph with more sources, or facts numbered past 2^(63 - SOURCE_BITS), and Spark: side by side, counted
UNPACKED_KEYS = kill_keys(packed=False, bits=False)

# the same counts label by label, without a (fact, source) pair ever hashed: each support set's
# sources (its assertions' numbers looked up in one list of every assertion's source number), the
# sets' sources intersected, those sources killing the fact (x40 with 40 hubs, 33 M mentions of 7 M
# facts: 11.8 -> 6.4 s).  Assertions numbered 1 to n (``list_kills_fit``); a label with no set or an
# empty set is killed by none; a label read as text (a folder's views) is cast back to its lists.
# A label of one set of one assertion (a claim, a witness of one) is its source, one set its sources,
# without the intersection's lambdas (the x40 folder with 40 hubs, witness labels: 4.75 -> 3.46 s).
LIST_KILLS_SQL = """
WITH sources AS (SELECT source, row_number() OVER (ORDER BY source) AS s FROM (SELECT DISTINCT source FROM assertions)),
numbers AS (SELECT list(s.s ORDER BY a.num) AS m FROM assertions a JOIN sources s USING (source)),
labels AS (SELECT CAST(f.label AS INTEGER[][]) AS label FROM facts f SEMI JOIN artifacts r ON r.fact = f.num),
killed AS (SELECT n.m[l.label[1][1]] AS s FROM labels l, numbers n WHERE len(l.label) = 1 AND len(l.label[1]) = 1
           UNION ALL
           SELECT unnest(list_distinct(list_transform(l.label[1], lambda x: n.m[x]))) AS s FROM labels l, numbers n
           WHERE len(l.label) = 1 AND len(l.label[1]) > 1
           UNION ALL
           SELECT unnest(list_reduce(list_transform(l.label, lambda t: list_distinct(list_transform(t, lambda x: n.m[x]))),
                                    lambda a, b: list_intersect(a, b))) AS s
           FROM labels l, numbers n WHERE len(l.label) > 1 AND list_min(list_transform(l.label, lambda t: len(t))) > 0)
SELECT s.source, k.n FROM (SELECT s, count(*) AS n FROM killed GROUP BY s) k JOIN sources s USING (s)
"""


def list_kills_fit(query: Callable[[str], tuple]) -> bool:
    """Whether LIST_KILLS_SQL applies to the tables ``query`` (SQL -> its one row) reads: the
    assertions numbered 1 to their count."""
    low, high, count = query("SELECT min(num), max(num), count(*) FROM assertions")
    return not count or (low == 1 and high == count)


def kills_sql(query: Callable[[str], tuple]) -> str:
    """The query counting each source's kills over the tables ``query`` reads (DuckDB)."""
    return LIST_KILLS_SQL if list_kills_fit(query) else KILLS_SQL.format(**fitting_keys(query))


def fitting_keys(query: Callable[[str], tuple]) -> dict[str, str]:
    """KILLS_SQL's parts for the tables ``query`` (SQL -> its one row) reads: packed keys, unless
    there are too many sources or facts for them; the sets hit as bits, unless a label has more
    than 64 support sets."""
    sources, = query("SELECT count(DISTINCT source) FROM assertions")
    facts, sets = query("SELECT max(num), max(sets) FROM facts")
    return kill_keys(packed=sources < 2**SOURCE_BITS and (facts or 0) < 2**(63 - SOURCE_BITS), bits=(sets or 0) <= 64)


def kills_path(directory: Path, version: int) -> Path:
    """Where version ``version`` of the folder ``directory`` keeps its counts."""
    folder = Path(directory) if version == 1 else version_folder(directory, version)
    return folder / f"{KILLS_FILE}.parquet"


def write_build_kills(directory: Path, memory_limit: str = "2GB") -> None:
    """Counts what each source kills in a folder's build (its tables as written) and keeps it,
    beside its look-up files (x400: about 4 s, once, where top-sources spent them at every call)."""
    with spilling(directory, memory_limit) as con:
        for name in FILES:
            con.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet('{quoted(table_path(directory, name))}')")
        write_kills(con, kills_path(directory, 1), kills_sql(lambda sql: con.execute(sql).fetchone()))


def write_kills(con, path: Path, counts_sql: str) -> None:
    """Writes the counts ``counts_sql`` (source, n) gives as ``path`` (sorted by source)."""
    con.execute(f"COPY (SELECT source, CAST(n AS BIGINT) AS n FROM ({counts_sql}) WHERE n <> 0 ORDER BY source) "
                f"TO '{quoted(path)}' ({PARQUET})")


def read_kills(path: Path) -> dict[str, int]:
    """The counts a kills file holds."""
    con = duckdb_connection()
    try:
        return dict(con.execute(f"SELECT source, n FROM read_parquet('{quoted(path)}')").fetchall())
    finally:
        con.close()


def killers(groups: list[list[int]], source_of: dict[int, str]) -> set[str]:
    """The sources that kill a label (its support sets as assertion numbers): those with an
    assertion in every set; none when it has no set or an empty one."""
    if not groups or any(not group for group in groups):
        return set()
    found = {source_of[n] for n in groups[0]}
    for group in groups[1:]:
        found &= {source_of[n] for n in group}
        if not found:
            break
    return found


class KillChanges:
    """A version's change to its parent's counts: each artifact it retires or adds, and each
    relabelled fact an artifact still carries, as its statistics count them."""

    def __init__(self):
        self.labels: list[tuple[list[list[int]], int]] = []  # (support sets, +1 or -1)

    def count(self, groups: list[list[int]], sign: int) -> None:
        self.labels.append((groups, sign))

    def numbers(self) -> set[int]:
        return {n for groups, _ in self.labels for group in groups for n in group}

    def changes(self, source_of: dict[int, str]) -> dict[str, int]:
        """``{source: change to its count}`` (sources left unchanged out)."""
        counts: Counter = Counter()
        for groups, sign in self.labels:
            for source in killers(groups, source_of):
                counts[source] += sign
        return {source: n for source, n in counts.items() if n}


def changed_kills(con, parent: Path, changes: dict[str, int]) -> str:
    """The SQL of a parent's counts (its file) with ``changes`` made (sources at zero left out);
    the changes are the table ``kill_changes`` on ``con``."""
    con.execute("CREATE TABLE kill_changes (source VARCHAR, n BIGINT)")
    if changes:
        con.executemany("INSERT INTO kill_changes VALUES (?, ?)", sorted(changes.items()))
    return (f"SELECT source, sum(n) AS n FROM (SELECT source, n FROM read_parquet('{quoted(parent)}') "
            "UNION ALL SELECT source, n FROM kill_changes) GROUP BY source")
