"""Witness labels set at a time: the Boolean closure in SQL, one support set per fact, every derivation kept.

The SQL form of provenance/witness.py (the Python engine's circuit and witnesses), for
DuckDB.  The semi-naive loop is driver.py's, with Boolean deltas: a round's delta holds the
facts it made, not the facts whose label changed, so a round costs its joins' output whatever
the number of ways a fact holds.  Tables (sql_plan.Plan with ``witness``):

- ``r<n>``/``d<n>``: a relation's facts and a round's new ones, (keys, label, exact, id): the
  label is ``[witness]`` (one support set of assertion ranks, ascending), ``id`` a number of
  the fact's own (``fact_ids``), so that a derivation names its body facts;
- ``witnesses``: a view of every fact's (id, witness), the r<n> tables united;
- ``c<n>``: a round's derivations of one relation, (keys, rn, body, total): the rule's number,
  the body facts' ids (a set: ascending, each once) and their witnesses' sizes summed (a join
  carries a body fact's id and its witness's size, not the witness: ``chosen`` reads the
  witnesses of the derivations that may give the new fact's by id); when the round makes only
  its new facts' derivations, (h, rn, body, total), ``h`` the id of the head;
- ``n<n>``: such a round's new heads, (keys, id), each with the id its fact will have;
- ``gates``: the derivations of the round that made each fact, (head, rn, body): one row per
  rule instance (a delta variant's atoms before its delta atom read the facts made before the
  last round only, Plan.fresh, so a round finds an instance once, and semi-naive rounds find
  each instance in one round only);
- ``unstored``: the ids of facts derived again in a later round (or stated and derived), whose
  later derivations are not kept.

A round first finds the heads its rules derive, keys alone, as the Boolean closure does
(``heads``); when it derives facts a relation holds already more than KEPT_AGAIN times, those
are marked ``unstored``, the others are the round's new facts, given their ids there, and only
their derivations are made with witnesses and body ids, each naming its head by that id (else
every derivation is, as a graph without hubs needs).  So a round costs
the Boolean join plus the derivations of its new facts, not every rule instance with its body
(at x40 with 40 hubs shared on both sides: 86 M rule instances of 6.8 M facts, most of them of
facts held already).  A reader completes an unstored fact's derivations from the rules when it
needs them (graph/store/circuit_rows.py: the marker row the circuit holds for it).

A new fact's witness is, among the derivations of the round that made it whose body witnesses
are fewest in total, the least (the cap's order: size, then ranks) of their unions, as witness.py
chooses; a stated fact's is its least assertion, the empty
set for background knowledge.  Exactness is settled once the closure is (``settle``): a
witness is the whole minimal DNF only when the fact has one way to hold (witness.py).  The
circuit of every inexact fact is written from ``gates`` (``copy_circuit``) as the graph
folder's derivations, fact numbers and all, without a fact passing through Python.
"""

from __future__ import annotations

#: a table of fact ids: every fact of the evaluation, stated or made, gets the next one
SEQUENCE = "fact_ids"
GATES = "gates"
#: every fact's witness by its id: the r<n> tables united
WITNESSES = "witnesses"
#: facts derived again after the round that made them: their circuit is not all stored
UNSTORED = "unstored"
#: the rule number of a circuit row that marks a fact whose derivations are not all stored
UNSTORED_RULE = -1
#: facts whose witness is not exact, found by ``settle``
INEXACT = "inexact"


def create(con, plan) -> None:
    """The sequence of fact ids and the (empty) table of derivations."""
    con.execute(f"CREATE SEQUENCE {SEQUENCE} START 1")
    con.execute(f"CREATE TABLE {GATES} (head INTEGER, rn INTEGER, body INTEGER[])")
    con.execute(f"CREATE TABLE {UNSTORED} (id INTEGER)")


def create_view(con, plan) -> None:
    """The view of every fact's witness by its id (once the r<n> tables exist)."""
    con.execute(f"CREATE VIEW {WITNESSES} AS " + " UNION ALL ".join(
        f"SELECT id, label[1] AS w FROM {plan.table(relation)}" for relation in plan.relations))


#: a round whose derivations of facts held already are at most this many keeps them (no mark):
#: a graph without hubs keeps its whole circuit, and a what-if or an expansion on it never needs
#: the rules (x40 without hubs: 65,705 derivations in all; with 40 hubs on both sides, rounds of
#: 10-60 M)
KEPT_AGAIN = 1_000_000


