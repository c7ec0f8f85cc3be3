"""Receipts compiled into rows DuckDB holds (engines/native_receipts.py) against compile.py.

The program of a build whose receipts DuckDB holds keeps one rule of each kind; the folder
must still be the one built from the receipts read and compiled in Python, row for row
(the rules table and the meta's rules text included), for receipts of every form: merges
whose members repeat or include the canonical entity, support sets repeated or citing an
id twice, flat and sentence-level summaries, labels over the cap, values needing escapes.
A receipt with a problem only the whole file shows is reported as records.py reports it.
"""

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("duckdb")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from polygraph_logic import build_graph  # noqa: E402
from polygraph_logic.graph.tables import native_inputs, native_receipts  # noqa: E402
from polygraph_logic.graph.tables.compare import differences  # noqa: E402
from polygraph_logic.errors import PolygraphError  # noqa: E402
from polygraph_logic.graph.records import LoadError, load_inputs  # noqa: E402
from polygraph_logic.resources import rule_file  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_native_inputs import FIGURE1  # noqa: E402

ASSERTIONS = FIGURE1 / "assertions.jsonl"
_RECORDS = [json.loads(line) for line in ASSERTIONS.read_text("utf-8").splitlines() if line.strip()]
IDS = [r["id"] for r in _RECORDS]
ENTITIES = sorted({r["subject"] for r in _RECORDS} | {r["object"] for r in _RECORDS}) + ['say "x"', "é"]


def _support(draw) -> list[list[str]]:
    sets = draw(st.lists(st.lists(st.sampled_from(IDS), min_size=1, max_size=3), min_size=1, max_size=4))
    return sets + sets[:draw(st.integers(0, 1))]  # sometimes a set twice


@st.composite
def receipts(draw) -> list[dict]:
    out = []
    # up to 18 receipts an example (5 examples, each two builds): as many receipts of every form
    # as 12 examples of up to 6 drew, in fewer builds (a build costs the same whatever its receipts)
    for n in range(draw(st.integers(1, 18))):
        if draw(st.booleans()):
            canonical = draw(st.sampled_from(ENTITIES))
            members = draw(st.lists(st.sampled_from(ENTITIES), min_size=1, max_size=4))
            out.append({"artifact": f"merge:m{n}", "layer": "merge",
                        "content": {"canonical": canonical, "members": members}, "support": _support(draw)})
        elif draw(st.booleans()):
            out.append({"artifact": f'summary:"s{n}"', "layer": "summary", "content": {"text": "flat é"},
                        "support": _support(draw)})
        else:
            sentences = [{"text": f"sentence {i} \\ é", "support": _support(draw)}
                         for i in range(draw(st.integers(1, 3)))]
            out.append({"artifact": f"summary:s{n}", "layer": "summary", "content": {}, "sentences": sentences})
    return out


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    return path


@pytest.mark.slow  # five DuckDB builds and five Python builds (8 s): with the slow tests (.ci/run)
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(receipts())
def test_receipts_as_rows_build_the_folder_of_receipts_compiled_in_python(tmp_path_factory, records):
    tmp_path = tmp_path_factory.mktemp("receipts")
    path = _write(tmp_path / "receipts.jsonl", records)
    saved = native_receipts.BATCH, native_receipts.FETCH
    native_receipts.BATCH, native_receipts.FETCH = 2, 3  # several batches each way
    try:  # cap 2: labels over the cap too
        build_graph(ASSERTIONS, path, [rule_file("ro")],
                    engine="duckdb", cap=2, output=tmp_path / "native", tables=True)
    finally:
        native_receipts.BATCH, native_receipts.FETCH = saved
    build_graph(*load_inputs(ASSERTIONS, path), [rule_file("ro")],
                engine="duckdb", cap=2, output=tmp_path / "python", tables=True)
    assert differences(tmp_path / "native", tmp_path / "python") == []


def test_the_program_holds_one_rule_of_each_kind(tmp_path):
    import duckdb
    from polygraph_logic.graph.build import rule_programs
    records = [{"artifact": f"merge:m{n}", "layer": "merge", "content": {"canonical": "MAPK/ERK",
                "members": ["MAPK/ERK", "ERK1/2 cascade"]}, "support": [["a12", "a13"], ["a20"]]}
               for n in range(50)]
    path = _write(tmp_path / "receipts.jsonl", records)
    prepared, native = native_inputs.prepare(duckdb.connect(), ASSERTIONS, path, [rule_file("ro")], 8)
    ro = len(rule_programs([str(rule_file("ro"))])[0].rules)
    # kinds: merge of two assertions, of one, and member; 150 receipt rules in all
    assert len(native.receipts.exemplars) == 3 and native.receipts.sizes == [150, 0]
    assert len(prepared.program.rules) == len(prepared.compiled.bridge) + 3 + ro
    assert prepared.receipts == [] and native.receipts.count == 50


