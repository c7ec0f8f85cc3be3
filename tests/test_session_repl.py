"""The what-if session API and the REPL, the REPL driven by scripted input."""

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.cli.repl import run_repl
from polygraph_logic.query.session import Session

ROOT = Path(__file__).resolve().parent.parent
FIGURE1 = ROOT / "examples" / "figure1"


@pytest.fixture(scope="module")
def graph_path(tmp_path_factory, figure1_graph):
    """This module's copy of Figure 1 built with rules/ro.dl (conftest.py's ``figure1_graph``)."""
    path = tmp_path_factory.mktemp("repl") / "f1.graph"
    shutil.copy(figure1_graph, path)
    return path


def test_session_builds_deletions_with_undo_and_redo(graph_path):
    session = Session.open(graph_path)
    first = session.retract("PMID:39973430")
    both = session.retract("PMID:40057077")
    assert len(both.dead) > len(first.dead)
    assert session.undo().dead == first.dead
    assert session.redo().dead == both.dead
    assert session.restore("PMID:40057077").dead == first.dead
    with pytest.raises(PolygraphError):
        session.retract("PMID:nope")
    assert session.deletion.sources == ("PMID:39973430",)  # a failed command changes nothing
    assert session.history == ["retract PMID:39973430", "retract PMID:40057077", "undo", "redo",
                               "restore PMID:40057077"]
    session.undo(), session.undo(), session.undo()
    with pytest.raises(PolygraphError, match="nothing to undo"):
        session.undo()


def test_apply_writes_a_new_snapshot_and_leaves_the_graph_alone(graph_path, tmp_path):
    before = graph_path.read_bytes()
    session = Session.open(graph_path)
    session.retract("PMID:40057077")
    outcome = session.apply(tmp_path / "clean.graph")
    assert graph_path.read_bytes() == before
    with pytest.raises(PolygraphError, match="new snapshot"):
        session.apply(graph_path)
    with Graph(tmp_path / "clean.graph") as clean:
        ids = {a.id for a in clean.artifacts()}
        assert not ids & set(outcome.dead)
        assert "a31" not in clean.assertions
        summary = clean.artifact("summary:aim2")  # trimmed: its surviving sentence only
        assert summary.content["sentences_kept"] == ["summary:aim2#s2"] and summary.support == (("a32",),)
        flat = clean.artifact("summary:aim2-flat")
        assert flat.support == (("a32",),)
        assert all("a31" not in g for a in clean.artifacts() for g in a.support)


def test_repl_driven_by_script(graph_path, tmp_path):
    script = "\n".join([
        "retract PMID:39973430", "diff list", "why merge:mapk-erk", "whynot summary:aim2-flat",
        "robustness merge:mapk-erk", "retract PMID:nope", "bogus", "undo", "redo", "policy distrust:summary",
        "policy nonsense", "exact on", "diff", "top 2", f"apply {tmp_path / 'snap.graph'}", "history", "quit",
    ]) + "\n"
    out = io.StringIO()
    assert run_repl(str(graph_path), stdin=io.StringIO(script), stdout=out) == 0
    text = out.getvalue()
    assert "deletion: retract-source PMID:39973430 (2 assertions); policy trust-all" in text
    assert "merge:mapk-erk (merge): a12·a13 + a20·a21" in text
    assert "fewest sources whose retraction kills it: 2" in text
    assert "\nunknown_deletion: no source named 'PMID:nope'" in text.replace("polygraph> ", "\n")
    assert "unknown_command: 'bogus' is not a command" in text
    assert "\nunknown_policy: " in text.replace("polygraph> ", "\n")
    assert "exact re-derivation on" in text
    assert "PMID:39973430" in text.split("polygraph> ")[-4]  # top sources
    assert (tmp_path / "snap.graph").exists()
    assert "1 retract PMID:39973430" in text and "policy distrust:summary" in text


