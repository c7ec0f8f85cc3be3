"""Rules with many inequalities and with variables bound only through chains of ``=``:
random valid programs against an independent fixpoint, and the shapes that once raised
``IndexError`` (issue 40).

The oracle below reads the generated program as data (never as text, never through
polygraph): each rule tries the facts of its positive atoms one atom after another, in the
order the generator wrote them (the engine gets the body shuffled), solves its ``x = expr``
equations by substitution whenever their right side is known, checks each expression
argument once its variables are bound, then comparisons and negations; rules are applied
until nothing new is derived. The engine must give the same rows and never an internal
error. Before the fix, both properties failed within a few examples with ``IndexError``
(a recursive atom over an expression, ``t((b + 1) % 4, c)``, driving its delta).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from polygraph_logic.datalog.evaluate import evaluate
from polygraph_logic.datalog.program import parse_program

EDB = {"e": 2, "f": 2, "g": 1}
DOMAIN = range(4)
COMPARE = {"=": int.__eq__, "!=": int.__ne__, "<": int.__lt__, "<=": int.__le__, ">": int.__gt__,
           ">=": int.__ge__}

# terms: ("var", name) | ("const", n) | ("wild",) | ("op", op, left, right), op one of + * % max min
# literals: ("atom", rel, terms) | ("not", rel, terms) | ("cmp", op, left, right)
# rules: (head relation, head terms, body literals)


def value(term, b):
    kind = term[0]
    if kind == "var":
        return b[term[1]]
    if kind == "const":
        return term[1]
    op, left, right = term[1], value(term[2], b), value(term[3], b)
    if op == "%":
        return left % right
    return {"+": left + right, "*": left * right, "max": max(left, right), "min": min(left, right)}[op]


def variables(term) -> set[str]:
    if term[0] == "var":
        return {term[1]}
    if term[0] == "op":
        return variables(term[2]) | variables(term[3])
    return set()


def fire(rule, relations) -> set[tuple]:
    """Every head tuple the rule derives from ``relations``: the atoms' facts tried one atom
    after another, each partial binding pruned as soon as a check can be made."""
    head, head_terms, body = rule
    atoms = [lit for lit in body if lit[0] == "atom"]
    equations = [lit for lit in body if lit[0] == "cmp" and lit[1] == "="]
    out = set()

    def extend(i, b, deferred):
        b = dict(b)
        solved = True
        while solved:  # x = expr binds x once expr's variables are bound, on either side
            solved = False
            for _, _, left, right in equations:
                for target, expr in ((left, right), (right, left)):
                    if target[0] == "var" and target[1] not in b and variables(expr) <= set(b):
                        b[target[1]] = value(expr, b)
                        solved = True
        waiting = []
        for term, v in deferred:
            if variables(term) <= set(b):
                if value(term, b) != v:
                    return
            else:
                waiting.append((term, v))
        if i < len(atoms):
            for tup in sorted(relations[atoms[i][1]]):
                nb, more = dict(b), list(waiting)
                if all(_bind(term, v, nb, more) for term, v in zip(atoms[i][2], tup)):
                    extend(i + 1, nb, more)
            return
        if not all(COMPARE[lit[1]](value(lit[2], b), value(lit[3], b)) for lit in body if lit[0] == "cmp"):
            return
        if any(_matches(lit[2], tup, b) for lit in body if lit[0] == "not" for tup in relations[lit[1]]):
            return
        out.add(tuple(value(term, b) for term in head_terms))

    extend(0, {}, [])
    return out


def _bind(term, v, b, deferred) -> bool:
    if term[0] == "var":
        return b.setdefault(term[1], v) == v
    if term[0] == "const":
        return term[1] == v
    if term[0] == "op":
        deferred.append((term, v))
    return True


def _matches(terms, tup, b) -> bool:
    return all(term[0] == "wild" or value(term, b) == v for term, v in zip(terms, tup))


def fixpoint(facts: dict[str, set], rules) -> dict[str, set]:
    relations = {name: set(rows) for name, rows in facts.items()}
    for head, _, _ in rules:
        relations.setdefault(head, set())
    changed = True
    while changed:
        changed = False
        for rule in rules:
            new = fire(rule, relations) - relations[rule[0]]
            if new:
                relations[rule[0]] |= new
                changed = True
    return relations


def render_term(term) -> str:
    kind = term[0]
    if kind == "var":
        return term[1]
    if kind == "const":
        return str(term[1])
    if kind == "wild":
        return "_"
    op, left, right = term[1], render_term(term[2]), render_term(term[3])
    return f"{op}({left}, {right})" if op in ("max", "min") else f"({left} {op} {right})"


def render_literal(lit, flip: bool) -> str:
    if lit[0] == "cmp":
        left, right = (lit[3], lit[2]) if flip and lit[1] == "=" else (lit[2], lit[3])
        return f"{render_term(left)} {lit[1]} {render_term(right)}"
    text = f"{lit[1]}({', '.join(render_term(t) for t in lit[2])})"
    return "!" + text if lit[0] == "not" else text


def render(facts, rules, rng: random.Random) -> str:
    lines = [f"{name}({', '.join(map(str, row))})." for name in sorted(facts) for row in sorted(facts[name])]
    for head, head_terms, body in rules:
        body = list(body)
        rng.shuffle(body)  # the engine must find an order; the oracle has none
        text = ", ".join(render_literal(lit, rng.random() < 0.5) for lit in body)
        lines.append(f"{head}({', '.join(render_term(t) for t in head_terms)}) :- {text}.")
    return "\n".join(lines)


# --- generators -------------------------------------------------------------------------

def _var(rng, pool):
    return ("var", rng.choice(sorted(pool)))


def inequality_rule(rng: random.Random, head: str, recursive: bool):
    """Two or three atoms over variables v0..v4, then four to eight comparisons between them."""
    relations = [*EDB, "t"] if recursive else list(EDB)
    atoms, bound = [], set()
    for _ in range(rng.randint(2, 3)):
        rel = rng.choice(relations)
        terms = []
        for _ in range(EDB.get(rel, 2)):
            roll = rng.random()
            terms.append(("var", f"v{rng.randint(0, 4)}") if roll < 0.75 else
                         ("const", rng.choice(DOMAIN)) if roll < 0.85 else ("wild",))
        atoms.append(("atom", rel, terms))
        bound |= {t[1] for t in terms if t[0] == "var"}
    if not bound:
        atoms.append(("atom", "g", [("var", "v0")]))
        bound = {"v0"}
    body = list(atoms)
    for _ in range(rng.randint(4, 8)):
        right = rng.choice([_var(rng, bound), _var(rng, bound), ("const", rng.choice(DOMAIN)),
                            ("op", "+", _var(rng, bound), ("const", 1))])
        body.append(("cmp", rng.choice(sorted(COMPARE)), _var(rng, bound), right))
    if rng.random() < 0.4:
        body.append(("not", rng.choice(["e", "f"]), [_var(rng, bound), rng.choice([_var(rng, bound), ("wild",)])]))
    head_terms = [_var(rng, bound) for _ in range(2)]
    return (head, head_terms, body)


def chain_rule(rng: random.Random, head: str, length: int, recursive: bool = False):
    """Variables bound only through a chain of ``=`` over arithmetic, written in any order,
    with atoms and negations over expressions of the chain. A recursive rule derives ``t``
    (its values kept in 0..3) and matches ``t`` on expressions of the chain."""
    matched = ["e", "f", "t"] if recursive else ["e", "f"]
    seed_atom = rng.choice([("atom", "e", [("var", "x"), ("var", "y")]), ("atom", "g", [("var", "x")]),
                            ("atom", rng.choice(matched), [("var", "x"), ("var", "y")])])
    known = [t[1] for t in seed_atom[2]]
    body = [seed_atom]
    for i in range(length):
        a, b = ("var", rng.choice(known)), ("var", rng.choice(known))
        expr = rng.choice([
            ("op", "+", a, ("const", rng.randint(0, 3))),
            ("op", "%", ("op", "*", a, b), ("const", rng.randint(2, 7))),
            ("op", "%", ("op", "+", a, b), ("const", rng.randint(2, 7))),
            ("op", rng.choice(["max", "min"]), a, ("const", rng.randint(0, 5))),
            a,
        ])
        name = f"w{i}"
        body.append(("cmp", "=", ("var", name), expr))
        known.append(name)
        if rng.random() < 0.15:  # an atom matched on an expression of the chain binds z{i}
            body.append(("atom", rng.choice(matched), [("op", "%", ("var", name), ("const", 4)),
                                                        ("var", f"z{i}")]))
            known.append(f"z{i}")
        if rng.random() < 0.1:
            body.append(("not", "f", [("op", "%", ("var", name), ("const", 4)), ("wild",)]))
        if rng.random() < 0.1:
            body.append(("cmp", rng.choice(["!=", "<", ">="]), ("var", name), ("var", rng.choice(known))))
    head_terms = [("var", known[-1]), ("var", rng.choice(known))]
    if recursive:
        head_terms = [("op", "%", term, ("const", 4)) for term in head_terms]
    return (head, head_terms, body)


def random_facts(rng: random.Random) -> dict[str, set]:
    return {name: {tuple(rng.choice(DOMAIN) for _ in range(arity)) for _ in range(rng.randint(1, 6))}
            for name, arity in EDB.items()}


def check(facts, rules, rng, semiring: str) -> None:
    text = render(facts, rules, rng)
    expected = fixpoint(facts, rules)
    model = evaluate(parse_program(text), semiring)  # an internal error fails the test as an exception
    for name in {head for head, _, _ in rules}:
        assert set(model.facts(name)) == expected[name], f"{name} differs for:\n{text}"


SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(st.randoms(use_true_random=False), st.sampled_from(["boolean", "why"]))
def test_many_inequalities_agree_with_the_independent_fixpoint(rng, semiring):
    facts = random_facts(rng)
    rules = [("t", [("var", "a"), ("var", "b")], [("atom", "e", [("var", "a"), ("var", "b")])])]
    if rng.random() < 0.5:  # recursion through t, its delta driven by an atom over an expression
        rules.append(("t", [("var", "a"), ("var", "c")],
                      [("atom", "f", [("var", "a"), ("var", "b")]),
                       ("atom", "t", [("op", "%", ("op", "+", ("var", "b"), ("const", 1)), ("const", 4)),
                                      ("var", "c")]),
                       ("cmp", "!=", ("var", "a"), ("var", "c"))]))
    rules += [inequality_rule(rng, f"r{i}", recursive=True) for i in range(rng.randint(1, 3))]
    check(facts, rules, rng, semiring)


@SETTINGS
@given(st.randoms(use_true_random=False), st.sampled_from(["boolean", "why"]))
def test_deep_bindings_agree_with_the_independent_fixpoint(rng, semiring):
    facts = random_facts(rng)
    length = rng.choice([2, 5, 12, 30, 45])  # past 40 steps a plan runs as a loop
    rules = [chain_rule(rng, f"c{i}", length) for i in range(rng.randint(1, 2))]
    if rng.random() < 0.5:
        rules += [("t", [("var", "a"), ("var", "b")], [("atom", "e", [("var", "a"), ("var", "b")])]),
                  chain_rule(rng, "t", rng.choice([2, 4, 8]), recursive=True)]
    check(facts, rules, rng, semiring)


# --- the shapes found raising IndexError ----------------------------------------------------

def rows(text: str, relation: str, semiring: str = "boolean") -> set[tuple]:
    return set(evaluate(parse_program(text), semiring).facts(relation))


@pytest.mark.parametrize("semiring", ["boolean", "why"])
def test_a_recursive_atom_over_an_expression_drives_its_delta(semiring):
    """``R(y + 1, b)`` is the delta of the recursive rule: matched before ``y`` is bound."""
    text = "A(1, 2). A(3, 4). A(5, 6). R(x, y) :- A(x, y). R(x, b) :- A(x, y), R(y + 1, b)."
    assert rows(text, "R", semiring) == {(1, 2), (3, 4), (5, 6), (3, 6), (1, 4), (1, 6)}


def test_two_atoms_each_binding_the_other_s_expression():
    text = "a(2, 5). a(3, 7). a(9, 9). b(6, 1). b(8, 2). b(6, 2). r(x, y) :- a(x + 1, y), b(y + 1, x)."
    assert rows(text, "r") == {(1, 5), (2, 7)}


def test_an_aggregate_body_over_an_expression_of_an_outer_variable():
    text = "n(1). n(2). e(2, 7). e(3, 8). e(3, 9). c(x, k) :- n(x), k = count : { e(x + 1, _) }."
    assert rows(text, "c") == {(1, 1), (2, 2)}
