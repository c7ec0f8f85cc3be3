"""Runs the example programs in tests/programs/*.dl against the results their headers state.

Header format (comment lines anywhere in the file, one statement a line):

    // expect: path("a", "c")
        One expected fact, written in the rule language (a trailing "." is optional).
        Every relation named by at least one ``expect:`` line must hold exactly the
        expected facts: no fewer and no more. Relations never named are not checked
        (the pyDatalog cross-check below still covers them).
    // expect-empty: tied
        The relation ``tied`` must hold no facts.
    // expect-why: path("a", "c") = a1·a2 + a3
        The fact's uncapped why-provenance polynomial in its pretty form: monomials
        joined by " + ", assertion ids inside a monomial joined by "·", and "1" for the
        empty monomial (background knowledge). Compared as a set of support sets, so the
        order of monomials and of ids does not matter.

Expected results are worked out by hand. They are checked three ways: against our
evaluator under every semiring; against pyDatalog (the Boolean closure of every
relation); and, for ``expect-why``, against brute force: the minimal subsets of tracked
facts under which pyDatalog derives the fact.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from polygraph_logic.datalog.pydatalog_engine import evaluate_with_pydatalog
from polygraph_logic.datalog.reading.parser import parse_clauses
from polygraph_logic.datalog.syntax import Constant, Fact, Rule

PROGRAMS = sorted((Path(__file__).parent / "programs").glob("*.dl"))
SEMIRINGS = ["boolean", "why", "lineage"]


@dataclass
class Expectations:
    """What a program's header says: facts per relation and why-polynomials per fact."""

    facts: dict[str, set[tuple]] = field(default_factory=dict)
    why: dict[tuple[str, tuple], set[frozenset[str]]] = field(default_factory=dict)


def ground_atom(text: str, where: str) -> tuple[str, tuple]:
    """Parses one fact written in the rule language; returns (relation, tuple)."""
    text = text.strip()
    (clause,) = parse_clauses(text if text.endswith(".") else text + ".", where)
    assert isinstance(clause, Fact) and all(isinstance(a, Constant) for a in clause.atom.args), text
    return clause.atom.relation, tuple(a.value for a in clause.atom.args)


def parse_polynomial(text: str) -> set[frozenset[str]]:
    """Reads ``a1·a2 + a3`` (and ``1`` for the empty monomial) as a set of support sets."""
    monomials = set()
    for monomial in text.strip().split(" + "):
        names = [n.strip() for n in monomial.split("·")]
        monomials.add(frozenset() if names == ["1"] else frozenset(names))
    return monomials


def read_expectations(path: Path) -> Expectations:
    """Collects the ``expect``, ``expect-empty`` and ``expect-why`` lines of a program."""
    result = Expectations()
    for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        line = line.strip()
        where = f"{path.name}:{number}"
        if line.startswith("// expect:"):
            relation, args = ground_atom(line[len("// expect:"):], where)
            result.facts.setdefault(relation, set()).add(args)
        elif line.startswith("// expect-empty:"):
            relation = line[len("// expect-empty:"):].strip()
            assert not result.facts.get(relation), f"{where}: {relation} has expected facts"
            result.facts[relation] = set()
        elif line.startswith("// expect-why:"):
            fact_text, _, polynomial = line[len("// expect-why:"):].rpartition(" = ")
            result.why[ground_atom(fact_text, where)] = parse_polynomial(polynomial)
    for (relation, args), _ in result.why.items():
        assert args in result.facts.get(relation, set()), f"{path.name}: expect-why for unexpected {relation}{args}"
    return result


def split_clauses(path: Path) -> tuple[list[Fact], list[Rule]]:
    clauses = parse_clauses(path.read_text("utf-8"), str(path))
    return [c for c in clauses if isinstance(c, Fact)], [c for c in clauses if not isinstance(c, Fact)]


def ids(paths):
    return [p.stem for p in paths]


