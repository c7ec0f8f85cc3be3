"""The assertions file read by DuckDB itself, for builds that write the tables folder.

Reading assertions.jsonl in Python (records.py) makes an object per assertion, then a
fact per assertion and per claim, each interned and written out again for DuckDB: at
x40 (112,000 assertions) about 3 s of a 20 s build, at x400 two minutes and 4 GB.
Here DuckDB reads the file (``read_text``), checks every line in SQL and keeps the
assertions as a table; the claims, ``assertion`` and ``neg_edge`` facts go from it
straight into the plan's tables, and the tables folder's ``assertions`` table is made
from it.  Receipts are checked in Python one at a time and their rules become rows of
DuckDB too (native_receipts.py): the Python side of such a build holds neither.

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

from polygraph_logic.errors import PolygraphError
from polygraph_logic.datalog.fact_table import FactTable
from polygraph_logic.graph.kinds import DEFAULT_KIND, KINDS
from polygraph_logic.provenance.variables import natural_key
from polygraph_logic.graph.tables.layout import _quoted
from polygraph_logic.allocation import collector_paused
from polygraph_logic.graph.build import PreparedBuild, rule_programs, without_lazy
from polygraph_logic.graph.compile import compile_inputs
from polygraph_logic.graph.store.versions import file_entry
from polygraph_logic.graph.tables.digests import Background
from polygraph_logic.graph.tables.native_receipts import read_receipts

_FIELDS = ("id", "source", "subject", "predicate", "object")
_KEYS = (*_FIELDS, "text", "kind", "negated")
_PRINTABLE = "'[!-~]'"  # a printable ASCII character: not blank for Python's str.strip either
_ASCII = "'[ -~]*'"  # printable ASCII only: Python's \d is then [0-9], as RE2's
_RUNS = 4  # digit runs of the names ranked by simple_natural_sql
#: printable ASCII, at most _RUNS digit runs (each followed by a non-digit but the last), each
#: a BIGINT's worth
_SIMPLE = f"'[ -/:-~]*([0-9]{{1,18}}[ -/:-~]+){{0,{_RUNS - 1}}}([0-9]{{1,18}})?'"


def natural_sql(column: str) -> str:
    """SQL: a text whose byte order is ``natural_key``'s order of ``column`` (ties: the name
    itself), for printable ASCII names.  natural_key's parts alternate text and digit runs,
    from a text (maybe empty) to a text; a text is written followed by chr(1), below every
    printable character, so a text that is a prefix of another sorts first; a digit run by
    the length of its value (zeros in front dropped) in ten digits, then the value, so
    runs compare as the integers they are.  Keys compared part by part as tuples are."""
    runs = f"regexp_extract_all({column}, '[0-9]+|[^0-9]+')"
    part = ("list_transform({runs}, lambda r_: CASE WHEN regexp_matches(r_, '^[0-9]') "
            "THEN lpad(CAST(length(ltrim(r_, '0')) AS VARCHAR), 10, '0') || ltrim(r_, '0') "
            "ELSE r_ || chr(1) END)").format(runs=runs)
    return (f"(CASE WHEN regexp_matches({column}, '^[0-9]') THEN chr(1) ELSE '' END || "
            f"array_to_string({part}, '') || "
            f"CASE WHEN regexp_matches({column}, '[0-9]$') THEN chr(1) ELSE '' END)")


def simple_natural_sql(column: str) -> tuple[str, str]:
    """SQL for names ``_SIMPLE`` accepts (printable ASCII, at most _RUNS digit runs of at most 18
    digits): ``(parts, order)``, ``parts`` an expression of ``column``, a struct of its texts
    and runs (``t0, d0, t1, ...``: natural_key's parts, padded with empty ones), and ``order``
    the ORDER BY terms in natural_key's order over that struct named ``s`` (ties: the name
    itself, to be added).  Texts compare as texts, runs as numbers, a missing run first (a
    name that ends there is the shorter key); x40's ids (copy12/a345): 0.36 -> 0.15 s."""
    names = [f"{kind}{i}" for i in range(_RUNS) for kind in "td"] + [f"t{_RUNS}"]
    pattern = "^" + "([^0-9]*)([0-9]*)" * _RUNS + "([^0-9]*)$"
    order = ", ".join(f"s.{n}" if n[0] == "t" else f"CAST(NULLIF(s.{n}, '') AS BIGINT) NULLS FIRST" for n in names)
    return f"regexp_extract({column}, '{pattern}', {names})", order


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
    return NativeAssertions(con, count, bool(negated))


