"""The `polygraph eval` command, driven as a user would: arguments in, text and status out."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from polygraph_logic.cli import main

ROOT = Path(__file__).resolve().parent.parent
FIGURE1 = str(ROOT / "examples" / "figure1.dl")


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_eval_prints_every_relation_with_polynomials(capsys):
    status, out, _ = run(capsys, "eval", FIGURE1)
    assert status == 0
    assert 'merged("MAPK/ERK", "ERK1/2 cascade")' in out
    line = next(l for l in out.splitlines() if l.strip().startswith('merged("MAPK/ERK", "ERK1/2 cascade")'))
    assert line.split()[-3:] == ["a13", "+", "a20"]
    assert "sub_property (1 fact)" in out  # given facts are printed too
    assert 'upstream_of("MAPK/ERK", "apoptosis")  a12' in out


def test_eval_json_for_why_and_boolean_keeps_value_types(tmp_path, capsys):
    program = tmp_path / "p.dl"
    program.write_text('a1 :: e("x", 1). a2 :: e("x", 1). e("y", 2). p(x, n) :- e(x, n), n > 0.')
    status, out, _ = run(capsys, "eval", str(program), "--json")
    data = json.loads(out)
    assert status == 0
    assert data["p"] == [
        {"tuple": ["x", 1], "provenance": [["a1"], ["a2"]], "exact": True},
        {"tuple": ["y", 2], "provenance": [[]], "exact": True},
    ]
    status, out, _ = run(capsys, "eval", str(program), "--json", "--semiring", "boolean")
    assert json.loads(out) == {"e": [["x", 1], ["y", 2]], "p": [["x", 1], ["y", 2]]}
    status, out, _ = run(capsys, "eval", str(program), "--json", "--semiring", "lineage")
    assert json.loads(out)["p"][0]["provenance"] == [["a1", "a2"]]


def test_cap_marks_truncated_labels(tmp_path, capsys):
    program = tmp_path / "p.dl"
    program.write_text("\n".join(f'a{i} :: e("x", {i}).' for i in range(5)) + '\np(x) :- e(x, _).')
    _, out, _ = run(capsys, "eval", str(program), "--cap", "2", "--relation", "p")
    assert 'p("x")  a0 + a1  [capped]' in out
    _, out, _ = run(capsys, "eval", str(program), "--cap", "none", "--relation", "p", "--json")
    assert len(json.loads(out)["p"][0]["provenance"]) == 5


def test_delete_shows_what_stands_and_what_falls(capsys):
    status, out, _ = run(capsys, "eval", FIGURE1, "--delete", "a12,a13", "--delete", "a31",
                         "--relation", "merged", "--relation", "upstream_of")
    assert status == 0
    assert "upstream_of (0 alive, 1 dead)" in out
    assert '  - upstream_of("MAPK/ERK", "apoptosis")' in out
    assert 'merged("MAPK/ERK", "ERK1/2 cascade")  a20' in out


@pytest.mark.parametrize(
    "text, expected",
    [
        ("p(x) :- q(x)", "bad.dl:1:12: syntax_error: "),
        ("p(x, z) :- e(x, y).", "bad.dl:1:6: unbound_variable: "),
        ("e(1). e(1, 2).", "bad.dl:1:7: arity_mismatch: "),
        ("e(1). p(x) :- e(x), !q(x). q(x) :- p(x).", "bad.dl:1:21: cyclic_negation: "),
    ],
)
def test_errors_print_file_line_column_code_and_exit_2(tmp_path, capsys, text, expected):
    bad = tmp_path / "bad.dl"
    bad.write_text(text)
    status, out, err = run(capsys, "eval", str(bad))
    assert status == 2
    assert err.startswith(str(tmp_path / expected))


def test_unknown_deletion_and_missing_file_exit_2(tmp_path, capsys):
    status, _, err = run(capsys, "eval", FIGURE1, "--delete", "a121")
    assert status == 2 and "unknown_assertion" in err and "a21" in err
    status, _, err = run(capsys, "eval", str(tmp_path / "missing.dl"))
    assert status == 2 and "file_error" in err
    status, _, err = run(capsys, "eval", FIGURE1, "--relation", "nope")
    assert status == 2 and "no relation named 'nope'" in err


def test_console_entry_point_runs_as_a_module():
    result = subprocess.run(
        [sys.executable, "-m", "polygraph_logic.cli", "eval", FIGURE1, "--semiring", "boolean",
         "--relation", "summary"],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stderr
    assert 'summary("community-7")' in result.stdout


def test_each_command_is_registered_by_the_module_the_lazy_map_names():
    """`polygraph CMD` imports only COMMANDS[CMD]'s module; the map must match what registers."""
    import argparse
    import importlib

    from polygraph_logic.cli import COMMAND_MODULES, COMMANDS
    found = {}
    for name in COMMAND_MODULES:
        commands = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(f"polygraph_logic.cli.{name}").register(commands)
        found.update(dict.fromkeys(commands.choices, name))
    assert found == COMMANDS


