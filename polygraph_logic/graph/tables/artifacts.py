"""The artifacts of a tables build (duckdb_build.py), in ``iter_artifacts``' order, made in SQL.

Claims, merges, summaries, sentences (the receipts' order), entailed edges that are no
claim and rest on an assertion, then contradictions.  The ids of claims and edges are the
digests digests.py makes on a thread of its own, in fx's order, each with its place in its
layer; they are paired with their facts by position, and the artifacts file is the union
of the layers' tables, numbered from those places: no sort of its rows and no window over
them.  The other layers (a few thousand rows at x40) are sorted apart.

``ArtifactTables`` is a part of the writer (``tables_build._Writer``): it reads the
writer's ``con``, ``plan``, ``receipts``, ``facts_view``, ``background`` and ``_register``
and ``_written``, and the tables fx, vals and the receipts' rows.
"""

from __future__ import annotations

import json
from pathlib import Path

from polygraph_logic.graph.artifact_ids import IdsGiven, content_args, long_id
from polygraph_logic.graph.artifact_rule import sql_condition
from polygraph_logic.errors import PolygraphError
from polygraph_logic.datalog.evaluate import tuple_key
from polygraph_logic.graph.contradiction_layer import LAYER as CONTRADICTION, content as contradiction_content
from polygraph_logic.graph.store.writer import json_text
from polygraph_logic.graph.tables.digests import Digests, table as digests_table
from polygraph_logic.graph.tables.folder_rows import label_bytes

#: the facts ``fx f`` that are entailed edges: edges that are no claim (``claimed``, made with fx:
#: a filter of one table keeps fx's order, which digests.py's artifacts keep) and rest on an assertion
_ENTAILED = sql_condition("edge")
#: the facts whose artifacts' ids are digests (digests.py), by layer
DIGESTED = (("claim", "f.relation = 'claim'"), ("edge", _ENTAILED))
#: a claim's or an edge's content, as graph/build.py writes it, from its arguments' JSON text
#: ``args`` (``[j0, j1, j2]``) and the lengths ``n0``, ``n1`` of ``j0`` and ``j1`` in characters
_CONTENT = ("'{\"subject\": ' || substring(args, 2, n0) || ', \"predicate\": ' || substring(args, 4 + n0, n1) || "
            "', \"object\": ' || substring(args, 6 + n0 + n1, length(args) - 6 - n0 - n1) || '}'")


