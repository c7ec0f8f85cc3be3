"""The assertions file read by DuckDB itself, for builds that write the tables folder.

Reading assertions.jsonl in Python (records.py) makes an object per assertion, then a
fact per assertion and per claim, each interned and written out again for DuckDB: at
x40 (112,000 assertions) about 3 s of a 20 s build, at x400 two minutes and 4 GB.
Here DuckDB reads the file (``read_text``), checks every line in SQL and keeps the
assertions as a table; the claims, ``assertion`` and ``neg_edge`` facts go from it
straight into the plan's tables, and the tables folder's ``assertions`` table is made
from it.  Receipts stay in Python (records.py checks them, compile.py makes their
rules): they are few, and their rules are planned like any other.

The check is a *gate*, not a second validator: a file passes when every line is of the
plain shape below, which records.py accepts as it is; anything else (a bad line, but
also a valid line of a rarer form: an escape ``\\u``, a tab, a field with no ASCII
character, an unknown key) makes ``read_assertions`` return None and the build reads
the file in Python, which reports each problem with its file and line.  The plain shape:

- a JSON object on one line, its keys among id, source, subject, predicate, object, text,
  kind and negated, none twice, no ``,}`` or ``,]`` (DuckDB reads trailing commas, Python
  does not), no ``\\u`` escape and no control character but a final carriage return;
- id, source, subject, predicate and object strings with a printable ASCII character
  (so not blank by any definition); text absent, null or such a string; kind absent or
  one of kinds.KINDS; negated absent or a boolean;
- a predicate that is a CURIE of printable ASCII; no id stated twice.
"""

from __future__ import annotations

from pathlib import Path

from ..fact_table import FactTable
from ..kinds import DEFAULT_KIND, KINDS
from ..provenance.variables import natural_key
from .tables import _quoted

_FIELDS = ("id", "source", "subject", "predicate", "object")
_KEYS = (*_FIELDS, "text", "kind", "negated")
_PRINTABLE = "'[!-~]'"  # a printable ASCII character: not blank for Python's str.strip either


def _checks() -> list[str]:
    """The SQL conditions a parsed line meets when it is of the plain shape (see the module
    docstring): ``l`` the text, ``k`` its keys, ``t`` and ``v`` the types and values of _KEYS."""
    keys = ", ".join(f"'{k}'" for k in _KEYS)
    kinds = ", ".join(f"'{_quoted(k)}'" for k in KINDS)
    checks = [
        # no control character, no \\u escape, no comma before a closing bracket, one pass
        "NOT regexp_matches(l, '[\\x00-\\x1f]|\\\\u|,[ \\t\\r\\n]*[]}]')",
        "starts_with(ltrim(l, ' '), '{')",  # valid JSON that opens with a brace is an object
        f"list_has_all([{keys}], k)",
        "len(k) = len(list_distinct(k))",
    ]
    for n, _ in enumerate(_FIELDS, 1):
        checks.append(f"coalesce(t[{n}] = 'VARCHAR' AND regexp_matches(v[{n}], {_PRINTABLE}), FALSE)")
    text, kind, negated = (_KEYS.index(name) + 1 for name in ("text", "kind", "negated"))
    checks += [
        f"coalesce(t[{text}] = 'NULL' OR (t[{text}] = 'VARCHAR' AND regexp_matches(v[{text}], {_PRINTABLE})), TRUE)",
        f"coalesce(t[{kind}] = 'VARCHAR' AND v[{kind}] IN ({kinds}), TRUE)",
        f"coalesce(t[{negated}] = 'BOOLEAN', TRUE)",
        "regexp_full_match(v[4], '[A-Za-z_][A-Za-z0-9_.\\-]*:[!-~]+')",
    ]
    return checks


