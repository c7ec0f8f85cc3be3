"""What a folder's version writer reads of the version before it: stored rows by key, in few queries.

``FolderVersionReads`` is the reading half of ``FolderVersionWriter`` (folder_version_write.py): the
folder at its latest version (FolderDB, each row tagged with the version that wrote it), queried
through cursors of its own, and the stored facts, artifacts and labels the writer asks about,
read many at once (``prefetch``) and kept.  A folder answers a query in milliseconds whatever it
asks, so each question reads every key it can at once, and bounds its scan where the file is
sorted by what it looks up.
"""

from __future__ import annotations

import json

from polygraph_logic.graph.store.folder_layout import quoted, table_path
from polygraph_logic.graph.store.folder_versions import VERSION_COLUMN, version_folder
from polygraph_logic.graph.store.rows import fact_key

_V = VERSION_COLUMN
#: a stored fact as the writer holds it: number, support sets, exact flag, version that wrote it
_Fact = tuple[int, list, bool, int]


class FolderVersionReads:
    """The writer's questions to the folder it appends to (``db``, ``con``, and the caches the
    writer's ``__init__`` makes: ``_stored_facts``, ``_stored_artifacts``, ``labels_before``, ``new_facts``)."""

    def _columns(self, name: str) -> list[tuple[str, str]]:
        """The columns of the build's file of table ``name``, with their types, in order."""
        path = quoted(table_path(self.directory, name))
        return [(row[0], row[1]) for row in
                self._all(f"DESCRIBE SELECT * FROM read_parquet('{path}')")]

    def _max(self, name: str) -> int:
        """The greatest number table ``name`` ever used, in any version (its retired rows' too)."""
        files = [table_path(self.directory, name),
                 *(table_path(version_folder(self.directory, v), name) for v in range(2, self.version))]
        sql = " UNION ALL ".join(f"SELECT max(num) AS n FROM read_parquet('{quoted(p)}')" for p in files)
        return self._one(f"SELECT max(n) FROM ({sql})")[0] or 0

    def _all(self, sql: str, parameters=(), keys=None) -> list[tuple]:
        """Runs ``sql`` on a cursor of its own and returns its rows; ``keys``: values (texts) that
        ``sql`` reads as the table ``keys`` (one column ``value``)."""
        if keys is not None:
            keys = list(keys)
            sql = _literal_keys(sql, keys)
        cursor = self.con.cursor()
        try:
            if keys is not None and "FROM keys" in sql:
                import numpy as np  # DuckDB's own dependency, for registered columns
                cursor.register("keys", {"value": np.array(keys, dtype=object)})
            return cursor.execute(sql, parameters).fetchall()
        finally:
            cursor.close()

    def _rows(self, sql: str, values) -> list[tuple]:
        """Runs ``sql``, which reads ``keys``: the table of ``values`` (nothing when there are none)."""
        values = list(values)
        return self._all(sql, keys=values) if values else []

    def _one(self, sql: str, parameters=()) -> tuple:
        return self._all(sql, parameters)[0]

    def prefetch(self, facts=(), artifacts=()) -> None:
        """Reads the stored rows of many facts (``(relation, args)``) and artifacts (ids) at once,
        which ``fact``, ``has_fact``, ``has_artifact`` and ``retire_artifact`` then find."""
        self._prefetch_facts({(relation, fact_key(args)) for relation, args in facts})
        ids = set(artifacts) - self._stored_artifacts.keys()
        if ids:
            self._stored_artifacts.update(dict.fromkeys(ids))
            numbers = self._artifact_numbers(ids)
            for num, id_, layer, fact, since, label, exact in self._all(
                    f"SELECT a.num, a.id, a.layer, a.fact, a.{_V}, CAST(f.label AS VARCHAR), f.exact "
                    f"FROM artifacts a JOIN facts f ON f.num = a.fact WHERE a.num IN ({', '.join(map(str, numbers))})"
            ) if numbers else ():
                self._stored_artifacts[id_] = (num, layer, fact, since, json.loads(label), bool(exact))

    def _artifact_numbers(self, ids) -> list[int]:
        """The numbers of the stored artifacts ``ids`` name, from the look-up of (id, number) sorted by id
        where the folder has one: two narrow columns scanned, not every artifact's content (x400, 50
        ids: about 40 ms against 0.8-1.1 s)."""
        table = "artifacts_by_id" if "artifacts_by_id" in self.db.indexes else "artifacts"
        return sorted(row[0] for row in self._rows(f"SELECT num FROM {table} WHERE id IN (SELECT value FROM keys)",
                                                   sorted(ids)))

    def _prefetch_facts(self, keys: set[tuple[str, str]]) -> None:
        keys -= self._stored_facts.keys()
        if keys:
            self._stored_facts.update(dict.fromkeys(keys))
            by_relation: dict[str, list[str]] = {}
            for relation, args in keys:
                by_relation.setdefault(relation, []).append(args)
            # one query a relation, its arguments matched as stored: only that relation's row groups
            # are read (a joined relation-and-arguments text was matched on every fact: x40, 84
            # keys 197 -> 137 ms)
            for relation in sorted(by_relation):
                wanted = sorted(by_relation[relation])
                # the keys' least and greatest text bound the scan: facts are sorted by relation and
                # arguments, so only the row groups between them are read (an add's facts share
                # their entities' names: x400, 360 edge keys 3.5 s -> under 0.1 s)
                for num, args, label, exact, since in self._all(
                        f"SELECT num, args, CAST(label AS VARCHAR), exact, {_V} FROM facts "
                        "WHERE relation = ? AND args BETWEEN ? AND ? AND args IN (SELECT value FROM keys)",
                        (relation, wanted[0], wanted[-1]), keys=wanted):
                    self._stored_facts[(relation, args)] = (num, json.loads(label), bool(exact), since)

    def _stored_fact(self, relation: str, key: str) -> _Fact | None:
        self._prefetch_facts({(relation, key)})
        return self._stored_facts[(relation, key)]

    def _stored_artifact(self, artifact_id: str) -> tuple | None:
        """The stored row of a current artifact (None when absent, or retired by this version)."""
        if artifact_id in self.retired_artifacts:
            return None
        if artifact_id not in self._stored_artifacts:
            self.prefetch(artifacts=[artifact_id])
        return self._stored_artifacts[artifact_id]

    def _labels(self, facts) -> dict[int, tuple[list, bool]]:
        """The labels of facts as they stand now: as this version wrote them, or as stored."""
        out = {n: (self.new_facts[n][2], self.new_facts[n][3]) for n in facts if n in self.new_facts}
        out.update((num, (json.loads(label), bool(exact))) for num, label, exact in self._rows(
            "SELECT num, CAST(label AS VARCHAR), exact FROM facts WHERE num IN (SELECT CAST(value AS BIGINT) FROM keys)",
            sorted({str(n) for n in facts if n not in self.new_facts})))
        return out

    def _labels_before(self, facts) -> dict[int, tuple[list, bool]]:
        """The labels of facts before this version."""
        out = {n: self.labels_before[n] for n in facts if n in self.labels_before}
        out.update(self._labels([n for n in facts if n not in self.labels_before and n not in self.new_facts]))
        return out


#: the longest key list written as literals: a few dozen prune a sorted file's row groups; hundreds
#: spread over it prune none and cost more than the joined table (x400, 540 artifact ids: 0.24 against 0.19 s)
_LITERAL_KEYS = 100
_KEYS_TEXT = "(SELECT value FROM keys)"
_KEYS_NUMBERS = "(SELECT CAST(value AS BIGINT) FROM keys)"


def _literal_keys(sql: str, keys: list) -> str:
    """``sql`` with its table ``keys`` written as a list of literals when it is short: DuckDB then
    skips the row groups of a sorted file by them (a joined table is matched against every row:
    x40, 50 ids in the assertions look-up 51 -> 5 ms)."""
    if len(keys) > _LITERAL_KEYS or not all(type(k) is str and "\0" not in k for k in keys):
        return sql
    if _KEYS_NUMBERS in sql and all(k.lstrip("-").isdigit() for k in keys):
        return sql.replace(_KEYS_NUMBERS, "(" + (", ".join(keys) or "NULL") + ")")
    texts = ", ".join("'" + k.replace("'", "''") + "'" for k in keys) or "NULL"
    return sql.replace(_KEYS_TEXT, f"({texts})")
