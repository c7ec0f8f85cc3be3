"""A progress line on stderr for long work, quiet when stderr is not a terminal.

The line reads ``TITLE: [#####.....] 3/10 UNIT, 2.4s  NOTE`` with a known total, else
``TITLE: 3 UNIT, 2.4s  NOTE`` (``UNIT`` says what is counted: "strata done", "rows", "queries"),
or ``TITLE, 2.4s  NOTE`` for a phase that counts nothing (``phase``).
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

WIDTH = 120  # the status line is cut and padded to this many characters
TICK = 0.5  # seconds between redraws of a phase's line while nothing else is drawn


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
        self._note = ""
        self._lock = threading.Lock()
        self._stop: threading.Event | None = None

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
        self._note = note
        if self.live and (now - self._last > 0.1 or self.count == self.total):
            self._last = now
            self._draw(self.line(note, now - self.started))

    def phase(self, note: str = "") -> None:
        """Draws the line at once with a new note (a phase that starts now), and from then on
        redraws it every TICK seconds, so that the time keeps moving through long silent work."""
        self._note = note
        if not self.live:
            return
        self._last = time.perf_counter()
        self._draw(self.line(note))
        if self._stop is None:
            self._stop = threading.Event()
            threading.Thread(target=self._tick, args=(self._stop,), daemon=True).start()

    def _tick(self, stop: threading.Event) -> None:
        while not stop.wait(TICK):
            if time.perf_counter() - self._last >= TICK:
                self._draw(self.line(self._note), stop)

    def _draw(self, text: str, stop: threading.Event | None = None) -> None:
        with self._lock:
            if stop is not None and stop.is_set():
                return  # cleared meanwhile: a tick must not draw the line again
            self.stream.write("\r" + text[:WIDTH].ljust(WIDTH))
            self.stream.flush()

    def note(self, text: str) -> None:
        """Prints ``text`` as a line of its own (on a terminal or not), above the status line."""
        with self._lock:
            if self.live:
                self.stream.write("\r" + " " * WIDTH + "\r")
            self.stream.write(text + "\n")
            self.stream.flush()
        if self.live:
            self._draw(self.line(self._note))

    def done(self) -> None:
        """Clears the status line (and stops redrawing it)."""
        if not self.live:
            return
        with self._lock:
            if self._stop is not None:
                self._stop.set()
                self._stop = None
            self.stream.write("\r" + " " * WIDTH + "\r")
            self.stream.flush()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.done()
