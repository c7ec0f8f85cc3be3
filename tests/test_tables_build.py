"""``build --engine duckdb --tables DIR``: the tables folder written straight from DuckDB.

The reference is independent of the new writer: the Python engine builds a graph file
through the SQLite writer, ``export-tables`` turns that file into a folder, and the two
folders must hold the same rows (tables_compare.differences: every table, facts named by
relation and arguments, meta but the build time).  Checked on Figure 1 (caps 2, 8 and
none), Figure 1 with contradictions and NOT assertions, the synthetic paper-scale graph
(sentence-level summaries, merges over the cap) and the GO slice (skipped without
../shared/data); then the folder read by sql-whatif and import-tables, and the errors.
"""

import json
import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("duckdb")

from polygraph_logic.cli import main  # noqa: E402
from polygraph_logic.graph.tables.layout import export_tables, import_tables  # noqa: E402
from polygraph_logic.graph.tables.compare import differences  # noqa: E402
from polygraph_logic.errors import PolygraphError  # noqa: E402
from polygraph_logic import build_graph  # noqa: E402
from polygraph_logic.graph.store.graph_file import Graph  # noqa: E402
from polygraph_logic.resources import rule_file  # noqa: E402
from polygraph_logic.query.whatif import Deletion, what_if  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from go_slice import GO_SKIP, go_inputs  # noqa: E402
from test_contradictions import variant_inputs  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FIGURE1 = ROOT / "examples" / "figure1"


def both(tmp_path: Path, assertions, receipts, rules, cap=8) -> tuple[Path, Path]:
    """The reference folder (Python build, graph file, export-tables) and the direct one."""
    build = build_graph(assertions, receipts, rules, cap=cap)
    build.write(tmp_path / "python.graph")
    export_tables(tmp_path / "python.graph", tmp_path / "reference")
    built = build_graph(assertions, receipts, rules,
                        engine="duckdb", cap=cap, output=tmp_path / "direct", tables=True)
    assert built.layers == {k: v for k, v in build.counts().items() if v}
    assert built.truncated == build.truncated() and built.background_edges == build.background_edges
    return tmp_path / "reference", tmp_path / "direct"


@pytest.fixture(scope="module")
def figure1_folders(tmp_path_factory) -> tuple[Path, Path]:
    """``both`` on Figure 1, rules/ro.dl, cap 8 (python.graph beside), built once for this module: never modify them."""
    return both(tmp_path_factory.mktemp("figure1-8"), FIGURE1 / "assertions.jsonl", FIGURE1 / "receipts.jsonl",
                [rule_file("ro")])


@pytest.fixture(scope="module")
def variant_folders(tmp_path_factory) -> tuple[Path, Path, list, Path, Path]:
    """Inputs, rules and ``both`` of variant_inputs with ro and contradictions, built once here: never modify them."""
    directory = tmp_path_factory.mktemp("variant")
    assertions, receipts = variant_inputs(directory)
    rules = [rule_file("ro"), rule_file("contradictions")]
    return (assertions, receipts, rules, *both(directory, assertions, receipts, rules))


@pytest.mark.parametrize("cap", [2, 8, None])
def test_figure1_folder_equals_the_exported_python_graph(tmp_path, cap, request):
    if cap == 8:  # the folders other tests here read too (both() checks them as it checks the others)
        reference, direct = request.getfixturevalue("figure1_folders")
    else:
        reference, direct = both(tmp_path, FIGURE1 / "assertions.jsonl", FIGURE1 / "receipts.jsonl",
                                 [rule_file("ro")], cap)
    assert differences(reference, direct) == []


