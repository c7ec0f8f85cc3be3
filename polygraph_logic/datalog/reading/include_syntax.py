"""Soufflé's ``.include "file"`` and ``.once`` as syntax (``includes.py`` reads the files they name)."""

from __future__ import annotations

from dataclasses import dataclass, field

from polygraph_logic.errors import Position


@dataclass(frozen=True)
class Include:
    """``.include "file"``: the clauses of another file, read where the directive stands."""

    path: str
    position: Position | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return f'.include "{self.path}"'


class IncludeSyntax:
    """The transformer methods for ``include`` and ``once``, mixed into the parser's transformer
    (whose ``_at`` gives a token's position and ``string`` a string literal's value)."""

    def include(self, children):
        (token,) = children
        return Include(self.string([token]).value, self._at(token))

    def once(self, children):
        return []  # read before parsing: includes.py skips a file whose .once it has passed already