def test_the_rules_made_again_for_writing_leave_no_constant_cached(tmp_path):
    # the writer makes every receipt rule again to write it; the Constants of those rules are
    # their own, so nothing keeps them once written (the shared cache would, up to 65,536)
    from polygraph_logic.graph import compile as compiled_inputs
    records = [{"artifact": f"merge:m{n}", "layer": "merge", "content": {"canonical": f"entity {n}",
                "members": [f"member {n}"]}, "support": [["a12"]]} for n in range(40)]
    path = _write(tmp_path / "receipts.jsonl", records)
    compiled_inputs._constant.cache_clear()
    build_graph(ASSERTIONS, path, [], engine="duckdb", output=tmp_path / "built.tables", tables=True)
    # the exemplars' few values only, not the 80 entities and 40 artifact ids of the receipts
    assert compiled_inputs._constant.cache_info().currsize < 10
    made = compiled_inputs.rule_of("member", ("x", "y"), "assertion", (("a12",),), shared=False)
    assert made == compiled_inputs.rule_of("member", ("x", "y"), "assertion", (("a12",),))


@pytest.mark.parametrize("records, code", [
    ([{"artifact": "merge:m1", "layer": "merge", "content": {"canonical": "x", "members": ["y"]},
       "support": [["a12"]]},
      {"artifact": "merge:m1", "layer": "merge", "content": {"canonical": "x", "members": ["z"]},
       "support": [["a13"]]}], "duplicate_artifact"),
    ([{"artifact": "summary:s", "layer": "summary", "content": {}, "sentences": [{"text": "t", "support": [["a12"]]}]},
      {"artifact": "summary:s#s1", "layer": "summary", "content": {}, "support": [["a13"]]}], "duplicate_artifact"),
    ([{"artifact": "summary:s", "layer": "summary", "content": {}, "support": [["a12"]]},
      {"artifact": "summary:t", "layer": "summary", "content": {}, "support": [["a12", "a404"]]}],
     "unknown_assertion"),
])
def test_a_problem_only_the_whole_file_shows_is_reported_as_records_py_reports_it(tmp_path, records, code):
    path = _write(tmp_path / "receipts.jsonl", records)
    with pytest.raises(PolygraphError) as raised:
        build_graph(ASSERTIONS, path, [rule_file("ro")], engine="duckdb", output=tmp_path / "folder", tables=True)
    with pytest.raises(LoadError) as expected:
        load_inputs(ASSERTIONS, path)
    assert raised.value.code == code and str(raised.value) == str(expected.value)
    assert f"{path}:2" in str(raised.value)
    assert not (tmp_path / "folder").exists()


def test_prepare_reads_receipts_and_rules_while_duckdb_reads_the_assertions(tmp_path, monkeypatch):
    # the assertions are read on a thread; the receipts and rules meanwhile: a bad rule file is
    # still said only once the inputs are known good (a bad input first, as prepare_build says it)
    import threading

    import duckdb
    records = [{"artifact": "merge:m", "layer": "merge", "content": {"canonical": "MAPK/ERK",
                "members": ["MAPK/ERK", "ERK1/2 cascade"]}, "support": [["a12"]]}]
    path = _write(tmp_path / "receipts.jsonl", records)
    threads = []
    read = native_inputs.read_assertions
    monkeypatch.setattr(native_inputs, "read_assertions",
                        lambda con, p: threads.append(threading.current_thread()) or read(con, p))
    prepared, native = native_inputs.prepare(duckdb.connect(), ASSERTIONS, path, [rule_file("ro")], 8)
    assert threads and threads[0] is not threading.main_thread()
    assert native.receipts.count == 1 and native.count == len(_RECORDS)
    rules = tmp_path / "bad.dl"
    rules.write_text("edge(X, Y) :- \n", "utf-8")
    with pytest.raises(PolygraphError) as error:
        native_inputs.prepare(duckdb.connect(), ASSERTIONS, path, [rules], 8)
    assert error.value.code == "syntax_error"
    bad = tmp_path / "assertions.jsonl"
    bad.write_text(ASSERTIONS.read_text("utf-8") + "{not json}\n", "utf-8")
    assert native_inputs.prepare(duckdb.connect(), bad, path, [rules], 8) is None