def test_assertions_out_of_natural_order_are_numbered_as_the_file_lists_them(tmp_path, monkeypatch):
    """Labels hold assertion ranks (natural order of ids) and the folder file positions: the
    writer shifts ranks only when the two agree (the file lists its ids in natural order),
    and otherwise maps every rank.  Figure 1 in both orders, each against its Python export."""
    import duckdb
    from polygraph_logic.graph.tables import duckdb_build as tables_build
    from polygraph_logic.graph.tables.duckdb_build import ranks_are_numbers
    shifted = []
    original = tables_build._Writer._labels_shifted
    monkeypatch.setattr(tables_build._Writer, "_labels_shifted", lambda self: (shifted.append(1), original(self)))
    lines = (FIGURE1 / "assertions.jsonl").read_text("utf-8").splitlines()
    for name, ordered, shifts in (("natural", lines, 1), ("reversed", lines[::-1], 0)):
        (tmp_path / name).mkdir()
        shifted.clear()
        assertions = tmp_path / f"{name}.jsonl"
        assertions.write_text("\n".join(ordered) + "\n", "utf-8")
        reference, direct = both(tmp_path / name, assertions, FIGURE1 / "receipts.jsonl", [rule_file("ro")])
        assert differences(reference, direct) == [], name
        assert len(shifted) == shifts, name
        ids = [row[0] for row in duckdb.sql(f"SELECT id FROM '{direct / 'assertions.parquet'}' ORDER BY num").fetchall()]
        assert ids == [json.loads(line)["id"] for line in ordered]
    con = duckdb.connect()
    con.execute("CREATE TABLE amap AS SELECT * FROM (VALUES (0, 1), (1, 2), (2, 3)) t(rank, num)")
    assert ranks_are_numbers(con)
    con.execute("UPDATE amap SET num = 4 - num")
    assert not ranks_are_numbers(con)


def test_contradictions_and_not_assertions(variant_folders):
    _, _, _, reference, direct = variant_folders
    assert differences(reference, direct) == []
    layers = json.loads(json.loads((direct / "meta.json").read_text())["meta"]["stats"])["layers"]
    assert layers["contradiction"]["artifacts"] > 0


def test_numbers_and_strings_among_the_values(tmp_path):
    """Values of both kinds: numbers rank first, by value, then strings (the facts' order)."""
    rules = tmp_path / "weights.dl"
    rules.write_text('weight("RO:0002131", 10).\nweight("BFO:0000050", 9).\nweight("x", 2.5).\n'
                     'heavy(s, o, w) :- edge(s, p, o), weight(p, w).\n'
                     'rank(3).\nrank("b").\nrank(1).\nrank(2.5).\nrank("AIM2").\nrank(-4).\n', "utf-8")
    reference, direct = both(tmp_path, FIGURE1 / "assertions.jsonl", FIGURE1 / "receipts.jsonl",
                             [rule_file("ro"), rules])
    assert differences(reference, direct) == []  # facts by name: their numbers are checked below
    import duckdb
    from polygraph_logic.datalog.evaluate import tuple_key
    rows = duckdb.sql(f"SELECT relation, args FROM '{direct / 'facts.parquet'}' ORDER BY num").fetchall()
    for relation in ("rank", "weight", "heavy", "edge"):
        args = [tuple(json.loads(a)) for r, a in rows if r == relation]
        assert args and args == sorted(args, key=tuple_key), relation  # numbered in tuple_key's order


def test_a_difference_is_found(tmp_path, figure1_folders):
    """The comparison can fail: a folder built under another cap differs from the reference."""
    reference, _ = figure1_folders
    build_graph(FIGURE1 / "assertions.jsonl", FIGURE1 / "receipts.jsonl", [rule_file("ro")],
                engine="duckdb", cap=1, output=tmp_path / "capped", tables=True)
    found = differences(reference, tmp_path / "capped")
    assert any(line.startswith("meta cap") for line in found)
    assert any(line.startswith("facts:") for line in found)


