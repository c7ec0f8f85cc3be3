"""Appending one version to a graph file: new rows, superseded rows kept in the history.

``VersionWriter`` writes inside one SQLite transaction on the graph file itself: a new
row carries ``since = version``; a row that changes or goes is first copied to its
``_history`` table with ``until = version`` (versions.py), so every earlier version
still reads as it was.  The version's statistics (meta.stats, per version) are kept up
to date row by row, and ``finish`` records the version.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3

from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.store.erase import erase_file
from polygraph_logic.graph.store.label_codec import decode_label, encode_label
from polygraph_logic.graph.store.stored_rules import fill_rule_atoms, rule_rows
from polygraph_logic.graph.store.rows import fact_key, key_value
from polygraph_logic.graph.store.versions import columns, count_label, ensure_ledger, latest, now


class VersionWriter:
    """Writes version ``latest + 1`` of an open graph file (call ``finish`` to record it)."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db
        stats = db.execute("SELECT value FROM meta WHERE key = 'stats'").fetchone()
        ensure_ledger(db, stats=stats[0] if stats else "{}")
        self.parent = latest(db)
        self.version = self.parent + 1
        self.stats = json.loads(stats[0]) if stats else {"assertions": 0, "sources": 0, "layers": {}}
        self._assertion_columns = columns(db, "assertions")
        self._next_assertion = db.execute(
            "SELECT MAX(n) FROM (SELECT MAX(num) AS n FROM assertions UNION ALL "
            "SELECT MAX(num) FROM assertions_history)").fetchone()[0] or 0

    # --- rows ------------------------------------------------------------------------
    def _retire(self, table: str, where: str, parameters: tuple) -> None:
        """Copies the matching rows to the table's history (until this version) and deletes them."""
        names = ", ".join(columns(self.db, table))  # by name: a column added later sits elsewhere in each
        self.db.execute(f"INSERT INTO {table}_history({names}, until) SELECT {names}, ? FROM {table} WHERE {where}",
                        (self.version, *parameters))
        self.db.execute(f"DELETE FROM {table} WHERE {where}", parameters)

    def assertion(self, assertion) -> int:
        """Adds an assertion; returns its number."""
        self._next_assertion += 1
        values = {**dataclasses.asdict(assertion), "num": self._next_assertion, "since": self.version,
                  "evidence": assertion.evidence.dumps() if assertion.evidence is not None else None}
        names = [c for c in self._assertion_columns if c in values]
        self.db.execute(f"INSERT INTO assertions({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                        [values[c] for c in names])
        return self._next_assertion

    def retire_assertion(self, num: int) -> None:
        self._retire("assertions", "num = ?", (num,))

    def fact(self, relation: str, args: tuple, groups: list[list[int]], exact: bool) -> tuple[int, bytes | None]:
        """Writes a fact's label at this version (a new row, or the old one kept in the history);
        returns its number and its label before (None for a new fact)."""
        blob = encode_label(groups)
        row = self.db.execute("SELECT num, label, exact FROM facts WHERE relation = ? AND args = ?",
                              (relation, fact_key(args))).fetchone()
        if row is None:
            keys = [key_value(v) for v in args[:3]] + [None] * (3 - min(len(args), 3))
            num = self.db.execute("INSERT INTO facts(relation, args, k0, k1, k2, label, exact, since) "
                                  "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                                  (relation, fact_key(args), *keys, blob, int(exact), self.version)).lastrowid
            self._mentions(num, set(), {n for g in groups for n in g})
            return num, None
        num, old, old_exact = row
        if old == blob and old_exact == int(exact):
            return num, old
        self.db.execute("INSERT INTO facts_history SELECT *, ? FROM facts WHERE num = ?", (self.version, num))
        self.db.execute("UPDATE facts SET label = ?, exact = ?, since = ? WHERE num = ?",
                        (blob, int(exact), self.version, num))
        self._mentions(num, {n for g in decode_label(old) for n in g}, {n for g in groups for n in g})
        self._restat(num, old, old_exact, blob, exact)
        return num, old

    def facts(self, changes: list[tuple]) -> dict[tuple[str, tuple], int]:
        """Writes many labels at once: ``(relation, args, groups, exact, old)`` with ``old`` the stored
        ``(num, label, exact)`` or None for a new fact; returns the numbers of the new facts."""
        version, db = self.version, self.db
        layers = dict(db.execute("SELECT fact, layer FROM artifacts"))
        updates, history, retired, mentioned, numbers = [], [], [], [], {}
        num = db.execute("SELECT MAX(n) FROM (SELECT MAX(num) AS n FROM facts UNION ALL "
                         "SELECT MAX(num) FROM facts_history)").fetchone()[0] or 0
        inserts = []
        for relation, args, groups, exact, old in changes:
            blob = encode_label(groups)
            after = {n for g in groups for n in g}
            if old is None:
                num += 1
                keys = [key_value(v) for v in args[:3]] + [None] * (3 - min(len(args), 3))
                inserts.append((num, relation, fact_key(args), *keys, blob, int(exact), version))
                mentioned.extend((n, num, version) for n in sorted(after))
                numbers[(relation, args)] = num
                continue
            fact, old_blob, old_exact = old
            history.append((version, fact))
            updates.append((blob, int(exact), version, fact))
            before = {n for g in decode_label(old_blob) for n in g}
            retired.extend((n, fact) for n in before - after)
            mentioned.extend((n, fact, version) for n in sorted(after - before))
            if fact in layers:
                self._count(layers[fact], old_blob, old_exact, -1)
                self._count(layers[fact], blob, exact, +1)
        db.executemany("INSERT INTO facts_history SELECT *, ? FROM facts WHERE num = ?", history)
        db.executemany("UPDATE facts SET label = ?, exact = ?, since = ? WHERE num = ?", updates)
        db.executemany("INSERT INTO facts(num, relation, args, k0, k1, k2, label, exact, since) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", inserts)
        db.executemany("INSERT INTO mentions_history SELECT *, ? FROM mentions WHERE assertion = ? AND fact = ?",
                       ((version, n, fact) for n, fact in retired))
        db.executemany("DELETE FROM mentions WHERE assertion = ? AND fact = ?", retired)
        db.executemany("INSERT INTO mentions(assertion, fact, since) VALUES (?, ?, ?)", mentioned)
        return numbers

    def _mentions(self, fact: int, before: set[int], after: set[int]) -> None:
        for n in before - after:
            self._retire("mentions", "assertion = ? AND fact = ?", (n, fact))
        self.db.executemany("INSERT INTO mentions(assertion, fact, since) VALUES (?, ?, ?)",
                            ((n, fact, self.version) for n in sorted(after - before)))

    def _restat(self, fact: int, old: bytes, old_exact, blob: bytes, exact: bool) -> None:
        row = self.db.execute("SELECT layer FROM artifacts WHERE fact = ?", (fact,)).fetchone()
        if row is not None:
            self._count(row[0], old, old_exact, -1)
            self._count(row[0], blob, exact, +1)

    def artifact(self, artifact_id: str, layer: str, content: dict, fact: int) -> None:
        """Adds an artifact (its fact written already)."""
        try:
            self.db.execute("INSERT INTO artifacts(id, layer, content, fact, since) VALUES (?, ?, ?, ?, ?)",
                            (artifact_id, layer, json.dumps(content, ensure_ascii=False), fact, self.version))
        except sqlite3.IntegrityError:
            raise PolygraphError("duplicate_artifact", f"artifact id {artifact_id!r} is already in the graph") from None
        blob, exact = self.db.execute("SELECT label, exact FROM facts WHERE num = ?", (fact,)).fetchone()
        self._count(layer, blob, exact, +1)

    def retire_artifact(self, artifact_id: str) -> None:
        row = self.db.execute("SELECT a.layer, f.label, f.exact FROM artifacts a JOIN facts f ON f.num = a.fact "
                              "WHERE a.id = ?", (artifact_id,)).fetchone()
        if row is not None:
            self._count(row[0], row[1], row[2], -1)
            self._retire("artifacts", "id = ?", (artifact_id,))

    def replace_content(self, artifact_id: str, content: dict) -> None:
        """Gives an artifact new content (a trimmed summary), the old row kept in the history."""
        fact, layer = self.db.execute("SELECT fact, layer FROM artifacts WHERE id = ?", (artifact_id,)).fetchone()
        self.retire_artifact(artifact_id)
        self.artifact(artifact_id, layer, content, fact)

    def prefetch(self, facts=(), artifacts=()) -> None:
        """Nothing to gather: a graph file finds each fact and artifact by its index
        (FolderVersionWriter reads many at once)."""

    def has_artifact(self, artifact_id: str) -> bool:
        return self.db.execute("SELECT 1 FROM artifacts WHERE id = ?", (artifact_id,)).fetchone() is not None

    def artifact_fact(self, artifact_id: str) -> int | None:
        """The number of the fact of the current artifact ``artifact_id`` (None: no such artifact)."""
        row = self.db.execute("SELECT fact FROM artifacts WHERE id = ?", (artifact_id,)).fetchone()
        return None if row is None else row[0]

    def fact_number(self, relation: str, args: tuple) -> int | None:
        row = self.db.execute("SELECT num FROM facts WHERE relation = ? AND args = ?", (relation, fact_key(args))).fetchone()
        return None if row is None else row[0]

    def has_fact(self, relation: str, args: tuple) -> bool:
        return self.db.execute("SELECT 1 FROM facts WHERE relation = ? AND args = ?",
                               (relation, fact_key(args))).fetchone() is not None

    def fact_rows(self) -> dict[tuple[str, str], tuple[int, bytes, int]]:
        """Returns {(relation, args key): (number, label, exact)} of every current fact."""
        return {(relation, args): (num, blob, exact) for num, relation, args, blob, exact in
                self.db.execute("SELECT num, relation, args, label, exact FROM facts")}

    def artifact_ids(self) -> set[str]:
        return {row[0] for row in self.db.execute("SELECT id FROM artifacts")}

    def assertion_numbers(self, among=None) -> dict[str, int]:
        """Returns {id: number} of every assertion, or of those of the ids ``among``."""
        if among is None:
            return {name: num for num, name in self.db.execute("SELECT num, id FROM assertions")}
        return {name: num for num, name in self.db.execute(
            "SELECT num, id FROM assertions WHERE id IN (SELECT value FROM json_each(?))", (json.dumps(sorted(set(among))),))}

    def rules(self, rules) -> None:
        """Adds rules (a ground rule's atoms to the look-up of a file that keeps one: stored_rules.py)."""
        indexed = self.db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'rule_atoms'").fetchone()
        if indexed is None:  # written before ground rules were kept by atom
            self.db.executemany("INSERT INTO rules(relation, c0, c1, c2, tree, since) VALUES (?, ?, ?, ?, ?, ?)",
                                (row[:5] + (self.version,) for row in rule_rows(rules)))
            return
        after = self.db.execute("SELECT coalesce(max(num), 0) FROM rules").fetchone()[0]
        self.db.executemany("INSERT INTO rules(relation, c0, c1, c2, tree, ground, since) VALUES (?, ?, ?, ?, ?, ?, ?)",
                            (row + (self.version,) for row in rule_rows(rules)))
        fill_rule_atoms(self.db, after)

    def link_summaries(self) -> None:
        """Points this version's sentences at their summaries (and such summaries at themselves)."""
        self.db.execute("UPDATE artifacts SET summary = (SELECT s.num FROM artifacts s WHERE s.layer = 'summary' "
                        "AND s.id = json_extract(artifacts.content, '$.summary')) "
                        "WHERE layer = 'sentence' AND since = ?", (self.version,))
        self.db.execute("UPDATE artifacts SET summary = num WHERE layer = 'summary' AND summary IS NULL "
                        "AND num IN (SELECT summary FROM artifacts WHERE layer = 'sentence')")

    def erase(self, assertions: list[int], facts: list[tuple[str, tuple]]) -> tuple[dict[int, str], int, int]:
        """Erases the content of these assertions and facts in every version (erase.py)."""
        return erase_file(self.db, self.version, assertions, facts)

    # --- statistics and the record -------------------------------------------------------
    def _count(self, layer: str, blob: bytes, exact, sign: int) -> None:
        count_label(self.stats, layer, blob, exact, sign)

    def finish(self, action: str, command: str, record: dict) -> int:
        """Records the version (statistics, meta.stats of the latest version) and returns its number."""
        self.stats["assertions"] = self.db.execute("SELECT COUNT(*) FROM assertions").fetchone()[0]
        self.stats["sources"] = self.db.execute("SELECT COUNT(DISTINCT source) FROM assertions").fetchone()[0]
        self.stats["layers"] = {k: v for k, v in self.stats["layers"].items() if v["artifacts"]}
        stats = json.dumps(self.stats)
        self.db.execute("INSERT INTO versions VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (self.version, now(), command, action, json.dumps(record, sort_keys=True), self.parent, stats))
        self.db.execute("INSERT OR REPLACE INTO meta VALUES ('stats', ?)", (stats,))
        return self.version
