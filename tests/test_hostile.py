"""Never a traceback: hostile input at every boundary is `FILE:LINE:COL: code: message` (or
`code: message`) with exit 2, Ctrl-C is exit 130 leaving nothing behind, a killed build's
leftovers are swept, and no input file changes. A small hypothesis budget here; the large
one is benchmarks/hostile.py, through the real command."""

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from polygraph_logic.cli import main
from polygraph_logic.errors import PolygraphError
from polygraph_logic.files import read_utf8, replacing, sweep_leftovers
from polygraph_logic.graph.records import load_assertions, load_receipts
from polygraph_logic.graph.store.graph_file import Graph

ROOT = Path(__file__).resolve().parent.parent
FIGURE1 = ROOT / "examples" / "figure1"
SHAPE = re.compile(r"^(.+:\d+:\d+: )?[a-z][a-z_]*: \S")
BUDGET = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def assert_clean(status: int, err: str) -> None:
    """Exit 0, or exit 2 whose last line has the error shape; never a traceback or an internal error."""
    assert "Traceback" not in err
    if status != 0:
        last = [line for line in err.splitlines() if line.strip()][-1]
        assert status == 2 and SHAPE.match(last) and "internal_error" not in last, (status, err)


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory, figure1_graph) -> Path:
    """This module's copy of Figure 1 built with rules/ro.dl (conftest.py's ``figure1_graph``)."""
    path = tmp_path_factory.mktemp("hostile") / "g.graph"
    shutil.copy(figure1_graph, path)
    return path


# --- JSON Lines ------------------------------------------------------------------------
def line(**changes) -> str:
    record = {"id": "x1", "source": "s:1", "subject": "a", "predicate": "RO:0002211", "object": "b", **changes}
    return json.dumps(record)


@pytest.mark.parametrize("data, code, column", [
    (b'{"id": "caf\xe9"}\n', "encoding_error", 12),
    ('{"id": "x"}\n'.encode("utf-16"), "encoding_error", 1),
    (line(n=1).replace('1}', '1' + '0' * 5000 + '}').encode(), "too_large", 1),
    (b'{"id": ' + b"[" * 1000 + b"]" * 1000 + b"}", "too_deep", 1),
    (b'{"id": ' + b"[" * 80 + b"]" * 80 + b"}", "too_deep", 1),
    (line(id="\ud800").encode(), "encoding_error", 1),
    (line(subject="x\udfff").encode(), "encoding_error", 1),
    (line(predicate="regulates").encode(), "bad_predicate", 1),
    (line(predicate="RO:0002211\n").encode(), "bad_predicate", 1),
])
def test_hostile_assertion_lines_are_errors_with_file_and_line(tmp_path, data, code, column):
    path = tmp_path / "a.jsonl"
    path.write_bytes((line(id="ok").encode() + b"\n") + data)
    with pytest.raises(PolygraphError) as caught:
        load_assertions(path)
    assert caught.value.code == code, str(caught.value)
    assert (caught.value.position.line, caught.value.position.column) == (2, column)


