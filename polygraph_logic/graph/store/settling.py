"""Two whole-graph questions a store that answers in SQL (a folder) settles itself, so that only their
answers reach Python: the capped facts a deletion kills and those of their stored derivations that
can still fire (query/revival.py's ``revived_in_store``, which a what-if and ``rests-on`` use), and
the artifacts resting on some kinds, counted per layer with the first of each
(query/rests_on.py's ``RestsOn`` with a limit).

A deletion is a query of the deleted assertions' numbers with its parameters (``by_kinds``,
``by_numbers``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from polygraph_logic.graph.store.views import Rows

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


#: ``open_rows``' query: the capped facts the deletion kills (every support set of their label
#: holds a deleted assertion: the mentions keep each assertion's support set), and of their stored
#: derivations those that can still fire (no body fact dead: an exact label killed, or a fact the
#: version lacks), each with its body facts that are open (as JSON text); then the open facts an
#: assertion may state.  Only capped facts and body facts are counted (not every fact the deletion
#: hits), so that the query's memory follows the circuit, not the graph.  ``{deleted}``: a query of
#: the deleted assertions' numbers
_OPEN = """
WITH deleted AS ({deleted}),
capped AS (SELECT num, sets FROM facts WHERE NOT exact),
capped_hit AS (SELECT m.fact, count(DISTINCT m.support_set) AS n FROM mentions m
               SEMI JOIN deleted d ON d.num = m.assertion SEMI JOIN capped c ON c.num = m.fact GROUP BY m.fact),
open AS (SELECT c.num FROM capped c JOIN capped_hit h ON h.fact = c.num WHERE h.n = c.sets),
bodies AS (SELECT DISTINCT d.fact, d.body FROM derivations d SEMI JOIN open o ON o.num = d.fact
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
SELECT 0, fact, NULL::VARCHAR, to_json(list(b) FILTER (WHERE open))::VARCHAR FROM marked GROUP BY fact, body
HAVING NOT bool_or(dead)
UNION ALL
SELECT 1, f.num, f.relation, f.args FROM facts f SEMI JOIN open o ON o.num = f.num
WHERE f.relation IN ('claim', 'neg_edge', 'assertion')
UNION ALL
SELECT 2, count(*), NULL, NULL FROM open
"""


def open_rows(graph, deleted: Deleted) -> Rows:
    """``_OPEN``'s rows for ``deleted``, streamed: ``(0, head, None, open body facts as JSON)`` per
    derivation that can fire, ``(1, num, relation, args)`` per open fact an assertion may state,
    ``(2, open facts, None, None)``."""
    sql, parameters = deleted
    return graph.query(_OPEN.format(deleted=sql), (*parameters, graph.version_read()))


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


__all__ = ["Deleted", "by_kinds", "by_numbers", "open_rows", "resting_counts"]