def test_a_build_under_a_memory_limit_writes_the_same_folder(tmp_path, variant_folders):
    """Under --memory-limit a round's joins run a few at a time (Plan.contributions) and the
    writer's in separate statements: the same folder as the Python export."""
    from polygraph_logic.engines.dialect import DUCKDB
    from polygraph_logic.engines.duckdb_run import JOINS_UNDER_LIMIT
    from polygraph_logic.engines.sql_plan import make_plan
    from polygraph_logic.graph.build import prepare_build
    assertions, receipts, rules, reference, _ = variant_folders
    build_graph(assertions, receipts, rules,
                engine="duckdb", memory_limit="200MB", output=tmp_path / "limited", tables=True)
    assert differences(reference, tmp_path / "limited") == []
    plan = make_plan(prepare_build(assertions, receipts, rules).program, 8)
    stratum, shapes = max(plan.strata, key=lambda s: len(s[1]))  # the RO axioms' stratum
    parts = {joins: [len(plan.contributions(DUCKDB, shapes, relation, set(stratum), joins)) for relation in stratum]
             for joins in (None, JOINS_UNDER_LIMIT)}
    assert sum(parts[JOINS_UNDER_LIMIT]) > sum(parts[None])  # the statements the limit splits


@pytest.mark.slow
def test_synthetic_paper_scale_folder_equals_the_exported_python_graph(tmp_path):
    from polygraph_logic.graph.synthetic import generate
    generate(seed=0).write(tmp_path / "inputs")
    inputs = (tmp_path / "inputs" / "assertions.jsonl", tmp_path / "inputs" / "receipts.jsonl", [rule_file("ro")])
    reference, direct = both(tmp_path, *inputs)
    assert differences(reference, direct) == []
    build_graph(*inputs, engine="duckdb", memory_limit="200MB", output=tmp_path / "limited", tables=True)
    assert differences(reference, tmp_path / "limited") == []


@pytest.mark.slow
@GO_SKIP
def test_go_slice_folder_equals_the_exported_python_graph(tmp_path):
    assertions, rules = go_inputs(tmp_path)
    reference, direct = both(tmp_path, assertions, [], rules)
    assert differences(reference, direct) == []


def test_the_folder_answers_what_ifs_as_the_python_graph(tmp_path, figure1_folders):
    """sql-whatif on the direct folder, and whatif on its import-tables graph file, against the
    Python graph file's own what-if."""
    reference, direct = figure1_folders
    import_tables(direct, tmp_path / "imported.graph")
    deletion = Deletion(sources=("PMID:39973430",))
    with Graph(reference.parent / "python.graph") as original, Graph(tmp_path / "imported.graph") as imported:
        expected, got = what_if(original, deletion), what_if(imported, deletion)
        assert (got.touched, got.dead, got.kept) == (expected.touched, expected.dead, expected.kept)
        assert expected.dead
    from polygraph_logic.graph.store.sql_whatif import open_tables
    with open_tables(reference, "duckdb") as a, open_tables(direct, "duckdb") as b:
        first, second = a.what_if(deletion), b.what_if(deletion)
    assert (first.touched, first.dead) == (second.touched, second.dead)
    assert set(second.dead) <= set(expected.dead)