def test_there_are_programs_with_expectations():
    names = {p.stem for p in PROGRAMS}
    assert {
        "transitive_closure", "same_generation", "stratified_negation", "wildcards",
        "comparisons", "arithmetic", "mutual_recursion", "zero_arity",
    } <= names
    for path in PROGRAMS:
        expected = read_expectations(path)
        assert expected.facts and expected.why, path.name
        assert any(f.variable for f in split_clauses(path)[0]), f"{path.name} has no tracked facts"


# --- independent of our evaluator: pyDatalog and brute force -----------------------


@pytest.mark.parametrize("path", PROGRAMS, ids=ids(PROGRAMS))
def test_expected_facts_hold_in_pydatalog(path):
    expected = read_expectations(path)
    closure = evaluate_with_pydatalog(*split_clauses(path))
    for relation, tuples in expected.facts.items():
        assert closure.get(relation, set()) == tuples, relation


@pytest.mark.parametrize("path", PROGRAMS, ids=ids(PROGRAMS))
def test_expected_why_matches_brute_force_over_subsets(path):
    """A support set is a minimal set of tracked facts under which the fact is derived."""
    expected = read_expectations(path)
    facts, rules = split_clauses(path)
    tracked = [f for f in facts if f.variable]
    background = [f for f in facts if not f.variable]
    assert len(tracked) <= 8, "brute force is exponential in the tracked facts"
    deriving: dict[tuple[str, tuple], list[frozenset[str]]] = {key: [] for key in expected.why}
    for size in range(len(tracked) + 1):
        for chosen in itertools.combinations(tracked, size):
            names = frozenset(f.variable for f in chosen)
            closure = evaluate_with_pydatalog([*background, *chosen], rules)
            for (relation, args), found in deriving.items():
                if args in closure.get(relation, set()) and not any(s <= names for s in found):
                    found.append(names)  # subsets come first, so this one is minimal
    for key, support in expected.why.items():
        assert set(deriving[key]) == support, key


# --- our evaluator ------------------------------------------------------------------


def _evaluate():
    from polygraph_logic.datalog.evaluate import evaluate  # an import error is a failure, never a skip
    return evaluate


@pytest.mark.parametrize("semiring", SEMIRINGS)
@pytest.mark.parametrize("path", PROGRAMS, ids=ids(PROGRAMS))
def test_program_facts_match_header(path, semiring):
    from polygraph_logic.datalog.program import load_program

    evaluate = _evaluate()
    expected = read_expectations(path)
    model = evaluate(load_program(path), semiring=semiring, cap=8)
    for relation, tuples in expected.facts.items():
        assert set(model.facts(relation)) == tuples, f"{path.name} [{semiring}] {relation}"


@pytest.mark.parametrize("path", PROGRAMS, ids=ids(PROGRAMS))
def test_uncapped_why_polynomials_match_header(path):
    from polygraph_logic.datalog.program import load_program

    evaluate = _evaluate()
    expected = read_expectations(path)
    model = evaluate(load_program(path), semiring="why", cap=None)
    for (relation, args), support in expected.why.items():
        label = model.label(relation, args)
        assert label is not None, f"{relation}{args} not derived"
        assert set(label.support_sets()) == support, f"{relation}{args}: got {label}"
        assert parse_polynomial(str(label)) == support, f"{relation}{args}: pretty form {label}"


@pytest.mark.parametrize("path", PROGRAMS, ids=ids(PROGRAMS))
def test_boolean_closure_equals_pydatalog(path):
    from polygraph_logic.datalog.program import load_program

    evaluate = _evaluate()
    ours = evaluate(load_program(path), semiring="boolean").boolean()
    theirs = evaluate_with_pydatalog(*split_clauses(path))
    for relation in sorted(set(ours) | set(theirs)):
        assert ours.get(relation, set()) == theirs.get(relation, set()), relation
