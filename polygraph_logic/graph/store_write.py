"""Writing a graph file: streamed, indexed, atomic.

Rows go to a temporary file in one pass over the inputs (assertions, then facts,
then artifacts), so memory holds the assertion numbering and one row at a time, not
the graph.  Indexes are built once the rows are in, and the file replaces the target
only when complete: an interrupted build leaves any previous graph intact.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Callable, Iterable, Sequence

from ..errors import PolygraphError
from ..files import replacing
from .assertions import Assertion
from .labels import encode_label
from .rules import rule_rows
from .store import FORMAT, Artifact, StoredFact, fact_key, key_value
from .versions import ensure_ledger, first_version

_TABLES = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value NOT NULL);
CREATE TABLE assertions(num INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, source TEXT NOT NULL,
    subject TEXT NOT NULL, predicate TEXT NOT NULL, object TEXT NOT NULL, text TEXT,
    kind TEXT NOT NULL DEFAULT 'source_claim', negated INTEGER NOT NULL DEFAULT 0);
CREATE TABLE facts(num INTEGER PRIMARY KEY, relation TEXT NOT NULL, args TEXT NOT NULL,
    k0, k1, k2, label BLOB NOT NULL, exact INTEGER NOT NULL);
CREATE TABLE mentions(assertion INTEGER NOT NULL, fact INTEGER NOT NULL,
    PRIMARY KEY(assertion, fact)) WITHOUT ROWID;
CREATE TABLE artifacts(num INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, layer TEXT NOT NULL,
    content TEXT NOT NULL, fact INTEGER NOT NULL UNIQUE, summary INTEGER);
CREATE TABLE rules(num INTEGER PRIMARY KEY, relation TEXT NOT NULL, c0, c1, c2, tree BLOB NOT NULL);
"""

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

def write_graph(path: str | Path, assertions: Iterable[Assertion], artifacts: Iterable[Artifact],
                meta: dict[str, str], facts: Iterable[StoredFact] = (), rules: str | Sequence = "",
                progress: Callable[[str, int], None] | None = None, version: dict | None = None) -> None:
    """Writes a graph file atomically: the old file survives any failure midway.

    ``facts`` are every fact of the evaluated program and ``rules`` its rules (text or
    syntax trees), so that later re-derivation needs neither the inputs nor the rule
    files.  An artifact whose fact is not among ``facts`` gets one with its label.
    ``progress(stage, rows)`` is called now and then.  A ``meta`` value may be a callable,
    called once the rows are written (for counts known only then).  ``version`` describes
    version 1 for the history (versions.py): what was built from, by which command.
    """
    text, rules = _rules(rules)
    with replacing(path, ".partial") as temporary:
        db = sqlite3.connect(temporary)
        try:
            db.executescript("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;" + _TABLES)
            writer = _Writer(db, progress)
            writer.assertions(assertions)
            writer.facts(facts)
            db.execute(_FACT_KEY_INDEX)
            writer.artifacts(artifacts)
            db.executemany("INSERT INTO rules(relation, c0, c1, c2, tree) VALUES (?, ?, ?, ?, ?)", rule_rows(rules))
            db.executescript(_INDEXES + _LINK_SUMMARIES + "ANALYZE;")
            stats = writer.stats()
            rows = [("format", FORMAT), ("rules", text), ("stats", json.dumps(stats)),
                    *((k, v() if callable(v) else v) for k, v in meta.items()
                      if k not in ("format", "rules", "rules_tree", "stats"))]
            db.executemany("INSERT INTO meta VALUES (?, ?)", rows)
            ensure_ledger(db, first_version(meta, version), json.dumps(stats))
            db.commit()
        finally:
            db.close()


def _rules(rules: str | Sequence) -> tuple[str, list]:
    """Returns the rules as text and as syntax trees (parsing text once, at write time)."""
    if isinstance(rules, str):
        if not rules.strip():
            return rules, []
        from ..program import parse_program
        return rules, parse_program(rules, "(stored rules)").rules
    rules = list(rules)
    return "\n".join(str(rule) for rule in rules), rules


