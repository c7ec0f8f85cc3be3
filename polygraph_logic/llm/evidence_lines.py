"""Renders assertions as the evidence lines a prompt shows the model."""

from __future__ import annotations

from typing import Iterable

from polygraph_logic.graph.assertions import Assertion


def evidence_line(assertion: Assertion) -> str:
    """Returns ``[a20] MAPK/ERK | RO:0002213 | cell proliferation | <text>`` for one assertion
    (``NOT RO:0002213`` for a negated one: the source denies the triple)."""
    text = " ".join((assertion.text or "").split())  # one line per assertion, whatever the span
    predicate = f"NOT {assertion.predicate}" if assertion.negated else assertion.predicate
    return (f"[{assertion.id}] {assertion.subject} | {predicate} | "
            f"{assertion.object} | {text}")


def render_evidence(assertions: Iterable[Assertion]) -> str:
    """Returns one evidence line per assertion, in the order given (``(none)`` when empty)."""
    lines = [evidence_line(assertion) for assertion in assertions]
    return "\n".join(lines) if lines else "(none)"

