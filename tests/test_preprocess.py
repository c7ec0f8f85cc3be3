"""The C preprocessor (datalog/reading/preprocess.py): -I and -M as Soufflé takes them, positions mapped
back to the original files, errors with file and line, and texts without '#' lines read
exactly as before. Values are checked against Python arithmetic, not against the engine."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from polygraph_logic import evaluate, load_program, parse_program
from polygraph_logic.cli import main
from polygraph_logic.datalog.reading.preprocess import macro_definitions, needs_preprocessing, parse_preprocessed
from polygraph_logic.datalog.reading.source import parse_source
from polygraph_logic.errors import ParseError, PolygraphError


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_include_dirs_and_macros_on_the_command_line(tmp_path, capsys):
    """-I finds an include the program's folder lacks; -M defines several macros, blank-separated,
    a bare NAME as 1 (so #ifdef holds), a macro with arguments, and a quoted symbol."""
    write(tmp_path / "lib", "shapes.dl", ".decl size(n: number)\n.output size\nsize(TWICE(N)).\n")
    program = write(tmp_path / "prog", "main.dl", '#include "shapes.dl"\n#ifdef VERBOSE\n.decl name(s: symbol)\n'
                    '.output name\nname(WHO).\n#endif\n')
    out = tmp_path / "out"
    out.mkdir()
    status = main(["eval", str(program), "-D", str(out), "-I", str(tmp_path / "lib"),
                   "-M", 'N=21 VERBOSE', "-M", 'TWICE(x)=((x)*2) WHO="ann"'])
    capsys.readouterr()
    assert status == 0
    assert (out / "size.csv").read_text() == "42\n" and (out / "name.csv").read_text() == "ann\n"


def test_without_the_include_dir_the_include_is_an_error_naming_the_line(tmp_path, capsys):
    program = write(tmp_path / "prog", "main.dl", '.decl a(x: number)\n#include "shapes.dl"\n')
    assert main(["eval", str(program), "-D", str(tmp_path)]) != 0
    err = capsys.readouterr().err
    assert f"{program}:2:1: preprocessor_error: #include shapes.dl: no such file" in err and "-I DIR" in err


def test_a_syntax_error_in_an_included_file_names_that_file_and_line(tmp_path):
    write(tmp_path, "defs.dl", "// two comment lines\n/* and a block\n   comment */\n.decl e(x: number)\ne(1 2).\n")
    program = write(tmp_path, "main.dl", '#define X 1\n\n#include "defs.dl"\ne(X).\ne(.\n')
    with pytest.raises(ParseError) as caught:
        load_program(program)
    position = caught.value.position
    assert Path(position.file).resolve() == (tmp_path / "defs.dl").resolve() and position.line == 5
    assert position.column == 5
    write(tmp_path, "defs.dl", ".decl e(x: number)\n")
    with pytest.raises(ParseError) as caught:
        load_program(program)
    position = caught.value.position
    assert (position.file, position.line, position.column) == (str(program), 5, 3)


def test_clauses_keep_the_lines_of_their_files(tmp_path):
    write(tmp_path, "rules.dl", "\n\n.decl p(x: number)\np(x) :- e(x).\n  e(5).\n")
    program = write(tmp_path, "main.dl", '.decl e(x: number)\n#include "rules.dl"\n#define ONE 1\ne(ONE).\n')
    loaded = load_program(program)
    (rule,) = loaded.rules
    assert Path(rule.position.file).name == "rules.dl" and rule.position.line == 4
    table = loaded.fact_tables()["e"]
    where = {row: table.position(i) for i, row in enumerate(table.rows)}
    assert (Path(where[(5,)].file).name, where[(5,)].line, where[(5,)].column) == ("rules.dl", 5, 3)
    assert (where[(1,)].file, where[(1,)].line, where[(1,)].column) == (str(program), 4, 1)


@pytest.mark.parametrize(
    "text, line, fragment",
    [
        ("#if 1\n#error stop here\n#endif\n", 2, "#error stop here"),
        ("\n#ifdef X\n.decl a(x: number)\n", 2, "Unterminated #ifdef X"),
        ("#frobnicate\n", 1, "unknown preprocessor directive #frobnicate"),
        ("#define F(a) a\n.decl r(x: number)\nr(F(1, 2)).\n", 3, "Macro F requires 1 arguments but was passed 2"),
        ("a(1).\n#if\n#endif\n", 2, "#if needs an expression"),
        ("#define\n", 1, "#define needs a macro name"),
        ("\n\n#ifdef // nothing\n#endif\n", 3, "#ifdef needs a macro name"),
        ("#include\n", 1, "#include needs a file"),
        ("#line abc\n", 1, "#line abc: write #line NUMBER"),
    ],
)
def test_preprocessor_errors_name_file_and_line(text, line, fragment):
    with pytest.raises(ParseError) as caught:
        parse_program(text, "p.dl")
    error = caught.value
    assert (error.code, error.position.file, error.position.line) == ("preprocessor_error", "p.dl", line)
    assert fragment in error.message


def test_bad_macros_and_missing_include_dirs_are_errors(tmp_path):
    with pytest.raises(PolygraphError) as caught:
        parse_program("a(1).", "p.dl", macros=["1N=3"])
    assert caught.value.code == "bad_argument" and "NAME=VALUE" in caught.value.message
    with pytest.raises(PolygraphError) as caught:
        parse_program("a(1).", "p.dl", include_dirs=[tmp_path / "nowhere"])
    assert caught.value.code == "file_error" and "does not exist" in caught.value.message


def test_macro_values_are_read_as_souffle_reads_them():
    assert macro_definitions(["A=1 B", 'F(x,y)=x+y S="a"']) == [("A", "1"), ("B", "1"), ("F(x,y)", "x+y"),
                                                              ("S", '"a"')]


def test_only_a_text_with_a_directive_line_or_macros_is_preprocessed():
    assert not needs_preprocessing('a("#1"). // #define\nb(1). /* x\n */')
    assert needs_preprocessing("a(1).\n  #define X 1\n")
    assert needs_preprocessing("a(1).", macros=["X"])


@settings(max_examples=30, deadline=None)
@given(st.integers(-1000, 1000), st.integers(-1000, 1000), st.integers(1, 50))
def test_a_macro_with_arguments_computes_what_python_computes(a, b, c):
    text = (f"#define F(x, y) ((x) * (y) - (x))\n#define C {c}\n.decl r(n: number)\n"
            f"r(n) :- n = F({a}, {b}) + C.\n")
    assert set(evaluate(parse_program(text, "p.dl"), "boolean").facts("r")) == {(a * b - a + c,)}


lines = st.lists(st.sampled_from([
    'e("a", 1).', "p(x) :- e(x, _).", "q(x, y) :- e(x, y), y > 0.", "// a comment", "/* block */",
    "/* two\nlines */", "", "   r(x) :- p(x), !q(x, 2).", 'e("b", 2). e("c", 3).', "s(n) :- n = count : { e(_, _) }.",
]), min_size=1, max_size=12)


@settings(max_examples=40, deadline=None)
@given(lines)
def test_preprocessing_a_text_without_directives_changes_no_clause_and_no_position(picked):
    """Run through the preprocessor (a macro forces it) or read directly, a text gives the same
    clauses at the same files, lines and columns."""
    text = "\n".join(picked) + "\n"
    direct = parse_source(text, "p.dl")
    through = parse_preprocessed(text, "p.dl", macros=["UNUSED"])
    assert through.clauses == direct.clauses
    assert [str(c.position) for c in through.clauses] == [str(c.position) for c in direct.clauses]
    assert set(through.tables) == set(direct.tables)
    for name, table in direct.tables.items():
        other = through.tables[name]
        assert other.rows == table.rows and other.variables == table.variables
        rows = range(len(table.rows))
        assert [other.position(i) for i in rows] == [table.position(i) for i in rows]


@pytest.mark.parametrize("size", [32, 64, None])
def test_predefined_macros_are_expanded_even_without_directive_lines(size):
    """Soufflé's preprocessor defines RAM_DOMAIN_SIZE (its build's width: the domain size, 32
    unless told) and __LINE__."""
    text = ".decl r(n: number)\nr(RAM_DOMAIN_SIZE).\nr(__LINE__).\n"
    program = parse_program(text, "p.dl") if size is None else parse_program(text, "p.dl", domain_size=size)
    assert set(evaluate(program, "boolean").facts("r")) == {(size or 32,), (3,)}


@pytest.mark.parametrize("expression, value", [
    ("-" * 1991 + "x", -7),
    ("(" * 1900 + "x" + " + ONE)" * 1900, 7 + 1900),
    ("x" + " * ONE" * 900, 7),
])
def test_deep_expressions_pass_through_the_preprocessor(tmp_path, capsys, expression, value):
    """Positions are mapped back over the whole clause, however deep (depth.MAX_DEPTH levels)."""
    path = write(tmp_path, "deep.dl", f"#define ONE 1\np(7).\nq(y) :- p(x),\n  y = {expression}.\n")
    assert main(["eval", str(path), "--semiring", "boolean", "--relation", "q"]) == 0
    assert capsys.readouterr().out.split() == ["q", "(1", "fact)", f"q({value})"]


@pytest.mark.parametrize("marker", ['#line 10 "x.dl"', '# 10 "x.dl"', '# 10 "x.dl" 1'])
def test_line_markers_in_the_program_move_its_positions_as_cpp_does(marker):
    with pytest.raises(ParseError) as caught:
        parse_program(f"#define Y 1\n{marker}\n\nfoo(.\n", "p.dl")
    position = caught.value.position
    assert (position.file, position.line, position.column) == ("x.dl", 11, 5)


def test_comments_and_strings_keep_their_meaning_under_the_preprocessor():
    text = ('#define A 1\n.decl r(s: symbol, n: number)\nr("http://x/*y*/ A", A). // don\'t\n'
            'r("it\'s", 2). /* it\'s\n a comment */ r("z", 3).\n')
    assert set(evaluate(parse_program(text, "p.dl"), "boolean").facts("r")) == {
        ("http://x/*y*/ A", 1), ("it's", 2), ("z", 3)}


def test_without_pcpp_a_text_that_needs_it_says_how_to_install_it(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pcpp", None)  # import pcpp now raises ImportError
    with pytest.raises(PolygraphError) as caught:
        parse_program("#define X 1\na(X).\n", "p.dl")
    assert caught.value.code == "missing_dependency" and "pip install pcpp" in caught.value.message
    assert set(evaluate(parse_program("a(1).\n", "p.dl"), "boolean").facts("a")) == {(1,)}