class _Writer:
    """Numbers assertions, writes facts with their mentions, and artifacts linked to facts."""

    def __init__(self, db: sqlite3.Connection, progress):
        self.db = db
        self.progress = progress or (lambda stage, rows: None)
        self.number: dict[str, int] = {}
        self.layers: dict[str, dict] = {}

    def assertions(self, assertions: Iterable[Assertion]) -> None:
        def rows():
            for num, a in enumerate(assertions, 1):
                if a.id in self.number:
                    raise PolygraphError("duplicate_assertion", f"assertion id {a.id!r} occurs twice")
                self.number[a.id] = num
                yield num, a.id, a.source, a.subject, a.predicate, a.object, a.text, a.kind, int(a.negated)
        self.db.executemany("INSERT INTO assertions(num, id, source, subject, predicate, object, text, kind, "
                            "negated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows())
        self.progress("assertions", len(self.number))

    def _numbers(self, support, what: str) -> list[list[int]]:
        try:
            return [[self.number[a] for a in group] for group in support]
        except KeyError as missing:
            raise PolygraphError("unknown_assertion", f"the label of {what} cites assertion {missing.args[0]!r}, "
                                                      "which is not among the graph's assertions") from None

    def _insert_fact(self, relation: str, args: tuple, groups: list[list[int]], exact: bool) -> int:
        keys = [key_value(v) for v in args[:3]] + [None] * (3 - min(len(args), 3))
        try:
            cursor = self.db.execute("INSERT INTO facts(relation, args, k0, k1, k2, label, exact) "
                                     "VALUES (?, ?, ?, ?, ?, ?, ?)",
                                     (relation, fact_key(args), *keys, encode_label(groups), int(exact)))
        except sqlite3.IntegrityError:
            raise PolygraphError("duplicate_fact", f"fact {relation}{args} occurs twice") from None
        num = cursor.lastrowid
        self._mention(num, groups)
        return num

    def _mention(self, fact: int, groups: list[list[int]]) -> None:
        self.db.executemany("INSERT INTO mentions VALUES (?, ?)", ((n, fact) for n in {n for g in groups for n in g}))

    def facts(self, facts: Iterable[StoredFact]) -> None:
        count = 0
        for count, fact in enumerate(facts, 1):
            self._insert_fact(fact.relation, tuple(fact.args), self._numbers(fact.support, f"fact {fact.relation}"),
                              fact.exact)
            if count % 100_000 == 0:
                self.progress("facts", count)
        self.progress("facts", count)

    def artifacts(self, artifacts: Iterable[Artifact]) -> None:
        count = 0
        for count, artifact in enumerate(artifacts, 1):
            relation, args = artifact.fact
            groups = self._numbers(artifact.support, f"artifact {artifact.id!r}")
            blob = encode_label(groups)
            row = self.db.execute("SELECT num, label, exact FROM facts WHERE relation = ? AND args = ?",
                                  (relation, fact_key(args))).fetchone()
            if row is None:
                fact = self._insert_fact(relation, args, groups, artifact.exact)
            else:
                fact = row[0]
                if row[1] != blob or row[2] != int(artifact.exact):  # e.g. a summary trimmed by apply
                    self.db.execute("UPDATE facts SET label = ?, exact = ? WHERE num = ?",
                                    (blob, int(artifact.exact), fact))
                    self.db.execute("DELETE FROM mentions WHERE fact = ?", (fact,))
                    self._mention(fact, groups)
            try:
                self.db.execute("INSERT INTO artifacts(id, layer, content, fact) VALUES (?, ?, ?, ?)",
                                (artifact.id, artifact.layer, json.dumps(artifact.content, ensure_ascii=False), fact))
            except sqlite3.IntegrityError:
                raise PolygraphError("duplicate_artifact", f"artifact id {artifact.id!r} is given twice (or names "
                                                           "the fact of another artifact); artifact ids must be "
                                                           "unique across layers") from None
            entry = self.layers.setdefault(artifact.layer, {"artifacts": 0, "inexact": 0, "label_bytes": 0,
                                                            "support_sets": Counter()})
            entry["artifacts"] += 1
            entry["inexact"] += not artifact.exact
            entry["label_bytes"] += len(blob)
            entry["support_sets"][len(groups)] += 1
            if count % 100_000 == 0:
                self.progress("artifacts", count)
        self.progress("artifacts", count)

    def stats(self) -> dict:
        sources = self.db.execute("SELECT COUNT(DISTINCT source) FROM assertions").fetchone()[0]
        layers = {layer: {**entry, "support_sets": dict(sorted(entry["support_sets"].items()))}
                  for layer, entry in self.layers.items()}
        return {"assertions": len(self.number), "sources": sources, "layers": layers}
