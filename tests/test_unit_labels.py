"""Plans for unit labels (datalog/joins/unit_steps.py) against a plain Python fixpoint.

The programs mix the shapes the unit plans treat apart: an atom whose new variables nothing
reads (an existence test), negations with ``_`` and repeated variables, a fully bound atom,
recursion through them. Each runs under the Boolean semiring and under why-provenance with
untracked facts (both unit plans) and with tracked facts (the labelled plans, which must count every derivation); the facts
must be those of the independent computation below, which shares no code with the engine.
"""

from __future__ import annotations

import random

import pytest

from polygraph_logic.datalog.evaluate import evaluate
from polygraph_logic.datalog.program import parse_program

RULES = """
node(x) :- e(x, _).
node(y) :- e(_, y).
r(x, y) :- s(x), e(x, y), !blocked(y, _).
r(x, z) :- r(x, y), e(y, z), !blocked(z, _).
reach(y) :- r(_, y).
unreach(x) :- node(x), !reach(x).
hub(x) :- e(x, y), e(y, _), !e(y, x).
loopfree(x) :- node(x), !e(x, x).
pair(x, y) :- r(x, y), e(y, x).
twice(x) :- e(x, y), blocked(y, k), blocked(x, k).
tagged(x) :- t(x), e(x, _).
tagged2(x, y) :- t(x), e(x, y), e(y, _), !blocked(y, _).
"""


def expected(e: set, blocked: set, s: set, t: set) -> dict[str, set]:
    nodes = {x for x, _ in e} | {y for _, y in e}
    blocked_nodes = {x for x, _ in blocked}
    r = {(x, y) for (x, y) in e if x in s and y not in blocked_nodes}
    while True:
        more = {(x, z) for (x, y) in r for (y2, z) in e if y2 == y and z not in blocked_nodes} - r
        if not more:
            break
        r |= more
    reach = {y for _, y in r}
    return {
        "node": {(x,) for x in nodes},
        "r": r,
        "reach": {(y,) for y in reach},
        "unreach": {(x,) for x in nodes - reach},
        "hub": {(x,) for (x, y) in e if any(a == y for a, _ in e) and (y, x) not in e},
        "loopfree": {(x,) for x in nodes if (x, x) not in e},
        "pair": {(x, y) for (x, y) in r if (y, x) in e},
        "twice": {(x,) for (x, y) in e for (b, k) in blocked if b == y and (x, k) in blocked},
        "tagged": {(x,) for (x, _) in e if x in t},
        "tagged2": {(x, y) for (x, y) in e if x in t and y not in blocked_nodes and any(a == y for a, _ in e)},
    }


def program_text(e, blocked, s, t, tracked: bool) -> str:
    """The program; with ``tracked``, the ``t`` facts are tracked (nothing negated depends on them)."""
    lines = [RULES]
    lines += [f"e({x}, {y})." for x, y in sorted(e)]
    lines += [f"{f't{n} :: ' if tracked else ''}t({x})." for n, x in enumerate(sorted(t))]
    lines += [f"blocked({x}, {k})." for x, k in sorted(blocked)]
    lines += [f"s({x})." for x in sorted(s)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("semiring, tracked", [("boolean", False), ("why", False), ("why", True)])
def test_unit_and_labelled_plans_agree_with_a_plain_fixpoint(seed, semiring, tracked):
    rnd = random.Random(seed)
    n = rnd.randint(4, 14)
    e = {(rnd.randrange(n), rnd.randrange(n)) for _ in range(rnd.randint(n, 3 * n))}
    blocked = {(rnd.randrange(n), rnd.randrange(3)) for _ in range(rnd.randint(0, n // 2))}
    s = {rnd.randrange(n) for _ in range(2)}
    t = {rnd.randrange(n) for _ in range(3)}
    model = evaluate(parse_program(program_text(e, blocked, s, t, tracked)), semiring)
    for relation, rows in expected(e, blocked, s, t).items():
        assert set(model.facts(relation)) == rows, relation
