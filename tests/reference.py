"""A deliberately naive Datalog evaluator, independent of the engine, for cross-checks.

Positive rules and comparisons only; it substitutes every binding of every rule
into the current facts until nothing new appears.
"""

from __future__ import annotations

import operator

from polygraph_logic.datalog.syntax import Atom, Comparison, Constant, Wildcard

_OPS = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
        ">": operator.gt, ">=": operator.ge}


def _unify(atom: Atom, tup: tuple, env: dict) -> dict | None:
    env = dict(env)
    for arg, value in zip(atom.args, tup):
        if isinstance(arg, Wildcard):
            continue
        if isinstance(arg, Constant):
            if arg.value != value:
                return None
        elif arg.name in env:
            if env[arg.name] != value:
                return None
        else:
            env[arg.name] = value
    return env


def _value(term, env):
    return term.value if isinstance(term, Constant) else env[term.name]


def _bindings(atoms, pools, env):
    """Yields every environment that matches the atoms, left to right."""
    if not atoms:
        yield env
        return
    for tup in pools[atoms[0].relation]:
        extended = _unify(atoms[0], tup, env)
        if extended is not None:
            yield from _bindings(atoms[1:], pools, extended)


def naive_closure(facts: set[tuple], rules, seed: frozenset = frozenset()) -> set[tuple]:
    """Returns the least model: a set of (relation, tuple) pairs.

    ``seed`` may hold facts already known to be in the least model (the closure of
    a subset of ``facts``); it only saves rounds.
    """
    model = set(facts) | seed
    while True:
        pools: dict[str, list] = {}
        for relation, tup in model:
            pools.setdefault(relation, []).append(tup)
        new = set()
        for rule in rules:
            atoms = [lit for lit in rule.body if isinstance(lit, Atom)]
            if any(a.relation not in pools for a in atoms):
                continue
            tests = [lit for lit in rule.body if isinstance(lit, Comparison)]
            for env in _bindings(atoms, pools, {}):
                if all(_OPS[c.op](_value(c.left, env), _value(c.right, env)) for c in tests):
                    head = tuple(_value(a, env) for a in rule.head.args)
                    new.add((rule.head.relation, head))
        if new <= model:
            return model
        model |= new


def minimal_supports(tracked: dict[str, tuple | list[tuple]], background: set[tuple], rules) -> dict:
    """Returns, for every derivable (relation, tuple), its minimal sets of tracked-fact names.

    ``tracked`` maps a variable to its fact, or to a list of the facts it labels.
    Brute force: the closure of every subset of the tracked facts.
    """
    tracked = {n: f if isinstance(f, list) else [f] for n, f in tracked.items()}
    names = sorted(tracked)
    closures: dict[int, frozenset] = {}
    for mask in range(1 << len(names)):
        chosen = [n for i, n in enumerate(names) if mask >> i & 1]
        facts = background | {fact for n in chosen for fact in tracked[n]}
        # the closure of a subset is contained in the closure of the superset
        seed = closures[mask & (mask - 1)] if mask else frozenset()
        closures[mask] = frozenset(naive_closure(facts, rules, seed))
    derives: dict[tuple, list[frozenset]] = {}
    for mask in sorted(closures, key=lambda m: bin(m).count("1")):
        chosen = frozenset(n for i, n in enumerate(names) if mask >> i & 1)
        for fact in closures[mask]:
            sets = derives.setdefault(fact, [])
            if not any(s <= chosen for s in sets):  # sizes ascend: only minimal ones get in
                sets.append(chosen)
    return derives
