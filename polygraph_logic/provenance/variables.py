"""Interning of assertion ids to bit positions, so that monomials are plain ints."""

from __future__ import annotations

import re
from collections.abc import Iterable

_DIGITS = re.compile(r"(\d+)")


def natural_key(name: str) -> tuple:
    """Returns a sort key that orders digit runs by value, so ``a2`` sorts before ``a12``.

    ``re.split`` with a capturing group alternates text and digits starting with text,
    so the parts of any two keys compare str with str and int with int.  The name
    itself comes last to break ties such as ``a2`` versus ``a02``.
    """
    parts = _DIGITS.split(name)
    parts[1::2] = map(int, parts[1::2])
    return (tuple(parts), name)


def iter_bits(mask: int) -> Iterable[int]:
    """Yields the positions of the set bits of ``mask``, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


class VariableTable:
    """Maps assertion ids to bit positions and back; one table per semiring instance.

    Bit positions depend on the order names are first seen, so nothing a user sees
    (display, JSON, the cap's choice of what to keep) may depend on them: every
    ordering goes through ``natural_key`` of the names instead.
    """

    __slots__ = ("_bits", "_names", "_keys")

    def __init__(self) -> None:
        self._bits: dict[str, int] = {}
        self._names: list[str] = []
        self._keys: list[tuple] = []

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._bits

    def intern(self, name: str) -> int:
        """Returns the bit index of ``name``, assigning the next free one on first sight."""
        bit = self._bits.get(name)
        if bit is None:
            bit = len(self._names)
            self._bits[name] = bit
            self._names.append(name)
            self._keys.append(natural_key(name))
        return bit

    def name(self, bit: int) -> str:
        """Returns the assertion id interned at bit index ``bit``."""
        return self._names[bit]

    def mask(self, names: Iterable[str]) -> int:
        """Returns the bitset of the known ``names``; unknown names are ignored.

        Ignoring is right for deletions: a name never interned occurs in no label,
        so deleting it changes nothing.
        """
        bits = self._bits
        result = 0
        for name in names:
            bit = bits.get(name)
            if bit is not None:
                result |= 1 << bit
        return result

    def numbers(self, names: Iterable[str]) -> frozenset[int]:
        """Returns the variable numbers of the known ``names`` (unknown names are ignored, as in ``mask``)."""
        bits = self._bits
        return frozenset(b for b in map(bits.get, names) if b is not None)

    def names_in(self, monomial: Iterable[int]) -> list[str]:
        """Returns the names of a set of variable numbers, in natural order."""
        keys, names = self._keys, self._names
        return [names[b] for b in sorted(monomial, key=keys.__getitem__)]

    def set_key(self, monomial: frozenset[int]) -> tuple:
        """Returns the cap key of a monomial given as a set of variable numbers (see ``sort_key``)."""
        keys = self._keys
        return (len(monomial), tuple(sorted(keys[b] for b in monomial)))

    def names_of(self, mask: int) -> list[str]:
        """Returns the names of the bits set in ``mask``, in natural order."""
        keys = self._keys
        bits = sorted(iter_bits(mask), key=keys.__getitem__)
        return [self._names[b] for b in bits]

    def sort_key(self, mask: int) -> tuple:
        """Returns the cap key of a monomial: (number of variables, natural keys of its names).

        Smallest first is what the cap keeps; the key uses names, not bit positions,
        so the choice does not depend on interning order.
        """
        keys = self._keys
        return (mask.bit_count(), tuple(sorted(keys[b] for b in iter_bits(mask))))