class ArtifactTables:
    """The writer's artifacts: ``_artifacts`` makes the view ``artifacts`` the file is written
    from and ``arts_all`` (layer, fact, id) the statistics read."""

    def _artifacts(self, digests: Digests, folder: Path) -> None:
        """The artifacts, each layer's rows stored in their order and numbered in it, and the view
        ``artifacts``, their union (UNION ALL keeps the order of its inputs) numbered from those
        places: no sort of the whole file's rows (x40: 1.06 M, with content and ids), and no
        window over them.
        Claims and entailed edges are ``art_claim`` and ``art_edge`` (``_paired``: fx's facts
        and ``digests``' ids, both in fx's order); the other layers, made while the digests'
        thread still runs, are ``arts`` sorted into ``arts_sorted`` (a few thousand rows at x40).
        The statistics read ``arts_all``."""
        con = self.con
        con.execute("CREATE TABLE arts(o0 INTEGER, o1 BIGINT, o2 BIGINT, o3 BIGINT, fact BIGINT, id VARCHAR, "
                    "layer VARCHAR, content VARCHAR)")
        for o0, layer in ((1, "merge"), (2, "summary")):
            con.execute(f"INSERT INTO arts SELECT {o0}, f.s0, 0, 0, f.num, v.text, '{layer}', r.content "
                        f"FROM fx f JOIN vals v ON v.id = f.k0 JOIN rc_receipts r ON r.artifact = v.text "
                        f"WHERE f.relation = '{layer}'")
            missing = con.execute(f"SELECT count(*) FROM fx f WHERE f.relation = '{layer}'").fetchall()[0][0] - \
                con.execute(f"SELECT count(*) FROM arts WHERE layer = '{layer}'").fetchall()[0][0]
            if missing:
                raise PolygraphError("bad_program", f"{missing} {layer} facts come from no receipt (a rule "
                                                    f"derives them): a {layer} is an artifact only as its receipt "
                                                    "states it")
        self._sentences()
        # what the statistics read of the facts, and the facts file: the facts are complete
        con.execute(f"CREATE TABLE fstat AS SELECT num AS fact, exact, sets, {label_bytes('label')} AS bytes "
                    "FROM facts")
        self._written(folder, "facts", ordered=True)
        self.background = con.execute(
            "SELECT count(*) FROM fx f WHERE f.relation = 'edge' AND f.one AND NOT f.claimed").fetchall()[0][0]
        claims = con.execute("SELECT count(*) FROM fx WHERE relation = 'claim'").fetchall()[0][0]
        self._contradictions()
        self._sorted(claims)
        digests.wait()
        for layer, where in DIGESTED:
            self._paired(layer, where)
        con.execute("DROP TABLE fx")  # what follows reads facts and the artifacts' tables
        claim, edge = "art_claim", "art_edge"
        made = con.execute(f"SELECT count(*) FROM {claim}").fetchall()[0][0]
        if made != claims:  # the summaries' numbers count the claims before them
            raise PolygraphError("engine_error", f"{made} claim artifacts written for {claims} claims")
        con.execute(f"""CREATE VIEW arts_all AS SELECT 0 AS o0, 'claim' AS layer, fact, id FROM {claim}
                        UNION ALL SELECT o0, layer, fact, id FROM arts_sorted
                        UNION ALL SELECT 4, 'edge', fact, id FROM {edge}""")
        duplicate = con.execute("SELECT id FROM arts_all GROUP BY id HAVING count(*) > 1 LIMIT 1").fetchall()
        if duplicate and self._lengthened((claim, "claim"), (edge, "edge")):
            duplicate = con.execute("SELECT id FROM arts_all GROUP BY id HAVING count(*) > 1 LIMIT 1").fetchall()
        if duplicate:
            raise PolygraphError("duplicate_artifact", f"artifact id {duplicate[0][0]!r} is given twice "
                                                       "(a digest collision or a receipt's id reused)")
        # ``artifacts`` is a view the file is written from, part after part: claims, then merges,
        # summaries and sentences, then edges, then contradictions; each numbered from its place
        # in its part (``n``), not by a window over the whole (x40: 1.06 M rows held, then spilled,
        # by the window; the file's copy 1.72 -> 1.27 s)
        low = con.execute("SELECT count(*) FROM arts_sorted WHERE o0 < 4").fetchall()[0][0]
        edges = con.execute(f"SELECT count(*) FROM {edge}").fetchall()[0][0]
        none = "CAST(NULL AS BIGINT) AS summary"
        con.execute(f"""CREATE VIEW artifacts AS
                        SELECT n AS num, id, 'claim' AS layer, content, fact, {none} FROM {claim}
                        UNION ALL SELECT {claims} + n, id, layer, content, fact, summary FROM arts_sorted WHERE o0 < 4
                        UNION ALL SELECT {claims + low} + n, id, 'edge', content, fact, {none} FROM {edge}
                        UNION ALL SELECT {claims + edges} + n, id, layer, content, fact, summary FROM arts_sorted
                                  WHERE o0 > 4""")

    def _lengthened(self, *tables: tuple[str, str]) -> int:
        """Gives the long id to each artifact of ``tables`` (``(table, layer)``) whose short id one
        before it in its layer holds (artifact_ids.py: a graph of ten million edges has such a pair
        about once in ten builds); returns how many."""
        con, count = self.con, 0
        for table, layer in tables:
            rows = con.execute(f"""SELECT fact, content FROM (
                                     SELECT fact, content, row_number() OVER (PARTITION BY id ORDER BY n) AS k
                                     FROM {table} WHERE id IN (SELECT id FROM {table} GROUP BY id HAVING count(*) > 1))
                                 WHERE k > 1""").fetchall()
            for fact, content in rows:
                con.execute(f"UPDATE {table} SET id = ? WHERE fact = ?", (long_id(layer, content_args(layer, content)), fact))
            if rows:
                in_fact_order(con, table)
            count += len(rows)
        return count

    def _paired(self, layer: str, where: str) -> None:
        """``art_<layer>``: the artifacts of the facts ``where`` selects, their ids ``digests``'
        and their content made from their arguments' text, in fx's order, ``n`` their places in
        it from 1.  The facts and their ids are paired by position (both are in fx's order:
        digests.py), with no join that could reorder them; should the facts of a pair ever
        differ, they are joined and sorted."""
        con, digested, table = self.con, digests_table(layer), f"art_{layer}"
        selected = f"(SELECT num, args, n0, n1 FROM fx f WHERE {where}) f"
        con.execute(f"CREATE TABLE {table} AS SELECT f.num AS fact, d.id, {_CONTENT} AS content, d.n "
                    f"FROM {selected} POSITIONAL JOIN {digested} d WHERE d.fact IS NOT DISTINCT FROM f.num")
        if con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0] != \
                con.execute(f"SELECT count(*) FROM {selected}").fetchall()[0][0]:
            con.execute(f"DROP TABLE {table}")
            con.execute(f"CREATE TABLE {table} AS SELECT f.num AS fact, d.id, {_CONTENT} AS content, d.n "
                        f"FROM {selected} JOIN {digested} d ON d.fact = f.num ORDER BY f.num")
        con.execute(f"DROP TABLE {digested}")
        in_fact_order(con, table)

    def _sorted(self, claims: int) -> None:
        """``arts_sorted``: the merges, summaries, sentences and contradictions of ``arts`` in their
        order, with the summary column (a sentence's summary, and a summary a sentence cites, by
        number: the claims and merges come before the summaries)."""
        con = self.con
        before = claims + con.execute("SELECT count(*) FROM arts WHERE o0 = 1").fetchall()[0][0]
        con.execute(f"""CREATE TABLE summary_nums AS SELECT s.id, s.num, s.id IN (
                            SELECT json_extract_string(content, '$.summary') FROM arts WHERE o0 = 3) AS cited
                        FROM (SELECT id, {before} + row_number() OVER (ORDER BY o1, o2, o3) AS num
                              FROM arts WHERE o0 = 2) s""")
        con.execute("""CREATE TABLE arts_sorted AS SELECT a.o0, a.id, a.layer, a.content, a.fact,
                              CASE WHEN a.o0 = 3 THEN s.num WHEN own.cited THEN own.num END AS summary,
                              row_number() OVER (ORDER BY a.o0, a.o1, a.o2, a.o3) AS n
                       FROM arts a
                       LEFT JOIN summary_nums s
                           ON s.id = CASE WHEN a.o0 = 3 THEN json_extract_string(a.content, '$.summary') END
                       LEFT JOIN summary_nums own ON own.id = CASE WHEN a.o0 = 2 THEN a.id END
                       ORDER BY a.o0, a.o1, a.o2, a.o3""")
        con.execute("DROP TABLE arts")
        con.execute("DROP TABLE summary_nums")

    def _sentences(self) -> None:
        """Sentences in the receipts' order; a sentence without a fact gets one (label zero)."""
        con = self.con
        if not self.receipts.sentences:
            return
        last = con.execute("SELECT coalesce(max(num), 0) FROM facts").fetchall()[0][0]
        more = "facts_more" if self.facts_view else "facts"
        con.execute(f"""INSERT INTO {more} SELECT {last} + row_number() OVER (ORDER BY s.n_order), 'sentence',
                        s.args, [], TRUE, 0 FROM rc_sentences s
                        WHERE NOT EXISTS (SELECT 1 FROM fx f JOIN vals v ON v.id = f.k0
                                          WHERE f.relation = 'sentence' AND v.text = s.id)
                        ORDER BY 1""")  # after fx's facts, in their order (copy_out)
        con.execute("""INSERT INTO arts SELECT 3, s.n_order, 0, 0, f.num, s.id, 'sentence', s.content
                       FROM rc_sentences s JOIN facts f ON f.relation = 'sentence'
                       AND f.args = s.args""")

    def _contradictions(self) -> None:
        plan = self.plan
        if CONTRADICTION not in plan.relations or plan.arity(CONTRADICTION) != 3:
            return
        rows = self.con.execute(f"SELECT f.num, f.args FROM fx f WHERE {sql_condition(CONTRADICTION)}").fetchall()
        if not rows:
            return
        # the arguments are the values' JSON text (some values only DuckDB holds)
        rows = sorted(((num, args, tuple(json.loads(args))) for num, args in rows), key=lambda r: tuple_key(r[2]))
        ids = IdsGiven()  # the short digest unless one before holds it (artifact_ids.py)
        self._register("contradictions_in", {
            "n_order": list(range(len(rows))), "n_fact": [r[0] for r in rows],
            "id": [ids.id(CONTRADICTION, r[2]) for r in rows],
            "content": [json_text(contradiction_content(r[2])) for r in rows]})
        self.con.execute(f"INSERT INTO arts SELECT 5, n_order, 0, 0, n_fact, id, '{CONTRADICTION}', content "
                         "FROM contradictions_in")
        self.con.unregister("contradictions_in")


def in_fact_order(con, table: str) -> None:
    """Makes sure the artifacts of ``table`` are stored in fx's order (their facts rise, fx being
    numbered in its order) and numbered ``n`` 1, 2, ... in it: digests.py writes them so; should
    a DuckDB keep another order, the table is made again sorted and numbered
    (tests/test_tables_build.py makes it do so)."""
    # a window over nothing: scan order
    steps = f"SELECT fact - lag(fact) OVER () AS step, n - lag(n, 1, 0) OVER () AS dn FROM {table}"
    if con.execute(f"SELECT count(*) FROM ({steps}) WHERE step <= 0 OR dn <> 1").fetchall()[0][0]:
        con.execute(f"CREATE TABLE {table}_sorted AS SELECT * EXCLUDE (n), row_number() OVER (ORDER BY fact) AS n "
                    f"FROM {table} ORDER BY fact")
        con.execute(f"DROP TABLE {table}")
        con.execute(f"ALTER TABLE {table}_sorted RENAME TO {table}")


__all__ = ["DIGESTED", "ArtifactTables", "in_fact_order"]
