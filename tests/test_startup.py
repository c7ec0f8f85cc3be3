"""A light core: what `polygraph --version` and `--help` import, and matplotlib only behind [bench].

These check results (which modules a fresh process has loaded), never times: the wall
times are printed by benchmarks/whole_process.py --startup.
"""

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("numpy", "rdflib", "anthropic", "sympy", "matplotlib", "pyDatalog", "rank_bm25")


def loaded_after(argv: list[str], prelude: str = "") -> tuple[list[str], str]:
    script = (f"import sys\n{prelude}\nsys.argv = ['polygraph', *{argv!r}]\nfrom polygraph_logic.cli import main\n"
              "try:\n    code = main()\nexcept SystemExit as stop:\n    code = stop.code\n"
              f"print('LOADED', ' '.join(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    line = [l for l in result.stderr.splitlines() if l.startswith("LOADED")][-1]
    return line.split()[1:], result.stdout + result.stderr


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["evaluate", "--help"], ["whatif", "--help"]])
def test_version_and_help_import_no_heavy_module(argv):
    loaded, output = loaded_after(argv)
    assert loaded == [], f"{' '.join(argv)} imported {loaded}"
    assert "polygraph" in output


def test_evaluate_help_names_the_default_policies():
    from polygraph_logic.retrieval.consequences import POLICIES
    _, output = loaded_after(["evaluate", "--help"])
    assert f"default {', '.join(POLICIES)})" in " ".join(output.split())


def test_matplotlib_is_the_bench_extra_not_a_core_dependency():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not any(r.startswith("matplotlib") for r in project["dependencies"])
    assert any(r.startswith("matplotlib") for r in project["optional-dependencies"]["bench"])


def test_bench_without_matplotlib_says_which_extra_to_install(tmp_path):
    # matplotlib made unimportable in the child process, as in an install without [bench]
    script = ("import sys\nsys.modules['matplotlib'] = None\nfrom benchmarks.run_all import main\n"
              f"sys.exit(main(['--quick', '-o', {str(tmp_path / 'b')!r}]))")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode == 2
    assert 'missing_extra: the bench plot needs matplotlib: pip install "polygraph_logic[bench]"' in output
    assert not (tmp_path / "b").exists()  # it failed before any benchmark ran

