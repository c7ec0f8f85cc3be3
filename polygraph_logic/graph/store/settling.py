"""Two whole-graph questions a store that answers in SQL (a folder) settles itself, so that only their
answers reach Python: the capped facts a deletion kills and those of their stored derivations that
can still fire, and the least fixpoint over them, round by round in the store's own tables
(query/revival.py's ``revived_in_store``, which a what-if and ``rests-on`` use), and
the artifacts resting on some kinds, counted per layer with the first of each
(query/rests_on.py's ``RestsOn`` with a limit).

A deletion is a query of the deleted assertions' numbers with its parameters (``by_kinds``,
``by_numbers``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable


Deleted = tuple[str, tuple]


def by_kinds(graph, kinds: Iterable[str]) -> Deleted:
    """The assertions of ``kinds`` (every assertion of a graph written before kinds: its one kind)."""
    if not graph.has_kinds:
        return "SELECT num FROM assertions", ()
    return "SELECT num FROM assertions WHERE kind IN (SELECT unnest(from_json(?, '[\"VARCHAR\"]')))", \
        (json.dumps(sorted(kinds)),)


def by_numbers(numbers: Iterable[int]) -> Deleted:
    """The assertions numbered ``numbers``."""
    return "SELECT unnest(from_json(?, '[\"BIGINT\"]')) AS num", (json.dumps(sorted(numbers)),)


#: the least fixpoint of the circuit over the open facts, kept in the store: ``{t}`` a prefix naming
#: one settling's tables.  ``{t}_open``: the open facts; ``{t}_wait``: per derivation that can still
#: fire, its head and its open body facts (distinct); ``{t}_held``: the open facts that hold.
_OPEN_FACTS = """
CREATE TABLE {t}_open AS
WITH deleted AS ({deleted}),
capped AS (SELECT num, sets FROM facts WHERE NOT exact),
capped_hit AS (SELECT m.fact, count(DISTINCT m.support_set) AS n FROM mentions m
               SEMI JOIN deleted d ON d.num = m.assertion SEMI JOIN capped c ON c.num = m.fact GROUP BY m.fact)
SELECT c.num FROM capped c JOIN capped_hit h ON h.fact = c.num WHERE h.n = c.sets
"""
_WAITING = """
CREATE TABLE {t}_wait AS
WITH deleted AS ({deleted}),
bodies AS (SELECT DISTINCT d.fact, d.body FROM derivations d SEMI JOIN {t}_open o ON o.num = d.fact
           WHERE d.since <= ? AND d.rule IN (SELECT num FROM rules)),
parts AS (SELECT fact, body, unnest(from_json(body, '["BIGINT"]')) AS b FROM bodies),
body_facts AS (SELECT DISTINCT b FROM parts),
body_hit AS (SELECT m.fact, count(DISTINCT m.support_set) AS n FROM mentions m
             SEMI JOIN deleted d ON d.num = m.assertion SEMI JOIN body_facts x ON x.b = m.fact GROUP BY m.fact),
status AS (SELECT x.b, f.num IS NULL AS absent, coalesce(f.exact, false) AS exact,
                  coalesce(h.n = f.sets, false) AS killed
           FROM body_facts x LEFT JOIN (SELECT num, exact, sets FROM facts f SEMI JOIN body_facts y ON y.b = f.num) f
                ON f.num = x.b LEFT JOIN body_hit h ON h.fact = x.b),
marked AS (SELECT p.fact, p.body, p.b, s.killed AND NOT s.exact AS open, s.absent OR (s.killed AND s.exact) AS dead
           FROM parts p JOIN status s ON s.b = p.b)
SELECT row_number() OVER () AS d, fact AS head,
       coalesce(list_distinct(list(b) FILTER (WHERE open)), []) AS blockers
