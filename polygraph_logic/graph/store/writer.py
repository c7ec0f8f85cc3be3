"""Writing a graph file: streamed, indexed, atomic.

Rows go to a temporary file in one pass over the inputs (assertions, then facts,
then artifacts), in batches of ``_BATCH`` rows (``executemany``), so memory holds the
assertion numbering, one batch and a bounded cache of encoded labels, not the graph.
Mentions go to a staging table in arrival order and into ``mentions`` sorted once at
the end (a sorted bulk load, not millions of inserts scattered over its B-tree).
Indexes are built once the rows are in, and the file replaces the target only when
complete: an interrupted build leaves any previous graph intact.
"""

from __future__ import annotations

import json
import sqlite3
from json.encoder import encode_basestring  # the escaping json.dumps(..., ensure_ascii=False) uses
from collections import Counter
from itertools import repeat
from pathlib import Path
from typing import Callable, Iterable, Sequence

from polygraph_logic.errors import PolygraphError
from polygraph_logic.files import replacing
from polygraph_logic.graph.assertions import Assertion
from polygraph_logic.graph.store.label_codec import encode_label
from polygraph_logic.graph.store.chain import record_file
from polygraph_logic.graph.store.stored_rules import FILE_RULE_ATOMS, fill_rule_atoms, rule_rows
from polygraph_logic.graph.store.rows import FORMAT, Artifact, StoredFact, key_value
from polygraph_logic.graph.store.table_schema import FILE_TABLES
from polygraph_logic.graph.store.versions import ensure_ledger, first_version

_TABLES = FILE_TABLES

# built after the rows are in (faster than maintaining them row by row)
_FACT_KEY_INDEX = "CREATE UNIQUE INDEX facts_by_args ON facts(relation, args);"
_INDEXES = """
CREATE INDEX assertions_by_source ON assertions(source);
CREATE INDEX assertions_by_predicate ON assertions(predicate);
CREATE INDEX assertions_by_triple ON assertions(subject, predicate, object);
CREATE INDEX assertions_by_kind ON assertions(kind);
CREATE INDEX facts_by_k0 ON facts(relation, k0, k1, k2);
CREATE INDEX facts_by_k1 ON facts(relation, k1, k2);
CREATE INDEX facts_by_k2 ON facts(relation, k2, k0);
CREATE INDEX artifacts_by_summary ON artifacts(summary) WHERE summary IS NOT NULL;
CREATE INDEX artifacts_by_layer ON artifacts(layer);
CREATE INDEX rules_by_c0 ON rules(relation, c0);
CREATE INDEX rules_by_c1 ON rules(relation, c1);
"""

# a sentence points at its summary, and a summary with sentences at itself
_LINK_SUMMARIES = """
UPDATE artifacts SET summary = (SELECT s.num FROM artifacts s
    WHERE s.id = json_extract(artifacts.content, '$.summary') AND s.layer = 'summary')
    WHERE layer = 'sentence';
UPDATE artifacts SET summary = num
    WHERE layer = 'summary' AND num IN (SELECT summary FROM artifacts WHERE layer = 'sentence');
"""

#: rows per executemany batch, and distinct labels kept encoded (memory stays bounded)
_BATCH = 20_000
_LABEL_CACHE = 400_000
#: SQLite page cache while writing (KiB): index builds and the sorted mention load stay in memory
_CACHE_KIB = 64 * 1024
_PRAGMAS = (f"PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -{_CACHE_KIB}; "
            "PRAGMA locking_mode = EXCLUSIVE;")
#: mentions in arrival order, sorted into ``mentions`` once (the TEMP schema is not part of the file)
_STAGING = "CREATE TEMP TABLE staged_mentions(assertion INTEGER NOT NULL, fact INTEGER NOT NULL);"
_MENTIONS = "INSERT INTO mentions SELECT assertion, fact FROM temp.staged_mentions ORDER BY assertion, fact;"

