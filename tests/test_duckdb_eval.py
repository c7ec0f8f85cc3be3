"""``polygraph eval --engine duckdb``: the Boolean closure on DuckDB against pyDatalog and the
Python engine.

Random stratified programs (atoms with constants and repeated variables, negation over lower
strata, ``=`` and ``!=`` between variables and constants, numbers and symbols) must give the
relations pyDatalog gives and the files the Python engine writes, byte for byte; what the
plan cannot evaluate exactly is refused by name.
"""

import io
import multiprocessing
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, note, settings
from hypothesis import strategies as st

pytest.importorskip("duckdb")

from polygraph_logic.cli import main  # noqa: E402
from polygraph_logic.datalog.evaluate import evaluate  # noqa: E402
from polygraph_logic.datalog.program import parse_program  # noqa: E402
from polygraph_logic.datalog.pydatalog_engine import closure  # noqa: E402
from polygraph_logic.datalog.souffle_output import write_outputs, write_relations  # noqa: E402
from polygraph_logic.engines.duckdb_eval import boolean_closure  # noqa: E402
from polygraph_logic.errors import PolygraphError  # noqa: E402

VALUES = ['"a"', '"b"', '"c"', "1", "2", "10"]
BASE, DERIVED = ["e", "f"], ["p", "q", "r"]


@st.composite
def programs(draw):
    """A stratified program: facts of e and f, rules of p over e and f, of q over p (its
    negations over e, f and p), of r over q (negations over p and q)."""
    lines = []
    for _ in range(draw(st.integers(1, 10))):
        relation = draw(st.sampled_from(BASE))
        lines.append(f"{relation}({draw(st.sampled_from(VALUES))}, {draw(st.sampled_from(VALUES))}).")
    names = ["X", "Y", "Z"]
    for level, head in enumerate(DERIVED):
        positive = BASE + DERIVED[:level + 1]
        lower = BASE + DERIVED[:level]
        for _ in range(draw(st.integers(1, 3))):
            body, bound = [], []
            for _ in range(draw(st.integers(1, 3))):
                args = []
                for _ in range(2):
                    if draw(st.integers(0, 4)) == 0:
                        args.append(draw(st.sampled_from(VALUES)))
                    else:
                        args.append(draw(st.sampled_from(names)))
                        bound.append(args[-1])
                body.append(f"{draw(st.sampled_from(positive))}({', '.join(args)})")
            if not bound:
                continue
            for _ in range(draw(st.integers(0, 2))):
                kind = draw(st.integers(0, 2))
                left = draw(st.sampled_from(bound))
                if kind == 2 and lower:
                    other = draw(st.sampled_from(bound + ["_"] + VALUES[:2]))
                    body.append(f"!{draw(st.sampled_from(lower))}({left}, {other})")
                else:
                    right = draw(st.sampled_from(bound + VALUES))
                    body.append(f"{left} {'=' if kind == 0 else '!='} {right}")
            head_args = [draw(st.sampled_from(bound)) for _ in range(2)]
            lines.append(f"{head}({', '.join(head_args)}) :- {', '.join(body)}.")
    return "\n".join(lines)


def _outputs(text: str) -> str:
    """The program with every relation it has as an output (a relation no fact nor rule names is
    unknown to both engines alike)."""
    named = [name for name in BASE + DERIVED if f"{name}(" in text]
    return text + "\n" + "".join(f".output {name}\n" for name in named)


#: how long pyDatalog may take on one program before it is given up (its top-down resolution loops
#: on some recursive programs with negation, e.g. p(Y, Y) :- p("c", Y), f(Z, Y), f(1, X), !e(X, X).)
PYDATALOG_SECONDS = 30


def _pydatalog(text: str) -> dict | None:
    """pyDatalog's closure of the program, computed in a child process; None when it does not end in
    PYDATALOG_SECONDS (the child is stopped, and the example is noted)."""
    context = multiprocessing.get_context("fork")
    with context.Pool(1) as pool:
        pending = pool.apply_async(_closure_of, (text,))
        try:
            return pending.get(PYDATALOG_SECONDS)
        except multiprocessing.TimeoutError:
            note(f"pyDatalog did not end in {PYDATALOG_SECONDS} s on:\n{text}")
            return None


def _closure_of(text: str) -> dict:
    return closure(parse_program(_outputs(text)))


def _files(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.glob("*.csv"))}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(text=programs())
@example(text='e("a", 1).\ne(1, 1).\np(X, Y) :- e(X, Y), !f(X, _), X != "b".\nq(X, X) :- p(X, Y), Y = 1.\n'
              'r(Y, X) :- q(X, Y), !p(Y, X).')
def test_random_programs_equal_pydatalog_and_the_python_engine(tmp_path_factory, text):
    program = parse_program(_outputs(text))
    expected = _pydatalog(text)
    with boolean_closure(program) as tables:
        got = tables.model()
        folder = tmp_path_factory.mktemp("duckdb")
        write_relations(program, tables, folder, io.StringIO())
    if expected is not None:  # None: pyDatalog did not end (below); the Python engine's files still judge
        for name in got.relations():
            assert set(got.facts(name)) == expected.get(name, set()), name
    reference = tmp_path_factory.mktemp("python")
    write_outputs(evaluate(program, "boolean"), reference)
    assert _files(folder) == _files(reference)