def test_command_writes_the_folder_and_refuses_other_engines(tmp_path, capsys):
    inputs = ["--assertions", str(FIGURE1 / "assertions.jsonl"), "--receipts", str(FIGURE1 / "receipts.jsonl"),
              "--rules", "ro"]
    assert main(["build", *inputs, "--engine", "duckdb", "--tables", str(tmp_path / "t"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["output"] == str(tmp_path / "t") and report["artifacts"] == 112
    assert main(["sql-whatif", str(tmp_path / "t"), "--retract-source", "PMID:39973430"]) == 0
    assert "touched" in capsys.readouterr().out
    assert main(["build", *inputs, "--tables", str(tmp_path / "u")]) == 2
    assert "bad_argument: tables (--tables) is written straight from DuckDB" in capsys.readouterr().err
    assert not (tmp_path / "u").exists()
    with pytest.raises(SystemExit):
        main(["build", *inputs, "--engine", "duckdb", "--tables", str(tmp_path / "u"), "-o", str(tmp_path / "g")])


@pytest.mark.parametrize("receipts", [False, True])
def test_a_folder_of_assertions_without_rules_equals_the_python_build(tmp_path, capsys, receipts):
    # with neither receipts nor rules the plan held no value before the assertions' own, and
    # DuckDB typed the empty table of known values NULL: "Unimplemented type for cast"
    inputs = ["--assertions", str(FIGURE1 / "assertions.jsonl")]
    inputs += ["--receipts", str(FIGURE1 / "receipts.jsonl")] if receipts else []
    assert main(["build", *inputs, "--engine", "duckdb", "--tables", str(tmp_path / "direct")]) == 0, \
        capsys.readouterr().err
    assert main(["build", *inputs, "-o", str(tmp_path / "python.graph")]) == 0
    export_tables(tmp_path / "python.graph", tmp_path / "reference")
    assert differences(tmp_path / "reference", tmp_path / "direct") == []
    with Graph(tmp_path / "direct") as folder, Graph(tmp_path / "python.graph") as file:
        read = list(folder.artifacts())
        assert read == list(file.artifacts())
    assert sum(a.layer == "claim" for a in read) == 6 and (len(read) == 12) is receipts


def test_a_failed_build_leaves_the_earlier_folder(tmp_path):
    folder = tmp_path / "t"
    build_graph(FIGURE1 / "assertions.jsonl", FIGURE1 / "receipts.jsonl", [rule_file("ro")],
                engine="duckdb", output=folder, tables=True)
    before = sorted((p.name, p.read_bytes()) for p in folder.iterdir())
    bad = tmp_path / "bad.dl"
    bad.write_text('merge("merge:from-a-rule") :- claim(X, "RO:0002211", Y).\n')  # fails while writing
    with pytest.raises(PolygraphError) as error:
        build_graph(FIGURE1 / "assertions.jsonl", FIGURE1 / "receipts.jsonl", [rule_file("ro"), bad],
                    engine="duckdb", output=folder, tables=True)
    assert error.value.code == "bad_program" and "merge facts come from no receipt" in str(error.value)
    with pytest.raises(PolygraphError) as error:  # the Python engine says the same, no traceback
        build_graph(FIGURE1 / "assertions.jsonl", FIGURE1 / "receipts.jsonl", [rule_file("ro"), bad]).artifacts
    assert error.value.code == "bad_program" and "comes from no receipt" in str(error.value)
    assert sorted((p.name, p.read_bytes()) for p in folder.iterdir()) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no partial folder left
    with pytest.raises(PolygraphError) as error:
        build_graph(FIGURE1 / "assertions.jsonl", FIGURE1 / "receipts.jsonl", [rule_file("ro")],
                    engine="duckdb", output=tmp_path / "missing" / "t", tables=True)
    assert error.value.code == "io_error"
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(PolygraphError) as error:
        build_graph(FIGURE1 / "assertions.jsonl", FIGURE1 / "receipts.jsonl", [rule_file("ro")],
                    engine="duckdb", output=tmp_path / "file", tables=True)
    assert error.value.code == "file_exists"
    shutil.rmtree(folder)


def test_build_stats_print_strata_and_rounds(tmp_path, capsys):
    """--stats: each stratum's facts and rounds; with a SQL engine each round's delta too, whose
    delta facts over a stratum's rounds add up to at least its facts (each fact enters once)."""
    inputs = ["--assertions", str(FIGURE1 / "assertions.jsonl"), "--receipts", str(FIGURE1 / "receipts.jsonl"),
              "--rules", "ro", "--stats"]
    assert main(["build", *inputs, "--engine", "duckdb", "--tables", str(tmp_path / "t")]) == 0
    lines = capsys.readouterr().err.splitlines()
    rounds = [line for line in lines if line.startswith("  stratum ")]
    strata = [line for line in lines if line.startswith("stratum ")]
    assert rounds and any(line.startswith("stratum edge, type: 107 facts, 9 rounds") for line in strata)
    delta = sum(int(line.split(": ")[1].split(" delta")[0].replace(",", "")) for line in rounds)
    assert delta >= sum(int(line.split(": ")[1].split(" facts")[0].replace(",", "")) for line in strata) == 114
    assert main(["build", *inputs, "-o", str(tmp_path / "g.graph")]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert any(line.startswith("stratum edge, type: 107 facts, 9 rounds") for line in lines)
    assert not any(line.startswith("  stratum ") for line in lines)  # the Python engine has no SQL rounds


def test_out_of_memory_while_writing_is_not_a_write_error(tmp_path):
    """DuckDB running out of memory while writing the folder reaches the evaluation's handler
    (out_of_memory: raise --memory-limit), not io_error; the partial folder goes."""
    import duckdb
    from polygraph_logic.graph.tables.layout import writing_folder
    with pytest.raises(duckdb.OutOfMemoryException):
        with writing_folder(tmp_path / "t"):
            raise duckdb.OutOfMemoryException("Out of Memory Error: test")
    with pytest.raises(PolygraphError) as error:
        with writing_folder(tmp_path / "t"):
            raise duckdb.IOException("IO Error: disk full")
    assert error.value.code == "io_error" and "disk full" in str(error.value)
    assert list(tmp_path.iterdir()) == []


def _fx_of(con, values):
    """An fx table of claims (even numbers) and edges (odd) whose arguments are ``values``."""
    from polygraph_logic.graph.tables.folder_rows import value_json
    con.execute("CREATE OR REPLACE TABLE fx(num BIGINT, relation VARCHAR, args VARCHAR, n0 INTEGER, n1 INTEGER)")
    for num, triple in enumerate(values):
        texts = [value_json(v) for v in triple]
        con.execute("INSERT INTO fx VALUES (?, ?, ?, ?, ?)", [num, "claim" if num % 2 == 0 else "edge",
                                                             "[" + ", ".join(texts) + "]", len(texts[0]), len(texts[1])])


#: arguments with commas, quotes, escapes and characters beyond ASCII
TRICKY = [["s0", "RO:1", "o"], ["a, b", "RO:2", 'say "x"'], ["Straße ∂", "RO:3", "tab\there"],
          ["s3", "RO:1", 7], ["back\\slash", "RO:🙂", "line\nfeed"]]


def test_ids_digested_beside_the_writing_are_graph_builds_in_fx_order():
    """digests.py's thread gives each fact the id graph.build gives it, in fx's order, batch
    after batch, and its place in its layer; what stops the thread reaches the writer; a cancelled thread stops."""
    import duckdb
    from polygraph_logic.graph.tables import digests as module
    from polygraph_logic.graph.artifact_ids import digest_id
    con = duckdb.connect()
    _fx_of(con, TRICKY)
    module.BATCH, batch = 2, module.BATCH  # several batches
    try:
        module.Digests(con, [("claim", "f.relation = 'claim'"), ("edge", "f.relation = 'edge'")]).start().wait()
    finally:
        module.BATCH = batch
    args = dict(con.execute("SELECT num, args FROM fx").fetchall())
    for layer, numbers in (("claim", [0, 2, 4]), ("edge", [1, 3])):
        rows = con.execute(f"SELECT fact, id, n FROM {module.table(layer)}").fetchall()
        # in fx's order, each with its place in its layer counted across the batches
        assert rows == [(n, digest_id(layer, args[n]), place) for place, n in enumerate(numbers, 1)]
    with pytest.raises(duckdb.Error):
        module.Digests(con, [("claim", "f.no_such_column")]).start().wait()
    stopped = module.Digests(con, [("claim", "TRUE")])
    stopped.stop.set()
    stopped.start().cancel()
    assert con.execute(f"SELECT count(*) FROM {module.table('claim')}").fetchall() == [(0,)]


@pytest.mark.parametrize("shuffled", [False, True])
def test_claims_and_edges_paired_with_their_ids_have_graph_builds_content(shuffled):
    """The writer's claim and edge artifacts: each fact with its own id and the content
    graph.build writes (made from the arguments' text), in fx's order, numbered 1, 2, ... in
    it; ids not in fx's order (``shuffled``: pairing by position would mismatch, and the
    places digests.py counted are those of another order) are joined, sorted and numbered
    again instead."""
    import json
    from types import SimpleNamespace

    import duckdb
    from polygraph_logic.graph.tables.folder_rows import value_json
    from polygraph_logic.graph.tables.duckdb_build import _Writer
    con = duckdb.connect()
    con.execute("SET preserve_insertion_order = true")
    _fx_of(con, TRICKY)
    order = "DESC" if shuffled else "ASC"
    con.execute(f"CREATE TABLE digests_claim AS SELECT num AS fact, 'id' || num AS id, "
                f"row_number() OVER (ORDER BY num {order}) AS n FROM fx WHERE relation = 'claim' ORDER BY num {order}")
    _Writer._paired(SimpleNamespace(con=con), "claim", "f.relation = 'claim'")
    rows = con.execute("SELECT fact, id, content FROM art_claim").fetchall()
    assert [(fact, id_) for fact, id_, _ in rows] == [(0, "id0"), (2, "id2"), (4, "id4")]
    assert con.execute("SELECT n FROM art_claim").fetchall() == [(1,), (2,), (3,)]
    for fact, _, content in rows:
        subject, predicate, object_ = TRICKY[fact]
        assert content == ('{"subject": ' + value_json(subject) + ', "predicate": ' + value_json(predicate)
                           + ', "object": ' + value_json(object_) + '}')
        assert json.loads(content) == {"subject": subject, "predicate": predicate, "object": object_}
    assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'digests_claim'").fetchall() == [(0,)]


def test_artifacts_not_in_fact_order_are_sorted_again():
    """The writer's check of digests.py's order: a table whose facts do not rise, or whose places
    ``n`` do not count 1, 2, ... in that order, is made again sorted and numbered; one in order
    is left as it is."""
    import duckdb
    from polygraph_logic.graph.tables.artifacts import in_fact_order
    con = duckdb.connect()
    con.execute("SET preserve_insertion_order = true")
    con.execute("CREATE TABLE art_x AS SELECT * FROM (VALUES (1, 'a', 1), (3, 'c', 2), (2, 'b', 3)) t(fact, id, n)")
    con.execute("CREATE TABLE art_y AS SELECT * FROM (VALUES (1, 'a', 1), (5, 'e', 2)) t(fact, id, n)")
    con.execute("CREATE TABLE art_z AS SELECT * FROM (VALUES (1, 'a', 2), (5, 'e', 3)) t(fact, id, n)")
    for table in ("art_x", "art_y", "art_z"):
        in_fact_order(con, table)
    assert con.execute("SELECT fact, id, n FROM art_x").fetchall() == [(1, "a", 1), (2, "b", 2), (3, "c", 3)]
    assert con.execute("SELECT fact, id, n FROM art_y").fetchall() == [(1, "a", 1), (5, "e", 2)]
    assert con.execute("SELECT fact, id, n FROM art_z").fetchall() == [(1, "a", 1), (5, "e", 2)]


def test_work_on_the_writers_second_thread_runs_beside_it_and_its_error_reaches_it():
    """Background (the rules made while DuckDB writes the other files) runs on a cursor of its
    own while the connection is busy, and what stops it is raised by wait()."""
    import duckdb
    from polygraph_logic.graph.tables.digests import Background
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT 1 AS x")
    done = Background(lambda cursor: cursor.execute("CREATE TABLE u AS SELECT x + 1 AS y FROM t"), con)
    con.execute("SELECT count(*) FROM range(1000000)").fetchall()  # the connection busy meanwhile
    done.wait()
    assert con.execute("SELECT y FROM u").fetchall() == [(2,)]
    failed = Background(lambda cursor: cursor.execute("SELECT * FROM no_such_table"), con)
    with pytest.raises(duckdb.CatalogException):
        failed.wait()