FROM marked GROUP BY fact, body HAVING NOT bool_or(dead)
"""
_FIXPOINT_START = [
    "CREATE TABLE {t}_pairs AS SELECT d, unnest(blockers) AS b FROM {t}_wait WHERE len(blockers) > 0",
    # per waiting derivation: its head and how many of its open body facts do not hold yet
    "CREATE TABLE {t}_need AS SELECT d, head, len(blockers) AS waiting FROM {t}_wait WHERE len(blockers) > 0",
    "CREATE TABLE {t}_held AS SELECT DISTINCT head AS f FROM {t}_wait WHERE len(blockers) = 0 "
    "UNION SELECT unnest(from_json(?, '[\"BIGINT\"]'))",
    "CREATE TABLE {t}_delta AS SELECT f FROM {t}_held",
]
#: a round: the derivations each newly held fact unblocks count it off; those with nothing left to
#: wait for fire, and their heads not held yet are the next round's delta (one scan of the pairs)
_ROUND = [
    "CREATE OR REPLACE TABLE {t}_touched AS SELECT p.d, count(*) AS n FROM {t}_pairs p "
    "SEMI JOIN {t}_delta x ON x.f = p.b GROUP BY p.d",
    "UPDATE {t}_need SET waiting = waiting - t.n FROM {t}_touched t WHERE {t}_need.d = t.d",
    "CREATE OR REPLACE TABLE {t}_delta AS SELECT DISTINCT n.head AS f FROM {t}_need n "
    "SEMI JOIN {t}_touched t ON t.d = n.d WHERE n.waiting = 0 AND n.head NOT IN (SELECT f FROM {t}_held)",
]
_TABLES = ("open", "wait", "pairs", "need", "held", "delta", "touched")
#: the open facts that do not hold and whose derivations are not all stored
_UNSTORED_OPEN = """
SELECT o.num FROM {t}_open o SEMI JOIN derivations d ON d.fact = o.num AND d.rule = ? AND d.since <= ?
WHERE o.num NOT IN (SELECT unnest(from_json(?, '["BIGINT"]')))
"""


#: the open facts a surviving assertion states (goal_plans.stated_by in SQL: a claim or a negated
#: triple by an assertion of that triple, an assertion fact by the assertion of that id)
_STATED = """
WITH deleted AS ({deleted}),
stated AS (SELECT f.num, f.relation, f.k0, f.k1, f.k2 FROM facts f SEMI JOIN {t}_open o ON o.num = f.num
           WHERE f.relation IN ('claim', 'neg_edge', 'assertion'))
SELECT s.num FROM stated s WHERE s.relation <> 'assertion' AND EXISTS (
    SELECT 1 FROM assertions a WHERE a.subject = s.k0 AND a.predicate = s.k1 AND a.object = s.k2
    AND ({negated}) = (s.relation = 'neg_edge') AND a.num NOT IN (SELECT num FROM deleted))
UNION
SELECT s.num FROM stated s WHERE s.relation = 'assertion' AND EXISTS (
    SELECT 1 FROM assertions a WHERE a.id = s.k0 AND a.num NOT IN (SELECT num FROM deleted))