_json = json.JSONEncoder(ensure_ascii=False).encode  # what json.dumps(x, ensure_ascii=False) returns
_PAD = ((None, None, None), (None, None), (None,), ())


def write_graph(path: str | Path, assertions: Iterable[Assertion], artifacts: Iterable[Artifact],
                meta: dict[str, str], facts: Iterable[StoredFact] = (), rules: str | Sequence = "",
                progress: Callable[[str, int], None] | None = None, version: dict | None = None,
                finish: Callable[[Path], object] | None = None) -> None:
    """Writes a graph file atomically: the old file survives any failure midway.

    ``facts`` are every fact of the evaluated program and ``rules`` its rules (text or
    syntax trees), so that later re-derivation needs neither the inputs nor the rule
    files.  An artifact whose fact is not among ``facts`` gets one with its label.
    ``progress(stage, rows)`` is called now and then.  A ``meta`` value may be a callable,
    called once the rows are written (for counts known only then).  ``version`` describes
    version 1 for the history (versions.py): what was built from, by which command.
    ``finish(path)`` is called on the written file before it takes the place of ``path``
    (graph/circuit_build.store_circuit: the circuit of its capped labels).
    """
    text, rules = _rules(rules)
    with replacing(path, ".partial") as temporary:
        db = sqlite3.connect(temporary)
        try:
            db.executescript(_PRAGMAS + _TABLES + _STAGING)
            writer = _Writer(db, progress)
            writer.assertions(assertions)
            writer.facts(facts)
            writer.index_facts()
            writer.artifacts(artifacts)
            writer.mentions()
            db.executemany("INSERT INTO rules(relation, c0, c1, c2, tree, ground) VALUES (?, ?, ?, ?, ?, ?)",
                           rule_rows(rules))
            db.executescript(FILE_RULE_ATOMS)
            fill_rule_atoms(db)
            db.executescript(_INDEXES + _LINK_SUMMARIES + "ANALYZE main;")
            stats = writer.stats()
            rows = [("format", FORMAT), ("rules", text), ("stats", json.dumps(stats)),
                    *((k, v() if callable(v) else v) for k, v in meta.items()
                      if k not in ("format", "rules", "rules_tree", "stats"))]
            db.executemany("INSERT INTO meta VALUES (?, ?)", rows)
            ensure_ledger(db, first_version(meta, version), json.dumps(stats))
            record_file(db, 1)  # the first link of the hash chain (chain.py)
            db.commit()
        finally:
            db.close()
        if finish is not None:
            finish(temporary)


def _rules(rules: str | Sequence) -> tuple[str, list]:
    """Returns the rules as text and as syntax trees (parsing text once, at write time)."""
    if isinstance(rules, str):
        if not rules.strip():
            return rules, []
        from polygraph_logic.datalog.program import parse_program  # start-up time: the parser only for rule text
        return rules, parse_program(rules, "(stored rules)").rules
    rules = list(rules)
    return "\n".join(str(rule) for rule in rules), rules


def json_text(value) -> str:
    """Returns ``json.dumps(value, ensure_ascii=False)``; a list or tuple of strings and a flat dict
    of strings (fact arguments, a claim's content) without building an encoder."""
    kind = type(value)
    if kind is list or kind is tuple:
        for v in value:
            if type(v) is not str:
                return _json(value)
        return "[" + ", ".join(map(encode_basestring, value)) + "]"
    if kind is dict:
        for k, v in value.items():
            if type(k) is not str or type(v) is not str:
                return _json(value)
        return "{" + ", ".join([f"{encode_basestring(k)}: {encode_basestring(v)}" for k, v in value.items()]) + "}"
    return _json(value)


def _keys(args: tuple) -> tuple:
    """The ``k0..k2`` columns of a fact (see store.key_value: only an integer may change)."""
    keys = args[:3]
    for v in keys:
        if isinstance(v, int):
            keys = tuple(map(key_value, keys))
            break
    return keys + _PAD[len(keys)]


