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


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The wheel built offline from a copy of the checkout: its file names and the build's output."""
    import zipfile

    base = tmp_path_factory.mktemp("built")
    source = base / "src"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", "*.egg-info", "build", "dist", "__pycache__", ".pytest_cache", ".hypothesis"))
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-v",
         "-w", str(base / "out"), str(source)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    [built] = (base / "out").glob("*.whl")
    with zipfile.ZipFile(built) as archive:
        return set(archive.namelist()), archive.read(next(n for n in archive.namelist() if n.endswith(
            ".dist-info/METADATA"))).decode(), result.stdout + result.stderr


def test_wheel_holds_every_module_and_shipped_file_of_the_checkout(wheel):
    names, _, output = wheel
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "polygraph_logic").rglob("*.py")
               if "__pycache__" not in p.parts}
    assert modules and modules <= names, sorted(modules - names)[:5]
    shipped = {f"polygraph_logic/{folder}/{p.name}" for folder in ("grammar", "rules", "prompts")
               for p in (ROOT / folder).iterdir() if p.is_file()}
    shipped |= {p.relative_to(ROOT).as_posix() for p in (ROOT / "polygraph_logic" / "serve" / "static").iterdir()}
    assert "polygraph_logic/rules/ro.dl" in shipped and shipped <= names, sorted(shipped - names)[:5]
    assert {"polygraph_logic/py.typed", "polygraph_logic/export/polygraph.ttl"} <= names
    assert not any("__pycache__" in name for name in names)
    # setuptools warns of a data folder left out of the package list ("... is absent from the
    # `packages` configuration"), as serve/static was when the list was written by hand
    assert "absent from the `packages`" not in output and "polygraph_logic.serve.static" not in output


def test_wheel_states_the_license_by_its_spdx_name_and_carries_its_text(wheel):
    names, metadata, _ = wheel
    assert "License-Expression: MIT" in metadata.splitlines()
    [license_file] = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "WITHOUT WARRANTY OF ANY KIND" in text


def _distribution(module: str) -> str:
    """A module's distribution name as pyproject.toml spells requirements, normalized (PEP 503)."""
    import re
    return re.sub(r"[-_.]+", "-", module).lower()


def _requirement_names(requirements) -> set[str]:
    import re
    return {_distribution(re.match(r"[A-Za-z0-9_.-]+", r).group()) for r in requirements}


def test_every_third_party_import_is_declared_where_its_module_needs_it():
    """Each module importing a third-party module: declared in the dependencies, or, for a module
    that imports an optional engine (duckdb, pyspark), in that engine's extra."""
    import ast
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = _requirement_names(project["dependencies"])
    extras = {name: _requirement_names(found) for name, found in project["optional-dependencies"].items()}
    anywhere = core.union(*extras.values())
    # pyspark pins py4j, the version its Java side speaks; a second requirement could only conflict
    brought = {"py4j": "pyspark"}
    engines = {"duckdb": "duckdb", "pyspark": "spark"}
    missing = []
    for path in (ROOT / "polygraph_logic").rglob("*.py"):
        imported = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                imported.add(node.module.split(".")[0])
        imported -= {*sys.stdlib_module_names, "polygraph_logic"}
        for module in imported:
            name = _distribution(brought.get(module, module))
            if name not in anywhere:
                missing.append(f"{path.relative_to(ROOT)}: {module}")
            for engine in imported & engines.keys():
                if name not in core | extras[engines[engine]]:
                    missing.append(f"{path.relative_to(ROOT)}: {module} beside {engine}, not in [{engines[engine]}]")
    assert not missing, missing
    assert "numpy" in extras["duckdb"] & extras["spark"]  # the DuckDB paths register numpy columns


def test_the_quick_start_states_python_java_and_a_virtual_environment():
    import re
    import tomllib

    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    version = re.fullmatch(r">=(\d+\.\d+)", requires).group(1)
    quick = (ROOT / "README.md").read_text().split("## Quick start")[1].split("\n## ")[0]
    assert f"Python {version} or later" in quick and "-m venv" in quick
    java = re.search(r"`spark` \| .*Java (\d+)", (ROOT / "docs" / "engines.md").read_text()).group(1)
    assert f"Java {java}" in quick and "skip" in quick  # the full suite's Spark tests, as engines.md says
