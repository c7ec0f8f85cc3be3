"""The store's questions by meaning: the rows a query module asks for, each one indexed query.

``Graph`` inherits these; nothing outside ``graph/store`` writes SQL for a graph file.
Lists of values travel as one JSON parameter (``json_each``), so a query's text never
grows with the number of values asked about.
"""

from __future__ import annotations

import json
from typing import Iterable, Iterator

from polygraph_logic.graph.kinds import DEFAULT_KIND, KINDS, check_kinds
from polygraph_logic.graph.store.rows import fact_key, key_value
from polygraph_logic.graph.store.views import Rows


#: the most background facts an explanation holds in memory (beyond: every look-up is a query)
BACKGROUND_HELD = 200_000
#: the most rules of one head relation a reader holds (beyond: rules are found by SQL)
RULES_HELD = 5_000


def _json(values) -> str:
    return json.dumps(list(values))



def rule_groups(heads: list[tuple[int, tuple]]) -> dict:
    """Rule heads (``Questions.rule_heads``) grouped: {positions holding constants: {those constants:
    [rule numbers]}}."""
    groups: dict = {}
    for number, constants in heads:
        positions = tuple(p for p, c in enumerate(constants) if c is not None)
        groups.setdefault(positions, {}).setdefault(tuple(constants[p] for p in positions), []).append(number)
    return groups


def matching_rules(groups: dict, args: tuple) -> list[int]:
    """The numbers of the rules in ``groups`` (``rule_groups``) whose head can derive a fact with ``args``."""
    keys = [key_value(v) for v in args[:3]]
    numbers = []
    for positions, by_values in groups.items():
        if len(keys) > max(positions, default=-1):
            numbers += by_values.get(tuple(keys[p] for p in positions), ())
    return sorted(numbers)


