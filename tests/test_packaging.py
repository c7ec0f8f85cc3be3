"""A non-editable install into a clean virtual environment carries grammar, rules and prompts."""

import os
import shutil
import sysconfig
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    base = tmp_path_factory.mktemp("wheel")
    source = base / "src"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", "*.egg-info", "build", "dist", "__pycache__", ".pytest_cache", ".hypothesis"))
    env_dir = base / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    # The clean environment borrows this interpreter's third-party packages through a
    # .pth file (so no network is needed); its own site-packages come first, so
    # polygraph_logic is imported from the wheel built here, not from anywhere else.
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    borrowed = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(purelib, "borrowed.pth").write_text("\n".join(sorted(borrowed)) + "\n")
    result = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--no-build-isolation", "--no-index", str(source)],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return python, base


@pytest.mark.slow
def test_wheel_ships_grammar_rules_and_prompts(installed):
    python, base = installed
    code = ("import polygraph_logic, pathlib; p = pathlib.Path(polygraph_logic.__file__).parent; "
            "print(p); print(*sorted(x.name for x in p.iterdir()))")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # a checkout on the path would shadow the wheel
    result = subprocess.run([str(python), "-c", code], cwd=base, env=env, capture_output=True, text=True, check=True)
    package_dir, listing = result.stdout.splitlines()
    assert str(base / "venv") in package_dir  # the installed copy, not the checkout
    for folder, name in (("grammar", "polygraph.lark"), ("rules", "go_closure.dl"), ("prompts", "README.md")):
        assert folder in listing.split()
        assert (Path(package_dir) / folder / name).is_file()


@pytest.mark.slow
def test_installed_console_script_evaluates_the_example(installed):
    python, base = installed
    script = python.parent / "polygraph"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run(
        [str(script), "eval", str(ROOT / "examples" / "figure1.dl"), "--relation", "upstream_of"],
        cwd=base, capture_output=True, text=True, env=env,
    )
    assert result.returncode == 0, result.stderr
    assert 'upstream_of("MAPK/ERK", "apoptosis")  a12' in result.stdout