def test_a_byte_order_mark_and_iris_are_accepted(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text("\ufeff" + line() + "\n" + line(id="x2", predicate="http://purl.obolibrary.org/obo/RO_0002211")
                    + "\n", encoding="utf-8")
    assert [a.predicate for a in load_assertions(path)] == ["RO:0002211", "http://purl.obolibrary.org/obo/RO_0002211"]


@pytest.mark.parametrize("artifact, code", [("summary:aim2#s1", "duplicate_artifact"),
                                            ("claim:0123456789ab", "reserved_id"),
                                            ("edge:abcdefabcdef", "reserved_id")])
def test_receipt_ids_equal_to_generated_ids_are_refused_at_load_time(tmp_path, artifact, code):
    receipt = {"artifact": artifact, "layer": "merge", "content": {"canonical": "a", "members": ["a"]},
               "support": [["a12"]]}
    path = tmp_path / "r.jsonl"
    path.write_text((FIGURE1 / "receipts.jsonl").read_text() + json.dumps(receipt) + "\n")
    known = {a.id for a in load_assertions(FIGURE1 / "assertions.jsonl")}
    with pytest.raises(PolygraphError) as caught:
        load_receipts(path, known)
    lines = len(path.read_text().splitlines())
    assert caught.value.code == code and caught.value.position.line == lines


@BUDGET
@given(st.binary(max_size=300), st.sampled_from(["assertions", "receipts"]))
def test_fuzzed_jsonl_files_build_or_fail_cleanly(tmp_path_factory, capsys, data, which):
    folder = tmp_path_factory.mktemp("fuzz")
    path = folder / "in.jsonl"
    path.write_bytes(data)
    before = digest(path)
    argv = (["build", "--assertions", str(path)] if which == "assertions" else
            ["build", "--assertions", str(FIGURE1 / "assertions.jsonl"), "--receipts", str(path)])
    status = main(argv + ["-o", str(folder / "out.graph")])
    assert_clean(status, capsys.readouterr().err)
    assert digest(path) == before


@BUDGET
@given(st.lists(st.dictionaries(st.sampled_from(["id", "source", "subject", "predicate", "object", "text"]),
                                st.one_of(st.text(max_size=8), st.integers(), st.none(), st.lists(st.text(max_size=2))),
                                min_size=3), min_size=1, max_size=4))
def test_fuzzed_assertion_records_build_or_fail_cleanly(tmp_path_factory, capsys, records):
    folder = tmp_path_factory.mktemp("fuzz")
    path = folder / "a.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    status = main(["build", "--assertions", str(path), "-o", str(folder / "out.graph")])
    assert_clean(status, capsys.readouterr().err)


# --- rule files, graph files, arguments --------------------------------------------------
def test_rule_files_that_are_not_utf8_name_the_line_and_column(tmp_path, capsys):
    path = tmp_path / "bad.dl"
    path.write_bytes(b"p(1).\n// caf\xe9\n")
    with pytest.raises(PolygraphError) as caught:
        read_utf8(path)
    assert str(caught.value) == f"{path}:2:7: encoding_error: byte 0xe9 is not UTF-8; save the file as UTF-8"
    assert main(["eval", str(path)]) == 2
    assert capsys.readouterr().err.startswith(f"{path}:2:7: encoding_error")


@BUDGET
@given(st.lists(st.tuples(st.integers(0, 1_100_000), st.binary(min_size=1, max_size=16)), max_size=3),
       st.integers(0, 2000), st.sampled_from(["info", "show", "whatif", "why", "check"]))
def test_damaged_graph_bytes_read_cleanly_and_stay_unchanged(graph_file, tmp_path_factory, capsys,
                                                             edits, cut, command):
    path = tmp_path_factory.mktemp("fuzz") / "g.graph"
    data = bytearray(graph_file.read_bytes())
    for offset, patch in edits:
        data[offset % len(data):offset % len(data) + len(patch)] = patch
    path.write_bytes(bytes(data[:len(data) - cut]))
    before = digest(path)
    extra = {"whatif": ["--assertion", "a12"], "why": ["merge:mapk-erk"]}.get(command, [])
    status = main([command, str(path), *extra])
    assert_clean(status, capsys.readouterr().err)
    assert digest(path) == before


WORDS = ["info", "show", "whatif", "why", "whynot", "robustness", "top-sources", "export", "check", "eval",
         "--assertion", "--retract-source", "--policy", "--exact", "--json", "--list", "--limit", "--trees",
         "--layer", "--format", "--cap", "-1", "0", "9" * 5000, "", "-", "--", "\udcff", "a12", "distrust:x",
         "merge:mapk-erk", "bogus"]


@BUDGET
@given(st.lists(st.one_of(st.sampled_from(WORDS), st.text(max_size=6)), max_size=6), st.booleans())
def test_fuzzed_argument_lists_exit_0_or_2_with_the_error_shape(graph_file, tmp_path_factory, capsys,
                                                                words, with_graph):
    before = digest(graph_file)
    folder = tmp_path_factory.mktemp("args")
    argv = [w.replace("OUT", str(folder)) for w in words]
    if with_graph and argv:
        argv.insert(1, str(graph_file))
    cwd = os.getcwd()
    os.chdir(folder)  # anything an argument list writes lands here
    try:
        status = main(argv)
    except SystemExit as exit_:  # argparse: --help exits 0, errors exit 2
        status = exit_.code
    finally:
        os.chdir(cwd)
    captured = capsys.readouterr()
    assert_clean(status, captured.err)
    assert digest(graph_file) == before


def test_the_repl_turns_hostile_lines_into_error_lines(graph_file):
    from io import StringIO
    from polygraph_logic.cli.repl import run_repl
    out = StringIO()
    lines = ["delete \udcff", "why " + "x" * 5000, "policy bogus", "retract", "9" * 5000, "\x00", "quit"]
    assert run_repl(str(graph_file), stdin=StringIO("\n".join(lines) + "\n"), stdout=out) == 0
    answers = [a.strip() for a in out.getvalue().split("polygraph> ")[1:-1]]  # one per command but quit
    assert "Traceback" not in out.getvalue() and len(answers) == len(lines) - 1
    assert all(re.match(r"[a-z_]+: ", a) and "\n" not in a for a in answers), answers  # code: message, one line


# --- interrupts and leftovers ----------------------------------------------------------
def test_ctrl_c_during_a_build_exits_130_with_one_line_and_leaves_nothing(tmp_path, capsys, monkeypatch):
    target = tmp_path / "g.graph"
    target.write_bytes(b"the previous graph")
    from polygraph_logic.graph.store import writer as store_write

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(store_write, "encode_label", interrupted)  # Ctrl-C once rows are being written
    status = main(["build", "--assertions", str(FIGURE1 / "assertions.jsonl"), "-o", str(target)])
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert status == 130 and err[-1].startswith("interrupted: ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.graph"] and target.read_bytes() == b"the previous graph"


def test_sigint_to_a_running_build_exits_130(tmp_path):
    target = tmp_path / "g.graph"
    process = subprocess.Popen([sys.executable, "-c", "import sys, time; from polygraph_logic.cli import main; "
                                "import polygraph_logic.graph.build as b\n"
                                "def slow(*a, **k):\n print('ready', flush=True); time.sleep(60)\n"
                                "b.build_python = slow\nimport polygraph_logic.cli.graph as g; g.build_graph = slow\n"
                                f"sys.exit(main(['build', '--assertions', {str(FIGURE1 / 'assertions.jsonl')!r}, "
                                f"'-o', {str(target)!r}]))"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               # Ctrl-C as a terminal delivers it: a suite started in the background
                               # (`pytest &` from a script) inherits SIGINT ignored, and so would the
                               # child, which then sleeps through the signal and the 60 s timeout
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert process.stdout.readline().strip() == "ready"
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130 and err.strip().splitlines() == [
        "interrupted: stopped by Ctrl-C; no output file was changed"]
    assert list(tmp_path.iterdir()) == []


def test_a_killed_builds_leftovers_are_swept_by_the_next_build_of_the_target(tmp_path):
    target = tmp_path / "g.graph"
    process = subprocess.Popen([sys.executable, "-c", "import time; from polygraph_logic.files import replacing\n"
                                f"with replacing({str(target)!r}, '.partial') as t:\n"
                                " t.write_text('half'); print('ready', flush=True); time.sleep(60)"],
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "ready"
    (tmp_path / ".other.graph.x.partial").write_text("another target's")
    live = [p for p in tmp_path.iterdir() if p.name.startswith(".g.graph.")]
    assert len(live) == 1 and sweep_leftovers(target, ".partial") == []  # a live writer's file is kept
    process.kill()
    process.wait()
    assert live[0].exists()  # SIGKILL leaves it behind
    assert main(["build", "--assertions", str(FIGURE1 / "assertions.jsonl"), "-o", str(target)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.graph.x.partial", "g.graph"]
    with Graph(target) as graph:
        assert len(graph.assertions) == 6


def test_replacing_keeps_the_old_file_on_failure(tmp_path):
    target = tmp_path / "f.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with replacing(target, ".partial") as temporary:
            temporary.write_text("new")
            raise RuntimeError("midway")
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"] and target.read_text() == "old"


def test_an_error_naming_a_file_with_any_line_break_stays_one_line(capsys):
    """str.splitlines() breaks at C1's NEL and at U+2028/2029 too (hypothesis found '\\x85')."""
    for name in ("\x850", "a\u2028b", "c\u2029d", "e\x1cf", "g\rh"):
        assert main(["info", name]) == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and SHAPE.match(err), err
