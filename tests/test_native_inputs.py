"""The assertions file read by DuckDB (engines/native_inputs.py) against records.py.

The gate is sound when every file it lets through is one records.py reads without a
problem, into the same assertions in the same order; a file it refuses is read by
records.py, so a build's answer and its errors do not depend on which reader ran.
"""

import functools
import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("duckdb")
from hypothesis import given, settings, strategies as st  # noqa: E402

from polygraph_logic import build_graph  # noqa: E402
from polygraph_logic.graph.tables.native_inputs import read_assertions  # noqa: E402
from polygraph_logic.graph.tables.compare import differences  # noqa: E402
from polygraph_logic.errors import PolygraphError  # noqa: E402
from polygraph_logic.graph.records import LoadError, load_assertions  # noqa: E402
from polygraph_logic.resources import rule_file  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from go_slice import GO_SKIP, go_inputs  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FIGURE1 = ROOT / "examples" / "figure1"


def _connect():
    import duckdb
    return duckdb.connect()


@functools.cache
def _shared():
    """One connection for the property tests that only register a list and sort it (a new
    connection an example would cost more than the query it runs)."""
    return _connect()


def _native_rows(path: Path):
    con = _shared()  # read_assertions replaces its temporary tables
    native = read_assertions(con, path)
    if native is None:
        return None
    return con.execute("SELECT id, source, subject, predicate, object, text, kind, negated FROM a_in "
                       "ORDER BY num").fetchall()


def _python_rows(path: Path):
    try:
        found = load_assertions(path)
    except LoadError:
        return None
    return [(a.id, a.source, a.subject, a.predicate, a.object, a.text, a.kind, a.negated) for a in found]


# -- files: mostly lines of the plain shape, now and then a valid line of a rarer form or a bad one

_GOOD = ["x", "TP53", "cell cycle", "ÉRK", "中文 x", 'q"t', "back\\slash", "a,}", " y ", "é1"]
_ODD = ["", "   ", "中文", "tab\there", "\u00a0", 7, None]


def _sometimes(draw, good, odd):
    """Mostly a value of ``good``, one time in eight one of ``odd``."""
    return draw(st.sampled_from(odd if draw(st.integers(0, 7)) == 0 else good))


@st.composite
def _record(draw, number: int) -> dict:
    record = {"id": _sometimes(draw, [f"a{number}"], ["a0", "", 5]),
              **{key: _sometimes(draw, _GOOD, _ODD) for key in ("source", "subject")},
              "predicate": _sometimes(draw, ["RO:0002211", "BFO:0000050", "http://x.org/p"],
                                      ["RO 1", "ro:é", "x:", ":y", "1:x"]),
              "object": _sometimes(draw, _GOOD, _ODD)}
    if draw(st.booleans()):
        record["text"] = _sometimes(draw, [*_GOOD, None], _ODD)
    if draw(st.integers(0, 3)) == 0:
        record["kind"] = _sometimes(draw, ["source_claim", "tool_observation"], ["bogus", None, 3])
    if draw(st.integers(0, 3)) == 0:
        record["negated"] = _sometimes(draw, [True, False], [None, "yes", 1])
    if draw(st.integers(0, 15)) == 0:
        record[draw(st.sampled_from(["extra", "id"]))] = "a1"
    if draw(st.integers(0, 15)) == 0:
        del record[draw(st.sampled_from(["id", "source", "subject", "predicate", "object"]))]
    return record


def _text(record: dict, form: str) -> str:
    plain = json.dumps(record, ensure_ascii=False)
    return {"plain": plain, "ascii": json.dumps(record), "indent": "  " + plain + " ", "crlf": plain + "\r",
            "comma": plain[:-1] + ",}", "blank": "   ", "array": json.dumps([record]), "broken": plain[:-1],
            "tab": plain.replace(", ", ",\t", 1)}[form]


@st.composite
def _file(draw) -> list[str]:
    lines = []
    for number in range(1, draw(st.integers(1, 6)) + 1):
        form = _sometimes(draw, ["plain"], ["ascii", "indent", "crlf", "comma", "blank", "array", "broken", "tab"])
        lines.append(_text(draw(_record(number)), form))
    return lines


