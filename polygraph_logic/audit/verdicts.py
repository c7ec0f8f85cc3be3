"""Verdicts from re-derivation draws, label outcomes, Wilson intervals and the Table-2 rows.

The rule of the PolyGraph study (Section 4): R draws per touched artifact, threshold τ.
An artifact is alive when at least (1 − τ) of its valid draws reproduce it, dead when at
most τ do, undecided otherwise (and when no draw was valid: a failed draw is no answer,
never a "not reproduced"). Graded against the label, a verdict is an ``agree``, a
``leaky`` label (the label says alive, re-derivation dead), an ``over-deleted`` label
(the reverse) or ``undecided``. Agreement, leaky and over-deleted are fractions of the
decided artifacts and are never summed into one accuracy; undecided is a count.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import sqrt
from typing import Iterable, Sequence

from polygraph_logic.errors import PolygraphError

#: the normal quantile of a 95% interval as the study rounded it; with it the Wilson
#: intervals reproduce the paper's figures ([66.5, 93.9] for 22 of 26, [13.7, 23.5] for 43 of 238)
Z95 = 1.96
#: absorbs floating-point error at the thresholds: 4 of 5 draws at τ = 0.2 is exactly 1 − τ
_SLACK = 1e-9

OUTCOMES = ("agree", "leaky", "over-deleted", "undecided")
#: model-authored layers in table order, and how the study's tables name them
AUDITED_LAYERS = ("merge", "summary", "sentence")
LAYER_NAMES = {"merge": "merges", "summary": "summaries", "sentence": "sentences"}


def check_rule(draws: int, tau: float) -> None:
    """Raises PolygraphError unless draws >= 1 and 0 <= tau < 0.5 (the bands must not overlap)."""
    if not isinstance(draws, int) or draws < 1:
        raise PolygraphError("bad_audit_rule", f"--draws must be a positive integer, not {draws!r}")
    if not 0 <= tau < 0.5:
        raise PolygraphError("bad_audit_rule", f"--tau must be at least 0 and below 0.5 (alive needs at "
                                               f"least 1 - tau of the draws, dead at most tau), not {tau!r}")


def verdict(draws: Sequence[bool | None], tau: float) -> str:
    """Returns "alive", "dead" or "undecided" for one artifact's draws (None = a failed draw)."""
    valid = [d for d in draws if d is not None]
    if not valid:
        return "undecided"
    reproduced = sum(valid)
    if reproduced >= (1 - tau) * len(valid) - _SLACK:
        return "alive"
    if reproduced <= tau * len(valid) + _SLACK:
        return "dead"
    return "undecided"


def outcome(label: str, found: str) -> str:
    """Returns how a label ("alive"/"dead") fares against a re-derivation verdict."""
    if found == "undecided":
        return "undecided"
    if label == found:
        return "agree"
    return "leaky" if label == "alive" else "over-deleted"


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """Returns the Wilson score interval of k successes in n trials (None when n is 0)."""
    if n == 0:
        return None
    p = k / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass
class Row:
    """One cell of the table: a layer under a deletion (or pooled), counted by outcome."""

    layer: str
    agree: int = 0
    leaky: int = 0
    over_deleted: int = 0
    undecided: int = 0

    @property
    def decided(self) -> int:
        return self.agree + self.leaky + self.over_deleted

    @property
    def n(self) -> int:
        return self.decided + self.undecided

    def add(self, result: str) -> None:
        """Counts one outcome."""
        name = "over_deleted" if result == "over-deleted" else result
        setattr(self, name, getattr(self, name) + 1)

    def __iadd__(self, other: "Row") -> "Row":
        self.agree += other.agree
        self.leaky += other.leaky
        self.over_deleted += other.over_deleted
        self.undecided += other.undecided
        return self

    def fraction(self, count: int) -> float | None:
        return count / self.decided if self.decided else None

    def to_json(self) -> dict:
        """Returns the row as AUDIT.json holds it: fractions of decided artifacts with 95% Wilson intervals."""
        row: dict = {"layer": self.layer, "n": self.n, "decided": self.decided}
        for name, count in (("agreement", self.agree), ("leaky", self.leaky), ("over_deleted", self.over_deleted)):
            share = self.fraction(count)
            row[name] = None if share is None else round(share, 4)
        row["undecided"] = self.undecided
        for name, count in (("agreement", self.agree), ("leaky", self.leaky), ("over_deleted", self.over_deleted)):
            interval = wilson(count, self.decided)
            row[f"{name}_ci"] = None if interval is None else [round(interval[0], 4), round(interval[1], 4)]
        row["counts"] = {"agree": self.agree, "leaky": self.leaky, "over_deleted": self.over_deleted}
        return row

    @classmethod
    def from_json(cls, row: dict) -> "Row":
        """Inverts to_json (from its counts)."""
        counts = row["counts"]
        return cls(row["layer"], counts["agree"], counts["leaky"], counts["over_deleted"], row["undecided"])


def table_rows(results: Iterable[tuple[str, str]], layers: Sequence[str]) -> list[Row]:
    """Returns one row per layer (in ``layers`` order) from (layer, outcome) pairs."""
    rows = {layer: Row(layer) for layer in layers}
    for layer, result in results:
        rows.setdefault(layer, Row(layer)).add(result)
    return [rows[layer] for layer in sorted(rows, key=_layer_order)]


def pool(tables: Iterable[Sequence[Row]]) -> list[Row]:
    """Returns rows summing every (deletion, artifact) adjudication of several deletions, per layer."""
    pooled: dict[str, Row] = {}
    for rows in tables:
        for row in rows:
            pooled.setdefault(row.layer, Row(row.layer))
            pooled[row.layer] += row
    return [pooled[layer] for layer in sorted(pooled, key=_layer_order)]


def _layer_order(layer: str) -> int:
    return AUDITED_LAYERS.index(layer) if layer in AUDITED_LAYERS else len(AUDITED_LAYERS)


def _cell(row: Row, count: int) -> str:
    share, interval = row.fraction(count), wilson(count, row.decided)
    if share is None:
        return "-"
    return f"{100 * share:.1f}% [{100 * interval[0]:.1f}, {100 * interval[1]:.1f}]"


def format_table(sections: Sequence[tuple[str, Sequence[Row]]]) -> str:
    """Returns the rows as text in the shape of the study's Table 2 (95% Wilson intervals);
    cells the operation did not touch (n = 0) are left out."""
    header = ("operation", "layer", "n", "agreement", "leaky", "over-deleted", "undecided")
    lines = [header]
    for operation, rows in sections:
        touched = [row for row in rows if row.n]
        if not touched:  # keep the operation visible: it touched no model-authored artifact
            lines.append((operation, "-", "0", "-", "-", "-", "0"))
        for row in touched:
            lines.append((operation, LAYER_NAMES.get(row.layer, row.layer), str(row.n), _cell(row, row.agree),
                          _cell(row, row.leaky), _cell(row, row.over_deleted), str(row.undecided)))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    right = {2, 6}
    return "\n".join("  ".join(cell.rjust(w) if i in right else cell.ljust(w)
                               for i, (cell, w) in enumerate(zip(line, widths))).rstrip()
                     for line in lines)