def next_id(con) -> int:
    """The fact id the sequence gives next."""
    last = con.execute(f"SELECT last_value FROM duckdb_sequences() WHERE sequence_name = '{SEQUENCE}'").fetchall()
    return (last[0][0] or 0) + 1 if last else 1


def new_heads(plan, relation: str) -> str:
    """The table of a round's new heads of ``relation`` with their ids (``heads``)."""
    return f"n{plan.relations[relation]}"


def heads(con, plan, relation: str, parts: list[str]) -> str | None:
    """From ``parts`` (the round's Boolean derivations of ``relation``: keys alone): when the
    derivations of facts ``relation`` holds already are more than KEPT_AGAIN, marks those facts
    ``unstored`` and returns the table of the new heads' keys, each with its fact's id
    (``new_heads``), the only heads whose derivations the round makes (Plan.contributions'
    ``restrict``); else None, and the round makes them all."""
    number = plan.relations[relation]
    keys = ", ".join(plan.keys(relation))
    # each part's heads counted as the join makes them (a hash aggregate: its derivations are never
    # held all at once), then the heads once each, with their derivations counted and the id of
    # the fact held already (NULL: new): one join with the relation, not one for the count, the
    # marks and the new heads (x40 with 40 hubs, a round of 20 M derivations of 2.2 M heads: 1.4 s
    # -> 0.7 s)
    for i, part in enumerate(parts):
        counted = f"SELECT {keys}, count(*) AS n FROM ({part}) d GROUP BY {keys}"
        con.execute(f"CREATE OR REPLACE TEMP TABLE k{number} AS {counted}" if i == 0 else f"INSERT INTO k{number} {counted}")
    con.execute(f"CREATE OR REPLACE TEMP TABLE h{number} AS SELECT g.*, r.id FROM (SELECT {keys}, sum(n) AS n "
                f"FROM k{number} GROUP BY {keys}) g LEFT JOIN {plan.table(relation)} r USING ({keys})")
    con.execute(f"DROP TABLE k{number}")
    again = con.execute(f"SELECT coalesce(sum(n), 0) FROM h{number} WHERE id IS NOT NULL").fetchall()[0][0]
    if again <= KEPT_AGAIN:
        con.execute(f"DROP TABLE h{number}")
        return None
    con.execute(f"INSERT INTO {UNSTORED} SELECT id FROM h{number} WHERE id IS NOT NULL")
    # the new facts' ids given here: each derivation then names its head by it, and the round's
    # grouping and recording need no join on the keys (x40 with 40 hubs, a round: 6.9 -> 5.1 s)
    con.execute(f"CREATE OR REPLACE TEMP TABLE n{number} AS "
                f"{with_ids(f'SELECT {keys} FROM h{number} WHERE id IS NULL')}")
    con.execute(f"DROP TABLE h{number}")
    return new_heads(plan, relation)


def derivations(text: str, keys: list[str], atoms: int, restrict: str | None = None) -> str:
    """``text``'s derivations (keys, l0, e0, ..., rn: the body facts' witnesses' sizes and ids)
    as ``c<n>`` holds them (Plan.fold): (keys, rn, body, total), the body's fact ids as a set
    (ascending, each once) and their witnesses' sizes summed; ``restrict``: a table of keys with
    ids (``heads``), the only heads wanted, then named by their ids (``h``) instead of their keys."""
    ids = ", ".join(f"e{n}" for n in range(atoms))
    # the sizes of the body facts' witnesses summed, each body fact once (new_facts)
    total = " + ".join([f"l{n}" if n == 0 else
                        f"CASE WHEN e{n} IN ({', '.join(f'e{m}' for m in range(n))}) THEN 0 ELSE l{n} END"
                        for n in range(atoms)])
    body = f"[{ids}]" if atoms == 1 else f"list_sort(list_distinct([{ids}]))"
    if atoms == 2:  # most bodies: their set without a list function (x40 with hubs, 8.9 M: 3.1 -> 0.4 s)
        body = "CASE WHEN e0 < e1 THEN [e0, e1] WHEN e0 > e1 THEN [e1, e0] ELSE [e0] END"
    head, only = (("id AS h", f" JOIN {restrict} USING ({', '.join(keys)})") if restrict else (", ".join(keys), ""))
    return (f"SELECT {head}, rn, {body} AS body, CAST({total} AS INTEGER) AS total "
            f"FROM ({text}) s{only}")


