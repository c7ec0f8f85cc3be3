"""The built graph in one SQLite file: assertions, artifacts with labels, and the index
from each assertion to the artifacts whose labels mention it.

Labels are stored compactly: support sets as varint-coded, delta-coded assertion
numbers.  Writing goes to a temporary file that replaces the target only once it
is complete, so an interrupted build leaves any previous graph intact.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from ..errors import PolygraphError
from ..files import replacing
from ..provenance import Polynomial, WhySemiring
from .assertions import Assertion

FORMAT = "polygraph-graph/1"
LAYERS = ("claim", "merge", "edge", "summary", "sentence")

_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE assertions(num INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, source TEXT NOT NULL,
    subject TEXT NOT NULL, predicate TEXT NOT NULL, object TEXT NOT NULL, text TEXT);
CREATE TABLE artifacts(num INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, layer TEXT NOT NULL,
    content TEXT NOT NULL, label BLOB NOT NULL, exact INTEGER NOT NULL, sets INTEGER NOT NULL);
CREATE TABLE mentions(assertion INTEGER NOT NULL, artifact INTEGER NOT NULL,
    PRIMARY KEY(assertion, artifact)) WITHOUT ROWID;
CREATE INDEX artifacts_by_layer ON artifacts(layer);
CREATE TABLE facts(relation TEXT NOT NULL, args TEXT NOT NULL, label BLOB NOT NULL, exact INTEGER NOT NULL,
    PRIMARY KEY(relation, args)) WITHOUT ROWID;
"""


@dataclass(frozen=True)
class StoredFact:
    """One fact of the evaluated program (artifact or not), kept for re-derivation."""

    relation: str
    args: tuple
    support: tuple[tuple[str, ...], ...]  # () is zero; ((),) is background knowledge (1)
    exact: bool


@dataclass(frozen=True)
class Artifact:
    """Anything the graph holds and a retriever can return, with its support label."""

    id: str
    layer: str
    content: dict
    support: tuple[tuple[str, ...], ...]  # support sets of assertion ids, smallest first
    exact: bool


def encode_label(support: Iterable[Iterable[int]]) -> bytes:
    """Returns support sets of assertion numbers as varints: size, then ascending gaps."""
    out = bytearray()

    def varint(n: int) -> None:
        while n >= 0x80:
            out.append(n & 0x7F | 0x80)
            n >>= 7
        out.append(n)

    for group in support:
        numbers = sorted(group)
        varint(len(numbers))
        previous = 0
        for n in numbers:
            varint(n - previous)
            previous = n
    return bytes(out)


def decode_label(blob: bytes) -> list[list[int]]:
    """Inverts encode_label."""
    values, n, shift = [], 0, 0
    for byte in blob:
        n |= (byte & 0x7F) << shift
        if byte & 0x80:
            shift += 7
        else:
            values.append(n)
            n, shift = 0, 0
    groups, i = [], 0
    while i < len(values):
        size, total, group = values[i], 0, []
        for gap in values[i + 1:i + 1 + size]:
            total += gap
            group.append(total)
        groups.append(group)
        i += 1 + size
    return groups


