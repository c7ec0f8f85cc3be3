"""The lineage semiring: the flat set of assertions a fact was built from (the baseline)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from polygraph_logic.provenance.base import Semiring
from polygraph_logic.provenance.variables import VariableTable


class Lineage:
    """An immutable label: a bitset of assertion variables, or the zero sentinel.

    Zero (``mask is None``) is "not derived" and differs from the empty set, which is
    one: derived from background knowledge alone.
    """

    __slots__ = ("mask", "table")

    def __init__(self, mask: int | None, table: VariableTable):
        object.__setattr__(self, "mask", mask)
        object.__setattr__(self, "table", table)

    def __setattr__(self, name, value):
        raise AttributeError("Lineage is immutable")

    @property
    def exact(self) -> bool:
        """Returns True: lineage is never truncated."""
        return True

    def is_zero(self) -> bool:
        """Returns True for the not-derived sentinel."""
        return self.mask is None

    def is_one(self) -> bool:
        """Returns True for the empty lineage (background knowledge)."""
        return self.mask == 0

    def variables(self) -> frozenset[str]:
        """Returns every assertion id in the lineage (empty for zero)."""
        return frozenset(self.table.names_of(self.mask or 0))

    def support_sets(self) -> list[frozenset[str]]:
        """Returns the lineage as one flat support set, or ``[]`` for zero."""
        return [] if self.mask is None else [self.variables()]

    def restrict(self, deleted: Iterable[str]) -> Lineage:
        """Returns zero if the lineage mentions a deleted assertion, else itself.

        Flat lineage cannot tell alternative derivations apart, so anything it
        touches must go: this is the over-deleting baseline.
        """
        if self.mask is None or not self.mask & self.table.mask(deleted):
            return self
        return Lineage(None, self.table)

    def __str__(self) -> str:
        if self.mask is None:
            return "0"
        return "{" + ", ".join(self.table.names_of(self.mask)) + "}"

    def __repr__(self) -> str:
        return f"Lineage({self})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Lineage):
            return NotImplemented
        if self.table is other.table or self.mask is None or other.mask is None:
            return self.mask == other.mask
        return self.variables() == other.variables()

    def __hash__(self) -> int:
        # By names, so that equality across tables stays consistent.
        return hash(None if self.mask is None else self.variables())


class LineageSemiring(Semiring[Lineage]):
    """Flat lineage: plus and times both take the union of variables.

    Zero is neutral for plus and absorbing for times; one is the empty set.
    """

    name: ClassVar[str] = "lineage"
    tracks_provenance: ClassVar[bool] = True

    def __init__(self) -> None:
        self.table = VariableTable()
        self._zero = Lineage(None, self.table)
        self._one = Lineage(0, self.table)

    def zero(self) -> Lineage:
        return self._zero

    def one(self) -> Lineage:
        return self._one

    def variable(self, name: str) -> Lineage:
        """Returns the lineage of the single assertion ``name``."""
        return Lineage(1 << self.table.intern(name), self.table)

    def lineage(self, names: Iterable[str]) -> Lineage:
        """Returns the lineage holding exactly ``names``."""
        mask = 0
        for name in names:
            mask |= 1 << self.table.intern(name)
        return Lineage(mask, self.table)

    def is_zero(self, a: Lineage) -> bool:
        return a.mask is None

    def is_one(self, a: Lineage) -> bool:
        return a.mask == 0

    def _union(self, a: Lineage, b: Lineage) -> Lineage:
        # Returning an input unchanged lets the evaluator notice "nothing new" by `is`.
        union = a.mask | b.mask
        if union == a.mask:
            return a
        if union == b.mask:
            return b
        return Lineage(union, self.table)

    def plus(self, a: Lineage, b: Lineage) -> Lineage:
        if b.mask is None:
            return a
        if a.mask is None:
            return b
        return self._union(a, b)

    def times(self, a: Lineage, b: Lineage) -> Lineage:
        if a.mask is None:
            return a
        if b.mask is None:
            return b
        return self._union(a, b)

    def to_json(self, a: Lineage) -> list[list[str]]:
        """Returns ``[[ids in natural order]]``, or ``[]`` for zero."""
        return [] if a.mask is None else [self.table.names_of(a.mask)]
