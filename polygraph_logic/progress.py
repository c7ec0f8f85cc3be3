"""A progress line on stderr for long work, quiet when stderr is not a terminal.

The line reads ``TITLE: [#####.....] 3/10 UNIT, 2.4s  NOTE`` with a known total, else
``TITLE: 3 UNIT, 2.4s  NOTE`` (``UNIT`` says what is counted: "strata done", "rows", "queries"),
or ``TITLE, 2.4s  NOTE`` for a phase that counts nothing (``phase``).
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

WIDTH = 120  # the status line is cut and padded to this many characters


class Progress:
    """Counts steps of a long job and redraws one status line (only on a terminal)."""

    def __init__(self, title: str, total: int | None = None, stream: TextIO | None = None, unit: str = ""):
        self.title, self.total, self.unit = title, total, unit
        self.stream = stream or sys.stderr
        self.count = 0
        self.started = time.perf_counter()
        self.live = hasattr(self.stream, "isatty") and self.stream.isatty()
        self._last = 0.0
        self._counting = False

    def line(self, note: str = "", elapsed: float | None = None) -> str:
        """Returns the status line as drawn (without the carriage return and padding)."""
        elapsed = time.perf_counter() - self.started if elapsed is None else elapsed
        unit = f" {self.unit}" if self.unit else ""
        if self.total:
            filled = min(30, int(30 * self.count / self.total))
            head = f"{self.title}: [{'#' * filled}{'.' * (30 - filled)}] {self.count:,}/{self.total:,}{unit}"
        elif self._counting:
            head = f"{self.title}: {self.count:,}{unit}"
        else:
            head = self.title
        return f"{head}, {elapsed:.1f}s" + (f"  {note}" if note else "")

    def step(self, note: str = "", amount: int = 1) -> None:
        """Records progress and redraws at most ten times a second."""
        self.count += amount
        self._counting = True
        now = time.perf_counter()
        if self.live and (now - self._last > 0.1 or self.count == self.total):
            self._last = now
            self._draw(self.line(note, now - self.started))

    def phase(self, note: str = "") -> None:
        """Draws the line at once (a phase that starts now and counts nothing, or a new note)."""
        if self.live:
            self._last = time.perf_counter()
            self._draw(self.line(note))

    def _draw(self, text: str) -> None:
        self.stream.write("\r" + text[:WIDTH].ljust(WIDTH))
        self.stream.flush()

    def done(self) -> None:
        """Clears the status line."""
        if self.live:
            self.stream.write("\r" + " " * WIDTH + "\r")
            self.stream.flush()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.done()
