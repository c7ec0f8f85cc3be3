"""``polygraph check GRAPH``: every row of a graph file read and checked, not only what opening reads.

Checks, in order: SQLite's own integrity check (pages, indexes, constraints); every
stored label decodes and cites only assertion numbers the file holds; every fact's
arguments are a JSON list; every artifact's fact exists, its layer is known and its
content is a JSON object (with subject, predicate and object for claims and edges);
every mention names an existing assertion and fact; the statistics and the stored
rules load.  Reading is streamed: memory holds one row and the problems found.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.store.graph_file import Graph

from polygraph_logic.graph.store.rows import LAYERS
from polygraph_logic.graph.kinds import KINDS

#: problems of one kind reported in full; the rest are counted
EXAMPLES = 3


@dataclass
class CheckReport:
    """What ``check_graph`` found: counts of rows read and problems by kind, with examples."""

    path: str
    rows: Counter = field(default_factory=Counter)
    problems: Counter = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, kind: str, example: str, count: int = 1) -> None:
        """Counts ``count`` problems of ``kind`` (``example`` one of them, kept among the first)."""
        self.problems[kind] += count
        if len(self.examples.setdefault(kind, [])) < EXAMPLES:
            self.examples[kind].append(example)

    @property
    def ok(self) -> bool:
        return not self.problems

    def lines(self) -> list[str]:
        """Returns one ``bad_graph: PATH: ...`` line per problem kind (with examples)."""
        return [f"bad_graph: {self.path}: {count} {kind}: {'; '.join(self.examples[kind])}"
                + (" ..." if count > len(self.examples[kind]) else "")
                for kind, count in self.problems.items()]

    def summary(self) -> str:
        """Returns ``PATH: ok (rows read)``, or a ``bad_graph`` line counting the problems."""
        read = ", ".join(f"{n:,} {what}" for what, n in self.rows.items())
        if self.ok:
            return f"{self.path}: ok ({read})"
        return (f"bad_graph: {self.path}: {sum(self.problems.values())} problem(s) of {len(self.problems)} kind(s); "
                f"rebuild it with `polygraph build ... -o {self.path}`")


def check_graph(path: str | Path, progress: Callable[[str], None] | None = None) -> CheckReport:
    """Reads every row of a graph file or folder; returns a report (opening errors raise PolygraphError).
    ``progress(stage)`` is called as each stage begins."""
    report = CheckReport(str(path))
    say = progress or (lambda stage: None)
    with Graph(path) as graph:
        if not graph.store.typed:  # a format that types its columns and checksums its pages needs no such read
            say("the file's integrity and column types")
            _integrity(graph, report)
            _types(graph, report)
        known = _assertion_numbers(graph, report)
        in_sql = graph.store.checks_in_sql
        say("facts: labels and arguments")
        (_facts_in_sql if in_sql else _facts)(graph, known, report)
        say("artifacts: facts, layers and contents")
        (_artifacts_in_sql if in_sql else _artifacts)(graph, report)
        say("mentions")
        _mentions(graph, report)
        kept = graph.store.kept_kills()
        if kept is not None:
            say("the counts kept of what each source kills")
            _kills(graph, kept, report)
        say("statistics and rules")
        _meta(graph, report)
    return report


def _integrity(graph: Graph, report: CheckReport) -> None:
    messages = [line for row in graph.query("PRAGMA integrity_check(20)") for line in str(row[0]).splitlines()]
    if messages != ["ok"]:
        for message in messages:
            if not message.startswith("***"):
                report.add("integrity check failures", message)


def _assertion_numbers(graph: Graph, report: CheckReport):
    """Returns a membership test for assertion numbers (a range when they are 1..n, as written)."""
    count, low, high = graph.query("SELECT COUNT(*), MIN(num), MAX(num) FROM assertions").fetchone()
    report.rows["assertions"] = count
    if count == 0 or (low == 1 and high == count):
        return range(1, count + 1)
    return {row[0] for row in graph.query("SELECT num FROM assertions")}


def _types(graph: Graph, report: CheckReport) -> None:
    for what, sql in (("assertions with a value that is not text",
                       "SELECT num FROM assertions WHERE typeof(id) != 'text' OR typeof(source) != 'text' OR "
                       "typeof(subject) != 'text' OR typeof(predicate) != 'text' OR typeof(object) != 'text' "
                       "OR typeof(text) NOT IN ('text', 'null')"),
                      ("artifacts with an id, layer or content that is not text",
                       "SELECT num FROM artifacts WHERE typeof(id) != 'text' OR typeof(layer) != 'text' "
                       "OR typeof(content) != 'text'"),
                      ("facts with a relation, arguments or label of the wrong type",
                       "SELECT num FROM facts WHERE typeof(relation) != 'text' OR typeof(args) != 'text' "
                       "OR typeof(label) != 'blob'")):
        for (num,) in graph.query(sql):
            report.add(what, f"row {num}")
    if graph.has_kinds:  # graphs built before kinds have no column: every assertion a source claim
        for num, kind in graph.query("SELECT num, kind FROM assertions WHERE kind IS NULL OR kind NOT IN "
                                     "(SELECT value FROM json_each(?))", (json.dumps(list(KINDS)),)):
            report.add("assertions of an unknown kind", f"row {num} ({kind!r})")


def _facts(graph: Graph, known, report: CheckReport) -> None:
    for num, relation, args, blob in graph.query("SELECT num, relation, args, label FROM facts"):
        report.rows["facts"] += 1
        try:
            groups = graph.decode(blob)
        except PolygraphError:
            report.add("labels that do not decode", f"fact {num} ({relation})")
            groups = []
        missing = sorted({n for group in groups for n in group if n not in known})
        if missing:
            report.add("labels citing missing assertions", f"fact {num} ({relation}) cites assertion number(s) "
                                                           f"{', '.join(map(str, missing[:5]))}")
        try:
            graph.args(args)
        except PolygraphError:
            report.add("facts with damaged arguments", f"fact {num} ({relation}): {str(args)[:40]!r}")


def _artifacts(graph: Graph, report: CheckReport) -> None:
    rows = graph.query("SELECT a.id, a.layer, a.content, f.num FROM artifacts a LEFT JOIN facts f ON f.num = a.fact")
    for id_, layer, content, fact in rows:
        report.rows["artifacts"] += 1
        if fact is None:
            report.add("artifacts whose fact is missing", repr(id_))
        if layer not in LAYERS:
            report.add("artifacts of an unknown layer", f"{id_!r} has layer {layer!r}")
        try:
            parsed = json.loads(content)
        except (ValueError, TypeError, RecursionError):
            report.add("artifacts whose content is not JSON", repr(id_))
            continue
        if not isinstance(parsed, dict):
            report.add("artifacts whose content is not a JSON object", repr(id_))
        elif layer in ("claim", "edge") and not all(isinstance(parsed.get(k), str)
                                                   for k in ("subject", "predicate", "object")):
            report.add("claims or edges without subject, predicate and object", repr(id_))


def _found(graph: Graph, report: CheckReport, kind: str, sql: str, example, parameters=()) -> None:
    """Counts the rows ``sql`` selects as problems of ``kind``, the first few as examples (``example(row)``)."""
    count = graph.query(f"SELECT count(*) FROM ({sql}) q", parameters).fetchone()[0]
    if count:
        rows = graph.query(f"{sql} LIMIT {EXAMPLES}", parameters).fetchall()
        for i, row in enumerate(rows):
            report.add(kind, example(row), count - len(rows) + 1 if i == 0 else 1)


def _facts_in_sql(graph: Graph, known, report: CheckReport) -> None:
    """``_facts`` as queries of a store whose engine reads lists and JSON (DuckDB): at x400, 11 million
    facts in seconds rather than a Python loop over every row.  JSON is typed only where it is valid
    (``CASE``: DuckDB's ``AND`` does not stop at the first false)."""
    report.rows["facts"] = graph.query("SELECT count(*) FROM facts").fetchone()[0]
    _found(graph, report, "labels that do not decode",
           "SELECT num, relation FROM facts WHERE TRY_CAST(label AS BIGINT[][]) IS NULL ORDER BY num",
           lambda row: f"fact {row[0]} ({row[1]})")
    numbers = "SELECT num, relation, unnest(flatten(TRY_CAST(label AS BIGINT[][]))) AS n FROM facts"
    outside = (f"n < 1 OR n > {len(known)}" if isinstance(known, range)
               else "n NOT IN (SELECT num FROM assertions)")
    _found(graph, report, "labels citing missing assertions",
           f"SELECT num, relation, min(n) FROM ({numbers}) WHERE {outside} GROUP BY num, relation ORDER BY num",
           lambda row: f"fact {row[0]} ({row[1]}) cites assertion number(s) {row[2]}")
    _found(graph, report, "facts with damaged arguments",
           "SELECT num, relation, args FROM facts WHERE NOT coalesce(CASE WHEN json_valid(args) THEN "
           "json_type(args) = 'ARRAY' END, FALSE) ORDER BY num", lambda row: f"fact {row[0]} ({row[1]}): {str(row[2])[:40]!r}")


def _artifacts_in_sql(graph: Graph, report: CheckReport) -> None:
    """``_artifacts`` as queries (see ``_facts_in_sql``)."""
    report.rows["artifacts"] = graph.query("SELECT count(*) FROM artifacts").fetchone()[0]
    _found(graph, report, "artifacts whose fact is missing",
           "SELECT a.id FROM artifacts a LEFT JOIN facts f ON f.num = a.fact WHERE f.num IS NULL ORDER BY a.num",
           lambda row: repr(row[0]))
    _found(graph, report, "artifacts of an unknown layer",
           f"SELECT id, layer FROM artifacts WHERE layer NOT IN ({', '.join('?' * len(LAYERS))}) ORDER BY num",
           lambda row: f"{row[0]!r} has layer {row[1]!r}", tuple(LAYERS))
    _found(graph, report, "artifacts whose content is not JSON",
           "SELECT id FROM artifacts WHERE NOT coalesce(json_valid(content), FALSE) ORDER BY num", lambda row: repr(row[0]))
    _found(graph, report, "artifacts whose content is not a JSON object",
           "SELECT id FROM artifacts WHERE CASE WHEN json_valid(content) THEN json_type(content) != 'OBJECT' END "
           "ORDER BY num",
           lambda row: repr(row[0]))
    strings = " AND ".join(f"coalesce(json_type(content, '$.{k}') = 'VARCHAR', FALSE)"
                           for k in ("subject", "predicate", "object"))
    _found(graph, report, "claims or edges without subject, predicate and object",
           f"SELECT id FROM artifacts WHERE layer IN ('claim', 'edge') AND CASE WHEN json_valid(content) THEN "
           f"json_type(content) = 'OBJECT' AND NOT ({strings}) END ORDER BY num", lambda row: repr(row[0]))


def _mentions(graph: Graph, report: CheckReport) -> None:
    report.rows["mentions"] = graph.query("SELECT COUNT(*) FROM mentions").fetchone()[0]
    for what, sql in (("mentions of missing assertions",
                       "SELECT m.assertion, m.fact FROM mentions m LEFT JOIN assertions a ON a.num = m.assertion "
                       "WHERE a.num IS NULL"),
                      ("mentions of missing facts",
                       "SELECT m.assertion, m.fact FROM mentions m LEFT JOIN facts f ON f.num = m.fact "
                       "WHERE f.num IS NULL")):
        for assertion, fact in graph.query(sql):
            report.add(what, f"assertion {assertion} -> fact {fact}")


def _kills(graph: Graph, kept: dict[str, int], report: CheckReport) -> None:
    counted = graph.store.label_kills(anew=True)
    for source in sorted(kept.keys() | counted.keys()):
        if kept.get(source, 0) != counted.get(source, 0):
            report.add("kept kill counts that differ from the labels",
                       f"{source}: kept {kept.get(source, 0)}, counted {counted.get(source, 0)}")


def _meta(graph: Graph, report: CheckReport) -> None:
    try:
        graph.info()
    except PolygraphError as error:
        report.add("damaged metadata", error.message.split(";")[0].split(": ", 1)[-1])
    try:
        report.rows["rules"] = len(graph.rules())
    except PolygraphError as error:
        report.add("damaged rules", error.message.split(";")[0].split(": ", 1)[-1])
