"""The Boolean semiring: derivability only, no provenance."""

from __future__ import annotations

from typing import ClassVar

from polygraph_logic.provenance.base import Semiring


class BooleanSemiring(Semiring[bool]):
    """Labels are Python bools: ``True`` derivable, ``False`` not.

    ``True`` and ``False`` are singletons already, so the ``is`` tests of hot paths
    work without any extra machinery.
    """

    name: ClassVar[str] = "boolean"
    tracks_provenance: ClassVar[bool] = False

    def zero(self) -> bool:
        return False

    def one(self) -> bool:
        return True

    def plus(self, a: bool, b: bool) -> bool:
        return a or b

    def times(self, a: bool, b: bool) -> bool:
        return a and b

    def variable(self, name: str) -> bool:
        """Returns True: a source assertion is simply a fact here."""
        return True

    def is_zero(self, a: bool) -> bool:
        return a is False

    def is_one(self, a: bool) -> bool:
        return a is True

    def negate(self, a: bool) -> bool:
        """Returns ``not a``; stratified negation is exact for plain truth values."""
        return not a

    def to_json(self, a: bool) -> bool:
        """Returns the truth value itself."""
        return bool(a)
