"""Appending one version to a graph folder: the rows it writes and retires, in files beside the build.

``FolderVersionWriter`` has VersionWriter's interface (version_write.py), so that ``add`` and an
applied deletion write a folder as they write a graph file.  It reads the folder at its latest
version (FolderDB, each row tagged with the version that wrote it), keeps what the version
writes in memory, and ``finish`` writes it as ``versions/N/`` (folder_versions.py): one Parquet
file per table, ``retired.parquet`` and ``version.json``, in a hidden folder renamed into place
once complete (a purge's also holds the earlier versions' files it rewrote: folder_erase.py).
Numbers are given as a graph file gives them (a new assertion, fact or rule after every number
used; a new artifact after the greatest current one), so that a folder and a file grown by the
same commands number their rows alike.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path
from typing import Callable

from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.store.folder import FolderDB
from polygraph_logic.graph.store.chain import record_folder
from polygraph_logic.graph.store.folder_layout import FILES, ORDER, bad_folder, duckdb_connection, folder_rule_rows, \
    parquet_options, quoted, table_path
from polygraph_logic.graph.store.folder_version_reads import FolderVersionReads, _Fact, _V
from polygraph_logic.graph.store.folder_erase import erase_version
from polygraph_logic.graph.store.folder_versions import RECORD, RETIRED, STAGED, VERSIONS, clear_stale, settle, \
    version_folder
from polygraph_logic.graph.store.label_codec import encode_label
from polygraph_logic.graph.store.label_kills import KillChanges, changed_kills, kills_path, write_kills
from polygraph_logic.graph.store.rows import fact_key
from polygraph_logic.graph.store.versions import count_label, now


class FolderVersionWriter(FolderVersionReads):
    """Writes version ``latest + 1`` of a graph folder (call ``finish`` to write and record it)."""

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        self.db = FolderDB(self.directory, tagged=True)
        self.con = self.db.con  # queried through cursors of its own (_all)
        if "rules" not in {row[0] for row in self._all("SELECT view_name FROM duckdb_views()")}:
            self.db.close()
            raise bad_folder(self.directory, "its rules file predates rule heads, so versions cannot be added")
        self.parent = self.db.version
        self.version = self.parent + 1
        self.stats = json.loads(self.db.meta.get("stats") or '{"assertions": 0, "sources": 0, "layers": {}}')
        self.columns = {name: self._columns(name) for name in FILES}
        # what this version writes, by number, in the order written
        self.new_assertions: dict[int, dict] = {}
        self.new_facts: dict[int, list] = {}  # num -> [relation, args key, groups, exact]
        self.fact_numbers: dict[tuple[str, str], int] = {}  # (relation, args key) -> num, of self.new_facts
        self.new_artifacts: dict[int, list] = {}  # num -> [id, layer, content, fact, summary]
        self.artifact_numbers: dict[str, int] = {}
        self.rule_rows: list[tuple] = []
        # what it retires: (table, number, version that wrote it)
        self.retired: list[tuple[str, int, int]] = []
        self.retired_assertions: set[int] = set()
        self.retired_artifacts: dict[str, tuple] = {}  # id -> (num, layer, fact, label before, exact before)
        self.labels_before: dict[int, tuple[list, bool]] = {}  # stored facts this version changed
        self._stored_facts: dict[tuple[str, str], _Fact | None] = {}
        self._stored_artifacts: dict[str, tuple | None] = {}
        self._artifact_max: int | None = None
        self._next_assertion = self._max("assertions")
        self._next_fact = self._max("facts")
        self._next_rule = self._max("rules")

    # --- rows ------------------------------------------------------------------------
    def assertion(self, assertion) -> int:
        """Adds an assertion; returns its number."""
        self._next_assertion += 1
        evidence = assertion.evidence.dumps() if assertion.evidence is not None else None
        self.new_assertions[self._next_assertion] = {**dataclasses.asdict(assertion), "num": self._next_assertion,
                                                     "evidence": evidence, "since": self.version}
        return self._next_assertion

    def retire_assertion(self, num: int) -> None:
        if self.new_assertions.pop(num, None) is None:
            self.retired_assertions.add(num)

    def fact(self, relation: str, args: tuple, groups: list[list[int]], exact: bool) -> tuple[int, bytes | None]:
        """Writes a fact's label at this version; returns its number and its label before (None for
        a new fact)."""
        key = fact_key(args)
        groups = [sorted(g) for g in groups]
        num = self.fact_numbers.get((relation, key))
        if num is not None:  # written by this version already
            row = self.new_facts[num]
            before = encode_label(row[2])
            row[2], row[3] = groups, bool(exact)
            return num, before
        stored = self._stored_fact(relation, key)
        if stored is None:
            self._next_fact += 1
            num = self._next_fact
            self.new_facts[num] = [relation, key, groups, bool(exact)]
            self.fact_numbers[(relation, key)] = num
            return num, None
        num, old, old_exact, since = stored
        if old == groups and old_exact == bool(exact):
            return num, encode_label(old)
        self.retired.append(("facts", num, since))
        self.labels_before[num] = (old, old_exact)
        self.new_facts[num] = [relation, key, groups, bool(exact)]
        self.fact_numbers[(relation, key)] = num
        return num, encode_label(old)

    def facts(self, changes: list[tuple]) -> dict[tuple[str, tuple], int]:
        """VersionWriter.facts: ``(relation, args, groups, exact, old)``; returns the new facts' numbers."""
        numbers = {}
        self.prefetch(facts=[(relation, args) for relation, args, *_ in changes])
        for relation, args, groups, exact, old in changes:
            num, before = self.fact(relation, args, groups, exact)
            if before is None:
                numbers[(relation, args)] = num
        return numbers

    def artifact(self, artifact_id: str, layer: str, content: dict, fact: int) -> None:
        """Adds an artifact (its fact written already)."""
        if artifact_id in self.artifact_numbers or self._stored_artifacts.get(artifact_id) is not None \
                and artifact_id not in self.retired_artifacts:  # a stored one unknown here: checked by finish
            raise _duplicate(artifact_id)
        num = self._greatest_artifact() + 1
        self._artifact_max = num
        self.new_artifacts[num] = [artifact_id, layer, json.dumps(content, ensure_ascii=False), fact, None]
        self.artifact_numbers[artifact_id] = num

    def _greatest_artifact(self) -> int:
        """The greatest number of a current artifact (a graph file numbers a new row after it)."""
        if self._artifact_max is None:
            gone = [row[0] for row in self.retired_artifacts.values()]
            where = f" WHERE num NOT IN ({', '.join(map(str, gone))})" if gone else ""
            stored = self._one(f"SELECT max(num) FROM artifacts{where}")[0] or 0
            self._artifact_max = max([stored, *self.new_artifacts])
        return self._artifact_max

    def retire_artifact(self, artifact_id: str) -> None:
        num = self.artifact_numbers.pop(artifact_id, None)
        if num is not None:  # written by this version: unwritten
            del self.new_artifacts[num]
        else:
            row = self._stored_artifact(artifact_id)
            if row is None:
                return
            num, layer, fact, since, label, exact = row
            self.retired.append(("artifacts", num, since))
            self.retired_artifacts[artifact_id] = (num, layer, fact, label, exact)
        if num == self._artifact_max:
            self._artifact_max = None

    def replace_content(self, artifact_id: str, content: dict) -> None:
        """Gives an artifact new content (a trimmed summary), the old row retired."""
        if artifact_id in self.artifact_numbers:
            _, layer, _, fact, _ = self.new_artifacts[self.artifact_numbers[artifact_id]]
        else:
            _, layer, fact, *_ = self._stored_artifact(artifact_id)
        self.retire_artifact(artifact_id)
        self.artifact(artifact_id, layer, content, fact)

    def has_artifact(self, artifact_id: str) -> bool:
        return artifact_id in self.artifact_numbers or self._stored_artifact(artifact_id) is not None

    def artifact_fact(self, artifact_id: str) -> int | None:
        """VersionWriter.artifact_fact: the number of the fact of the current artifact ``artifact_id``."""
        if artifact_id in self.artifact_numbers:
            return self.new_artifacts[self.artifact_numbers[artifact_id]][3]
        row = self._stored_artifact(artifact_id)
        return None if row is None else row[2]

    def fact_number(self, relation: str, args: tuple) -> int | None:
        key = fact_key(args)
        if (relation, key) in self.fact_numbers:
            return self.fact_numbers[(relation, key)]
        row = self._stored_fact(relation, key)
        return None if row is None else row[0]

    def has_fact(self, relation: str, args: tuple) -> bool:
        key = fact_key(args)
        return (relation, key) in self.fact_numbers or self._stored_fact(relation, key) is not None

    def fact_rows(self) -> dict[tuple[str, str], tuple[int, bytes, int]]:
        """Returns {(relation, args key): (number, label, exact)} of every current fact."""
        rows = {(relation, args): (num, encode_label(json.loads(label)), int(exact)) for num, relation, args, label, exact
                in self._all("SELECT num, relation, args, CAST(label AS VARCHAR), exact FROM facts")}
        rows.update(((relation, key), (num, encode_label(groups), int(exact)))
                    for num, (relation, key, groups, exact) in self.new_facts.items())
        return rows

    def artifact_ids(self) -> set[str]:
        stored = {row[0] for row in self._all("SELECT id FROM artifacts")}
        return (stored - self.retired_artifacts.keys()) | self.artifact_numbers.keys()

    def assertion_numbers(self, among=None) -> dict[str, int]:
        rows = self._all("SELECT num, id FROM assertions") if among is None else \
            self._rows(f"SELECT num, id FROM {'assertions_by_id' if 'assertions_by_id' in self.db.indexes else 'assertions'} "
                       "WHERE id IN (SELECT value FROM keys)", sorted(set(among)))
        numbers = {name: num for num, name in rows if num not in self.retired_assertions}
        numbers.update((row["id"], num) for num, row in self.new_assertions.items())
        return numbers

    def erase(self, assertions: list[int], facts: list[tuple[str, tuple]]) -> tuple[dict[int, str], int, int]:
        """Erases the content of these assertions and facts in every version (folder_erase.py): the
        earlier versions' files rewritten into this version's hidden folder, moved into place by ``finish``."""
        return erase_version(self, self._partial() / STAGED, assertions, facts)

    def _partial(self) -> Path:
        """The hidden folder this version is written in before its rename."""
        return self.directory / VERSIONS / f".{self.version}.partial-{os.getpid()}"

    def rules(self, rules) -> None:
        rows = list(folder_rule_rows(rules, self._next_rule + 1))
        self.rule_rows.extend(rows)
        self._next_rule += len(rows)

    def link_summaries(self) -> None:
        """Points this version's sentences at their summaries (and such summaries at themselves)."""
        summaries = {row[0]: num for num, row in self.new_artifacts.items() if row[1] == "summary"}
        wanted = {json.loads(row[2]).get("summary") for row in self.new_artifacts.values() if row[1] == "sentence"}
        stored = {id_: (num, summary, since, fact) for id_, num, summary, since, fact in self._rows(
            f"SELECT id, num, summary, {_V}, fact FROM artifacts WHERE layer = 'summary' AND id IN (SELECT value FROM keys)",
            sorted(w for w in wanted - summaries.keys() if isinstance(w, str)))}
        linked = set()
        for row in self.new_artifacts.values():
            if row[1] == "sentence":
                name = json.loads(row[2]).get("summary")
                row[4] = summaries.get(name, stored.get(name, (None,))[0])
                linked.add(row[4])
        for num, row in self.new_artifacts.items():
            if row[1] == "summary" and row[4] is None and num in linked:
                row[4] = num
        before = self._labels_before([fact for _, (num, summary, _, fact) in stored.items()
                                      if summary is None and num in linked])
        for id_, (num, summary, since, fact) in stored.items():
            if summary is None and num in linked and id_ not in self.retired_artifacts:
                # a stored summary now pointed at: its row written again, pointing at itself
                content = self._one("SELECT content FROM artifacts WHERE num = ?", (num,))[0]
                self.retired.append(("artifacts", num, since))
                self.retired_artifacts[id_] = (num, "summary", fact, *before[fact])
                self.new_artifacts[num] = [id_, "summary", content, fact, num]
                self.artifact_numbers[id_] = num

    # --- statistics, files and the record ------------------------------------------------
    def _statistics(self) -> dict:
        """The statistics of this version: the parent's, less the artifacts it retired (as they
        were) and the old labels of those that stay, plus what it wrote (count_label, as a graph
        file counts them)."""
        stats = json.loads(json.dumps(self.stats))
        kills = self.kill_changes = KillChanges()
        for num, layer, fact, label, exact in self.retired_artifacts.values():
            count_label(stats, layer, encode_label(label), exact, -1)
            kills.count(label, -1)
        gone = {row[0] for row in self.retired_artifacts.values()}
        staying = [(num, layer, fact) for num, layer, fact in self._rows(
            "SELECT num, layer, fact FROM artifacts WHERE fact IN (SELECT CAST(value AS BIGINT) FROM keys)",
            sorted(str(n) for n in self.labels_before)) if num not in gone]
        labels = self._labels({fact for *_, fact in staying} | {row[3] for row in self.new_artifacts.values()})
        for num, layer, fact in staying:
            old, old_exact = self.labels_before[fact]
            count_label(stats, layer, encode_label(old), old_exact, -1)
            count_label(stats, layer, encode_label(labels[fact][0]), labels[fact][1], +1)
            kills.count(old, -1)
            kills.count(labels[fact][0], +1)
        for _, layer, _, fact, _ in self.new_artifacts.values():
            count_label(stats, layer, encode_label(labels[fact][0]), labels[fact][1], +1)
            kills.count(labels[fact][0], +1)
        kept = f" WHERE num NOT IN ({', '.join(map(str, self.retired_assertions))})" \
            if self.retired_assertions else ""
        count, = self._one(f"SELECT count(*) FROM assertions{kept}")
        new_sources = {row["source"] for row in self.new_assertions.values()}
        if kept or not self.db.meta.get("stats"):  # sources may have gone: counted again
            sources = len({row[0] for row in self._all(f"SELECT DISTINCT source FROM assertions{kept}")} | new_sources)
        else:  # the parent's count and the new sources it did not have (x400: 0.2 s -> a look-up)
            table = "assertions_by_source" if "assertions_by_source" in self.db.indexes else "assertions"
            known = self._rows(f"SELECT DISTINCT source FROM {table} WHERE source IN (SELECT value FROM keys)",
                               sorted(new_sources))
            sources = self.stats["sources"] + len(new_sources) - len(known)
        stats["assertions"], stats["sources"] = count + len(self.new_assertions), sources
        stats["layers"] = {k: v for k, v in stats["layers"].items() if v["artifacts"]}
        return stats

    def _check_new_ids(self) -> None:
        """A new artifact whose id a stored one (not retired) has already is a duplicate_artifact error."""
        ids = [i for i in self.artifact_numbers if i not in self.retired_artifacts]
        table = "artifacts_by_id" if "artifacts_by_id" in self.db.indexes else "artifacts"
        for (found,) in self._rows(f"SELECT id FROM {table} WHERE id IN (SELECT value FROM keys) ORDER BY id", ids):
            raise _duplicate(found)

    def _retirements(self) -> list[tuple[str, int, int]]:
        rows = list(self.retired)
        if self.retired_assertions:
            rows.extend(("assertions", num, since) for num, since in self._all(
                f"SELECT num, {_V} FROM assertions WHERE num IN ({', '.join(map(str, self.retired_assertions))})"))
        return rows

    def _table_rows(self) -> dict[str, list[tuple]]:
        mentions = [(n, num, i) for num, (_, _, groups, _) in self.new_facts.items()
                    for i, group in enumerate(groups) for n in group]
        return {
            "assertions": [tuple(row.get(name) for name, _ in self.columns["assertions"])
                           for row in self.new_assertions.values()],
            "facts": [(num, relation, key, groups, exact, len(groups))
                      for num, (relation, key, groups, exact) in self.new_facts.items()],
            "mentions": mentions,
            "artifacts": [(num, *row) for num, row in self.new_artifacts.items()],
            "rules": self.rule_rows,
        }

    def finish(self, action: str, command: str, record: dict,
               complete: Callable[[Path, int], None] | None = None) -> int:
        """Writes the version's files and record in a hidden folder renamed into place; returns its
        number.  ``complete(folder, version)`` adds what is committed with them (its circuit) to
        the hidden folder before the rename."""
        self._check_new_ids()
        stats = self._statistics()
        retired = self._retirements()
        root, partial = self.directory / VERSIONS, self._partial()
        root.mkdir(exist_ok=True)
        clear_stale(root)
        if not (partial / STAGED).is_dir():  # else it holds the files a purge rewrote (erase)
            shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(exist_ok=True)
        con = duckdb_connection()
        try:
            columns = {**self.columns, RETIRED: [("tbl", "VARCHAR"), ("num", "BIGINT"), ("since", "INTEGER")]}
            for name, rows in {**self._table_rows(), RETIRED: retired}.items():
                _write_table(con, partial, name, columns[name], rows)
            # as versions.version_rows gives a graph file's row (its record's keys sorted)
            row = {"version": self.version, "time": now(), "command": command, "action": action,
                   "parent": self.parent, "record": json.loads(json.dumps(record, sort_keys=True)), "stats": stats}
            (partial / RECORD).write_text(json.dumps(row, ensure_ascii=False), encoding="utf-8")
            self._write_kills(con, partial)
            if complete is not None:
                complete(partial, self.version)
            record_folder(self.directory, self.version, written=partial)  # its link of the hash chain
            try:
                partial.rename(version_folder(self.directory, self.version))
            except OSError:
                raise PolygraphError("concurrent_write", f"{self.directory}: version {self.version} was written "
                                                         "by another command meanwhile; run this one again") from None
        finally:
            con.close()
            shutil.rmtree(partial, ignore_errors=True)
        self.stats = stats
        settle(self.directory)  # a purge's rewritten files moved into place (a reader finishes it if killed)
        return self.version

    def _write_kills(self, con, partial: Path) -> None:
        """Writes this version's counts of what each source kills (label_kills.py): its parent's,
        changed as _statistics found; none where the parent has none (they are counted when asked)."""
        parent = kills_path(self.directory, self.parent)
        if not parent.is_file():
            return
        numbers = self.kill_changes.numbers()
        source_of = {num: row["source"] for num, row in self.new_assertions.items() if num in numbers}
        source_of.update(self._rows("SELECT num, source FROM assertions WHERE num IN (SELECT CAST(value AS BIGINT) "
                                    "FROM keys)", sorted(str(n) for n in numbers - source_of.keys())))
        if numbers - source_of.keys():  # a label citing an assertion the folder lacks: left to the query
            return
        changes = self.kill_changes.changes(source_of)  # the parent's counts are changed in SQL: x400 has 120 k
        write_kills(con, partial / parent.name, changed_kills(con, parent, changes))

    def close(self) -> None:
        self.db.close()
        if self._partial().exists():  # a version not finished, whose purge had written files
            shutil.rmtree(self._partial(), ignore_errors=True)


def _duplicate(artifact_id: str) -> PolygraphError:
    return PolygraphError("duplicate_artifact", f"artifact id {artifact_id!r} is already in the graph")


def _write_table(con, directory: Path, name: str, columns: list[tuple[str, str]], rows: list[tuple]) -> None:
    """Writes ``rows`` (tuples in ``columns``' order) as ``directory/name.parquet``, sorted as the
    build's file is (ORDER), with the build's column types."""
    con.execute(f"CREATE TABLE {name} ({', '.join(f'{c} {t}' for c, t in columns)})")
    if rows:
        import numpy as np  # DuckDB's own dependency for registered columns
        batch = {c: np.fromiter((row[i] for row in rows), dtype=object, count=len(rows))
                 for i, (c, _) in enumerate(columns)}
        con.register("batch", batch)
        con.execute(f"INSERT INTO {name} SELECT {', '.join(f'CAST({c} AS {t})' for c, t in columns)} FROM batch")
        con.unregister("batch")
    order = ORDER.get(name, "tbl, num")
    con.execute(f"COPY (SELECT * FROM {name} ORDER BY {order}) TO '{quoted(table_path(directory, name))}' ({parquet_options(name)})")
