"""Fixtures shared by several test modules: graphs built once per pytest-xdist worker (in the
session's temporary folder) and read by every module that used to build the same graph itself.

A shared graph is never handed to a test to write into: each module takes a copy of its own,
under the name it gave the graph when it built it (copying a graph file costs a few
milliseconds, building it a few hundred).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Callable

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIGURE1 = ROOT / "examples" / "figure1"
RO = ROOT / "rules" / "ro.dl"


@pytest.fixture(scope="session", autouse=True)
def _subprocess_bytecode(tmp_path_factory):
    """Subprocesses of the tests cache compiled modules in the session's temporary folder, not beside sources."""
    saved = {name: os.environ.get(name) for name in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(tmp_path_factory.getbasetemp() / "bytecode")
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="session")
def figure1_graph(tmp_path_factory) -> Path:
    """Figure 1 built by build_graph from its files with rules/ro.dl, cap 8; shared: never modify it, copy it."""
    from polygraph_logic import build_graph
    path = tmp_path_factory.mktemp("shared-figure1") / "figure1.graph"
    build_graph(FIGURE1 / "assertions.jsonl", FIGURE1 / "receipts.jsonl", [RO]).write(path)
    return path


@pytest.fixture(scope="session")
def figure1_records_graph(tmp_path_factory) -> Path:
    """Figure 1 built by build_graph from its loaded records, rules/ro.dl, cap 8; shared: never modify it, copy it."""
    from polygraph_logic import build_graph
    from polygraph_logic.graph.records import load_assertions, load_receipts
    assertions = load_assertions(FIGURE1 / "assertions.jsonl")
    receipts = load_receipts(FIGURE1 / "receipts.jsonl", {a.id for a in assertions})
    path = tmp_path_factory.mktemp("shared-figure1-records") / "figure1.graph"
    build_graph(assertions, receipts, [RO], cap=8).write(path)
    return path


@pytest.fixture(scope="session")
def shared_graph(tmp_path_factory) -> Callable[[str, Callable[[Path], Path], Path], Path]:
    """``copy(key, make, target)``: a copy at target of the graph make(folder) built once per key (never modified)."""
    made: dict[str, Path] = {}

    def copy(key: str, make: Callable[[Path], Path], target: Path) -> Path:
        if key not in made:
            made[key] = make(tmp_path_factory.mktemp("shared-" + re.sub(r"[^A-Za-z0-9_-]+", "-", key)))
        shutil.copy(made[key], target)
        return target
    return copy
