"""Range steps (datalog/joins/range_steps.py): an atom and a comparison of its new variable read
from a sorted index give the facts a plain Python closure gives, under every semiring, and a
comparison that refuses its values still refuses them."""

from __future__ import annotations

import random

import pytest

from polygraph_logic import evaluate, parse_program
from polygraph_logic.datalog.joins import join_steps, range_steps
from polygraph_logic.datalog.joins.join_plan import Store
from polygraph_logic.errors import PolygraphError

OPS = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


def _facts(rng: random.Random) -> tuple[set, set, str]:
    a = {(rng.randrange(-20, 40),) for _ in range(rng.randrange(1, 30))}
    b = {(rng.randrange(4), rng.randrange(-20, 40)) for _ in range(rng.randrange(1, 60))}
    text = "".join(f"a({x}).\n" for x, in sorted(a)) + "".join(f"b({k}, {y}).\n" for k, y in sorted(b))
    return a, b, text


@pytest.mark.parametrize("seed", range(12))
def test_a_ranged_join_gives_the_closure_of_a_plain_loop(seed):
    rng = random.Random(seed)
    a, b, text = _facts(rng)
    op, c = rng.choice(sorted(OPS)), rng.randrange(-3, 4)
    flipped = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
    rules = (f"scan(x, y) :- a(x), b(_, y), y {op} x + {c}.\n"  # b scanned, y against x + c
             f"keyed(x, k, y) :- a(x), b(k, y), k = 1, x + {c} {flipped} y.\n"  # looked up by k, mirrored
             f"down(x) :- a(x).\n"
             f"down(y) :- down(x), b(_, y), y {op} x - 5.\n")  # recursive: the index follows b as down grows
    scan = {(x, y) for x, in a for _, y in b if OPS[op](y, x + c)}
    keyed = {(x, 1, y) for x, in a for k, y in b if k == 1 and OPS[op](y, x + c)}
    down = {x for x, in a}
    while True:
        more = {y for x in down for _, y in b if OPS[op](y, x - 5)} - down
        if not more:
            break
        down |= more
    for semiring in ("boolean", "why"):
        model = evaluate(parse_program(text + rules), semiring)
        assert set(model.facts("scan")) == scan
        assert set(model.facts("keyed")) == keyed
        assert {t[0] for t in model.facts("down")} == down


def test_a_range_step_is_taken_under_each_semiring(monkeypatch):
    made = []
    real = join_steps.range_step

    def counted(match, value, key, fused, *args):
        made.append(fused[2].name)
        return real(match, value, key, fused, *args)

    monkeypatch.setattr(join_steps, "range_step", counted)
    program = parse_program("a(5).\nb(1).\nb(2).\nb(7).\np(x, y) :- a(x), b(y), y < x.\n")
    for semiring in ("boolean", "why", "lineage"):
        made.clear()
        model = evaluate(program, semiring)
        assert set(model.facts("p")) == {(5, 1), (5, 2)} and made == ["y"], semiring
    store = Store({"b": 1})
    store.relations["b"].update({(7,): 1, (1,): 1, (2,): 1})
    assert store.sorted_index("b", (), 0) == {(): ([1, 2, 7], [(1,), (2,), (7,)])}


def test_a_column_not_of_integers_is_compared_as_before():
    """A string among the numbers: no sorted index, and the comparison refuses a number with a
    string as it does without range steps."""
    assert range_steps.sorted_index({(1,): 1, ("k",): 1}, (), 0) is None
    program = parse_program('a(5).\nb(1).\nb("k").\np(x, y) :- a(x), b(y), y < x.\n')
    with pytest.raises(PolygraphError, match="cannot compare"):
        evaluate(program, "boolean")
    floats = parse_program("a(2.5).\nb(1.5).\nb(3.5).\np(x, y) :- a(x), b(y), y < x.\n")
    assert set(evaluate(floats, "boolean").facts("p")) == {(2.5, 1.5)}