def relation_columns(plan, relation: str) -> str:
    """The columns of a relation's ``r``/``d`` table under witness labels."""
    keys = ", ".join(f"{k} INTEGER" for k in plan.keys(relation))
    return f"{keys}, label INTEGER[][], exact BOOLEAN, id INTEGER"


def with_ids(select: str) -> str:
    """``select``'s rows, each with the next fact id (``id``)."""
    return f"SELECT *, CAST(nextval('{SEQUENCE}') AS INTEGER) AS id FROM ({select}) n"


def new_facts(plan, relation: str, restricted: bool = False) -> str:
    """The facts of ``c<n>`` that ``r<n>`` does not hold (``restricted``: those of ``n<n>``,
    their ids given, ``c<n>`` naming them by id), each with its witness (provenance/witness.py:
    the least union among its derivations whose body witnesses are fewest in total, ``total``),
    exact until ``settle`` says otherwise, and a new id."""
    number = plan.relations[relation]
    if restricted:
        witnesses = chosen(f"c{number}", "h")
        keys = ", ".join(f"n.{k}" for k in plan.keys(relation))
        return (f"SELECT {keys}, w.label, TRUE AS exact, n.id FROM {new_heads(plan, relation)} n "
                f"JOIN ({witnesses}) w ON w.h = n.id")
    keys = ", ".join(plan.keys(relation))
    new = f"(SELECT * FROM c{number} ANTI JOIN {plan.table(relation)} USING ({keys}))"
    return with_ids(f"SELECT {keys}, label, TRUE AS exact FROM ({chosen(new, keys)}) w")


def chosen(derivations: str, keys: str) -> str:
    """(keys, label): the witness of each head of ``derivations`` (a table or a subquery of
    ``c<n>``'s columns), its heads named by ``keys`` (columns)."""
    least = "[arg_min(u, list_prepend(CAST(len(u) AS INTEGER), u))]"
    # a derivation's union of its body's witnesses is made here, for the new facts' derivations
    # whose totals are their fact's least only: most derivations of a round with hubs are of facts
    # held already, and most of a new fact's are not the fewest (x40 with 40 hubs, a round: 2.3 M
    # of 8.9 M, one thread 10.8 s -> 3.4 s).  The union is the sorted concatenation without its
    # repeats (each next to its first): list_distinct hashes every element (8.9 M: 3.9 s -> 1.9 s)
    union = "list_filter(s, lambda x, i: i = 1 OR x <> s[i - 1])"
    fewest = (f"SELECT c.* FROM {derivations} c JOIN (SELECT {keys}, min(total) AS least FROM {derivations} "
              f"GROUP BY {keys}) m USING ({keys}) WHERE c.total = m.least")
    # their body facts' witnesses read by id, for these derivations only (x40 with 40 hubs, a
    # round of 16 M derivations: 16.1 -> 9.6 s, the joins carrying sizes, not witnesses): a body
    # of one or two facts by a join a position, a longer one through its facts unnested and
    # gathered again (``dn``)
    named = ", ".join(f"any_value(u.{key}) AS {key}" for key in keys.split(", "))
    short = (f"SELECT {keys}, list_sort(list_concat(coalesce(w1.w, []::INTEGER[]), coalesce(w2.w, []::INTEGER[]))) "
             f"AS s FROM fw LEFT JOIN wn w1 ON w1.id = fw.body[1] LEFT JOIN wn w2 "
             f"ON w2.id = fw.body[2] WHERE len(fw.body) <= 2")
    bodies = f"SELECT row_number() OVER () AS dn, {keys}, unnest(body) AS b FROM fw WHERE len(body) > 2"
    long = (f"SELECT {named}, list_sort(flatten(list(w.w))) AS s FROM ({bodies}) u "
            f"JOIN wn w ON w.id = u.b GROUP BY u.dn")
    needed = f"SELECT w.* FROM {WITNESSES} w SEMI JOIN (SELECT unnest(body) AS b FROM fw) x ON x.b = w.id"
    return (f"WITH fw AS MATERIALIZED ({fewest}), wn AS MATERIALIZED ({needed}) SELECT {keys}, {least} AS label FROM (SELECT {keys}, {union} AS u "
            f"FROM ({short} UNION ALL {long}) f) n GROUP BY {keys}")