def test_whatif_does_not_import_rdflib_numpy_or_the_model_sdk():
    import subprocess
    import sys
    code = ("import sys; from polygraph_logic.cli import build_parser; build_parser('whatif'); "
            "print(sorted(m for m in ('rdflib', 'numpy', 'anthropic', 'sympy') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_generate_copies_writes_disjoint_copies(tmp_path):
    from polygraph_logic.cli import main as cli_main
    assert cli_main(["generate", "-o", str(tmp_path / "two"), "--copies", "2"]) == 0
    ids = [json.loads(line)["id"] for line in (tmp_path / "two" / "assertions.jsonl").read_text().splitlines()]
    assert len(ids) == 5600 and len(set(ids)) == 5600
    assert sum(i.startswith("copy1/") for i in ids) == 2800
    assert cli_main(["generate", "-o", str(tmp_path / "none"), "--copies", "0"]) == 2


class FakeTerminal:
    """A stream that says it is a terminal and keeps what is written to it."""

    def __init__(self):
        self.written = []

    def isatty(self):
        return True

    def write(self, text):
        self.written.append(text)

    def flush(self):
        pass


def test_progress_lines_say_what_they_count_on_a_terminal_only():
    import io
    import re

    from polygraph_logic.progress import WIDTH, Progress
    terminal = FakeTerminal()
    counting = Progress("building", stream=terminal, unit="strata evaluated")
    counting.step("last: edge (10 facts, 2 rounds)")
    assert re.fullmatch(r"\rbuilding: 1 strata evaluated, \d+\.\ds  last: edge \(10 facts, 2 rounds\) *",
                        terminal.written[-1])
    assert len(terminal.written[-1]) == WIDTH + 1
    bar = Progress("evaluate", total=4, stream=terminal, unit="queries")
    bar.step(amount=4)  # the last step is always drawn
    assert re.fullmatch(r"\revaluate: \[#{30}\] 4/4 queries, \d+\.\ds *", terminal.written[-1])
    phase = Progress("writing g.graph", stream=terminal)
    phase.phase("facts: 1,200 rows")
    assert re.fullmatch(r"\rwriting g\.graph, \d+\.\ds  facts: 1,200 rows *", terminal.written[-1])
    phase.done()
    assert terminal.written[-1] == "\r" + " " * WIDTH + "\r"
    piped = io.StringIO()
    quiet = Progress("building", stream=piped, unit="strata evaluated")
    quiet.phase("reading")
    quiet.step("x")
    quiet.done()
    assert piped.getvalue() == ""


def test_build_draws_its_phases_on_a_terminal_and_nothing_when_piped(tmp_path, monkeypatch, capsys):
    figure1 = ROOT / "examples" / "figure1"
    argv = ["build", "--assertions", str(figure1 / "assertions.jsonl"), "--receipts", str(figure1 / "receipts.jsonl"),
            "-o", str(tmp_path / "f.graph"), "--json"]
    assert main(argv) == 0
    assert "\r" not in capsys.readouterr().err
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(argv) == 0
    drawn = "".join(terminal.written)
    assert "\rbuilding, " in drawn and "reading the inputs, compiling, evaluating the rules" in drawn
    assert re.search(r"\rbuilding[^\r]*s  writing /", drawn)  # a phase of the build's line (cut at its width)
    assert drawn.endswith("\r")  # cleared: the report alone remains


@pytest.mark.parametrize("command", [["whatif", "--retract-source", "PMID:39973430"], ["show"], ["info"]])
def test_an_input_file_given_as_the_graph_is_not_suggested_as_the_output(tmp_path, capsys, command):
    # following the advice must not overwrite the user's input: the stem + .graph beside it
    given = tmp_path / "assertions.jsonl"
    text = (ROOT / "examples" / "figure1" / "assertions.jsonl").read_text()
    given.write_text(text)
    assert main([command[0], str(given), *command[1:]]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"bad_graph: {given}: not a polygraph graph file")
    suggested = err.split("`polygraph build ")[1].split("`")[0]
    assert suggested.endswith(f"-o {tmp_path / 'assertions.graph'}") and str(given) not in suggested
    assert given.read_text() == text


def test_a_damaged_graph_is_suggested_a_rebuild_in_place(tmp_path, capsys):
    damaged = tmp_path / "figure1.graph"
    damaged.write_bytes(b"not a database at all\n" * 10)
    assert main(["show", str(damaged)]) == 2
    assert capsys.readouterr().err.rstrip().endswith(f"rebuild it with `polygraph build ... -o {damaged}`")
