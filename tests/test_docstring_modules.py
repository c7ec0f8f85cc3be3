"""Every module a docstring names exists: ``word.py``, ``folder/word.py`` and dotted
``polygraph_logic.x.y`` (or ``benchmarks.x``) in the docstrings of every module, class and
function of the package and of the benchmarks, read with ``ast``.

A bare ``word.py`` must be a module somewhere in the package or the benchmarks; a path must
resolve from the package, the module's own folder (or a folder above it inside the package),
or the repository root (``tests/test_x.py``); a dotted name must be a module or a package.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "polygraph_logic"
BENCHMARKS = ROOT / "benchmarks"
SOURCES = sorted([*PACKAGE.rglob("*.py"), *BENCHMARKS.rglob("*.py")])

# a file name (with any folders before it) or a dotted module name; not part of a longer path or name
NAMED = re.compile(r"(?<![\w./-])((?:\w+/)*\w+\.py)(?!\.?\w)|(?<![\w./-])((?:polygraph_logic|benchmarks)(?:\.\w+)+)")

# Docstrings known to name a module that does not exist, as (module, name): none (an entry is only
# for a name a change in progress fixes; the test below refuses an entry that is no longer wrong)
PENDING_ELSEWHERE: set[tuple[str, str]] = set()


def _docstrings(path: Path):
    """Yields (where, docstring) for the module and each class and function in it."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            text = ast.get_docstring(node)
            if text:
                yield getattr(node, "name", "<module>"), text


def _names(path: Path) -> list[tuple[str, str]]:
    found = []
    for where, text in _docstrings(path):
        for match in NAMED.finditer(text):
            found.append((where, match.group(0)))
    return found


BARE = {p.name for p in SOURCES}


def _exists(path: Path, name: str) -> bool:
    if name.endswith(".py") and "/" not in name:
        return name in BARE
    if name.endswith(".py"):
        folders = [PACKAGE, ROOT]
        folder = path.parent
        while folder in (PACKAGE, BENCHMARKS) or PACKAGE in folder.parents or BENCHMARKS in folder.parents:
            folders.append(folder)
            folder = folder.parent
        return any((base / name).is_file() for base in folders)
    module = ROOT.joinpath(*name.split("."))
    return module.with_suffix(".py").is_file() or (module / "__init__.py").is_file()


def _key(path: Path) -> str:
    return str(path.relative_to(PACKAGE if PACKAGE in path.parents else ROOT))


def test_the_pattern_finds_each_form():
    text = "see engines/sql_plan.py, driver.py and polygraph_logic.query.whatif; not x.py.bak or a/b.pyc"
    assert [m.group(0) for m in NAMED.finditer(text)] == ["engines/sql_plan.py", "driver.py",
                                                          "polygraph_logic.query.whatif"]


def test_a_wrong_name_is_caught():
    here = PACKAGE / "engines" / "driver.py"
    assert _exists(here, "sql_plan.py") and _exists(here, "graph/store/questions.py")
    assert _exists(here, "polygraph_logic.engines.sql_plan") and _exists(here, "tests/test_layers.py")
    assert not _exists(here, "plan.py") and not _exists(here, "tables/sql_whatif.py")
    assert not _exists(here, "polygraph_logic.engines.plan")


@pytest.mark.parametrize("path", SOURCES, ids=_key)
def test_every_named_module_exists(path):
    missing = [f"{where}: {name}" for where, name in _names(path)
               if not _exists(path, name) and (_key(path), name) not in PENDING_ELSEWHERE]
    assert missing == []


def test_pending_entries_are_still_wrong():
    # an entry fixed elsewhere must leave the list, so that the list only ever shrinks to empty
    stale = [entry for entry in sorted(PENDING_ELSEWHERE)
             if not any(name == entry[1] and not _exists(PACKAGE / entry[0], name)
                        for _, name in _names(PACKAGE / entry[0]))]
    assert stale == []