def write_graph(path: str | Path, assertions: list[Assertion], artifacts: Iterable[Artifact],
                meta: dict[str, str], facts: Iterable[StoredFact] = (), rules: str = "") -> None:
    """Writes a graph file atomically: the old file survives any failure midway.

    ``facts`` are every fact of the evaluated program and ``rules`` its rules as text,
    so that later re-derivation needs neither the inputs nor the rule files.
    """
    with replacing(path, ".partial") as temporary:
        db = sqlite3.connect(temporary)
        try:
            db.executescript(_SCHEMA)
            number = {a.id: i for i, a in enumerate(assertions, 1)}
            db.executemany(
                "INSERT INTO assertions VALUES (?, ?, ?, ?, ?, ?, ?)",
                ((number[a.id], a.id, a.source, a.subject, a.predicate, a.object, a.text) for a in assertions),
            )
            mentions = []
            rows = []
            for i, artifact in enumerate(artifacts, 1):
                groups = [[number[a] for a in group] for group in artifact.support]
                rows.append((i, artifact.id, artifact.layer, json.dumps(artifact.content, ensure_ascii=False),
                             encode_label(groups), int(artifact.exact), len(groups)))
                mentions.extend((n, i) for n in {n for g in groups for n in g})
            db.executemany("INSERT INTO artifacts VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
            db.executemany("INSERT INTO mentions VALUES (?, ?)", mentions)
            db.executemany("INSERT INTO facts VALUES (?, ?, ?, ?)", (
                (f.relation, json.dumps(list(f.args), ensure_ascii=False),
                 encode_label([[number[a] for a in group] for group in f.support]), int(f.exact))
                for f in facts))
            db.executemany("INSERT INTO meta VALUES (?, ?)", [("format", FORMAT), ("rules", rules), *meta.items()])
            db.commit()
        finally:
            db.close()


class Graph:
    """A built graph, reopened from its file without evaluating any rule."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if not self.path.is_file():
            raise PolygraphError("file_error", f"no graph file at {self.path}")
        self._db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
        try:
            self.meta = dict(self._db.execute("SELECT key, value FROM meta"))
        except sqlite3.DatabaseError as error:
            raise PolygraphError("file_error", f"{self.path} is not a polygraph graph file ({error})") from None
        if self.meta.get("format") != FORMAT:
            raise PolygraphError("file_error", f"{self.path} has format {self.meta.get('format')!r}, "
                                               f"expected {FORMAT!r}")
        rows = self._db.execute("SELECT num, id, source, subject, predicate, object, text FROM assertions")
        self._ids: dict[int, str] = {}
        self.assertions: dict[str, Assertion] = {}
        for num, *fields in rows:
            self._ids[num] = fields[0]
            self.assertions[fields[0]] = Assertion(*fields)
        self.semiring = WhySemiring(cap=int(self.meta["cap"]) if self.meta.get("cap", "none") != "none" else None)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "Graph":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _artifact(self, row) -> Artifact:
        id_, layer, content, blob, exact = row
        support = tuple(tuple(self._ids[n] for n in group) for group in decode_label(blob))
        return Artifact(id_, layer, json.loads(content), support, bool(exact))

    _COLUMNS = "id, layer, content, label, exact"

    def artifact(self, artifact_id: str) -> Artifact:
        """Returns one artifact by id; KeyError names close ids when it does not exist."""
        row = self._db.execute(f"SELECT {self._COLUMNS} FROM artifacts WHERE id = ?", (artifact_id,)).fetchone()
        if row is None:
            raise KeyError(f"no artifact named {artifact_id!r} in {self.path}")
        return self._artifact(row)

    def artifacts(self, layer: str | None = None) -> Iterator[Artifact]:
        """Yields every artifact (of one layer, if given) in build order."""
        if layer is None:
            rows = self._db.execute(f"SELECT {self._COLUMNS} FROM artifacts ORDER BY num")
        else:
            rows = self._db.execute(f"SELECT {self._COLUMNS} FROM artifacts WHERE layer = ? ORDER BY num",
                                    (layer,))
        return (self._artifact(row) for row in rows)

    def label(self, artifact: Artifact | str) -> Polynomial:
        """Returns an artifact's support label as a why-polynomial."""
        if isinstance(artifact, str):
            artifact = self.artifact(artifact)
        return self.semiring.polynomial(artifact.support, exact=artifact.exact)

    def mentioning(self, assertion_ids: Iterable[str]) -> list[str]:
        """Returns the ids of artifacts whose labels mention any of the assertions (the index)."""
        numbers = {n for n, a in self._ids.items() if a in set(assertion_ids)}
        if not numbers:
            return []
        marks = ",".join("?" * len(numbers))
        rows = self._db.execute(
            f"SELECT DISTINCT a.id FROM mentions m JOIN artifacts a ON a.num = m.artifact "
            f"WHERE m.assertion IN ({marks}) ORDER BY a.num", sorted(numbers))
        return [r[0] for r in rows]

    def facts(self) -> Iterator[StoredFact]:
        """Yields every fact of the evaluated program with its support sets."""
        ids = self._ids
        for relation, args, blob, exact in self._db.execute("SELECT relation, args, label, exact FROM facts"):
            support = tuple(tuple(ids[n] for n in group) for group in decode_label(blob))
            yield StoredFact(relation, tuple(json.loads(args)), support, bool(exact))

    def rules_text(self) -> str:
        """Returns the rules of the program the graph was built from, as rule-language text."""
        return self.meta.get("rules", "")

    def counts(self) -> dict[str, int]:
        """Returns the number of artifacts per layer."""
        return dict(self._db.execute("SELECT layer, COUNT(*) FROM artifacts GROUP BY layer"))

    def info(self) -> dict:
        """Returns counts per layer, label-size distribution, truncations and label bytes."""
        layers = {}
        for layer, sets, exact, size in self._db.execute(
                "SELECT layer, sets, exact, length(label) FROM artifacts"):
            entry = layers.setdefault(layer, {"artifacts": 0, "inexact": 0, "label_bytes": 0,
                                              "support_sets": Counter()})
            entry["artifacts"] += 1
            entry["inexact"] += 1 - exact
            entry["label_bytes"] += size
            entry["support_sets"][sets] += 1
        total = sum(e["artifacts"] for e in layers.values())
        label_bytes = sum(e["label_bytes"] for e in layers.values())
        return {
            "file": str(self.path),
            "file_bytes": self.path.stat().st_size,
            "assertions": len(self.assertions),
            "sources": len({a.source for a in self.assertions.values()}),
            "artifacts": total,
            "layers": {k: {**v, "support_sets": dict(sorted(v["support_sets"].items()))}
                       for k, v in sorted(layers.items(), key=lambda kv: _layer_order(kv[0]))},
            "label_bytes_per_artifact": label_bytes / total if total else 0.0,
            "meta": {k: v for k, v in self.meta.items() if k not in ("format", "rules")},
        }


def _layer_order(layer: str) -> int:
    return LAYERS.index(layer) if layer in LAYERS else len(LAYERS)


def describe(artifact: Artifact) -> str:
    """Returns a one-line human description of an artifact's content."""
    content = artifact.content
    if artifact.layer in ("claim", "edge"):
        return f"{content['subject']} {content['predicate']} {content['object']}"
    if artifact.layer == "merge":
        return f"{content['canonical']} == {', '.join(m for m in content['members'] if m != content['canonical'])}"
    if artifact.layer == "sentence":
        return repr(content["text"])
    text = content.get("text")
    return repr(text) if text else json.dumps(content, ensure_ascii=False)