class NativeAssertions:
    """The assertions of ``a_in``: how many, whether any is negated, and how they become the
    facts of a plan (``load``) and the folder's assertions table."""

    def __init__(self, con, count: int, negated: bool):
        self.con, self.count, self.negated = con, count, negated
        self.first = 0  # the first id of the values ``load`` keeps in DuckDB
        self.receipts = None  # the receipts as rows (native_receipts.py), if read so

    def tables(self) -> dict[str, FactTable]:
        """Empty fact tables of the tracked relations the assertions feed (their arities): the
        rows are loaded by ``load``, not held by the program."""
        relations = {"claim": 3, "assertion": 1, **({"neg_edge": 3} if self.negated else {})}
        return {relation: FactTable(relation, arity) for relation, arity in relations.items()}

    def load(self, runner) -> None:
        """Numbers the assertions by rank (natural order of their ids, as Runner does), gives the
        assertions' values ids and adds their facts to the plan's tables.  The values and ranks
        stay in DuckDB (``a_vals``, ``a_rank``): the Python side of a build does not grow with
        the graph.  Only values the plan knows already (rules, receipts) keep their ids."""
        import numpy as np
        con, plan = self.con, runner.plan
        ascii_ids, simple = con.execute(f"SELECT coalesce(bool_and(regexp_full_match(id, {_ASCII})), TRUE), "
                                        f"coalesce(bool_and(regexp_full_match(id, {_SIMPLE})), TRUE) FROM a_in").fetchall()[0]
        if ascii_ids:  # natural order in SQL: the digit runs Python's re finds
            # ids of a few digit runs (most ids) by their parts, others by natural_sql's text
            parts, order = simple_natural_sql("id") if simple else ("NULL", natural_sql("id"))
            con.execute(f"CREATE OR REPLACE TEMP TABLE a_rank AS SELECT id, CAST(row_number() OVER "
                        f"(ORDER BY {order}, id) - 1 AS INTEGER) AS rank FROM (SELECT id, {parts} AS s FROM a_in)")
        else:
            names = sorted((row[0] for row in con.execute("SELECT id FROM a_in").fetchall()), key=natural_key)
            con.register("ranks_in", {"id": np.array(names, dtype=object),
                                      "rank": np.arange(len(names), dtype=np.int32)})
            con.execute("CREATE OR REPLACE TEMP TABLE a_rank AS SELECT id, rank FROM ranks_in")
            con.unregister("ranks_in")
        known = [(v, i) for v, i in plan.values.items() if type(v) is str]
        con.register("known_in", {"v": np.array([v for v, _ in known], dtype=object),
                                  "id": np.array([i for _, i in known], dtype=np.int64)})
        # typed: with no rules nor receipts ``known`` is empty and DuckDB would type ``v`` as NULL
        con.execute("CREATE OR REPLACE TEMP TABLE a_vals AS SELECT CAST(v AS VARCHAR) AS v, CAST(id AS INTEGER) AS id "
                    "FROM known_in")
        con.unregister("known_in")
        more = f" UNION {self.receipts.values_sql()}" if self.receipts is not None else ""
        con.execute("CREATE OR REPLACE TEMP TABLE a_new AS SELECT v FROM (SELECT DISTINCT unnest([id, subject, "
                    f"predicate, object]) AS v FROM a_in{more}) WHERE v NOT IN (SELECT v FROM a_vals)")
        self.first = plan.hold(con.execute("SELECT count(*) FROM a_new").fetchall()[0][0])
        con.execute(f"INSERT INTO a_vals SELECT v, CAST({self.first} + row_number() OVER (ORDER BY v) - 1 AS INTEGER) "
                    "FROM a_new")
        con.execute("DROP TABLE a_new")
        triple = ("SELECT s.id AS k0, p.id AS k1, o.id AS k2, r.rank AS v FROM a_in a JOIN a_vals s ON s.v = a.subject "
                  "JOIN a_vals p ON p.v = a.predicate JOIN a_vals o ON o.v = a.object JOIN a_rank r ON r.id = a.id "
                  "WHERE {}")
        runner.insert_facts("claim", f"({triple.format('NOT a.negated')})")
        if self.negated:
            runner.insert_facts("neg_edge", f"({triple.format('a.negated')})")
        runner.insert_facts("assertion", "(SELECT i.id AS k0, r.rank AS v FROM a_in a JOIN a_vals i ON i.v = a.id "
                                         "JOIN a_rank r ON r.id = a.id)")
        if self.receipts is not None:
            self.receipts.load(runner)

    def values_sql(self) -> str:
        """The values ``load`` gave ids and the plan does not hold: (v, id), strings all."""
        return f"SELECT v, id FROM a_vals WHERE id >= {self.first}"

    def assertions_sql(self) -> str:
        """The tables folder's assertions (num, id, ..., negated, evidence, since), in file order."""
        return ("SELECT num, id, source, subject, predicate, object, text, kind, CAST(negated AS BIGINT), "
                "CAST(NULL AS VARCHAR), 1 FROM a_in")  # no evidence metadata: a line with some is not plain

    def release(self) -> None:
        """Drops the tables the assertions were read and numbered in, once the writer has made
        its own of them (x40: 29 MB a memory limit need not hold through the writing)."""
        for table in ("a_in", "a_rank", "a_vals"):
            self.con.execute(f"DROP TABLE IF EXISTS {table}")

    def numbers_sql(self) -> str:
        """Each assertion's rank (its number in labels) and its number in the folder."""
        return ("SELECT CAST(r.rank AS INTEGER) AS rank, CAST(a.num AS INTEGER) AS num "
                "FROM a_in a JOIN a_rank r ON r.id = a.id")


