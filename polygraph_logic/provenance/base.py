"""The small interface every semiring implements: zero, one, plus, times."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, Generic, TypeVar

L = TypeVar("L")


class NegationNotSupported(Exception):
    """This semiring cannot express the non-monotone effect of negation on its labels."""


class Semiring(ABC, Generic[L]):
    """A commutative semiring of provenance labels.

    ``one()`` is the label of background knowledge, ``variable(name)`` the label of a
    tracked source assertion; the evaluator multiplies labels along a derivation and
    adds the labels of alternative derivations.  ``one()`` and ``zero()`` return the
    same object on every call so that hot paths may test them with ``is``.
    """

    name: ClassVar[str]
    #: whether labels mention assertion variables (False for the Boolean semiring)
    tracks_provenance: ClassVar[bool]

    @abstractmethod
    def zero(self) -> L: ...

    @abstractmethod
    def one(self) -> L: ...

    @abstractmethod
    def plus(self, a: L, b: L) -> L: ...

    @abstractmethod
    def times(self, a: L, b: L) -> L: ...

    @abstractmethod
    def variable(self, name: str) -> L:
        """Returns the label of the tracked fact named ``name`` (an assertion id)."""

    def is_zero(self, a: L) -> bool:
        return a == self.zero()

    def is_one(self, a: L) -> bool:
        return a == self.one()

    def negate(self, a: L) -> L:
        raise NegationNotSupported(f"the {self.name} semiring has no negation")

    @abstractmethod
    def to_json(self, a: L) -> Any:
        """Returns a JSON-ready form of the label (support sets as sorted lists of ids)."""

    def format(self, a: L) -> str:
        """Returns the label as a user reads it."""
        return str(a)
