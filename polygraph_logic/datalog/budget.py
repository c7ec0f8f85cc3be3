"""A budget for evaluation: a cap on the facts of any relation and a wall-clock timeout.

A program such as ``n(0). n(y) :- n(x), y = x + 1.`` derives forever; the budget
stops it with ``limit_exceeded: relation n passed N facts (rule at FILE:LINE)``
naming the rule that kept deriving (the CLI exits with status 2).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from polygraph_logic.errors import PolygraphError
from polygraph_logic.datalog.syntax import Atom, Rule

DEFAULT_MAX_FACTS = 10_000_000  # per relation, the CLI's default: about 2 GB of Python tuples


@dataclass
class Budget:
    """Limits one evaluation: ``max_facts`` per relation and ``timeout`` seconds (None: none)."""

    max_facts: int | None = None
    timeout: float | None = None
    started: float = field(default_factory=time.perf_counter)

    def check_size(self, relation: str, size: int, rules: list[Rule]) -> None:
        """Raises limit_exceeded once a relation holds more than ``max_facts`` facts."""
        if self.max_facts is not None and size > self.max_facts:
            raise PolygraphError(
                "limit_exceeded",
                f"relation {relation} passed {self.max_facts} facts ({_culprit(relation, rules)}); "
                "check that the rule terminates, or raise --max-facts",
            )

    def check_time(self, relation: str, rules: list[Rule]) -> None:
        """Raises limit_exceeded once the evaluation has run longer than ``timeout`` seconds."""
        if self.timeout is not None and time.perf_counter() - self.started > self.timeout:
            raise PolygraphError(
                "limit_exceeded",
                f"evaluation passed the {self.timeout:g} s timeout while deriving {relation} "
                f"({_culprit(relation, rules)}); raise --timeout",
            )


def _culprit(relation: str, rules: list[Rule]) -> str:
    """Names the rule deriving ``relation``, a recursive one first (it is what keeps going)."""
    heads = [r for r in rules if r.head.relation == relation]
    recursive = [r for r in heads if any(isinstance(l, Atom) and l.relation == relation for l in r.body)]
    rule = (recursive or heads or [None])[0]
    if rule is None or rule.position is None:
        return "no rule position known"
    return f"rule at {rule.position.file}:{rule.position.line}"