def record(con, plan, relation: str, restricted: bool = False) -> None:
    """Adds the derivations of ``c<n>`` to ``gates``, each head by its id (a fact ``r<n>`` held
    before the round, or one of the round's new facts in ``d<n>``; ``restricted``: ``c<n>`` holds
    the new facts' derivations only, named by id).  A round finds each rule instance once
    (Plan.fresh): no DISTINCT."""
    number = plan.relations[relation]
    if restricted:
        con.execute(f"INSERT INTO {GATES} SELECT h, rn, body FROM c{number}")
        return
    keys = ", ".join(plan.keys(relation))
    heads = (f"SELECT {keys}, id FROM {plan.table(relation)} UNION ALL "
             f"SELECT {keys}, id FROM {plan.table(relation, delta=True)}")
    con.execute(f"INSERT INTO {GATES} SELECT h.id, c.rn, c.body FROM c{number} c JOIN ({heads}) h USING ({keys})")


def settle(con, plan, stated: int) -> int:
    """Marks inexact every fact with more than one way to hold (stating assertions, and sets of
    body facts: two rules over the same facts are one way), then every fact whose only way
    has an inexact body fact, until none is added; facts of ids up to ``stated`` are
    the stated ones (loaded before any round).  A derivation whose body holds the fact itself is
    no way to hold it; a witness that is empty (label 1) is exact; a fact derived again after the
    round that made it (``unstored``) has more than one way.  Returns the inexact facts."""
    facts = " UNION ALL ".join(f"SELECT id, label, exact FROM {plan.table(relation)}" for relation in plan.relations)
    # n: 1 when every derivation of the head has one body, else 2 (what is read of it; no
    # count(DISTINCT) of the bodies: x40 with hubs, 8.9 M derivations, 3.0 -> 2.4 s)
    con.execute(f"CREATE TEMP TABLE ways AS SELECT head, CASE WHEN min(body) = max(body) THEN 1 ELSE 2 END AS n "
                f"FROM {GATES} WHERE NOT list_contains(body, head) GROUP BY head")
    con.execute(f"CREATE TEMP TABLE again AS SELECT DISTINCT id FROM {UNSTORED}")
    con.execute(f"""CREATE TABLE {INEXACT} AS SELECT f.id FROM ({facts}) f LEFT JOIN ways w ON w.head = f.id
                    LEFT JOIN again a ON a.id = f.id
                    WHERE len(f.label[1]) > 0 AND (a.id IS NOT NULL OR CASE WHEN f.id <= {stated}
                          THEN NOT f.exact OR w.n IS NOT NULL ELSE w.n > 1 END)""")
    # the body facts of each fact made by one derivation, whose witness is its body's union
    con.execute(f"""CREATE TEMP TABLE single AS SELECT g.head, unnest(g.body) AS b FROM {GATES} g
                    JOIN ways w ON w.head = g.head AND w.n = 1
                    WHERE g.head > {stated} AND NOT list_contains(g.body, g.head)""")
    con.execute(f"CREATE TEMP TABLE newest AS SELECT id FROM {INEXACT}")
    while True:
        con.execute(f"""CREATE OR REPLACE TEMP TABLE found AS SELECT DISTINCT s.head AS id FROM single s
                        JOIN newest n ON n.id = s.b ANTI JOIN {INEXACT} i ON i.id = s.head""")
        added = con.execute("SELECT count(*) FROM found").fetchall()[0][0]
        if not added:
            break
        con.execute(f"INSERT INTO {INEXACT} SELECT id FROM found")
        con.execute("CREATE OR REPLACE TEMP TABLE newest AS SELECT id FROM found")
    con.execute(f"DELETE FROM {UNSTORED}")  # those of label 1 are exact: no circuit at all
    con.execute(f"INSERT INTO {UNSTORED} SELECT a.id FROM again a SEMI JOIN {INEXACT} i ON i.id = a.id")
    for name in ("ways", "single", "newest", "found", "again"):
        con.execute(f"DROP TABLE IF EXISTS {name}")
    for relation in plan.relations:
        con.execute(f"UPDATE {plan.table(relation)} SET exact = (id NOT IN (SELECT id FROM {INEXACT}))")
    return con.execute(f"SELECT count(*) FROM {INEXACT}").fetchall()[0][0]


