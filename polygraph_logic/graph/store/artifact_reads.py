"""A graph's artifacts read by id, by ids, by layer and by prefix (mixed into ``Graph``).

A graph file joins each artifact with its fact (its label); a folder reads the artifacts, then
their facts by number a chunk at a time (``_with_facts``), as a join would read every row
group of its facts file.
"""

from __future__ import annotations

import json
from itertools import islice
from typing import Iterable, Iterator

from polygraph_logic.errors import NotFound
from polygraph_logic.graph.store.rows import LAYERS, Artifact, bad_graph


class ArtifactReads:
    """Artifacts by meaning; ``Graph`` provides ``query``, ``folder``, ``_db``, ``_named``,
    ``support``, ``artifact_number`` and ``path``."""

    _COLUMNS = "a.id, a.layer, a.content, f.label, f.exact"
    _FROM = "artifacts a JOIN facts f ON f.num = a.fact"

    def _artifact(self, row, names: dict[int, str] | None = None) -> Artifact:
        id_, layer, content, blob, exact = row
        if not isinstance(id_, str):
            raise bad_graph(self.path, f"an artifact id is not text ({id_!r})")
        try:
            parsed = json.loads(content)
        except (ValueError, TypeError):
            raise bad_graph(self.path, f"the content of {id_!r} is not JSON") from None
        if layer not in LAYERS or not isinstance(parsed, dict):
            raise bad_graph(self.path, f"artifact {id_!r} has layer {layer!r} and content {content[:40]!r}")
        return Artifact(id_, layer, parsed, self.support(blob, names), bool(exact))

    def artifact(self, artifact_id: str) -> Artifact:
        """Returns one artifact by id; KeyError when it does not exist."""
        if self.folder and "artifacts_by_id" in self._db.indexes:
            num = self.artifact_number(artifact_id)
            row = None if num is None else next(self._with_facts(self.query(
                f"SELECT {self._FOLDER_COLUMNS} FROM artifacts a WHERE a.num = ?", (num,))), None)
        else:
            row = self.query(f"SELECT {self._COLUMNS} FROM {self._FROM} WHERE a.id = ?", (artifact_id,)).fetchone()
        if row is None:
            raise NotFound("unknown_artifact", f"no artifact named {artifact_id!r} in {self.path}")
        return self._artifact(row)

    def artifacts_named(self, artifact_ids: Iterable[str]) -> dict[str, Artifact]:
        """Returns ``{id: artifact}`` for the ids that name artifacts, in one read (a folder: the
        sorted id file, then one read by number)."""
        ids = list(dict.fromkeys(artifact_ids))
        if not ids:
            return {}
        if self.folder and "artifacts_by_id" in self._db.indexes:
            numbers = [row[0] for row in self.query(
                "SELECT num FROM artifacts_by_id WHERE id IN (SELECT value FROM json_each(?))", (json.dumps(ids),))]
            rows = self._with_facts(self.query(f"SELECT {self._FOLDER_COLUMNS} FROM artifacts a WHERE a.num IN "
                                               "(SELECT value FROM json_each(?))", (json.dumps(sorted(numbers)),)))
        else:
            rows = self.query(f"SELECT {self._COLUMNS} FROM {self._FROM} WHERE a.id IN (SELECT value FROM json_each(?))",
                              (json.dumps(ids),))
        return {a.id: a for a in (self._artifact(row, names) for row, names in self._named(rows, 3))}

    def artifacts_present(self, artifact_ids: Iterable[str]) -> set[str]:
        """Returns those of ``artifact_ids`` that name artifacts, in one read."""
        ids = sorted(set(artifact_ids))
        table = "artifacts_by_id" if self.folder and "artifacts_by_id" in self._db.indexes else "artifacts"
        return {row[0] for row in self.query(f"SELECT id FROM {table} WHERE id IN (SELECT value FROM json_each(?))",
                                             (json.dumps(ids),))} if ids else set()

    def has_artifact(self, artifact_id: str) -> bool:
        return self.artifact_number(artifact_id) is not None

    def artifacts(self, layer: str | None = None) -> Iterator[Artifact]:
        """Yields every artifact (of one layer, if given) in build order, streamed.

        A folder is read a range of numbers at a time (its files are in number order: each range
        reads a few row groups), so that memory stays bounded whatever the graph's size."""
        where, parameters = ("", ()) if layer is None else (" AND a.layer = ?", (layer,))
        if self.folder:
            rows = self._with_facts(self._db.in_ranges(
                f"SELECT {self._FOLDER_COLUMNS} FROM artifacts a WHERE a.num > ? AND a.num <= ?{where} ORDER BY a.num",
                parameters, "artifacts", self._call, "TRUE" if layer is None else "layer = ?"))
        else:
            rows = self.query(f"SELECT {self._COLUMNS} FROM {self._FROM} WHERE 1{where} ORDER BY a.num", parameters)
        return (self._artifact(row, names) for row, names in self._named(rows, 3))

    #: a folder's artifact columns, read apart from their facts (``_with_facts``)
    _FOLDER_COLUMNS = "a.id, a.layer, a.content, a.fact"

    def _with_facts(self, rows) -> Iterator[tuple]:
        """A folder's artifact rows ``(id, layer, content, fact)`` as ``(id, layer, content, label,
        exact)``: their facts read by number, a chunk of rows at a time (small first: a listing
        that stops early reads little).  A join would scan every row group of the facts file
        (x400: 0.25 s a query)."""
        rows, size = iter(rows), 100
        while chunk := list(islice(rows, size)):
            facts = {num: (label, exact) for num, label, exact in self.query(
                "SELECT num, label, exact FROM facts WHERE num IN (SELECT value FROM json_each(?))",
                (json.dumps(sorted({row[3] for row in chunk})),))}
            for id_, layer, content, fact in chunk:
                if fact in facts:  # as the file's join: an artifact without its fact is not read
                    yield (id_, layer, content, *facts[fact])
            size = min(size * 4, 10_000)

    def artifact_hint(self, artifact_id: str) -> str:
        """Returns ``; did you mean X, Y?`` naming stored ids close to an unknown one (from ids
        sharing its first characters, an index range), or an empty string."""
        import difflib
        close = difflib.get_close_matches(artifact_id, self.artifact_ids(artifact_id[:max(1, len(artifact_id) - 3)]),
                                          n=3)
        return f"; did you mean {', '.join(close)}?" if close else ""

    def artifact_ids(self, prefix: str = "", limit: int = 50) -> list[str]:
        """Returns artifact ids starting with ``prefix`` (for completion and hints)."""
        upper = prefix + "\U0010ffff"
        return [row[0] for row in self.query("SELECT id FROM artifacts WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
                                             (prefix, upper, limit))]


__all__ = ["ArtifactReads"]