@settings(max_examples=300, deadline=None)
@given(_file())
def test_what_duckdb_reads_records_py_reads_alike(tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("gate") / "assertions.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    native = _native_rows(path)
    if native is not None:
        assert _python_rows(path) == native


def test_plain_files_are_read_by_duckdb(tmp_path):
    for example in ("figure1", "synthetic"):
        assert _native_rows(ROOT / "examples" / example / "assertions.jsonl") == \
            _python_rows(ROOT / "examples" / example / "assertions.jsonl")
    path = tmp_path / "a.jsonl"
    path.write_text('{"id": "a1", "source": "s", "subject": "x", "predicate": "RO:1", "object": "y", '
                    '"text": null, "kind": "tool_observation", "negated": true}\n\n'
                    '{"id": "a2", "source": "s", "subject": "x", "predicate": "RO:1", "object": "y"}\r\n', "utf-8")
    assert _native_rows(path) == _python_rows(path) == [
        ("a1", "s", "x", "RO:1", "y", None, "tool_observation", True),
        ("a2", "s", "x", "RO:1", "y", None, "source_claim", False)]


@pytest.mark.parametrize("line", [
    '{"id": "a1", "source": "s", "subject": "caf\\u00e9", "predicate": "RO:1", "object": "y"}',  # an escape
    '{"id": "a1", "source": "s", "subject": "x", "predicate": "RO:1", "object": "y", "note": 1}',  # a key
    '\ufeff{"id": "a1", "source": "s", "subject": "x", "predicate": "RO:1", "object": "y"}',  # a byte-order mark
])
def test_valid_files_of_rarer_forms_are_read_in_python_alike(tmp_path, line):
    path = tmp_path / "assertions.jsonl"
    path.write_text(line + "\n", "utf-8")
    assert _native_rows(path) is None and _python_rows(path) is not None


def _folders(tmp_path: Path, assertions: Path, receipts: Path, rules) -> tuple[Path, Path]:
    """The folder built from the files (DuckDB reads them) and from their records (Python does)."""
    from polygraph_logic.graph.records import load_inputs
    records, found = load_inputs(assertions, receipts)
    build_graph(assertions, receipts, rules, engine="duckdb", output=tmp_path / "native", tables=True)
    build_graph(records, found, rules, engine="duckdb", output=tmp_path / "python", tables=True)
    return tmp_path / "native", tmp_path / "python"


def test_folder_of_a_file_read_by_duckdb_equals_the_folder_of_its_records(tmp_path):
    from test_contradictions import variant_inputs
    assertions, receipts = variant_inputs(tmp_path)
    assert _native_rows(assertions) is not None  # the NOT assertion included
    native, python = _folders(tmp_path, assertions, receipts, [rule_file("ro"), rule_file("contradictions")])
    assert differences(native, python) == []


def test_a_bad_line_is_reported_as_records_py_reports_it(tmp_path):
    path = tmp_path / "assertions.jsonl"
    lines = (FIGURE1 / "assertions.jsonl").read_text("utf-8").splitlines()
    lines.insert(2, '{"id": "a99", "source": "s", "subject": "x", "predicate": "not a curie", "object": "y"}')
    path.write_text("\n".join(lines) + "\n", "utf-8")
    with pytest.raises(PolygraphError) as raised:
        build_graph(path, FIGURE1 / "receipts.jsonl", [rule_file("ro")],
                    engine="duckdb", output=tmp_path / "folder", tables=True)
    with pytest.raises(LoadError) as expected:
        load_assertions(path)
    assert str(raised.value) == str(expected.value) and f"{path}:3" in str(raised.value)
    assert not (tmp_path / "folder").exists()


def test_a_receipt_citing_an_unknown_assertion_is_reported_with_its_line(tmp_path):
    receipts = tmp_path / "receipts.jsonl"
    receipts.write_text('{"artifact": "merge:m9", "layer": "merge", "content": {"canonical": "x", "members": '
                        '["x", "y"]}, "support": [["a404"]]}\n', "utf-8")
    with pytest.raises(PolygraphError) as raised:
        build_graph(FIGURE1 / "assertions.jsonl", receipts, [rule_file("ro")],
                    engine="duckdb", output=tmp_path / "folder", tables=True)
    assert raised.value.code == "unknown_assertion" and f"{receipts}:1" in str(raised.value)


@pytest.mark.slow
@GO_SKIP
def test_go_slice_read_by_duckdb_builds_the_folder_of_its_records(tmp_path):
    """The GO slice's assertions (read from GPAD, with their kinds) written as JSON Lines: DuckDB
    reads them, and the folder is the one built from the same records read by Python."""
    assertions, rules = go_inputs(tmp_path)
    path = tmp_path / "assertions.jsonl"
    path.write_text("".join(json.dumps(a.to_json(), ensure_ascii=False) + "\n" for a in assertions), "utf-8")
    rows = _native_rows(path)
    assert rows is not None and rows == _python_rows(path)
    build_graph(path, None, rules, engine="duckdb", output=tmp_path / "native", tables=True)
    build_graph(assertions, [], rules, engine="duckdb", output=tmp_path / "python", tables=True)
    assert differences(tmp_path / "native", tmp_path / "python") == []


def test_relations_fed_by_assertions_read_by_duckdb_are_tracked(tmp_path):
    """The program knows claims are tracked though their facts are DuckDB's: a negation over
    them is refused as the Python front end refuses it."""
    rules = tmp_path / "negates.dl"
    rules.write_text('lonely(x) :- edge(x, p, o), !claim(x, p, o).\n', "utf-8")
    errors = []
    for assertions in (FIGURE1 / "assertions.jsonl", load_assertions(FIGURE1 / "assertions.jsonl")):
        with pytest.raises(PolygraphError) as raised:
            build_graph(assertions, None, [rules],
                        engine="duckdb", output=tmp_path / f"folder{len(errors)}", tables=True)
        errors.append(raised.value.code)
    assert errors == ["negation_over_tracked", "negation_over_tracked"]


# -- the values and ranks DuckDB keeps: natural order and JSON text in SQL

_NAME = st.text(st.sampled_from("a0123456789._:-Z "), min_size=1, max_size=12)


@settings(max_examples=200, deadline=None)
@given(st.lists(_NAME, min_size=1, max_size=30, unique=True))
def test_natural_order_in_sql_is_natural_keys(names):
    """natural_sql sorts printable ASCII names as ``sorted(key=natural_key)`` does: digit runs
    by value (leading zeros, long runs), texts that are prefixes of others, ties by the name."""
    import numpy as np
    from polygraph_logic.graph.tables.native_inputs import natural_sql
    from polygraph_logic.provenance.variables import natural_key
    con = _shared()
    con.register("names_in", {"id": np.array(names, dtype=object)})
    found = [row[0] for row in con.execute(f"SELECT id FROM names_in ORDER BY {natural_sql('id')}, id").fetchall()]
    assert found == sorted(names, key=natural_key)


@settings(max_examples=300, deadline=None)
@given(st.lists(_NAME, min_size=1, max_size=30, unique=True))
def test_names_of_few_digit_runs_in_natural_order_by_their_parts(names):
    """Names that _SIMPLE accepts (at most _RUNS digit runs of at most 18 digits) are sorted by
    their parts as natural_key sorts them; names of more runs, or longer ones, are not accepted."""
    import numpy as np
    from polygraph_logic.graph.tables.native_inputs import _RUNS, _SIMPLE, simple_natural_sql
    from polygraph_logic.provenance.variables import natural_key
    con = _shared()
    long_run, many_runs = "x" + "1" * 19, "a1b2c3d4e5"
    con.register("names_in", {"id": np.array(names + ["x" + "9" * 18, long_run, many_runs, "7", "copy12/a345"],
                                             dtype=object)})
    parts, order = simple_natural_sql("id")
    simple = [row[0] for row in con.execute(f"SELECT id FROM (SELECT id, {parts} AS s FROM names_in "
                                            f"WHERE regexp_full_match(id, {_SIMPLE})) ORDER BY {order}, id").fetchall()]
    assert simple == sorted(simple, key=natural_key)
    assert all(len(natural_key(name)[0]) <= 2 * _RUNS + 1 for name in simple)
    assert {"x" + "9" * 18, "7", "copy12/a345"} <= set(simple) and not {long_run, many_runs} & set(simple)


def test_natural_order_of_long_digit_runs_and_prefixes():
    test_natural_order_in_sql_is_natural_keys.hypothesis.inner_test(
        ["a10", "a9", "a09", "a", "a0", "1", "01", "b1a", "b1", "x99999999999999999999", "x100000000000000000000",
         "a 1", "a.1", "A1", "a1a", "a1-"])


def test_values_needing_escapes_and_ids_beyond_ascii_build_the_folder_of_their_records(tmp_path):
    """Values DuckDB keeps whose JSON text needs escapes (quotes, backslashes, escaped
    newlines and tabs), non-ASCII values, and ids beyond ASCII (ranked in Python then): the
    folder equals the one built from the records read in Python."""
    records = [{"id": "a1", "source": "s1", "subject": 'q"t', "predicate": "RO:0002131", "object": "back\\slash"},
               {"id": "a2", "source": "s1", "subject": "back\\slash", "predicate": "RO:0002131", "object": "two\nlines"},
               {"id": "a10", "source": "s2", "subject": "two\nlines", "predicate": "BFO:0000050", "object": "tab\there"},
               {"id": "a9", "source": "s2", "subject": "中文 x", "predicate": "BFO:0000050", "object": "ÉRK"}]
    for ids in (["a1", "a2", "a10", "a9"], ["a1", "é2", "a10", "a9"]):
        folder = tmp_path / ids[1]
        folder.mkdir()
        path = folder / "assertions.jsonl"
        path.write_text("".join(json.dumps({**r, "id": i}, ensure_ascii=False) + "\n" for r, i in zip(records, ids)),
                        "utf-8")
        assert _native_rows(path) is not None  # read by DuckDB: escapes but no \u, no control character
        receipts = folder / "receipts.jsonl"
        receipts.write_text(json.dumps({"artifact": "merge:m1", "layer": "merge", "content": {
            "canonical": 'q"t', "members": ['q"t', "ÉRK"]}, "support": [[ids[0], ids[3]]]}) + "\n", "utf-8")
        native, python = _folders(folder, path, receipts, [rule_file("ro")])
        assert differences(native, python) == []


def test_no_model_is_read_from_an_evaluation_whose_values_duckdb_holds():
    """A Model would decode values by the plan's ids: refused when DuckDB holds some of them."""
    from polygraph_logic.engines.duckdb_run import evaluation, session
    from polygraph_logic.graph.tables.native_inputs import prepare
    with session() as opened:
        prepared, native = prepare(opened[0], FIGURE1 / "assertions.jsonl", FIGURE1 / "receipts.jsonl",
                                   [rule_file("ro")], 8)
        with evaluation(prepared.program, 8, opened=opened, inputs=native) as runner:
            assert runner.plan.held > 0
            with pytest.raises(PolygraphError) as raised:
                runner.model()
    assert raised.value.code == "engine_error"