class _Writer:
    """Numbers assertions, writes facts with their mentions, and artifacts linked to facts."""

    def __init__(self, db: sqlite3.Connection, progress):
        self.db = db
        self.progress = progress or (lambda stage, rows: None)
        self.number: dict[str, int] = {}
        self.layers: dict[str, dict] = {}
        self.labels: dict = {}  # support sets (ids) -> (blob, numbers mentioned, number of sets)
        self.last_fact = 0
        self.written = 0  # artifacts
        self.staged: list[tuple[int, int]] = []  # mentions not yet in the staging table
        self.relabelled: dict[int, list[int]] = {}  # fact -> its mentions, when an artifact relabels it

    def assertions(self, assertions: Iterable[Assertion]) -> None:
        def rows():
            for num, a in enumerate(assertions, 1):
                if a.id in self.number:
                    raise PolygraphError("duplicate_assertion", f"assertion id {a.id!r} occurs twice")
                self.number[a.id] = num
                yield (num, a.id, a.source, a.subject, a.predicate, a.object, a.text, a.kind, int(a.negated),
                       a.evidence.dumps() if a.evidence is not None else None)
        self.db.executemany("INSERT INTO assertions(num, id, source, subject, predicate, object, text, kind, "
                            "negated, evidence) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows())
        self.progress("assertions", len(self.number))

    def _label(self, support, what) -> tuple[bytes, list[int], int]:
        """Returns a label's blob, the assertion numbers it mentions and its number of support
        sets, encoding each distinct label once (while the cache holds it)."""
        try:
            return self.labels[support]
        except KeyError:
            pass
        except TypeError:  # support sets given as lists: not hashable, not cached
            return self._encode(support, what)
        found = self._encode(support, what)
        if len(self.labels) >= _LABEL_CACHE:
            self.labels.clear()
        self.labels[support] = found
        return found

    def _encode(self, support, what) -> tuple[bytes, list[int], int]:
        number = self.number
        try:
            groups = [[number[a] for a in group] for group in support]
        except KeyError as missing:
            raise PolygraphError("unknown_assertion", f"the label of {what()} cites assertion {missing.args[0]!r}, "
                                                      "which is not among the graph's assertions") from None
        return encode_label(groups), sorted({n for g in groups for n in g}), len(groups)

    def _mention(self, fact: int, numbers: list[int]) -> None:
        staged = self.staged
        staged.extend(zip(numbers, repeat(fact)))
        if len(staged) >= _BATCH:
            self.db.executemany("INSERT INTO temp.staged_mentions VALUES (?, ?)", staged)
            staged.clear()

    def facts(self, facts: Iterable[StoredFact]) -> None:
        insert = "INSERT INTO facts(num, relation, args, k0, k1, k2, label, exact) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        rows = []
        num = self.last_fact
        for fact in facts:
            num += 1
            relation, args = fact.relation, tuple(fact.args)
            blob, numbers, _ = self._label(fact.support, lambda: f"fact {relation}")
            rows.append((num, relation, json_text(args), *_keys(args), blob, int(fact.exact)))
            self._mention(num, numbers)
            if len(rows) >= _BATCH:
                self.db.executemany(insert, rows)
                rows.clear()
                if num % 100_000 < _BATCH:
                    self.progress("facts", num)
        self.db.executemany(insert, rows)
        self.last_fact = num
        self.progress("facts", num)

    def index_facts(self) -> None:
        """Indexes facts by (relation, args), their key; a fact given twice is duplicate_fact."""
        try:
            self.db.execute(_FACT_KEY_INDEX)
        except sqlite3.IntegrityError:
            relation, args = self.db.execute("SELECT relation, args FROM facts GROUP BY relation, args "
                                             "HAVING COUNT(*) > 1 LIMIT 1").fetchone()
            raise PolygraphError("duplicate_fact", f"fact {relation}{tuple(json.loads(args))} occurs twice") from None

    def artifacts(self, artifacts: Iterable[Artifact]) -> None:
        db, rows, count = self.db, [], 0
        find, cursor = "SELECT num, label, exact FROM facts WHERE relation = ? AND args = ?", self.db.cursor()
        for count, artifact in enumerate(artifacts, 1):
            relation, args = artifact.fact
            args = tuple(args)
            exact = int(artifact.exact)
            blob, numbers, sets = self._label(artifact.support, lambda: f"artifact {artifact.id!r}")
            key = json_text(args)
            row = cursor.execute(find, (relation, key)).fetchone()
            if row is None:
                fact = self.last_fact = self.last_fact + 1
                try:
                    db.execute("INSERT INTO facts(num, relation, args, k0, k1, k2, label, exact) "
                               "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (fact, relation, key, *_keys(args), blob, exact))
                except sqlite3.IntegrityError:
                    raise PolygraphError("duplicate_fact", f"fact {relation}{args} occurs twice") from None
                self._mention(fact, numbers)
            else:
                fact = row[0]
                if row[1] != blob or row[2] != exact:  # e.g. a summary trimmed by apply
                    db.execute("UPDATE facts SET label = ?, exact = ? WHERE num = ?", (blob, exact, fact))
                    self.relabelled[fact] = numbers
            rows.append((artifact.id, artifact.layer, json_text(artifact.content), fact))
            if len(rows) >= _BATCH:
                self._insert_artifacts(rows)
            entry = self.layers.get(artifact.layer)
            if entry is None:
                entry = self.layers[artifact.layer] = {"artifacts": 0, "inexact": 0, "label_bytes": 0,
                                                       "support_sets": Counter()}
            entry["artifacts"] += 1
            entry["inexact"] += not exact
            entry["label_bytes"] += len(blob)
            entry["support_sets"][sets] += 1
            if count % 100_000 == 0:
                self.progress("artifacts", count)
        self._insert_artifacts(rows)
        self.progress("artifacts", count)

    def _insert_artifacts(self, rows: list[tuple]) -> None:
        before = self.written
        try:
            self.db.executemany("INSERT INTO artifacts(num, id, layer, content, fact) VALUES (?, ?, ?, ?, ?)",
                                ((before + i, *row) for i, row in enumerate(rows, 1)))
        except sqlite3.IntegrityError:
            failed = self.db.execute("SELECT COUNT(*) FROM artifacts").fetchone()[0] - before
            raise PolygraphError("duplicate_artifact", f"artifact id {rows[failed][0]!r} is given twice (or names "
                                                       "the fact of another artifact); artifact ids must be "
                                                       "unique across layers") from None
        self.written += len(rows)
        rows.clear()

    def mentions(self) -> None:
        """Moves the staged mentions into ``mentions``, sorted (a relabelled fact's replaced)."""
        db = self.db
        if self.relabelled:
            db.execute("CREATE TEMP TABLE relabelled(fact INTEGER PRIMARY KEY)")
            db.executemany("INSERT INTO temp.relabelled VALUES (?)", ((fact,) for fact in self.relabelled))
            db.executemany("INSERT INTO temp.staged_mentions VALUES (?, ?)", self.staged)
            self.staged.clear()
            db.execute("DELETE FROM temp.staged_mentions WHERE fact IN (SELECT fact FROM temp.relabelled)")
            for fact, numbers in self.relabelled.items():
                self._mention(fact, numbers)
        db.executemany("INSERT INTO temp.staged_mentions VALUES (?, ?)", self.staged)
        self.staged.clear()
        db.execute(_MENTIONS)
        db.execute("DROP TABLE temp.staged_mentions")

    def stats(self) -> dict:
        sources = self.db.execute("SELECT COUNT(DISTINCT source) FROM assertions").fetchone()[0]
        layers = {layer: {**entry, "support_sets": dict(sorted(entry["support_sets"].items()))}
                  for layer, entry in self.layers.items()}
        return {"assertions": len(self.number), "sources": sources, "layers": layers}