def copy_circuit(con, target: str, facts: str = "fx", options: str = "FORMAT parquet") -> None:
    """Writes the derivations of every inexact fact to ``target`` as the folder stores them
    (circuit_rows.py): (fact, rule, body) with fact numbers from ``facts`` (a table of ``num``,
    ``fid``, ``one`` and ``exact``), body facts of label 1 left out, a derivation whose body holds
    the fact left out, each body once (the least rule that gives it), a row of rule UNSTORED_RULE and
    body ``[]`` for each ``unstored`` fact, ordered by fact, rule and body.  Drops ``gates`` as soon as it is read, and ``inexact`` (``facts``' ``exact`` says the same).

    A body of one or two facts (all but a few thousand of the derivations) is numbered by a join
    a position, a longer one through its unnested facts, regrouped; each step is a table of its
    own, and what it read is dropped, so that the next runs in the memory freed.  At x40 with 40
    hubs shared on both sides (86 M derivations, a 4 GB limit) this took 127 s, one statement
    doing the same 269 s, and every body numbered through its unnested facts 274 s."""
    run = con.execute
    run(f"""CREATE TEMP TABLE circuit_d AS SELECT h.num AS fact, g.rn, g.body FROM {GATES} g
            JOIN {facts} h ON h.fid = g.head WHERE NOT h.exact AND NOT list_contains(g.body, g.head)""")
    for table in (GATES, INEXACT):
        run(f"DROP TABLE {table}")
    run(f"CREATE TEMP TABLE circuit_m AS SELECT fid, CASE WHEN one THEN NULL ELSE num END AS num FROM {facts}")
    # a set of at most two numbers (NULL: a body fact of label 1, left out) as two columns, the
    # lesser first (``circuit_p``: most bodies; grouped and ordered as integers, not lists: x40 with
    # 40 hubs, 20 M bodies, 10.4 -> 7.7 s), a longer one as a list (``circuit_l``)
    run("""CREATE TEMP TABLE circuit_p AS SELECT fact, rn,
               CASE WHEN x IS NULL THEN y WHEN y IS NULL THEN x ELSE least(x, y) END AS a,
               CASE WHEN x IS NULL OR y IS NULL OR x = y THEN NULL ELSE greatest(x, y) END AS b FROM (
               SELECT d.fact, d.rn, b0.num AS x, b1.num AS y FROM circuit_d d LEFT JOIN circuit_m b0 ON b0.fid = d.body[1]
               LEFT JOIN circuit_m b1 ON b1.fid = d.body[2] WHERE len(d.body) <= 2)""")
    run("""CREATE TEMP TABLE circuit_l AS SELECT any_value(fact) AS fact, any_value(rn) AS rn,
               list_sort(list_distinct(list(num))) AS nums FROM (
               SELECT u.k, u.fact, u.rn, m.num FROM (SELECT row_number() OVER () AS k, fact, rn, unnest(body) AS b
                                                     FROM circuit_d WHERE len(body) > 2) u
               LEFT JOIN circuit_m m ON m.fid = u.b) l GROUP BY k""")
    run("DROP TABLE circuit_d")
    run("DROP TABLE circuit_m")
    # a longer body whose facts of label 1 leave two numbers or fewer is one of the short ones
    run("INSERT INTO circuit_p SELECT fact, rn, nums[1], nums[2] FROM circuit_l WHERE len(nums) <= 2")
    run("CREATE TEMP TABLE circuit_g AS SELECT fact, min(rn) AS rule, a, b FROM circuit_p GROUP BY fact, a, b")
    run("CREATE TEMP TABLE circuit_gl AS SELECT fact, min(rn) AS rule, nums FROM circuit_l WHERE len(nums) > 2 "
        "GROUP BY fact, nums")
    for table in ("circuit_p", "circuit_l"):
        run(f"DROP TABLE {table}")
    marks = (f"SELECT DISTINCT h.num AS fact, {UNSTORED_RULE} AS rule, '[]' AS body FROM {UNSTORED} u "
             f"JOIN {facts} h ON h.fid = u.id")
    short = ("CASE WHEN a IS NULL THEN '[]' WHEN b IS NULL THEN '[' || a || ']' "
             "ELSE '[' || a || ', ' || b || ']' END")
    run(f"""COPY (SELECT fact, rule, {short} AS body FROM circuit_g
                  UNION ALL SELECT fact, rule, '[' || array_to_string(nums, ', ') || ']' FROM circuit_gl
                  UNION ALL {marks} ORDER BY fact, rule, body) TO '{target}' ({options})""")
    run("DROP TABLE circuit_g")
    run("DROP TABLE circuit_gl")
    run(f"DROP TABLE {UNSTORED}")


__all__ = ["GATES", "INEXACT", "SEQUENCE", "UNSTORED", "UNSTORED_RULE", "WITNESSES", "chosen", "create", "create_view",
           "derivations", "heads", "new_facts", "new_heads", "next_id", "record", "relation_columns", "settle",
           "copy_circuit", "with_ids"]
