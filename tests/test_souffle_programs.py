"""Souffle-style programs in tests/souffle/NAME/: NAME.dl, facts/ (inputs) and expected/ (outputs).

Each program runs as a Souffle user runs it, ``polygraph eval NAME.dl -F facts -D out``,
and every ``REL.csv`` it writes must equal ``expected/REL.csv`` byte for byte (and no
other file may appear). The expected files were computed by plain Python fixpoints
written for the purpose (no polygraph code), rows sorted as polygraph writes them.

The value width: ``expected/`` holds the output of Souffle's default build (domain size 32,
the default of ``polygraph eval``); a folder ``expected64/`` beside it holds the output of
its 64-bit build, checked with ``--domain-size 64``. A program may have either or both
(tests/souffle/floats/compute_expected.py computes both of its folders with ctypes' C
floats and doubles).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from polygraph_logic.cli import main

FOLDER = Path(__file__).parent / "souffle"
PROGRAMS = sorted(p.name for p in FOLDER.iterdir() if p.is_dir())
WIDTHS = {"expected": 32, "expected64": 64}  # the expected folder -> the domain size it is for
RUNS = [(name, folder) for name in PROGRAMS for folder in WIDTHS if (FOLDER / name / folder).is_dir()]


def test_every_program_has_expected_files():
    assert {name for name, _ in RUNS} == set(PROGRAMS)


@pytest.mark.parametrize("semiring", ["boolean", "why"])
@pytest.mark.parametrize("name, folder", RUNS)
def test_outputs_equal_the_expected_files_byte_for_byte(name, folder, semiring, tmp_path, capsys):
    here = FOLDER / name
    status = main(["eval", str(here / f"{name}.dl"), "-F", str(here / "facts"), "-D", str(tmp_path),
                   "--semiring", semiring, "--domain-size", str(WIDTHS[folder])])
    capsys.readouterr()
    assert status == 0
    expected = {p.name: p.read_bytes() for p in (here / folder).iterdir()}
    written = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert set(written) == set(expected)
    for file, content in expected.items():
        assert written[file] == content, file


def test_printsize_prints_the_relation_and_its_size(tmp_path, capsys):
    here = FOLDER / "transitive_closure"
    main(["eval", str(here / "transitive_closure.dl"), "-F", str(here / "facts"), "-D", str(tmp_path)])
    out = capsys.readouterr().out
    assert out == "path\t17\n"


def test_output_dir_dash_prints_souffle_tables_to_stdout(capsys):
    here = FOLDER / "aggregates"
    assert main(["eval", str(here / "aggregates.dl"), "-F", str(here / "facts"), "-D", "-"]) == 0
    out = capsys.readouterr().out
    assert "---------------\noverall\n===============\n6\t760\n===============\n" in out


def test_json_contract_holds_for_declared_programs(capsys):
    import json

    here = FOLDER / "transitive_closure"
    status = main(["eval", str(here / "transitive_closure.dl"), "-F", str(here / "facts"),
                   "--semiring", "boolean", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert status == 0
    assert ["d", "e"] in data["path"] and len(data["path"]) == 17 and len(data["edge"]) == 6


def test_a_nullary_relation_that_holds_prints_an_empty_tuple(capsys):
    """As Souffle writes it (writeNullary): ``()`` for a nullary relation that holds, nothing for
    one that does not, to a file (the nullary program's expected files) and to stdout alike."""
    here = FOLDER / "nullary"
    assert main(["eval", str(here / "nullary.dl"), "-F", str(here / "facts"), "-D", "-"]) == 0
    out = capsys.readouterr().out
    assert "---------------\ncyclic\n===============\n()\n===============\n" in out
    assert "---------------\nlooped\n===============\n===============\n" in out
