"""Errors a user can act on: a stable code, a message and a position in a file."""

from __future__ import annotations

from dataclasses import dataclass


# C0 and C1 controls and the Unicode line and paragraph separators: everything str.splitlines()
# or a terminal would break a line at
_CONTROL = {code: f"\\x{code:02x}" for code in (*range(32), *range(127, 160))}
_CONTROL.update({0x2028: "\\u2028", 0x2029: "\\u2029"})


def visible(text: str) -> str:
    """Returns ``text`` with control characters escaped (``\\x0a``): an error stays one line."""
    return str(text).translate(_CONTROL)


@dataclass(frozen=True)
class Position:
    """Where something stands in a source file (line and column count from 1)."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{visible(self.file)}:{self.line}:{self.column}"


class PolygraphError(Exception):
    """An error with a stable ``code`` and, where known, the position it concerns.

    ``str(error)`` is ``FILE:LINE:COL: code: message``, the form the CLI prints (the position
    only where known); ``repr(error)`` is ``PolygraphError('code: message')``.
    """

    def __init__(self, code: str, message: str, position: Position | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.position = position

    def __str__(self) -> str:
        where = f"{self.position}: " if self.position else ""
        return f"{where}{self.code}: {visible(self.message)}"

    def __repr__(self) -> str:
        # what a notebook shows for an error value: the CLI's line, not the bare message
        return f"{type(self).__name__}({str(self)!r})"


class NotFound(PolygraphError, KeyError):
    """A name looked up and not found (``unknown_artifact``, ``unknown_relation``, ...): a KeyError
    for code that catches one, with the code the CLI, the REPL and the API all show."""

    def __str__(self) -> str:
        return PolygraphError.__str__(self)


class ParseError(PolygraphError):
    """The text is not a program of the rule language (code ``syntax_error``)."""


class ProgramError(PolygraphError):
    """The program parses but is not well formed (unbound variable, arity, negation cycle)."""


class EvaluationError(PolygraphError):
    """Evaluation failed (division by zero, comparing a string with an integer, ...)."""
