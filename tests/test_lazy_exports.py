"""Package faces read on first use: importing a package loads none of its modules, every name
it exports still resolves, and ``polygraph whatif --help`` does not load the parser."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "polygraph_logic"
# the packages whose faces name their modules in _EXPORTS (found by reading the source)
FACES = sorted(path.parent.name for path in PACKAGE.glob("*/__init__.py") if "_EXPORTS" in path.read_text())

# measured when the faces became lazy: 114 package modules and lark before, 60 after (a small margin);
# 66 since the join steps read ranges (datalog/joins/range_steps.py, issue 55)
WHATIF_HELP_MODULES = 67


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT,
                          env=_env())
    return done.stdout.strip().splitlines()[-1]


def _env() -> dict[str, str]:
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def test_the_faces_are_found():
    assert {"datalog", "query", "engines", "export", "importers", "audit", "retrieval", "serve",
            "ontology", "llm"} <= set(FACES)


def test_whatif_help_loads_no_parser_and_few_modules():
    probe = ("import sys\nfrom polygraph_logic.cli import main\n"
             "try:\n    main(['whatif', '--help'])\nexcept SystemExit:\n    pass\n"
             "mine = [m for m in sys.modules if m.split('.')[0] == 'polygraph_logic']\n"
             "print(__import__('json').dumps({'lark': 'lark' in sys.modules, 'modules': len(mine)}))")
    loaded = json.loads(_run(probe))
    assert loaded["lark"] is False
    assert 10 < loaded["modules"] < WHATIF_HELP_MODULES


def test_importing_a_face_loads_none_of_its_modules():
    probe = ("import importlib, json, sys\nextra = {}\n"
             f"for face in {FACES!r}:\n"
             "    before = set(sys.modules)\n"
             "    importlib.import_module('polygraph_logic.' + face)\n"
             "    new = sorted(m for m in set(sys.modules) - before if m.startswith('polygraph_logic'))\n"
             "    extra[face] = [m for m in new if m not in ('polygraph_logic', 'polygraph_logic.lazy_exports',\n"
             "                                               'polygraph_logic.' + face)]\n"
             "print(json.dumps(extra))")
    assert json.loads(_run(probe)) == {face: [] for face in FACES}


@pytest.mark.parametrize("face", FACES)
def test_every_exported_name_resolves_and_is_listed(face):
    package = importlib.import_module(f"polygraph_logic.{face}")
    assert package.__all__ and len(set(package.__all__)) == len(package.__all__)
    for name in package.__all__:
        value = getattr(package, name)
        defining = importlib.import_module(f"polygraph_logic.{face}.{package._EXPORTS[name]}")
        assert value is defining.__dict__[name]  # defined (or re-exported) there, not a submodule
        assert name in dir(package)
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        package.not_a_name  # noqa: B018


def test_star_import_gives_every_name():
    namespace: dict = {}
    exec("from polygraph_logic.export import *", namespace)
    assert {"export_graph", "FORMATS", "Minter"} <= set(namespace)


def test_a_name_its_submodule_also_bears_stays_the_function():
    # datalog.evaluate is both a module and the function the face exports: importing the module
    # first binds it on the package, and the face must still give the function
    probe = ("import polygraph_logic.datalog.evaluate\n"
             "from polygraph_logic.datalog import evaluate, parse_program\n"
             "model = evaluate(parse_program('a1 :: e(\"x\", \"y\"). p(x) :- e(x, _).'))\n"
             "print(str(model.label('p', ('x',))))")
    assert _run(probe) == "a1"
