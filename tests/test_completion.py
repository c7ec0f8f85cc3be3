"""The first steps at the command line: ``python -m polygraph_logic``, bare ``polygraph``, a
mistyped command, and the shell completion scripts of ``polygraph completion``.

The bash script is run by bash itself, as bash runs a completion function (COMP_WORDS,
COMP_CWORD, COMPREPLY); fish's by ``complete -C``; zsh's is loaded by zsh with compinit and
must register itself. A shell that is not installed skips its test, saying so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from polygraph_logic.cli import COMMANDS, main
from polygraph_logic.cli.completion import SHELLS, completion_script

ROOT = Path(__file__).resolve().parent.parent
ENGINES = ["python", "duckdb", "spark"]  # build --engine's choices, as docs/engines.md lists them


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def test_python_dash_m_runs_the_command():
    done = subprocess.run([sys.executable, "-m", "polygraph_logic", "eval", str(ROOT / "examples" / "figure1.dl"),
                           "--relation", "upstream_of"], capture_output=True, text=True, env=_env(), cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert 'upstream_of("MAPK/ERK", "apoptosis")  a12' in done.stdout
    failed = subprocess.run([sys.executable, "-m", "polygraph_logic", "whatif"], capture_output=True, text=True,
                            env=_env(), cwd=ROOT)
    assert failed.returncode == 2 and failed.stderr.startswith("bad_argument: ")


def test_bare_polygraph_prints_the_help_on_standard_output(capsys):
    assert main([]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("usage: polygraph") and err == ""
    assert all(name in out for name in ("build", "whatif", "completion"))


@pytest.mark.parametrize("typed, meant", [("buidl", "build"), ("whatfi", "whatif"), ("expor", "export"),
                                          ("completions", "completion")])
def test_a_mistyped_command_is_told_the_nearest(capsys, typed, meant):
    assert main([typed, "x.graph"]) == 2
    _, err = capsys.readouterr()
    assert err == f"bad_argument: unknown command '{typed}'; did you mean {meant}?\n"


def test_a_word_like_no_command_is_pointed_at_the_help(capsys):
    assert main(["xyzzy"]) == 2
    assert capsys.readouterr().err == "bad_argument: unknown command 'xyzzy'; the commands are listed by " \
                                      "`polygraph --help`\n"


def test_completion_prints_each_script(capsys):
    for shell in SHELLS:
        assert main(["completion", shell]) == 0
        assert capsys.readouterr().out == completion_script(shell)
    with pytest.raises(SystemExit) as exit_:  # argparse's own errors exit from the parser
        main(["completion", "tcsh"])
    assert exit_.value.code == 2 and "invalid choice: 'tcsh'" in capsys.readouterr().err


def _bash_complete(tmp_path: Path, *words: str) -> list[str]:
    """What the bash script offers for ``polygraph WORDS`` (the last word being completed)."""
    script = tmp_path / "polygraph.bash"
    script.write_text(completion_script("bash"))
    line = " ".join(f"'{w}'" for w in words)
    code = (f'source "{script}"; COMP_WORDS=(polygraph {line}); COMP_CWORD={len(words)}; '
            'COMPREPLY=(); _polygraph; printf "%s\\n" "${COMPREPLY[@]}"')
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return [w for w in done.stdout.splitlines() if w]


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_completes_commands_options_choices_and_files(tmp_path):
    assert _bash_complete(tmp_path, "bui") == ["build"]
    assert sorted(_bash_complete(tmp_path, "")) == sorted([*COMMANDS, "-h", "--help", "--version"])
    assert _bash_complete(tmp_path, "build", "--eng") == ["--engine"]
    assert _bash_complete(tmp_path, "build", "--engine", "") == ENGINES
    assert _bash_complete(tmp_path, "build", "--engine", "d") == ["duckdb"]
    assert set(_bash_complete(tmp_path, "whatif", "--retract-s")) == {"--retract-source", "--retract-source-file"}
    (tmp_path / "figure1.graph").write_text("")
    assert _bash_complete(tmp_path, "whatif", "fig") == ["figure1.graph"]
    assert _bash_complete(tmp_path, "import", "r") == ["rdf"]  # a positional's choices
    assert _bash_complete(tmp_path, "completion", "") == [*SHELLS, "figure1.graph", "polygraph.bash"]


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_completes_commands_options_and_choices(tmp_path):
    script = tmp_path / "polygraph.fish"
    script.write_text(completion_script("fish"))

    def offered(line: str) -> list[str]:
        done = subprocess.run(["fish", "--no-config", "-c", f"source {script}; complete -C '{line}'"],
                              capture_output=True, text=True, cwd=tmp_path)
        assert done.returncode == 0 and not done.stderr, done.stderr
        return [row.split("\t")[0] for row in done.stdout.splitlines()]

    assert "build" in offered("polygraph bui")
    assert "--engine" in offered("polygraph build --eng")
    assert sorted(offered("polygraph build --engine ")) == sorted(ENGINES)  # fish sorts them
    assert "rdf" in offered("polygraph import r")


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_loads_the_script_and_it_registers_itself(tmp_path):
    script = tmp_path / "polygraph.zsh"
    script.write_text(completion_script("zsh"))
    assert subprocess.run(["zsh", "-n", str(script)], capture_output=True, text=True).returncode == 0
    code = f'autoload -U compinit; compinit -u -D; source "{script}"; print -r -- $_comps[polygraph]'
    done = subprocess.run(["zsh", "-f", "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0 and not done.stderr, done.stderr
    assert done.stdout.strip() == "_polygraph"