"""


def open_stated(graph, deleted: Deleted, tables: str) -> tuple[int, list[int]]:
    """Makes the tables of one settling named ``tables`` (``_OPEN_FACTS``, ``_WAITING``) and returns
    the number of open facts and those a surviving assertion states (they hold outright)."""
    sql, parameters = deleted
    graph.query(_OPEN_FACTS.format(t=tables, deleted=sql), parameters).fetchall()
    graph.query(_WAITING.format(t=tables, deleted=sql),
                (*parameters, graph.version_read())).fetchall()
    opened = graph.query(f"SELECT count(*) FROM {tables}_open").fetchone()[0]
    negated = "a.negated <> 0" if graph.assertions.has_negated else "FALSE"
    stated = [row[0] for row in graph.query(_STATED.format(deleted=sql, t=tables, negated=negated),
                                            parameters).fetchall()]
    return opened, stated


def held_in_store(graph, tables: str, holding: Iterable[int]) -> set[int]:
    """The least fixpoint over ``open_stated``'s tables: the open facts that hold, from ``holding`` (facts
    that hold outright) and every derivation whose open body facts all come to hold, round by round
    in the store (provenance/circuit.settle's loop, set at a time).  The caller drops the tables."""
    for statement in _FIXPOINT_START:
        graph.query(statement.format(t=tables), (json.dumps(sorted(holding)),) if "?" in statement else ()
                    ).fetchall()
    while graph.query(f"SELECT count(*) FROM {tables}_delta").fetchone()[0]:
        for statement in _ROUND:
            graph.query(statement.format(t=tables)).fetchall()
        graph.query(f"INSERT INTO {tables}_held SELECT f FROM {tables}_delta").fetchall()
    return {row[0] for row in graph.query(f"SELECT f FROM {tables}_held").fetchall()}


#: the facts a deletion kills by their labels (every support set hit) that a settling did not hold
_KILLED = """
WITH deleted AS ({deleted}),
hit AS (SELECT m.fact, count(DISTINCT m.support_set) AS n FROM mentions m SEMI JOIN deleted d ON d.num = m.assertion
        GROUP BY m.fact)
SELECT f.num, f.relation, f.args FROM facts f JOIN hit h ON h.fact = f.num
WHERE h.n = f.sets AND f.num NOT IN (SELECT unnest(from_json(?, '["BIGINT"]'))) LIMIT ?
"""


def killed_facts(graph, deleted: Deleted, held: Iterable[int], limit: int) -> list[tuple] | None:
    """``(num, relation, args text)`` of the facts ``deleted`` kills by their labels, ``held`` left
    out; None when there are more than ``limit``."""
    sql, parameters = deleted
    rows = graph.query(_KILLED.format(deleted=sql), (*parameters, json.dumps(sorted(held)), limit + 1)).fetchall()
    return None if len(rows) > limit else rows


def open_rows(graph, tables: str):
    """``(num, relation, args text)`` of a settling's open facts, as rows to read in batches."""
    return graph.query(f"SELECT f.num, f.relation, f.args FROM facts f SEMI JOIN {tables}_open o ON o.num = f.num")


def unstored_open(graph, tables: str, held: Iterable[int], marker: int) -> list[int]:
    """The open facts of a settling that do not hold (``held``) and whose stored derivations are
    not all of them (a row of rule ``marker``): their verdict needs the rest."""
    return [row[0] for row in graph.query(_UNSTORED_OPEN.format(t=tables),
                                          (marker, graph.version_read(), json.dumps(sorted(held)))).fetchall()]


def drop_settling(graph, tables: str) -> None:
    """Drops the tables of one settling (those made so far)."""
    for name in _TABLES:
        graph.query(f"DROP TABLE IF EXISTS {tables}_{name}").fetchall()


#: the artifacts resting on the kinds, per layer: how many, and the ``limit`` least ids (a store that
#: counts in SQL, where the circuit settles every verdict).  A fact is killed when every support set
#: of its label holds a distrusted assertion (the mentions keep each assertion's support set) and
#: the circuit does not revive it (``?``: the revived facts' numbers); an artifact rests when its
#: fact is killed, but a sentence-level summary when it is touched and a sentence of it rests (or it
#: has none), as query/rests_on.py's ``RestsOn._decide`` and ``_trim`` decide them.
_RESTING = """
WITH distrusted AS ({distrusted}),
hit AS (SELECT m.fact, count(DISTINCT m.support_set) AS n FROM mentions m SEMI JOIN distrusted d ON d.num = m.assertion
        GROUP BY m.fact),
killed AS (SELECT h.fact FROM hit h JOIN facts f ON f.num = h.fact
           WHERE h.n = f.sets AND h.fact NOT IN (SELECT unnest(from_json(?, '["BIGINT"]')))),
marked AS (SELECT a.id, a.layer, a.summary, a.fact IN (SELECT fact FROM killed) AS dead,
                  a.fact IN (SELECT fact FROM hit) AS touched FROM artifacts a),
grouped AS (SELECT summary, count(*) AS sentences, count(*) FILTER (WHERE dead) AS resting FROM marked
            WHERE layer = 'sentence' AND summary IS NOT NULL GROUP BY summary),
listed AS (SELECT id, layer FROM marked WHERE dead AND (summary IS NULL OR layer = 'sentence')
           UNION ALL
           SELECT m.id, m.layer FROM marked m LEFT JOIN grouped g ON g.summary = m.summary
           WHERE m.summary IS NOT NULL AND m.layer <> 'sentence' AND m.touched
             AND (g.summary IS NULL OR g.resting > 0))
SELECT layer, count(*), min(id, {limit}) FROM listed GROUP BY layer
"""


def resting_counts(graph, deleted: Deleted, revived: Iterable[int], limit: int) -> list[tuple]:
    """``(layer, count, the limit least ids)`` of the artifacts resting on ``deleted`` whose facts
    ``revived`` does not hold (``_RESTING``)."""
    sql, parameters = deleted
    return graph.query(_RESTING.format(distrusted=sql, limit=int(limit)),
                       (*parameters, json.dumps(sorted(revived)))).fetchall()


__all__ = ["Deleted", "by_kinds", "by_numbers", "drop_settling", "held_in_store", "killed_facts",
           "open_rows", "open_stated",
           "resting_counts", "unstored_open"]
