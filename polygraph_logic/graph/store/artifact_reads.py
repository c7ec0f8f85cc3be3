"""A graph's artifacts read by id, by ids, by layer and by prefix (mixed into ``Graph``).

Each artifact is read with its fact (its label) as the store joins them (Store.artifact_rows).
"""

from __future__ import annotations

import json
from typing import Iterable, Iterator

from polygraph_logic.errors import NotFound
from polygraph_logic.graph.store.rows import LAYERS, Artifact, bad_graph


class ArtifactReads:
    """Artifacts by meaning; ``Graph`` provides ``query``, ``store``, ``_named``, ``support``,
    ``artifact_number`` and ``path``.  The store joins artifacts with their facts
    (Store.artifact_rows): a file by a join, a folder by number a chunk at a time."""

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
        num = self.artifact_number(artifact_id)
        row = None if num is None else next(iter(self.store.artifact_rows("a.num = ?", (num,))), None)
        if row is None:
            raise NotFound("unknown_artifact", f"no artifact named {artifact_id!r} in {self.path}")
        return self._artifact(row)

    def artifacts_named(self, artifact_ids: Iterable[str]) -> dict[str, Artifact]:
        """Returns ``{id: artifact}`` for the ids that name artifacts, in two reads (their numbers
        by id, then their rows by number)."""
        numbers = self.artifact_numbers(artifact_ids)
        if not numbers:
            return {}
        rows = self.store.artifact_rows("a.num IN (SELECT value FROM json_each(?))", (json.dumps(numbers),))
        return {a.id: a for a in (self._artifact(row, names) for row, names in self._named(rows, 3))}

    def artifact_numbers(self, artifact_ids: Iterable[str]) -> list[int]:
        """Returns the numbers of the artifacts ``artifact_ids`` name, sorted, in one read of the
        look-up sorted by id where the store has one (not a scan of every artifact)."""
        ids = sorted(set(artifact_ids))
        if not ids:
            return []
        table = self.store.lookup("artifacts_by_id") or "artifacts"
        return sorted(row[0] for row in self.query(f"SELECT num FROM {table} WHERE id IN (SELECT value FROM json_each(?))",
                                                   (json.dumps(ids),)))

    def artifacts_present(self, artifact_ids: Iterable[str]) -> set[str]:
        """Returns those of ``artifact_ids`` that name artifacts, in one read."""
        ids = sorted(set(artifact_ids))
        table = self.store.lookup("artifacts_by_id") or "artifacts"
        return {row[0] for row in self.query(f"SELECT id FROM {table} WHERE id IN (SELECT value FROM json_each(?))",
                                             (json.dumps(ids),))} if ids else set()

    def has_artifact(self, artifact_id: str) -> bool:
        return self.artifact_number(artifact_id) is not None

    def artifacts(self, layer: str | None = None) -> Iterator[Artifact]:
        """Yields every artifact (of one layer, if given) in build order, streamed (memory bounded
        whatever the graph's size)."""
        where, parameters = ("TRUE", ()) if layer is None else ("a.layer = ?", (layer,))
        rows = self.store.artifact_rows(where, parameters, ordered=True)
        return (self._artifact(row, names) for row, names in self._named(rows, 3))

    def first_artifacts(self, layers: Iterable[str], limit: int) -> list[tuple[str, Artifact]]:
        """``(layer, artifact)`` of the first ``limit`` artifacts (in build order) of each of
        ``layers``, layer after layer: read together (their assertions' ids in one look-up), as a
        short listing wants them."""
        rows = self.store.first_artifact_rows(list(layers), limit)
        names = self.names(n for row in rows for group in self.decode(row[3]) for n in group)
        return [(row[1], self._artifact(row, names)) for row in rows]

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
