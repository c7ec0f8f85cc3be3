"""The package's import graph: no circle, no arrow from a lower layer to a higher one,
and every import placed inside a function says why on its line (start-up time).

Read from the source with ``ast`` (nothing is imported), so it sees the imports hidden
inside functions too.  An edge goes from a module to each module it names: ``from a.b
import c`` names ``a.b.c`` when that is a module, else ``a.b``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "polygraph_logic"

# bottom to top; a module may import from its own layer or a lower one
LAYERS = [
    {"errors", "files", "progress", "allocation", "resources", "lazy_exports"},
    {"provenance"},
    {"datalog"},
    {"ontology"},
    {"engines"},
    {"graph"},
    {"query"},
    {"importers", "export", "llm", "audit", "retrieval"},
    {"serve", "cli", "memory", "__main__"},  # __main__: `python -m polygraph_logic`, the command
]


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ["polygraph_logic", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path):
    """Yields (imported module, line, inside a function, the line's text) for each import."""
    tree = ast.parse(path.read_text())
    lines = path.read_text().splitlines()
    top = {id(node) for node in tree.body}
    top |= {id(n) for node in tree.body if isinstance(node, ast.If) for n in node.body + node.orelse}
    top |= {id(n) for node in tree.body if isinstance(node, ast.Try) for n in node.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}:{node.lineno}: relative import (the package imports absolutely)"
            base = node.module or ""
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        else:
            continue
        for target in dict.fromkeys(targets):
            if target in MODULES and target != name:
                yield target, node.lineno, id(node) not in top, lines[node.lineno - 1]


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if len(parts) < 2:
        return None  # the package root re-exports the public API: above everything
    for rank, names in enumerate(LAYERS):
        if parts[1] in names:
            return rank
    raise AssertionError(f"{module} belongs to no layer: add its folder to LAYERS")


def _edges():
    return {name: list(_imports(name, path)) for name, path in MODULES.items()}


def test_every_folder_has_a_layer():
    for module in MODULES:
        _layer(module)


def test_no_import_circle():
    graph = {name: {t for t, *_ in edges} for name, edges in _edges().items()}
    index, low, stack, on_stack, circles = {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in graph:
        if v not in index:
            visit(v)
    assert circles == []


def test_arrows_point_down():
    upward = []
    for name, edges in _edges().items():
        mine = _layer(name)
        for target, line, _, _ in edges:
            theirs = _layer(target)
            if mine is not None and theirs is not None and theirs > mine:
                upward.append(f"{MODULES[name].relative_to(PACKAGE.parent)}:{line}: {name} -> {target}")
    assert upward == []


# inside the engine, bottom to top: its folders and its top-level modules by name
DATALOG_LAYERS = [
    {"values"},
    {"syntax", "directives", "rewrite", "fact_table", "budget"},
    {"checks"},
    {"reading", "inline", "magic"},
    {"joins"},
    {"program"},
    {"model", "choice"},
    {"fixpoint", "circuit_eval"},
    {"evaluate"},
    {"souffle_output", "pydatalog_engine", "lazy", "datalog"},
]


def _datalog_layer(module: str) -> int:
    parts = module.split(".")
    key = parts[2] if len(parts) > 2 else "datalog"
    for rank, names in enumerate(DATALOG_LAYERS):
        if key in names:
            return rank
    raise AssertionError(f"{module} has no place in DATALOG_LAYERS: add it")


def test_inside_the_engine_arrows_point_down():
    upward = []
    for name, edges in _edges().items():
        if not name.startswith("polygraph_logic.datalog"):
            continue
        for target, line, _, _ in edges:
            if target.startswith("polygraph_logic.datalog") and _datalog_layer(target) > _datalog_layer(name):
                upward.append(f"{MODULES[name].relative_to(PACKAGE.parent)}:{line}: {name} -> {target}")
    assert upward == []


def test_imports_inside_functions_say_why():
    silent = [f"{MODULES[name].relative_to(PACKAGE.parent)}:{line}"
              for name, edges in _edges().items()
              for _, line, inside, text in edges if inside and "#" not in text]
    assert silent == []


def test_no_sql_outside_the_store():
    """Every SQL text the graph file is asked lives in graph/store/; the SQL engines
    (engines/, tables/) are SQL by nature and write their own, and two modules keep a database
    of their own, not the graph's (the model's cache; export/once.py, an export's values seen)."""
    outside = []
    for name, path in MODULES.items():
        if name.startswith(("polygraph_logic.graph.store", "polygraph_logic.engines", "polygraph_logic.graph.tables",
                            "polygraph_logic.llm.cache", "polygraph_logic.export.once")):
            continue
        for number, text in enumerate(path.read_text().splitlines(), 1):
            if any(word in text for word in ('"SELECT ', "'SELECT ", '"INSERT ', '"UPDATE ', '"DELETE FROM',
                                             '"CREATE ', "json_each(")):
                outside.append(f"{path.relative_to(PACKAGE.parent)}:{number}")
    assert outside == []


@pytest.mark.parametrize("flag", ["--version", "--help"])
def test_version_and_help_do_not_import_lark(flag):
    probe = ("import sys, runpy; sys.argv = ['polygraph', %r]\n"
             "try:\n    runpy.run_module('polygraph_logic.cli', run_name='__main__')\n"
             "except SystemExit:\n    pass\n"
             "print(sorted(m for m in ('lark', 'rdflib', 'sympy', 'duckdb') if m in sys.modules))" % flag)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = done.stdout.strip().splitlines()[-1]
    if flag == "--version":
        assert loaded == "[]"
    else:
        assert "'rdflib'" not in loaded and "'duckdb'" not in loaded