def test_repl_completion_offers_sources_relations_and_artifacts(graph_path):
    from polygraph_logic.cli.repl import Repl
    repl = Repl(Session.open(graph_path), stdin=io.StringIO(), stdout=io.StringIO())
    assert repl.complete_retract("PMID:3", "retract PMID:3", 8, 14) == ["PMID:39973430"]
    assert repl.complete_revoke("RO:00022", "", 0, 0) == ["RO:0002211", "RO:0002212", "RO:0002213"]
    assert repl.complete_why("merge:", "", 0, 0) == ["merge:mapk-erk"]
    assert "distrust:summary" in repl.complete_policy("dis", "", 0, 0)


def test_repl_as_a_command_with_piped_input(graph_path, tmp_path):
    env = {**os.environ, "POLYGRAPH_HISTORY": str(tmp_path / "history")}
    result = subprocess.run([sys.executable, "-m", "polygraph_logic.cli", "repl", str(graph_path)],
                            input="retract PMID:40057077\nquit\n", capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    assert "summary:aim2: trimmed (1/2 sentences dead)" in result.stdout


def test_cli_whatif_json_and_explanations(graph_path, capsys):
    import json
    from polygraph_logic.cli import main
    assert main(["whatif", str(graph_path), "--retract-source", "PMID:39973430", "--policy", "trust-all",
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    for key in ("touched", "dead", "kept", "by_layer", "policy", "exact", "elapsed_ms"):
        assert key in data
    assert data["policy"] == "trust-all" and "merge:mapk-erk" in data["kept"]
    assert set(data["dead"]) | set(data["kept"]) == set(data["touched"])
    assert main(["whatif", str(graph_path), "--revoke-relation", "RO:000221"]) == 2
    assert "RO:0002211" in capsys.readouterr().err.split("did you mean")[1]
    assert main(["whatif", str(graph_path), "--assertion", "a12", "--policy", "bogus"]) == 2
    assert main(["why", str(graph_path), "merge:mapk-erk", "--json"]) == 0
    why = json.loads(capsys.readouterr().out)
    assert why["label"] == "a12·a13 + a20·a21" and why["derivations"][0][0].startswith("merge(")
    assert main(["why", str(graph_path), "merge:mapk"]) == 2
    assert capsys.readouterr().err.startswith("unknown_artifact: no artifact named 'merge:mapk'; "
                                              "did you mean merge:mapk-erk")
    assert main(["robustness", str(graph_path), "summary:aim2-flat", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["independent_sources"] == 2
    assert main(["top-sources", str(graph_path), "--limit", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["source"] == "PMID:39973430"
    assert main(["whynot", str(graph_path), "summary:aim2", "--retract-source", "PMID:40057077", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["support_sets"][0]["sources"] == ["PMID:40057077"]


def _repl_lines(graph_path, *commands: str) -> list[str]:
    """Runs commands through the REPL; returns what each printed (one string per command)."""
    out = io.StringIO()
    run_repl(str(graph_path), stdin=io.StringIO("\n".join(commands) + "\n"), stdout=out)
    answers = out.getvalue().split("polygraph> ")[1:]
    assert len(answers) == len(commands) + 1  # the last prompt meets the end of input
    return [a.strip() for a in answers[:-1]]


def test_repl_validates_arguments_with_a_usage_line(graph_path):
    answers = dict(zip(
        ["exact maybe", "exact", "top abc", "top 0", "top 1 2", "retract", "retract A B", "diff bogus",
         "undo now", "why", "apply", "retract 'unclosed"],
        _repl_lines(graph_path, "exact maybe", "exact", "top abc", "top 0", "top 1 2", "retract",
                    "retract A B", "diff bogus", "undo now", "why", "apply", "retract 'unclosed")))
    usage = {"exact maybe": "exact on|off", "exact": "exact on|off", "top abc": "top [N]", "top 0": "top [N]",
             "top 1 2": "top [N]", "retract": "retract SOURCE", "retract A B": "retract SOURCE",
             "diff bogus": "diff [list]", "undo now": "undo", "why": "why ARTIFACT", "apply": "apply PATH",
             "retract 'unclosed": "retract SOURCE"}
    for command, answer in answers.items():
        assert answer.startswith("bad_argument: ") and answer.endswith(f"usage: {usage[command]}"), (command, answer)
        assert "\n" not in answer
    # a failed command changes nothing: exact stays off, the deletion stays empty
    session_after = _repl_lines(graph_path, "exact maybe", "diff")
    assert session_after[1].startswith("deletion: nothing (0 assertions)")
    # quotes keep a name with spaces whole, and each name is looked up as written
    quoted = _repl_lines(graph_path, 'retract "PMID:1 2"', "exact on", "exact off", "diff list")
    assert quoted[0] == "unknown_deletion: no source named 'PMID:1 2'; nothing was evaluated"
    assert quoted[1:3] == ["exact re-derivation on", "exact re-derivation off"]


def test_repl_errors_are_the_cli_codes(graph_path, capsys):
    from polygraph_logic.cli import main
    repl = _repl_lines(graph_path, "why merge:mapk", "whynot nosuch", "robustness merge:mapk")
    assert main(["why", str(graph_path), "merge:mapk"]) == 2
    cli = capsys.readouterr().err.strip()
    assert repl[0] == cli == "unknown_artifact: no artifact named 'merge:mapk'; did you mean merge:mapk-erk?"
    assert repl[1].startswith("unknown_artifact: no artifact named 'nosuch'")
    assert repl[2] == repl[0]
    assert main(["eval", str(ROOT / "examples" / "figure1.dl"), "--relation", "nosuch"]) == 2
    assert capsys.readouterr().err.startswith("unknown_relation: no relation named 'nosuch'; the program has: ")


def test_repl_apply_never_creates_folders_and_says_what_it_wrote(graph_path, tmp_path):
    missing = tmp_path / "nonexistent" / "dir" / "x.graph"
    answers = _repl_lines(graph_path, f"apply {missing}", "retract PMID:40057077", f"apply {tmp_path / 'x.graph'}")
    assert answers[0] == f"io_error: cannot write {missing}: {missing.parent} does not exist (create the folder first)"
    assert not (tmp_path / "nonexistent").exists()
    assert answers[2] == (f"wrote the new graph file {tmp_path / 'x.graph'}: the graph without the 1 assertion(s) of "
                          "retract-source PMID:40057077 and the 20 artifact(s) that die under trust-all "
                          f"(1 claim, 18 edge, 1 sentence); {graph_path} is unchanged")
    with Graph(tmp_path / "x.graph") as written, Graph(graph_path) as original:
        # independent count: the artifacts the written file lacks are the ones the answer names
        assert len(list(original.artifacts())) - len(list(written.artifacts())) == 20


def test_build_never_creates_folders(tmp_path, capsys):
    from polygraph_logic.cli import main
    target = tmp_path / "nonexistent" / "dir" / "x.graph"
    assert main(["build", "--assertions", str(FIGURE1 / "assertions.jsonl"), "-o", str(target)]) == 2
    assert capsys.readouterr().err.strip().endswith(f"{target.parent} does not exist (create the folder first)")
    assert not (tmp_path / "nonexistent").exists()


def test_repl_help_lists_commands_not_eof(graph_path):
    text = _repl_lines(graph_path, "help")[0]
    assert "retract" in text and "apply" in text and "quit" in text
    assert "EOF" not in text and "Undocumented" not in text


def test_top_during_a_deletion_ranks_the_other_sources_by_what_each_kills_beyond_it(graph_path):
    """Figure 1's merge MAPK/ERK rests on two support sets, one from PMID:39973430 and one from
    example:paper-B: once the first source is retracted, retracting paper B also kills the merge."""
    session = Session.open(graph_path)
    first = session.top(3)
    assert first[0]["source"] == "PMID:39973430" and "merge" not in first[0]["by_layer"]
    session.retract("PMID:39973430")
    ranked = session.top(10)
    assert "PMID:39973430" not in {row["source"] for row in ranked}
    by_source = {row["source"]: row for row in ranked}
    assert by_source["example:paper-B"]["by_layer"].get("merge") == 1
    dead_now = set(session.diff().dead)
    for row in ranked:  # each count: what the two retractions kill together, less what the first kills
        both = Session.open(graph_path)
        both.retract("PMID:39973430")
        assert row["dead"] == len(set(both.retract(row["source"]).dead) - dead_now)
        both.graph.close()
    assert [row["dead"] for row in ranked] == sorted((row["dead"] for row in ranked), reverse=True)
    session.graph.close()
