"""The why-provenance semiring: positive Boolean polynomials in minimal DNF, capped."""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from typing import ClassVar


from polygraph_logic.provenance.base import NegationNotSupported, Semiring
from polygraph_logic.provenance.variables import VariableTable, natural_key


Monomial = frozenset  # of variable numbers (VariableTable); sets, not bitsets: a bitset's
# size grows with the highest variable number, which at 10^5 assertions made every label
# kilobytes long and a build's memory quadratic in the graph


def minimal(monomials: Iterable[Monomial]) -> list[Monomial]:
    """Returns the monomials that have no proper subset among the others (absorption)."""
    # A proper subset is smaller, so after sorting by size it is always kept
    # before any of its supersets is considered.
    kept: list[Monomial] = []
    for m in sorted(set(monomials), key=len):
        if not any(k <= m for k in kept):
            kept.append(m)
    return kept


class Polynomial:
    """An immutable label: a set of monomials (sets of VariableTable numbers) in minimal DNF.

    ``exact`` is False when a cap dropped monomials from this label or from any label
    it was built from; the dropped monomials can only have kept the artifact alive.
    """

    __slots__ = ("monomials", "exact", "table", "_hash")

    def __init__(self, monomials: frozenset[Monomial], exact: bool, table: VariableTable):
        object.__setattr__(self, "monomials", monomials)
        object.__setattr__(self, "exact", exact)
        object.__setattr__(self, "table", table)
        object.__setattr__(self, "_hash", None)

    def __setattr__(self, name, value):
        raise AttributeError("Polynomial is immutable")

    def is_zero(self) -> bool:
        """Returns True when no support set remains (the artifact is dead)."""
        return not self.monomials

    def is_one(self) -> bool:
        """Returns True for background knowledge: the empty monomial alone."""
        return self.monomials == _ONE_MONOMIALS

    def _ordered(self) -> list[Monomial]:
        return sorted(self.monomials, key=self.table.set_key)

    def variables(self) -> frozenset[str]:
        """Returns every assertion id the polynomial mentions."""
        return frozenset(self.table.names_in(frozenset().union(*self.monomials)))

    def support_sets(self) -> list[frozenset[str]]:
        """Returns the support sets, smallest first (the cap's key)."""
        return [frozenset(self.table.names_in(m)) for m in self._ordered()]

    def restrict(self, deleted: Iterable[str]) -> Polynomial:
        """Returns the polynomial with the ``deleted`` assertions set to false.

        The exact flag is kept: an exact label stays exact, and a truncated one stays
        inexact because a dropped monomial might have survived the deletion.
        """
        gone = self.table.numbers(deleted)
        kept = frozenset(m for m in self.monomials if gone.isdisjoint(m))
        if len(kept) == len(self.monomials):
            return self
        return Polynomial(kept, self.exact, self.table)

    def to_sympy(self) -> sympy.Basic:
        """Returns the polynomial as a sympy ``Or`` of ``And`` of ``Symbol``s."""
        import sympy  # the reference algebra, never the hot path: imported only when asked for
        from sympy.logic.boolalg import And, Or

        if not self.monomials:
            return sympy.false
        names = self.table.names_in
        return Or(*(And(*map(sympy.Symbol, names(m))) for m in self._ordered()))

    def __str__(self) -> str:
        if not self.monomials:
            return "0"
        parts = ["·".join(self.table.names_in(m)) or "1" for m in self._ordered()]
        return " + ".join(parts)

    def __repr__(self) -> str:
        flag = "" if self.exact else ", exact=False"
        return f"Polynomial({self}{flag})"

    def _named(self) -> frozenset[frozenset[str]]:
        return frozenset(frozenset(self.table.names_in(m)) for m in self.monomials)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Polynomial):
            return NotImplemented
        if self.exact != other.exact:
            return False
        if self.table is other.table:
            return self.monomials == other.monomials
        # Bit positions mean different names in different tables.
        return self._named() == other._named()

    def __hash__(self) -> int:
        # Hashed by names so that equality across tables stays consistent; cached
        # because labels are immutable.
        if self._hash is None:
            object.__setattr__(self, "_hash", hash((self._named(), self.exact)))
        return self._hash


_ONE_MONOMIALS = frozenset({frozenset()})


