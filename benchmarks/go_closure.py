"""Benchmark: the Gene Ontology closure (rules/go_closure.dl) on a real PomBase slice.

Builds one program from the GPAD annotations (one tracked fact per line, named by
its line number: ``g17`` is line 17; header lines and NOT-qualified lines skipped),
the obographs edges (background facts) and the rules, then measures side by side in
one run:

  ours, why-provenance (cap 8)   best of --repeat runs
  ours, Boolean                  best of --repeat runs
  pyDatalog, Boolean             best of --pydatalog-repeat runs (via the bridge)

and prints the fact counts per relation, the ratios, and whether the closures agree
(ours Boolean = pyDatalog per relation; the why closure holds the same facts).
Times are printed, never asserted; the exit status is 1 only if the closures differ.

    python -m benchmarks.go_closure [--data DIR] [--repeat 3] [--pydatalog-repeat 1]

DIR defaults to $POLYGRAPH_DATA/go-pombase, else ../shared/data/go-pombase beside the checkout; if the
files are absent the script says so and exits 0.  (The same comparison as whole processes,
``polygraph eval`` against a pyDatalog process: benchmarks/whole_process.py.)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Callable

from benchmarks.harness import default_data, print_table, timings
from polygraph_logic.datalog.reading.parser import parse_clauses
from polygraph_logic.datalog.program import Program
from polygraph_logic.datalog.pydatalog_engine import closure as pydatalog_closure
from polygraph_logic.datalog.syntax import Atom, Constant, Fact
from polygraph_logic.resources import rule_file
from polygraph_logic.datalog.evaluate import evaluate

GPAD = "truncated-pombase.gpad"
OBOGRAPHS = "go-truncated-pombase.json"

# obographs predicate -> relation of rules/go_closure.dl (has_part and occurs_in are
# loaded as background facts too; no rule uses them yet)
PREDICATES = {
    "is_a": "subclass_of",
    "BFO:0000050": "part_of",
    "RO:0002211": "regulates",
    "RO:0002212": "negatively_regulates",
    "RO:0002213": "positively_regulates",
    "BFO:0000051": "has_part",
    "BFO:0000066": "occurs_in",
}
OBO_PREFIX = "http://purl.obolibrary.org/obo/"


def curie(iri: str) -> str:
    """Returns ``GO:0005634`` for ``http://purl.obolibrary.org/obo/GO_0005634``."""
    if iri.startswith(OBO_PREFIX):
        prefix, _, local = iri[len(OBO_PREFIX):].partition("_")
        return f"{prefix}:{local}"
    return iri


def gpad_facts(path: Path) -> tuple[list[Fact], int]:
    """Returns one tracked annotation fact per GPAD line, and how many NOT lines were skipped."""
    facts, skipped = [], 0
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip() or line.startswith("!"):
                continue
            columns = line.rstrip("\n").split("\t")
            database, identifier, qualifier, term = columns[:4]
            flags = qualifier.split("|")
            if "NOT" in flags:
                skipped += 1
                continue
            relation = flags[-1]
            atom = _atom("annotation", f"{database}:{identifier}", relation, term)
            facts.append(Fact(atom, f"g{number}"))
    return facts, skipped


def ontology_facts(path: Path) -> list[Fact]:
    """Returns one background fact per obographs edge with a known predicate."""
    graph = json.loads(path.read_text("utf-8"))["graphs"][0]
    facts = []
    for edge in graph["edges"]:
        relation = PREDICATES.get(curie(edge["pred"]))
        if relation is not None:
            facts.append(Fact(_atom(relation, curie(edge["sub"]), curie(edge["obj"]))))
    return facts


def _atom(relation: str, *values: str) -> Atom:
    return Atom(relation, tuple(Constant(v) for v in values))


def build_program(data: Path) -> tuple[Program, int]:
    """Returns the checked program (rules + facts) and the number of NOT lines skipped."""
    annotations, skipped = gpad_facts(data / GPAD)
    rules_path = rule_file("go_closure")
    rules = parse_clauses(Path(rules_path).read_text("utf-8"), str(rules_path))
    return Program.from_clauses([*rules, *ontology_facts(data / OBOGRAPHS), *annotations]), skipped


def best_of(runs: int, work: Callable[[], object]) -> tuple[float, object]:
    """Returns the fastest wall-clock time of ``runs`` calls and the last result (the collector
    left on: an evaluation makes much garbage)."""
    seconds, result = timings(work, runs, gc_off=False)
    return min(seconds), result