def test_recursion_negation_and_equalities_on_numbers_and_symbols():
    program = parse_program(
        "edge(1, 2). edge(2, 3). edge(3, 1). edge(3, 4). edge(\"x\", 4). blocked(4).\n"
        "path(x, y) :- edge(x, y).\npath(x, z) :- path(x, y), edge(y, z).\n"
        "free(x, y) :- path(x, y), !blocked(y), x != y.\nloop(x) :- path(x, y), x = y.\n")
    with boolean_closure(program) as tables:
        model = tables.model()
        assert tables.size("path") == 13
    assert set(model.facts("loop")) == {(1,), (2,), (3,)}
    assert set(model.facts("free")) == {(a, b) for a in (1, 2, 3) for b in (1, 2, 3) if a != b}


def _cli(tmp_path: Path, text: str, *options: str) -> tuple[int, Path]:
    source = tmp_path / "prog.dl"
    source.write_text(text, encoding="utf-8")
    out = tmp_path / f"out{len(list(tmp_path.iterdir()))}"
    return main(["eval", "--semiring", "boolean", *options, "-D", str(out), str(source)]), out


def test_cli_files_equal_the_python_engine_with_awkward_symbols(tmp_path, capsys):
    text = ('.decl s(a: symbol, b: number)\n.decl t(a: symbol, b: number)\n.decl h(y: number)\n.decl z()\n'
            '.output s\n.output t(delimiter=",")\n.output h(headers=true)\n'
            '.output z\n.printsize s\n'
            's("tab\\there", 3). s("quote\\"d", -2). s("é", 10). s("", 0). s("a,b", 1).\n'
            't(x, y) :- s(x, y), y != 3.\nh(y) :- s(_, y).\nz() :- s("", 0).\n')
    code, python = _cli(tmp_path, text)
    assert code == 0
    printed = capsys.readouterr().out
    code, duckdb = _cli(tmp_path, text, "--engine", "duckdb")
    assert code == 0
    assert capsys.readouterr().out == printed == "s\t5\n"
    assert _files(duckdb) == _files(python)
    assert (duckdb / "z.csv").read_text() == "()\n"
    assert (duckdb / "h.csv").read_text().splitlines()[0] == "y"


def test_cli_prints_every_relation_and_json_as_the_python_engine(tmp_path, capsys):
    source = tmp_path / "prog.dl"
    source.write_text('e(1, "b"). e(2, "a").\np(y, x) :- e(x, y).\n.output p\n.output e(IO=stdout)\n.printsize p\n',
                      encoding="utf-8")
    outputs = []
    for engine in ("python", "duckdb"):
        for extra in ([], ["--json"], ["--relation", "p"], ["-D", "-"]):
            assert main(["eval", "--semiring", "boolean", "--engine", engine, *extra, str(source)]) == 0
            outputs.append(capsys.readouterr().out)
    assert outputs[:4] == outputs[4:]
    assert outputs[3] == ("---------------\np\n===============\na\t2\nb\t1\n===============\n"
                          "---------------\ne\n===============\n1\tb\n2\ta\n===============\np\t2\n")


@pytest.mark.parametrize("rule, named", [
    ("p(x) :- e(x, y), x < y.", "x < y"),
    ("p(z) :- e(x, y), z = x + y.", "is not an atom, a negated atom or = and !="),
    ("p(x) :- e(x, _), !e(_, z).", "no body atom binds"),
    ("p(c) :- c = count : e(_, _).", "is not an atom"),
])
def test_what_the_plan_cannot_evaluate_is_refused_by_name(tmp_path, capsys, rule, named):
    code, _ = _cli(tmp_path, f"e(1, 2).\n{rule}\n.output p\n", "--engine", "duckdb")
    assert code == 2
    err = capsys.readouterr().err
    assert "engine_unsupported" in err and named in err and "prog.dl:2" in err


def test_floats_and_other_semirings_are_refused(tmp_path, capsys):
    code, _ = _cli(tmp_path, "e(1.5).\n.output e\n", "--engine", "duckdb")
    assert code == 2 and "1.5 is a float" in capsys.readouterr().err
    source = tmp_path / "w.dl"
    source.write_text("e(1).\n", encoding="utf-8")
    assert main(["eval", "--engine", "duckdb", str(source)]) == 2
    assert "--semiring why runs on the default engine" in capsys.readouterr().err
    assert main(["eval", "--semiring", "boolean", "--memory-limit", "1GB", str(source)]) == 2
    assert "--memory-limit is DuckDB's" in capsys.readouterr().err


def test_max_facts_stops_a_runaway_relation(tmp_path, capsys):
    text = "n(0). n(1). n(2). n(3).\npair(x, y) :- n(x), n(y).\n.output pair\n"
    code, _ = _cli(tmp_path, text, "--engine", "duckdb", "--max-facts", "10")
    assert code == 2
    err = capsys.readouterr().err
    assert "limit_exceeded: relation pair passed 10 facts" in err and "prog.dl:2" in err


def test_stats_are_printed_per_stratum(tmp_path, capsys):
    code, _ = _cli(tmp_path, "e(1, 2). e(2, 3).\np(x, y) :- e(x, y).\np(x, z) :- p(x, y), e(y, z).\n.output p\n",
                   "--engine", "duckdb", "--stats")
    assert code == 0
    assert "stratum p: 3 facts" in capsys.readouterr().err


def test_unplannable_program_raises_before_any_table(tmp_path):
    with pytest.raises(PolygraphError) as raised:
        with boolean_closure(parse_program("e(1).\np(x) :- e(x), x > 0.\n")):
            pass
    assert raised.value.code == "engine_unsupported"