class WhySemiring(Semiring[Polynomial]):
    """Why-provenance (PosBool): labels are minimal DNF polynomials of at most ``cap`` monomials.

    ``cap=None`` keeps every monomial.  Truncation keeps the smallest monomials by
    (size, names in natural order): a later superset of a dropped monomial sorts after
    it and is dropped too, which is what makes a fixpoint evaluation converge.
    """

    name: ClassVar[str] = "why"
    tracks_provenance: ClassVar[bool] = True

    def __init__(self, cap: int | None = 8):
        if cap is not None and cap < 1:
            raise ValueError(f"cap must be a positive integer or None, got {cap!r}")
        self.cap = cap
        self.table = VariableTable()
        self._zero = Polynomial(frozenset(), True, self.table)
        self._one = Polynomial(_ONE_MONOMIALS, True, self.table)

    def zero(self) -> Polynomial:
        return self._zero

    def one(self) -> Polynomial:
        return self._one

    def variable(self, name: str) -> Polynomial:
        """Returns the polynomial of the single assertion ``name``."""
        return Polynomial(frozenset({frozenset({self.table.intern(name)})}), True, self.table)

    def is_zero(self, a: Polynomial) -> bool:
        return not a.monomials

    def is_one(self, a: Polynomial) -> bool:
        return a.monomials == _ONE_MONOMIALS

    def _make(self, monomials: Iterable[Monomial], exact: bool) -> Polynomial:
        """Returns a label of already-minimal ``monomials`` after applying the cap."""
        monomials = monomials if isinstance(monomials, frozenset) else frozenset(monomials)
        if monomials == _ONE_MONOMIALS:
            # Truncation only removes monomials, so a computed 1 is the true value.
            return self._one
        if self.cap is not None and len(monomials) > self.cap:
            monomials = frozenset(heapq.nsmallest(self.cap, monomials, key=self.table.set_key))
            exact = False
        return Polynomial(monomials, exact, self.table)

    def plus(self, a: Polynomial, b: Polynomial) -> Polynomial:
        if b is self._zero or a is b:
            return a
        if a is self._zero:
            return b
        if a is self._one or b is self._one:
            return self._one
        exact = a.exact and b.exact
        old = a.monomials
        # Both sides are minimal, so only b's new monomials can absorb a's, and a b
        # monomial equal to or above one of a's adds nothing: O(|A|·|B|), no re-sort.
        new = [n for n in b.monomials if n not in old and not any(m <= n for m in old)]
        if not new:
            return a if a.exact == exact else Polynomial(old, exact, self.table)
        kept = [m for m in old if not any(n <= m for n in new)]
        kept.extend(new)
        return self._make(kept, exact)

    def times(self, a: Polynomial, b: Polynomial) -> Polynomial:
        if a is self._zero or b is self._zero:
            return self._zero
        if b is self._one:
            return a
        if a is self._one:
            return b
        products = {m | n for m in a.monomials for n in b.monomials}
        return self._make(minimal(products), a.exact and b.exact)

    def negate(self, a: Polynomial) -> Polynomial:
        raise NegationNotSupported(
            "the why semiring has no negation: a positive polynomial cannot express that "
            "deleting a source may make a negated fact true; evaluate negation under the "
            "boolean semiring instead"
        )

    def to_json(self, a: Polynomial) -> list[list[str]]:
        """Returns the support sets as id lists, smallest first: ``[["a77"], ["a12", "a40"]]``."""
        return [self.table.names_in(m) for m in a._ordered()]

    def text(self, support_sets: Iterable[Iterable[str]]) -> str:
        """Returns ``str(self.polynomial(support_sets))`` without interning the ids (an export of a
        large graph would otherwise hold every assertion id of it in the table)."""
        monomials = minimal(frozenset(support) for support in support_sets)
        if not monomials:
            return "0"
        keyed = [(len(m), tuple(sorted(map(natural_key, m)))) for m in monomials]
        if self.cap is not None and len(keyed) > self.cap:
            keyed = heapq.nsmallest(self.cap, keyed)
        return " + ".join("·".join(key[1] for key in keys) or "1" for _, keys in sorted(keyed))

    def polynomial(self, support_sets: Iterable[Iterable[str]], exact: bool = True) -> Polynomial:
        """Returns the label whose support sets are ``support_sets``, minimised and capped."""
        intern = self.table.intern
        monomials = []
        for support in support_sets:
            if isinstance(support, str):
                raise TypeError(f"a support set must be a collection of ids, not {support!r}")
            monomials.append(frozenset(map(intern, support)))
        return self._make(minimal(monomials), exact)

    def from_sympy(self, expr) -> Polynomial:
        """Returns the polynomial of a negation-free sympy Boolean expression.

        Raises ValueError naming the first sub-expression that is not a symbol, true,
        false, And or Or.
        """
        import sympy
        from sympy.logic.boolalg import And, BooleanFalse, BooleanTrue, Or

        expr = sympy.sympify(expr)
        _check_positive(expr)
        dnf = sympy.to_dnf(expr)
        if isinstance(dnf, BooleanFalse):
            return self._zero
        if isinstance(dnf, BooleanTrue):
            return self._one
        terms = dnf.args if isinstance(dnf, Or) else (dnf,)
        supports = []
        for term in terms:
            atoms = term.args if isinstance(term, And) else (term,)
            supports.append([str(s) for s in atoms])
        return self.polynomial(supports)


def _check_positive(expr) -> None:
    """Raises ValueError if ``expr`` uses anything but symbols, true, false, And and Or."""
    import sympy
    from sympy.logic.boolalg import And, BooleanFalse, BooleanTrue, Or

    if isinstance(expr, (sympy.Symbol, BooleanTrue, BooleanFalse)):
        return
    if isinstance(expr, (And, Or)):
        for arg in expr.args:
            _check_positive(arg)
        return
    raise ValueError(
        f"not a positive Boolean expression: {expr} ({type(expr).__name__}); "
        "provenance polynomials allow only symbols, true, false, & and |"
    )