def read_assertions(con, path: str | Path) -> "NativeAssertions | None":
    """Reads ``path`` into the temporary table ``a_in`` of ``con``; None when the file is not of
    the plain shape (the build then reads it in Python) or DuckDB cannot read it as text."""
    import duckdb
    text = str(path)
    if any(c in text for c in "*?[{") or not Path(path).is_file():
        return None  # read_text takes a glob; records.py reads such a name, and says what is missing
    paths = ", ".join(f"'$.{k}'" for k in _KEYS)
    try:
        con.execute(f"CREATE OR REPLACE TEMP TABLE a_lines AS SELECT i AS line, rtrim(l, chr(13)) AS l FROM "
                    f"(SELECT unnest(lines) AS l, generate_subscripts(lines, 1) AS i FROM "
                    f"(SELECT string_split(content, chr(10)) AS lines FROM read_text('{_quoted(text)}'))) "
                    "WHERE trim(l, chr(13) || ' ') <> ''")  # blank lines, as records.py skips them
        lines = con.execute("SELECT count(*) FROM a_lines").fetchall()[0][0]
        # each line parsed once for its keys, once for the types and once for the values of _KEYS
        con.execute(f"CREATE OR REPLACE TEMP TABLE a_parsed AS SELECT line, l, json_keys(l) AS k, "
                    f"json_type(l, [{paths}]) AS t, json_extract_string(l, [{paths}]) AS v FROM a_lines "
                    "WHERE json_valid(l)")
        con.execute("DROP TABLE a_lines")
        plain = con.execute(f"SELECT count(*) FROM a_parsed WHERE "
                            f"{' AND '.join(f'coalesce({c}, FALSE)' for c in _checks())}").fetchall()[0][0]
        if plain != lines:
            return None
        text_at, kind_at, negated_at = (_KEYS.index(name) + 1 for name in ("text", "kind", "negated"))
        con.execute(f"""CREATE OR REPLACE TEMP TABLE a_in AS SELECT
            row_number() OVER (ORDER BY line) AS num, line,
            {', '.join(f"v[{n}] AS {name}" for n, name in enumerate(_FIELDS, 1))},
            v[{text_at}] AS text, coalesce(v[{kind_at}], '{DEFAULT_KIND}') AS kind,
            coalesce(v[{negated_at}] = 'true', FALSE) AS negated
            FROM a_parsed""")
        con.execute("DROP TABLE a_parsed")
        count, distinct, negated = con.execute(
            "SELECT count(*), count(DISTINCT id), coalesce(bool_or(negated), FALSE) FROM a_in").fetchall()[0]
    except duckdb.Error:
        return None  # not UTF-8, unreadable, ...: records.py says which line and why
    if count != distinct or not count:
        return None  # an id stated twice (records.py names both lines), or no assertion at all
    ids = [row[0] for row in con.execute("SELECT id FROM a_in ORDER BY num").fetchall()]
    return NativeAssertions(con, count, bool(negated), ids)


