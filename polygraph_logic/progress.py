"""A progress line on stderr for long work, quiet when stderr is not a terminal."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """Counts steps of a long job and redraws one status line (only on a terminal)."""

    def __init__(self, title: str, total: int | None = None, stream: TextIO | None = None):
        self.title, self.total = title, total
        self.stream = stream or sys.stderr
        self.count = 0
        self.started = time.perf_counter()
        self.live = hasattr(self.stream, "isatty") and self.stream.isatty()
        self._last = 0.0

    def step(self, note: str = "", amount: int = 1) -> None:
        """Records progress and redraws at most ten times a second."""
        self.count += amount
        now = time.perf_counter()
        if self.live and (now - self._last > 0.1 or self.count == self.total):
            self._last = now
            if self.total:
                filled = int(30 * self.count / self.total)
                bar = f"[{'#' * filled}{'.' * (30 - filled)}] {self.count}/{self.total}"
            else:
                bar = f"{self.count}"
            self.stream.write(f"\r{self.title} {bar} {now - self.started:5.1f}s {note}"[:120].ljust(120))
            self.stream.flush()

    def done(self) -> None:
        """Clears the status line."""
        if self.live:
            self.stream.write("\r" + " " * 120 + "\r")
            self.stream.flush()
