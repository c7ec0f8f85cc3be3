"""Why-provenance labels in SQL, the same algebra as ``provenance.why``.

A label is a list of monomials, a monomial a sorted list of assertion numbers; the
numbers are the ranks of the assertion ids in natural order (``variables.natural_key``),
so the cap's order, (size, natural keys of the names), is the order of ``[size, *numbers]``
compared as lists.  A stored label is minimal (no monomial contains another), sorted
by that order and at most ``cap`` long; ``exact`` is False when a cap dropped a monomial
from it or from any label it was built from, as in ``WhySemiring``:

- ``times``: every union of one monomial of each side, minimised, capped; exact when
  both sides are and the cap dropped nothing;
- ``plus`` (a group of labels of one fact, the old label among them): the union,
  minimised, capped; exact when all are and the cap dropped nothing;
- a result equal to 1 (the empty monomial) is exact whatever built it.

Each function returns SQL text that wraps a query (``inner``) whose columns are the
``keys``, a raw list of monomials ``p`` and a flag ``e``; the wrapped query has the keys,
``label`` and ``exact``.  Only the rows of that query are touched: a round minimises and
caps the facts it derived, never the whole relation.
"""

from __future__ import annotations

from polygraph_logic.engines.dialect import Dialect


def products(d: Dialect, a: str, b: str) -> str:
    """Every union of a monomial of ``a`` with one of ``b`` (sorted, duplicates removed)."""
    general = d("distinct", d("flatten", d("transform", a, d.lambda_(
        "m_", d("transform", b, d.lambda_("n_", d("union", "m_", "n_")))))))
    one_each = d("single", d("union", d("first", a), d("first", b)))
    return (f"CASE WHEN {d('length', a)} = 1 AND {d('length', b)} = 1 THEN {one_each} "
            f"ELSE {general} END")


def minimal(d: Dialect, p: str) -> str:
    """The monomials of ``p`` (distinct) that contain no other monomial of ``p``."""
    smaller = d("filter", p, d.lambda_(
        "y_", f"{d('length', 'y_')} < {d('length', 'x_')} AND {d('has_all', 'x_', 'y_')}"))
    kept = d("filter", p, d.lambda_("x_", f"{d('length', smaller)} = 0"))
    return f"CASE WHEN {d('length', p)} < 2 THEN {p} ELSE {kept} END"


def ordered(d: Dialect, m: str) -> str:
    """The monomials of ``m`` smallest first: by size, then by their numbers."""
    keyed = d("transform", m, d.lambda_("x_", d("prepend", d("int", d("length", "x_")), "x_")))
    back = d("transform", d("sort", keyed), d.lambda_("x_", d("tail", "x_")))
    return f"CASE WHEN {d('length', m)} < 2 THEN {m} ELSE {back} END"


def normalize(d: Dialect, inner: str, keys: list[str], cap: int | None) -> str:
    """Wraps ``inner`` (keys, p, e) into a query of (keys, label, exact): minimal, ordered, capped.

    In a dialect that orders first (DuckDB), under a cap the monomials are ordered, then
    minimised: a monomial is absorbed only by a smaller one, which comes before it, so the
    minimal monomials among the first 2 * cap are the first of all the minimal ones.  When
    more than ``cap`` of them are minimal, the label is theirs and inexact, and the rest is
    never compared (a product of two capped labels has up to cap² monomials; x40 products:
    1.6 -> 1.05 s); otherwise, for longer lists, all are minimised.  Spark minimises first:
    its optimiser collapses the nested projections, copying the ordered list into each use."""
    cols = ", ".join(keys)
    lead = f"{cols}, " if cols else ""
    if cap is not None and d.sorted_first:
        return _capped_in_order(d, inner, lead, cap)
    step1 = f"SELECT {lead}{minimal(d, 'p')} AS p, e FROM ({inner}) q1"
    step2 = f"SELECT {lead}{ordered(d, 'p')} AS p, e FROM ({step1}) q2"
    if cap is None:
        return f"SELECT {lead}p AS label, ({_one(d, 'p')} OR e) AS exact FROM ({step2}) q3"
    return (f"SELECT {lead}{d('head', 'p', str(cap))} AS label, "
            f"({_one(d, 'p')} OR (e AND {d('length', 'p')} <= {cap})) AS exact FROM ({step2}) q3")


def _capped_in_order(d: Dialect, inner: str, lead: str, cap: int) -> str:
    """``normalize`` under a cap, ordering first: mp, the minimal monomials among the first
    2 * cap; all of them minimised (m) only when there are more and mp holds at most ``cap``."""
    prefix = 2 * cap
    ordered_ = f"SELECT {lead}{ordered(d, 'p')} AS s, e FROM ({inner}) q0"
    first = f"SELECT {lead}s, e, {d('head', 's', str(prefix))} AS f FROM ({ordered_}) q1"
    step1 = f"SELECT {lead}s, e, {minimal(d, 'f')} AS mp FROM ({first}) q2"
    over = f"{d('length', 'mp')} > {cap}"
    step2 = (f"SELECT {lead}e, {over} AS over, CASE WHEN {over} OR {d('length', 's')} <= {prefix} THEN mp "
             f"ELSE {minimal(d, 's')} END AS m FROM ({step1}) q3")
    return (f"SELECT {lead}{d('head', 'm', str(cap))} AS label, CASE WHEN over THEN FALSE "
            f"ELSE ({_one(d, 'm')} OR (e AND {d('length', 'm')} <= {cap})) END AS exact FROM ({step2}) q4")


def _one(d: Dialect, m: str) -> str:
    """Whether the label ``m`` is 1 (the empty monomial alone): exact whatever built it."""
    return f"({d('length', m)} = 1 AND {d('length', d('first', m))} = 0)"


def times(d: Dialect, inner: str, keys: list[str], cap: int | None) -> str:
    """Wraps ``inner`` (keys, l, le, r, re) into (keys, label, exact): the product of l and r."""
    lead = ", ".join(keys)
    lead = f"{lead}, " if lead else ""
    raw = f"SELECT {lead}{products(d, 'l', 'r')} AS p, (le AND re) AS e FROM ({inner}) q0"
    return normalize(d, raw, keys, cap)


def plus_group(d: Dialect, inner: str, keys: list[str], cap: int | None) -> str:
    """Wraps ``inner`` (keys, label, exact; many rows per key) into one row per key: their sum."""
    cols = ", ".join(keys)
    lead = f"{cols}, " if cols else ""
    raw = (f"SELECT {lead}{d('distinct', d('flatten', d('collect', 'label')))} AS p, "
           f"bool_and(exact) AS e FROM ({inner}) g" + (f" GROUP BY {cols}" if cols else ""))
    return normalize(d, raw, keys, cap)
