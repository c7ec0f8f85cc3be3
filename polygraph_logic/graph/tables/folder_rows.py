"""What both writers of a tables folder share (duckdb_build.py on DuckDB, spark_build.py on
Spark): the assertions table's columns, each value's JSON text and rank, the meta rows, label
bytes counted as varints, and the rounds' statistics collected as they come."""

from __future__ import annotations

import json
from json.encoder import encode_basestring
from typing import Callable

from polygraph_logic.datalog.evaluate import tuple_key
from polygraph_logic.graph import build as python_build
from polygraph_logic.graph.store.writer import json_text
from polygraph_logic.engines.driver import RoundStats
from polygraph_logic.graph.store.rows import FORMAT
from polygraph_logic.graph.store.table_schema import PARQUET_SCHEMA
from polygraph_logic.graph.store.versions import first_version

#: the assertions table of a tables folder (as export-tables writes it from a graph file)
ASSERTIONS = PARQUET_SCHEMA["assertions"]


def folder_meta(prepared, background: int, stats: dict, origins=None, rules: str | None = None,
                labels: str = "capped") -> dict[str, str]:
    """The meta rows of a tables folder, as a graph file's (the build record, the rules' text,
    statistics); ``rules``: the rules' text when the program does not hold every rule;
    ``labels``: how the build labelled facts (build.LABELS)."""
    meta = python_build.build_meta(prepared.cap, prepared.rule_files, prepared.compiled.over_cap, origins,
                                   prepared.lazy, labels)
    if rules is None:
        rules = "\n".join(str(rule) for rule in prepared.program.rules)
    # the build's record, as a graph file keeps it for version 1 (folder.py reads it for ``log``)
    version = first_version(meta, {"action": "build", "inputs": prepared.inputs})
    meta.update({"background_edges": str(background), "format": FORMAT, "stats": json.dumps(stats),
                 "rules": rules, "version": json.dumps(version, sort_keys=True)})
    return dict(sorted(meta.items()))


def value_ranks(values: list) -> list[int]:
    """Each value's rank in ``evaluate.tuple_key``'s order (a fact's arguments sort by their ranks)."""
    if all(type(v) is str for v in values):  # tuple_key orders strings as they are
        order = sorted(range(len(values)), key=values.__getitem__)
    else:
        order = sorted(range(len(values)), key=lambda i: tuple_key((values[i],)))
    rank = [0] * len(values)
    for position, i in enumerate(order):
        rank[i] = position
    return rank


def round_collector(rounds: Callable[[RoundStats], None] | None) -> tuple[list[RoundStats], Callable]:
    """A list the rounds' statistics go to, and the callback that appends them (and tells ``rounds``)."""
    stats: list[RoundStats] = []

    def counted(stat: RoundStats) -> None:
        stats.append(stat)
        if rounds is not None:
            rounds(stat)
    return stats, counted


def value_json(value) -> str:
    """One value as JSON text, as json_text writes it inside a list or a dict."""
    return encode_basestring(value) if type(value) is str else json_text(value)


def varint(n: str) -> str:
    """SQL: the bytes of ``n`` as a varint (encode_label's 7 bits a byte)."""
    return (f"(CASE WHEN {n} < 128 THEN 1 WHEN {n} < 16384 THEN 2 WHEN {n} < 2097152 THEN 3 "
            f"WHEN {n} < 268435456 THEN 4 ELSE 5 END)")


def label_bytes(label: str) -> str:
    """SQL: the bytes encode_label writes for ``label``: per support set its size and the gaps
    between its numbers as varints (label 1: one byte, its size 0; label zero: none).  A label
    of one assertion (x40: 78%) is counted without the lambdas (x40's facts: 0.20 -> 0.15 s)."""
    gap = varint("CASE WHEN i = 1 THEN x ELSE x - s[i - 1] END")
    return (f"CASE WHEN len({label}) = 1 AND len({label}[1]) = 1 THEN 1 + {varint(f'{label}[1][1]')} "
            f"ELSE coalesce(list_sum(list_transform({label}, lambda s: {varint('len(s)')} + "
            f"coalesce(list_sum(list_transform(s, lambda x, i: {gap})), 0))), 0) END")
