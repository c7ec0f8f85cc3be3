"""Records sorted beyond memory: held up to a run, written sorted to a temporary file, merged when read.

A listing as long as the graph (``rests-on --kind source_claim``: every artifact) is decided in the
order the store reads its rows and printed in another (layer order, then id).  ``SortedRuns``
holds at most ``run`` records; each full run is sorted and written (pickled, a batch at a time)
to a file of its own, and reading merges the files and the last run (``heapq.merge``), so memory
does not grow with the number of records.  It can be read more than once, never twice at a time.
"""

from __future__ import annotations

import heapq
import pickle
import shutil
import tempfile
import weakref
from pathlib import Path
from typing import Iterator

#: records held before a run is written (about 30 MB of listing records)
RUN = 100_000
#: records pickled together in a run's file (a merge holds one batch of each run)
BATCH = 256


class SortedRuns:
    """Records (tuples, compared as Python compares them) added in any order and read sorted."""

    def __init__(self, run: int | None = None):
        self._run = run or RUN
        self._held: list[tuple] = []
        self._files: list[Path] = []
        self._folder: Path | None = None
        self.count = 0

    @property
    def written(self) -> int:
        """How many runs were written to disk (0: every record held)."""
        return len(self._files)

    def add(self, record: tuple) -> None:
        self._held.append(record)
        self.count += 1
        if len(self._held) >= self._run:
            self._spill()

    def _spill(self) -> None:
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="polygraph-runs-"))
            weakref.finalize(self, shutil.rmtree, self._folder, True)
        self._held.sort()
        path = self._folder / f"run{len(self._files)}.pickle"
        with open(path, "wb") as handle:
            for start in range(0, len(self._held), BATCH):
                pickle.dump(self._held[start:start + BATCH], handle, protocol=pickle.HIGHEST_PROTOCOL)
        self._files.append(path)
        self._held = []

    def __iter__(self) -> Iterator[tuple]:
        self._held.sort()
        if not self._files:
            return iter(self._held)
        return heapq.merge(*(_read(path) for path in self._files), self._held)

    def close(self) -> None:
        """Removes the runs' files (also done when the object is collected)."""
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
        self._files, self._held = [], []


def _read(path: Path) -> Iterator[tuple]:
    with open(path, "rb") as handle:
        while True:
            try:
                batch = pickle.load(handle)
            except EOFError:
                return
            yield from batch


__all__ = ["SortedRuns"]
