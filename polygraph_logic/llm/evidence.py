"""Renders assertions as the evidence lines a prompt shows the model."""

from __future__ import annotations

from typing import Iterable

from ..graph.assertions import Assertion


def evidence_line(assertion: Assertion) -> str:
    """Returns ``[a20] MAPK/ERK | RO:0002213 | cell proliferation | <text>`` for one assertion."""
    text = " ".join((assertion.text or "").split())  # one line per assertion, whatever the span
    return (f"[{assertion.id}] {assertion.subject} | {assertion.predicate} | "
            f"{assertion.object} | {text}")


def render_evidence(assertions: Iterable[Assertion]) -> str:
    """Returns one evidence line per assertion, in the order given (``(none)`` when empty)."""
    lines = [evidence_line(assertion) for assertion in assertions]
    return "\n".join(lines) if lines else "(none)"

