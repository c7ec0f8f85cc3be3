"""Graphs as they were written before circuits (graph/store/circuit_rows.py): a copy without one.

A graph whose version has no stored circuit settles capped dead verdicts by re-derivation
when asked (``exact``) and otherwise reports them as uncertain; tests compare both ways.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path


def without_circuit(path: Path, copy: Path) -> Path:
    """Copies the graph file or folder ``path`` to ``copy`` with its circuit left out; returns ``copy``."""
    if Path(path).is_dir():
        shutil.copytree(path, copy)
        for found in Path(copy).rglob("derivations.parquet"):
            found.unlink()
        return copy
    shutil.copyfile(path, copy)
    db = sqlite3.connect(copy)
    db.executescript("DROP TABLE IF EXISTS derivations; DROP TABLE IF EXISTS circuit_versions;")
    db.commit()
    db.close()
    return copy


def assert_settled_as_rederived(circuit, labels_only, deletion, policy: str) -> None:
    """The verdicts through ``circuit``'s stored circuit equal those that re-derivation from the rules
    settles on ``labels_only`` (the same graph without its circuit)."""
    from polygraph_logic.query.whatif import what_if
    settled = what_if(circuit, deletion, policy).to_json()
    rederived = what_if(labels_only, deletion, policy, exact=True).to_json()
    for key in ("touched", "dead", "kept", "demoted", "uncertain", "summaries"):
        assert settled[key] == rederived[key], (str(deletion), policy, key)