class Questions:
    """Rows by meaning (mixed into ``Graph``, whose ``query`` runs them)."""

    # --- what a deletion touches --------------------------------------------------------
    def touched_artifacts(self, deleted: Iterable[int]) -> list[tuple]:
        """Returns ``(num, id, layer, fact, summary, args, label, exact)`` of every artifact whose
        label mentions one of the assertion numbers ``deleted`` (Store.touched_artifacts)."""
        return self.store.touched_artifacts(sorted(deleted))

    def touched_facts(self, deleted: Iterable[int]) -> list[tuple]:
        """Returns ``(num, relation, args, label, exact)`` of every fact whose label mentions one of
        the assertion numbers ``deleted``, in fact order (Store.touched_facts)."""
        return self.store.touched_facts(sorted(deleted))

    def artifact_labels(self, deleted: Iterable[int] | None = None) -> Iterator[tuple]:
        """Yields ``(num, id, layer, fact, summary, args, label, exact)`` of every artifact, or (``deleted``)
        of those whose label mentions one of these assertion numbers, streamed in no set order
        (Store.artifact_labels)."""
        return self.store.artifact_labels(None if deleted is None else sorted(deleted))

    def artifact_label_rows(self, numbers: Iterable[int]) -> list[tuple]:
        """``(num, id, layer, fact, summary, args, label, exact)`` of the artifacts numbered
        ``numbers`` (as ``artifact_labels``), in number order: their rows, then their facts by number."""
        numbers = sorted(set(numbers))
        if not numbers:
            return []
        rows = self.query("SELECT num, id, layer, fact, summary FROM artifacts WHERE num IN "
                          "(SELECT value FROM json_each(?)) ORDER BY num", (_json(numbers),)).fetchall()
        facts = {row[0]: row[1:] for row in self.query(
            "SELECT num, args, label, exact FROM facts WHERE num IN (SELECT value FROM json_each(?))",
            (_json(sorted({row[3] for row in rows})),))}
        return [(*row, *facts[row[3]]) for row in rows if row[3] in facts]

    def mention_count(self, deleted: Iterable[int]) -> int:
        """Returns how many (assertion, fact) mentions the assertion numbers ``deleted`` have (indexed)."""
        return self.query("SELECT count(*) FROM mentions WHERE assertion IN (SELECT value FROM json_each(?))",
                          (_json(sorted(deleted)),)).fetchone()[0]

    def capped_facts(self, deleted: Iterable[int] | None = None) -> "Rows":
        """``(num, relation, args, label)`` of the facts whose label the cap truncated, streamed: every
        one, or (``deleted``) those whose label mentions one of these assertion numbers."""
        if deleted is None:
            return self.query("SELECT num, relation, args, label FROM facts WHERE NOT exact")
        return self.query("SELECT num, relation, args, label FROM facts WHERE NOT exact AND num IN "
                          "(SELECT fact FROM mentions WHERE assertion IN (SELECT value FROM json_each(?)))",
                          (_json(sorted(deleted)),))

    def fact_labels(self, numbers: Iterable[int], chunk: int = 10_000) -> Iterator[tuple]:
        """Yields ``(num, label)`` of the facts numbered ``numbers`` that the version read holds,
        ``chunk`` numbers a query."""
        numbers = sorted(set(numbers))
        for start in range(0, len(numbers), chunk):
            yield from self.query("SELECT num, label FROM facts WHERE num IN (SELECT value FROM json_each(?))",
                                  (_json(numbers[start:start + chunk]),)).fetchall()

    def support_scope(self, numbers: Iterable[int]) -> list[tuple] | None:
        """Returns ``(num, relation, args, label)`` of every fact a derivation from the assertions
        ``numbers`` alone may use: the facts whose labels mention one of them, and the facts of
        background knowledge (label one), in fact order; None when the graph cannot tell its
        background facts apart without a scan (a store without the look-up file of them: a file,
        a folder written before it), and each look-up is then asked of the whole graph."""
        table = self.store.lookup("background_facts")
        if table is None:
            return None
        if "_background" not in self.__dict__:  # a store with look-up files never changes: read once
            one = "[[]]"  # the label one, as a folder's labels read
            rows = self.query(f"SELECT num, relation, args FROM {table} LIMIT ?",
                              (BACKGROUND_HELD + 1,)).fetchall()
            self._background = None if len(rows) > BACKGROUND_HELD else [(*row, one) for row in rows]
        if self._background is None:
            return None
        return sorted([row[:4] for row in self.touched_facts(numbers)] + self._background)

    def edge_rows(self, args_keys: Iterable[str]) -> list[tuple]:
        """Returns ``(args, num, label, exact)`` of the ``edge`` facts with these argument keys."""
        keys = sorted(args_keys)
        if not (self.store.sorted_args and keys):
            return self.query("SELECT args, num, label, exact FROM facts WHERE relation = 'edge' AND args IN "
                              "(SELECT value FROM json_each(?))", (_json(keys),)).fetchall()
        # facts sorted by their arguments' text: the keys' range skips the row groups outside it
        # (x40, 10,000 claims' edges: 0.37 -> 0.07 s)
        return self.query("SELECT args, num, label, exact FROM facts WHERE relation = 'edge' AND args >= ? "
                          "AND args <= ? AND args IN (SELECT value FROM json_each(?))",
                          (keys[0], keys[-1], _json(keys))).fetchall()

    def fact_label(self, relation: str, args: tuple) -> bytes | None:
        """Returns the stored label of one fact (coded, see ``decode``), or None when it is not stored."""
        row = self.query("SELECT label FROM facts WHERE relation = ? AND args = ?",
                         (relation, fact_key(args))).fetchone()
        return None if row is None else row[0]

    def last_assertion(self) -> int:
        """The greatest assertion number (0: none)."""
        return self.query("SELECT max(num) FROM assertions").fetchone()[0] or 0

    def batch_rows(self, assertions: Iterable[int], chunk: int = 10_000) -> tuple[list, list, list]:
        """The rows a batch of what-ifs retracting ``assertions`` reads (query/whatif_batch.py):
        ``(assertion, fact)`` of their mentions, ``(num, relation, args, label, exact)`` of the facts
        those reach and ``(num, id, layer, fact, summary)`` of those facts' artifacts, ``chunk``
        numbers a query (a folder prunes its row groups by them)."""
        def chunks(numbers):
            numbers = sorted(set(numbers))
            return [_json(numbers[i:i + chunk]) for i in range(0, len(numbers), chunk)]

        mentions = [row for part in chunks(assertions) for row in self.query(
            "SELECT assertion, fact FROM mentions WHERE assertion IN (SELECT value FROM json_each(?))", (part,))]
        facts = [row[1] for row in mentions]
        rows = [row for part in chunks(facts) for row in self.query(
            "SELECT num, relation, args, label, exact FROM facts WHERE num IN (SELECT value FROM json_each(?))",
            (part,))]
        artifacts = [row for part in chunks(facts) for row in self.query(
            "SELECT num, id, layer, fact, summary FROM artifacts WHERE fact IN (SELECT value FROM json_each(?))",
            (part,))]
        return mentions, rows, artifacts

    def summary_parts(self, summaries: Iterable[int]) -> list[tuple]:
        """Returns ``(summary, num, id, layer)`` of the sentence-level summaries numbered
        ``summaries`` and of their sentences, in artifact order."""
        return self.query("SELECT summary, num, id, layer FROM artifacts WHERE summary IN "
                          "(SELECT value FROM json_each(?)) ORDER BY num", (_json(sorted(set(summaries))),)).fetchall()

    def sentence_ids(self, summary_id: str) -> list[str]:
        """Returns the ids of a sentence-level summary's sentences, sorted."""
        return [row[0] for row in self.query(
            "SELECT s.id FROM artifacts s JOIN artifacts a ON s.summary = a.num "
            "WHERE a.id = ? AND s.layer = 'sentence' ORDER BY s.id", (summary_id,))]

    # --- facts by bound arguments (re-derivation, explanations) --------------------------
    def bound_facts(self, relation: str, bound: Iterable[tuple[int, object]], columns: str = "args",
                    limit: int | None = None, ordered: bool = False, after: str | None = None) -> "Rows":
        """The stored facts of ``relation`` whose arguments at the given positions hold the given
        values (``bound``: ``(position, value)`` pairs; only the first three positions are keyed,
        and the stored keys may match more: callers re-check the decoded arguments).  A file reads
        its ``k0..k2`` indexes; a store whose facts are sorted by their arguments turns the leading
        bound positions into a range of the ``args`` text, which skips the row groups outside it,
        and reads its look-up file sorted by the third argument when only that is bound.
        ``ordered``: in the order of the ``args`` text (which ``columns`` must hold); ``after``: only
        those whose ``args`` text comes after it (with ``ordered`` and ``limit``, a page at a time)."""
        keyed = dict((p, v) for p, v in bound if p < 3)
        where, parameters = ["relation = ?"], [relation]
        leading = []
        if self.store.sorted_args:
            while len(leading) in keyed:
                leading.append(keyed.pop(len(leading)))
        table = "facts"
        k2_table = self.store.lookup("facts_by_k2") if not leading and 2 in keyed else None
        by_k2 = k2_table is not None
        if leading:
            prefix = fact_key(leading)[:-1]  # '["a", "b"' starts the text of every fact beginning a, b
            where.append("args >= ? AND args < ?")
            parameters += [prefix, prefix + "\U0010ffff"]
        elif by_k2:
            table = k2_table  # sorted by relation and third argument
        for position, value in sorted(keyed.items()):
            where.append(f"k{position} = ?")
            parameters.append(self.key(value))
        if after is not None:
            where.append("args > ?")
            parameters.append(after)
        order = " ORDER BY args" if ordered else ""
        limited = "" if limit is None else f"{order} LIMIT {int(limit)}"
        if by_k2 and not set(columns.split(", ")) <= {"args", "num"}:
            # the numbers from the look-up file, then the rows by number (facts sorted by number:
            # a row group or two each), rather than every fact of the relation scanned; one query
            return self.query(f"SELECT {columns} FROM facts WHERE num IN (SELECT num FROM {table} WHERE "
                              f"{' AND '.join(where)}{limited}){order}", parameters)
        return self.query(f"SELECT {columns} FROM {table} WHERE {' AND '.join(where)}{limited or order}", parameters)

    def bound_facts_among(self, relation: str, positions: tuple[int, ...], keys: Iterable[tuple],
                          columns: str = "args") -> "Rows":
        """The stored facts of ``relation`` whose arguments at ``positions`` hold one of ``keys``
        (value tuples), in one query, and maybe more: callers re-check (as ``bound_facts``'s do).
        Facts sorted by their arguments' text are read by ranges of it (``_sorted_among``); else
        those whose keyed position (below 3) with the most distinct values among the keys holds
        one of them (a predicate shared by every key would read the whole relation)."""
        keyed = [i for i, p in enumerate(positions) if p < 3]
        if not keyed:
            return self.bound_facts(relation, (), columns)
        keys = list(keys)
        if self.store.sorted_args:
            found = self._sorted_among(relation, positions, keys, columns)
            if found is not None:
                return found
        first = max(keyed, key=lambda i: len({key[i] for key in keys}))
        values = sorted({json.dumps(self.key(key[first])) for key in keys})
        return self.query(f"SELECT {columns} FROM facts WHERE relation = ? AND k{positions[first]} IN "
                          "(SELECT value FROM json_each(?))", (relation, "[" + ", ".join(values) + "]"))

    def _sorted_among(self, relation: str, positions: tuple[int, ...], keys: list[tuple], columns: str):
        """``bound_facts_among`` where facts are sorted by their arguments' text (a folder): the
        keys' leading arguments as ranges of it, joined with the facts in one pass (x40, 67 keys:
        0.06 s, where a query a key took 1.6 s and the keys' text matched on every fact 0.3 s); or
        the look-up file sorted by the third argument, then the facts by number.  None: neither."""
        place = {p: i for i, p in enumerate(positions)}
        leading = []
        while len(leading) in place:
            leading.append(len(leading))
        if leading:
            prefixes = sorted({fact_key([key[place[p]] for p in leading])[:-1] for key in keys})
            selected = ", ".join(f"f.{c.strip()}" for c in columns.split(","))
            return self.query(f"SELECT {selected} FROM facts f JOIN (SELECT unnest(?::VARCHAR[]) AS lo) k "
                              "ON f.relation = ? AND f.args >= k.lo AND f.args < k.lo || chr(1114111)",
                              (prefixes, relation))
        table = self.store.lookup("facts_by_k2")
        if 2 in place and table is not None:
            values = sorted({self.key(key[place[2]]) for key in keys}, key=str)
            # one query, not the numbers and then their rows (x40, 30 values: 58 -> 27 ms)
            return self.query(f"SELECT {columns} FROM facts WHERE num IN (SELECT num FROM {table} WHERE relation = ? "
                              "AND k2 IN (SELECT unnest(?::VARCHAR[])))", (relation, values))
        return None

    def facts_named(self, relation: str, args_keys: list[str]) -> "Rows":
        """``args, label, exact`` of the stored facts of ``relation`` among ``args_keys`` (fact_key texts)."""
        return self.query("SELECT args, label, exact FROM facts WHERE relation = ? AND args IN "
                          "(SELECT value FROM json_each(?))", (relation, json.dumps(args_keys)))

    def artifact_number(self, artifact_id: str) -> int | None:
        """An artifact's number, or None (by its index, or a look-up file sorted by id)."""
        # a store that never changes keeps them (a command checks an id, then reads it)
        known = self.__dict__.setdefault("_artifact_numbers", {}) if self.store.fixed else {}
        if artifact_id not in known:
            table = self.store.lookup("artifacts_by_id") or "artifacts"
            row = self.query(f"SELECT num FROM {table} WHERE id = ?", (artifact_id,)).fetchone()
            known[artifact_id] = None if row is None else row[0]
        return known[artifact_id]

    def rules_for(self, relation: str, args: tuple) -> list[int]:
        """The numbers of the rules whose head can derive ``relation(args)``: head relation
        ``relation``, and each of the first three head constants either absent or equal to the
        goal's argument.  The heads of a relation's rules are read once and grouped (kept for
        later goals); a relation with more than RULES_HELD rules (one per receipt) is asked of
        the store goal by goal instead (``head_key``: the heads' constants as it holds them)."""
        keys = [key_value(v) for v in args[:3]]
        groups = self._rule_groups(relation)
        if groups is None:
            where, parameters = ["relation = ?"], [relation]
            for i in range(3):
                if i < len(keys):
                    where.append(f"(c{i} IS NULL OR c{i} = ?)")
                    parameters.append(self.store.head_key(keys[i]))
                else:
                    where.append(f"c{i} IS NULL")
            return [row[0] for row in self.query(f"SELECT num FROM {self._rules_by_head()} "
                                                 f"WHERE {' AND '.join(where)} ORDER BY num",
                                                 parameters)]
        return matching_rules(groups, args)

    def _rule_groups(self, relation: str) -> dict | None:
        """{positions holding constants: {those constants: [rule numbers]}} of the rules with head
        ``relation`` (None: a relation with too many rules to hold)."""
        cache = self.__dict__.setdefault("_held_rule_groups", {})
        if relation not in cache:
            heads = self.rule_heads(relation, limit=RULES_HELD + 1)
            cache[relation] = None if len(heads) > RULES_HELD else rule_groups(heads)
        return cache[relation]

    # --- retraction bounds (top-sources) ---------------------------------------------------
    def label_kills(self) -> dict[str, int]:
        """Returns {source: how many artifacts have an assertion of that source in every support
        set}: the artifacts retracting the source kills by their labels alone, an upper bound of
        what a trust-all what-if calls dead (it keeps demoted claims and trimmed summaries, and
        calls a capped label uncertain).  Counted by the store (Store.label_kills)."""
        return self.store.label_kills()

    # --- history ----------------------------------------------------------------------
    def version_rows(self) -> list[dict]:
        """Returns every version of the graph (number, time, command, action, record, parent, stats)."""
        return self.store.version_rows()

    # --- assertions -------------------------------------------------------------------
    def assertion_numbers(self) -> dict[str, int]:
        """Returns {assertion id: number} of every assertion (a whole-table read: for applying)."""
        return {name: num for num, name in self.query("SELECT num, id FROM assertions")}

    def assertion_ids_from(self, prefix: str, limit: int = 200) -> list[str]:
        """Returns up to ``limit`` assertion ids at or after ``prefix`` in index order."""
        return [row[0] for row in self.query("SELECT id FROM assertions WHERE id >= ? ORDER BY id LIMIT ?",
                                             (prefix, limit))]

    def sources_of(self, assertion_ids: Iterable[str]) -> dict[str, str]:
        """Returns {assertion id: source} for the given ids (their numbers found by id, then their
        rows by number)."""
        return {name: assertion.source
                for name, (_, assertion) in self.assertions.named(sorted(set(assertion_ids))).items()}

    # --- kinds (graph/kinds.py defines them) --------------------------------------------
    @property
    def has_kinds(self) -> bool:
        """True when the file stores kinds (graphs built before kinds did not: all source claims)."""
        return "kind" in self.assertion_columns

    def numbers_by_source(self, sources: Iterable[str]) -> "Rows":
        """``(num, id, source)`` of the assertions of ``sources`` (indexed)."""
        return self.query(f"SELECT num, id, source FROM {self.store.assertions_by('source')} WHERE source IN "
                          "(SELECT value FROM json_each(?))", (_json(sorted(set(sources))),))

    def kind_numbers(self, kinds: Iterable[str]) -> dict[int, str]:
        """Returns {assertion number: id} of the graph's assertions of the given kinds (indexed)."""
        return dict(self.of_kinds(kinds, "num, id"))

    def of_kinds(self, kinds: Iterable[str], columns: str = "num") -> Iterable[tuple]:
        """``columns`` of the graph's assertions of the given kinds, streamed (indexed)."""
        kinds = check_kinds(kinds)
        if not kinds or not (self.has_kinds or DEFAULT_KIND in kinds):
            return iter(())
        if not self.has_kinds:
            return self.query(f"SELECT {columns} FROM assertions")
        return self.query(f"SELECT {columns} FROM assertions WHERE kind IN (SELECT value FROM json_each(?))",
                          (_json(kinds),))

    def kinds_of(self, assertion_ids: Iterable[str]) -> dict[str, str]:
        """Returns {assertion id: kind} for the given ids."""
        ids = list(dict.fromkeys(assertion_ids))
        if not self.has_kinds:
            return dict.fromkeys(ids, DEFAULT_KIND)
        found = dict(self.query("SELECT id, kind FROM assertions WHERE id IN (SELECT value FROM json_each(?))",
                                (_json(ids),)))
        return {i: found.get(i) or DEFAULT_KIND for i in ids}

    # --- evidence metadata (graph/evidence.py) ---------------------------------------------
    @property
    def has_evidence(self) -> bool:
        """True when the graph stores evidence metadata (graphs built before it existed: none)."""
        return "evidence" in self.assertion_columns

    def evidence_rows(self) -> list[tuple[int, str, str, str]]:
        """Returns ``(number, id, kind, evidence JSON)`` of every assertion with evidence metadata, in
        number order (few in most graphs: the rest have none)."""
        if not self.has_evidence:
            return []
        kind = "kind" if self.has_kinds else f"'{DEFAULT_KIND}'"
        return list(self.query(f"SELECT num, id, {kind}, evidence FROM assertions WHERE evidence IS NOT NULL "
                               "ORDER BY num"))

    def authorization_rows(self) -> Iterable[tuple[int, str, str, bool, str | None]]:
        """``(number, id, kind, has text, evidence JSON)`` of every assertion, streamed: what an
        authorization policy reads (graph/authorization.py)."""
        kind = "kind" if self.has_kinds else f"'{DEFAULT_KIND}'"
        return self.query(f"SELECT num, id, {kind}, text IS NOT NULL, {'evidence' if self.has_evidence else 'NULL'} "
                          "FROM assertions ORDER BY num")

    def kind_counts(self) -> dict[str, int]:
        """Returns how many assertions of each kind the graph holds (kinds in authority order)."""
        if not self.has_kinds:
            return {DEFAULT_KIND: len(self.assertions)}
        counts = dict(self.query("SELECT kind, COUNT(*) FROM assertions GROUP BY kind"))
        return {k: counts[k] for k in KINDS if k in counts}

    # --- artifacts by layer -----------------------------------------------------------
    def layer_count(self, *layers: str) -> int:
        """Returns how many artifacts the graph holds in the given layers (indexed)."""
        return self.query("SELECT COUNT(*) FROM artifacts WHERE layer IN (SELECT value FROM json_each(?))",
                          (_json(layers),)).fetchone()[0]

    def layer_ids(self, layer: str) -> list[str]:
        """Returns the ids of every artifact of one layer, sorted."""
        return [row[0] for row in self.query("SELECT id FROM artifacts WHERE layer = ? ORDER BY id", (layer,))]