class NativeAssertions:
    """The assertions of ``a_in``: their ids (file order), whether any is negated, and how
    they become the facts of a plan (``load``) and the folder's assertions table."""

    def __init__(self, con, count: int, negated: bool, ids: list[str]):
        self.con, self.count, self.negated, self.ids = con, count, negated, ids

    def tables(self) -> dict[str, FactTable]:
        """Empty fact tables of the tracked relations the assertions feed (their arities): the
        rows are loaded by ``load``, not held by the program."""
        relations = {"claim": 3, "assertion": 1, **({"neg_edge": 3} if self.negated else {})}
        return {relation: FactTable(relation, arity) for relation, arity in relations.items()}

    def load(self, runner) -> None:
        """Interns the assertions' values into the plan, numbers the assertions by rank (natural
        order of their ids, as Runner does) and adds their facts to the plan's tables."""
        import numpy as np
        con, plan = self.con, runner.plan
        runner.names = sorted(self.ids, key=natural_key)
        runner.numbers = {name: i for i, name in enumerate(runner.names)}
        con.register("ranks_in", {"id": np.array(runner.names, dtype=object),
                                  "rank": np.arange(len(runner.names), dtype=np.int32)})
        con.execute("CREATE OR REPLACE TEMP TABLE a_rank AS SELECT id, rank FROM ranks_in")
        con.unregister("ranks_in")
        known = [(v, i) for v, i in plan.values.items() if type(v) is str]
        con.register("known_in", {"v": np.array([v for v, _ in known], dtype=object),
                                  "id": np.array([i for _, i in known], dtype=np.int64)})
        new = con.execute(
            "SELECT v FROM (SELECT DISTINCT unnest([id, subject, predicate, object]) AS v FROM a_in) "
            "WHERE v NOT IN (SELECT v FROM known_in) ORDER BY v").fetchall()
        for (value,) in new:
            plan.intern(value)
        con.execute("CREATE OR REPLACE TEMP TABLE a_vals AS SELECT v, CAST(id AS INTEGER) AS id FROM known_in")
        con.unregister("known_in")
        first = len(plan.values) - len(new)
        con.register("new_in", {"v": np.array([v for (v,) in new], dtype=object),
                                "id": np.arange(first, first + len(new), dtype=np.int32)})
        con.execute("INSERT INTO a_vals SELECT v, id FROM new_in")
        con.unregister("new_in")
        triple = ("SELECT s.id AS k0, p.id AS k1, o.id AS k2, r.rank AS v FROM a_in a JOIN a_vals s ON s.v = a.subject "
                  "JOIN a_vals p ON p.v = a.predicate JOIN a_vals o ON o.v = a.object JOIN a_rank r ON r.id = a.id "
                  "WHERE {}")
        runner.insert_facts("claim", f"({triple.format('NOT a.negated')})")
        if self.negated:
            runner.insert_facts("neg_edge", f"({triple.format('a.negated')})")
        runner.insert_facts("assertion", "(SELECT i.id AS k0, r.rank AS v FROM a_in a JOIN a_vals i ON i.v = a.id "
                                         "JOIN a_rank r ON r.id = a.id)")

    def assertions_sql(self) -> str:
        """The tables folder's assertions (num, id, ..., negated, since), in file order."""
        return ("SELECT num, id, source, subject, predicate, object, text, kind, CAST(negated AS BIGINT), 1 "
                "FROM a_in")

    def numbers_sql(self) -> str:
        """Each assertion's rank (its number in labels) and its number in the folder."""
        return ("SELECT CAST(r.rank AS INTEGER) AS rank, CAST(a.num AS INTEGER) AS num "
                "FROM a_in a JOIN a_rank r ON r.id = a.id")


def prepare(con, assertions, receipts, rules, cap: int | None):
    """``graph.build.prepare_build`` with the assertions file read by DuckDB into ``con``:
    (the PreparedBuild, its NativeAssertions), or None when the inputs are not files or the
    assertions file is not of the plain shape (then prepare_build reads them)."""
    import time
    from ..allocation import collector_paused
    from ..graph.build import PreparedBuild, rule_programs
    from ..graph.compile import compile_inputs
    from ..graph.records import load_receipts
    from ..graph.versions import file_entry
    if not isinstance(assertions, (str, Path)) or not (receipts is None or isinstance(receipts, (str, Path))):
        return None
    with collector_paused():
        started = time.perf_counter()
        native = read_assertions(con, assertions)
        if native is None:
            return None
        found = load_receipts(receipts, set(native.ids)) if receipts is not None else []
        inputs = [file_entry(assertions, "assertions", native.count)]
        if receipts is not None:
            inputs.append(file_entry(receipts, "receipts", len(found)))
        seconds = {"load": time.perf_counter() - started}
        started = time.perf_counter()
        rule_files = [str(r) for r in rules]
        compiled = compile_inputs((), found, cap, negated=native.negated)
        tables = native.tables()
        program = compiled.program(*rule_programs(rule_files), tables=tables, tracked=tables)
        seconds["compile"] = time.perf_counter() - started
    return PreparedBuild([], found, cap, rule_files, compiled, program, inputs, seconds), native