def prepare(con, assertions, receipts, rules, cap: int | None):
    """``graph.build.prepare_build`` with the assertions file read by DuckDB into ``con`` and the
    receipts compiled into rows of it (native_receipts.py): (the PreparedBuild, its
    NativeAssertions), or None when the inputs are not files or have a problem or a form
    DuckDB does not read (then prepare_build reads them and says what is wrong)."""
    import time
    if not isinstance(assertions, (str, Path)) or not (receipts is None or isinstance(receipts, (str, Path))):
        return None
    with collector_paused():
        started = time.perf_counter()
        # DuckDB reads the assertions on a thread (it releases the interpreter meanwhile) while
        # Python reads the receipts, sending their rows on a cursor, and parses the rules (x40:
        # 1.1 s of DuckDB beside 0.6 + 0.4 s of Python)
        sender, rule_files, failed = con.cursor(), [str(r) for r in rules], None
        reading = Background(lambda _cursor: read_assertions(con, assertions), con)
        try:
            rows = read_receipts(con, receipts, cap, sender, check=False) if receipts is not None else None
            parsed = rule_programs(rule_files) if receipts is None or rows is not None else None
        except PolygraphError as error:  # a rule file's: said after the inputs' problems, as before
            failed = error
        finally:
            sender.close()
            native = reading.wait()
        if native is None or (receipts is not None and (rows is None or rows.problem())):
            return None
        if failed is not None:
            raise failed
        inputs = [file_entry(assertions, "assertions", native.count)]
        if receipts is not None:
            native.receipts = rows
            inputs.append(file_entry(receipts, "receipts", rows.count))
        seconds = {"load": time.perf_counter() - started}
        started = time.perf_counter()
        compiled = compile_inputs((), (), cap, negated=native.negated)
        if native.receipts is not None:  # each kind's exemplar: the program's strata and shapes
            compiled.merges, compiled.summaries = native.receipts.split()
            compiled.over_cap = native.receipts.over_cap
        tables = native.tables()
        program, lazy = without_lazy(compiled.program(*parsed, tables=tables, tracked=tables), parsed)
        seconds["compile"] = time.perf_counter() - started
    return PreparedBuild([], [], cap, rule_files, compiled, program, inputs, seconds, lazy), native
