"""Comparing two tables folders row for row, whatever numbers their facts were given.

Every engine numbers facts by relation and arguments, but a folder converted from a graph
file written before that did not; so ``differences`` compares every table with facts named by
(relation, args): the assertions and rules as they are, facts with labels and flags, mentions
and artifacts with their fact's name, the rules' text, and the meta rows but the build's time
and record.  Tests and benchmarks use it.
"""

from __future__ import annotations

import json
from pathlib import Path

from polygraph_logic.graph.store.folder_layout import rules_text
from polygraph_logic.graph.tables.layout import duckdb_connection, read_meta, table_path

_QUERIES = {
    "assertions": "SELECT * FROM {assertions} ORDER BY num",
    "rules": "SELECT num, tree FROM {rules} ORDER BY num",
    "facts": "SELECT relation, args, label, exact, sets FROM {facts} ORDER BY relation, args",
    "mentions": ("SELECT m.assertion, f.relation, f.args, m.support_set FROM {mentions} m "
                 "JOIN {facts} f ON f.num = m.fact ORDER BY ALL"),
    "artifacts": ("SELECT a.num, a.id, a.layer, a.content, f.relation, f.args, a.summary FROM {artifacts} a "
                  "JOIN {facts} f ON f.num = a.fact ORDER BY a.num"),
}


def differences(first: str | Path, second: str | Path, limit: int = 3) -> list[str]:
    """Returns what differs between two tables folders (empty when they hold the same graph; the
    build's time and record, which name the command and its input files, may differ)."""
    found = []
    meta = [read_meta(folder)["meta"] for folder in (first, second)]
    for key in sorted(set(meta[0]) | set(meta[1])):
        if key not in ("built", "version") and meta[0].get(key) != meta[1].get(key):
            found.append(f"meta {key}: {_short(meta[0].get(key))} != {_short(meta[1].get(key))}")
    texts = [rules_text(Path(folder), m) for folder, m in zip((first, second), meta)]
    if texts[0] != texts[1]:
        found.append(f"rules text: {_short(texts[0])} != {_short(texts[1])}")
    con = duckdb_connection()
    try:
        for table, sql in _QUERIES.items():
            rows = []
            for folder in (first, second):
                names = {name: f"read_parquet('{table_path(folder, name)}')" for name in
                         ("assertions", "rules", "facts", "mentions", "artifacts")}
                rows.append(con.execute(sql.format(**names)).fetchall())
            if len(rows[0]) != len(rows[1]):
                found.append(f"{table}: {len(rows[0]):,} rows != {len(rows[1]):,}")
            unequal = [(a, b) for a, b in zip(*rows) if a != b]
            found += [f"{table}: {_short(a)} != {_short(b)}" for a, b in unequal[:limit]]
            if len(unequal) > limit:
                found.append(f"{table}: {len(unequal) - limit:,} more rows differ")
    finally:
        con.close()
    return found


def _short(value) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=repr)
    return text if len(text) <= 160 else text[:157] + "..."


__all__ = ["differences"]
