"""Soufflé's ``.include "file"`` and ``.once`` (datalog/reading/includes.py): where files are looked for,
files read once, included text not preprocessed, and errors with file, line and column."""

from __future__ import annotations

from pathlib import Path

import pytest

from polygraph_logic import evaluate, load_program
from polygraph_logic.errors import ParseError


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def facts(program, relation: str) -> set:
    return set(evaluate(program, "boolean").facts(relation))


def test_an_include_beside_the_file_then_in_the_include_dirs(tmp_path):
    write(tmp_path / "lib" / "decls.dl", '.decl e(x: number)\n.include "more.dl"\n')
    write(tmp_path / "lib" / "more.dl", "e(1).\n")
    main = write(tmp_path / "prog" / "main.dl", '.include "decls.dl"\ne(2).\n')
    with pytest.raises(ParseError) as caught:
        load_program(main)
    assert (caught.value.code, caught.value.position.file, caught.value.position.line,
            caught.value.position.column) == ("include_error", str(main), 1, 10)
    assert '.include "decls.dl": no such file' in caught.value.message
    assert facts(load_program(main, include_dirs=[tmp_path / "lib"]), "e") == {(1,), (2,)}


def test_a_file_with_once_is_read_once_and_may_include_itself(tmp_path):
    write(tmp_path / "common.dl", '.once\n.decl e(x: number)\ne(1).\n.include "common.dl"\n')
    main = write(tmp_path / "main.dl", '.include "common.dl"\n.include "common.dl"\ne(2).\n')
    assert facts(load_program(main), "e") == {(1,), (2,)}


def test_a_file_without_once_included_twice_declares_twice(tmp_path):
    write(tmp_path / "common.dl", ".decl e(x: number)\n")
    main = write(tmp_path / "main.dl", '.include "common.dl"\n.include "common.dl"\n')
    with pytest.raises(Exception) as caught:
        load_program(main)
    assert "e is declared twice" in str(caught.value) and "common.dl:1:7" in str(caught.value)


def test_an_included_file_is_not_preprocessed_and_keeps_its_lines(tmp_path):
    """Soufflé's scanner reads an included file raw, skipping '#' lines: N stays a name."""
    write(tmp_path / "part.dl", "#define N 3\n.decl r(x: number)\n.decl q(x: number)\nr(1).\nq(N) :- r(N).\n")
    main = write(tmp_path / "main.dl", '#define N 7\n.include "part.dl"\n')
    assert facts(load_program(main), "q") == {(1,)}
    write(tmp_path / "part.dl", "#define N 3\n.decl r(x: number)\nr(1).\nr(1 2).\n")
    with pytest.raises(ParseError) as caught:
        load_program(main)
    position = caught.value.position
    assert (Path(position.file).name, position.line, position.column) == ("part.dl", 4, 5)


def test_a_file_including_itself_without_once_is_an_error(tmp_path):
    main = write(tmp_path / "main.dl", '.decl e(x: number)\n.include "main.dl"\n')
    with pytest.raises(ParseError) as caught:
        load_program(main)
    assert caught.value.code == "include_error" and "more than 64 deep" in caught.value.message
