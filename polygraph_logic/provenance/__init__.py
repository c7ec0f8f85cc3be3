"""Provenance semirings: one module per semiring behind the interface in ``base``."""

from __future__ import annotations

from polygraph_logic.provenance.base import NegationNotSupported, Semiring
from polygraph_logic.provenance.boolean import BooleanSemiring
from polygraph_logic.provenance.lineage import Lineage, LineageSemiring
from polygraph_logic.provenance.variables import VariableTable, natural_key
from polygraph_logic.provenance.why import Polynomial, WhySemiring

SEMIRINGS = ("boolean", "why", "lineage")


def make_semiring(name: str, cap: int | None = 8) -> Semiring:
    """Returns a fresh semiring called ``name``; ``cap`` applies to "why" only."""
    if name == "boolean":
        return BooleanSemiring()
    if name == "why":
        return WhySemiring(cap=cap)
    if name == "lineage":
        return LineageSemiring()
    raise ValueError(f"unknown semiring {name!r}; choose one of: {', '.join(SEMIRINGS)}")


__all__ = [
    "SEMIRINGS",
    "BooleanSemiring",
    "Lineage",
    "LineageSemiring",
    "NegationNotSupported",
    "Polynomial",
    "Semiring",
    "VariableTable",
    "WhySemiring",
    "make_semiring",
    "natural_key",
]