def measure(data: Path | None = None, repeat: int = 3, pydatalog_repeat: int = 1, cap: int = 8,
            out: Callable[[str], None] = print) -> dict:
    """Runs the comparison, prints through ``out`` and returns the figures (``skipped`` when no data)."""
    data = data or default_data()
    if not (data / GPAD).is_file() or not (data / OBOGRAPHS).is_file():
        out(f"skipped: {GPAD} and {OBOGRAPHS} not found in {data} (pass --data DIR)")
        return {"skipped": f"{GPAD} and {OBOGRAPHS} not found in {data}"}

    program, skipped = build_program(data)
    tracked = sum(1 for f in program.facts if f.variable)
    out(f"program: {len(program.rules)} rules from rules/go_closure.dl, "
        f"{tracked} tracked annotation facts (GPAD lines; {skipped} NOT lines skipped), "
        f"{len(program.facts) - tracked} background ontology facts")

    times: dict[str, float] = {}
    times["ours_why"], why_model = best_of(repeat, lambda: evaluate(program, semiring="why", cap=cap))
    times["ours_boolean"], bool_model = best_of(repeat, lambda: evaluate(program, semiring="boolean"))
    times["pydatalog"], theirs = best_of(pydatalog_repeat, lambda: pydatalog_closure(program))

    given: dict[str, int] = {}
    for fact in program.facts:
        given[fact.atom.relation] = given.get(fact.atom.relation, 0) + 1
    ours = bool_model.boolean()
    annotations = len(ours.get("annotation", ()))
    ontology = sum(len(v) for r, v in ours.items() if r != "annotation")
    out("")
    print_table(["relation", "given", "closure"],
                [*([relation, given.get(relation, 0), len(ours[relation])] for relation in sorted(ours)),
                 ["= annotation facts", "", annotations], ["= ontology facts", "", ontology]], out)
    out("")
    print_table(["engine", "seconds", "runs"],
                [[f"ours, why (cap {cap})", f"{times['ours_why']:.3f}", f"best of {repeat}"],
                 ["ours, Boolean", f"{times['ours_boolean']:.3f}", f"best of {repeat}"],
                 ["pyDatalog, Boolean", f"{times['pydatalog']:.3f}", f"best of {pydatalog_repeat}"]], out)
    out(f"ratio pyDatalog / ours-why:     {times['pydatalog'] / times['ours_why']:8.1f}x")
    out(f"ratio pyDatalog / ours-Boolean: {times['pydatalog'] / times['ours_boolean']:8.1f}x")
    out("")
    agree = _verify(ours, theirs, why_model, out) == 0
    return {"seconds": times, "annotation_facts": annotations, "ontology_facts": ontology, "tracked": tracked,
            "ratio_why": times["pydatalog"] / times["ours_why"],
            "ratio_boolean": times["pydatalog"] / times["ours_boolean"], "agree": agree}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None,
                        help="the GO slice's folder (default: $POLYGRAPH_DATA/go-pombase, else ../shared/data/go-pombase)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of our engine (best is kept)")
    parser.add_argument("--pydatalog-repeat", type=int, default=1, help="runs of pyDatalog (best is kept)")
    parser.add_argument("--cap", type=int, default=8, help="support sets kept per why-label")
    args = parser.parse_args(argv)
    figures = measure(args.data, args.repeat, args.pydatalog_repeat, args.cap)
    return 0 if figures.get("agree", True) else 1


def _verify(ours: dict[str, set[tuple]], theirs: dict[str, set[tuple]], why_model, out=print) -> int:
    """Prints whether the closures agree; returns the exit status."""
    status = 0
    for relation in sorted(set(ours) | set(theirs)):
        mine, other = ours.get(relation, set()), theirs.get(relation, set())
        if mine != other:
            status = 1
            out(f"MISMATCH {relation}: ours has {len(mine - other)} facts pyDatalog lacks, "
                  f"pyDatalog has {len(other - mine)} ours lacks")
        why_facts = set(why_model.facts(relation)) if relation in why_model.relations() else set()
        if why_facts != mine:
            status = 1
            out(f"MISMATCH {relation}: the why closure differs from the Boolean one")
    if status == 0:
        out("closures agree: ours Boolean = pyDatalog for every relation; the why closure holds the same facts")
    labels = list(why_model.facts("annotation").values())
    inexact = sum(1 for label in labels if not getattr(label, "exact", True))
    several = sum(1 for label in labels if len(label.support_sets()) > 1)
    out(f"why labels of annotation facts: {several} of {len(labels)} have more than one support set, "
          f"{inexact} were truncated by the cap")
    return status


if __name__ == "__main__":
    sys.exit(main())
