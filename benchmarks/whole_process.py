"""Benchmark: `polygraph eval` as whole processes, the front door (facts per second) and start-up.

Three programs, each run as its own process (harness.run: wall time from outside, the process's
own peak RSS), side by side in one run:

  GO closure     rules/go_closure.dl with the PomBase slice's facts written as .dl text
                 (built in a temporary folder from ../shared/data/go-pombase, or --data DIR;
                 skipped, and says so, when absent). `polygraph eval go.dl --semiring
                 boolean --json` against a process that reads the same file, evaluates it
                 with pyDatalog and writes the same JSON; both outputs are compared.
  university     a generated stand-in for the LUBM-style university ontology program of
                 Souffle's test suite: the same shape and size (103,074 ground facts as .dl
                 text, 56 rules over 17 base relations: a type relation with class and
                 property hierarchies, transitive subOrganizationOf, domain and range
                 rules, the 14 LUBM queries as rules), `-D OUT` writing the queries' CSVs.
  points-to      a generated stand-in for the points-to analysis of Souffle's test suite:
                 52,000 facts as .dl text (new/assign/load/store plus call-graph facts:
                 virtual calls, dispatch, arguments and returns), Andersen's 4 rules plus
                 call-graph rules, `-D OUT`.

The generated programs are not Souffle's files (those are not available offline): they
are generated from a fixed seed to the same shape and size, and the output says so.
Targets (issue 12): GO closure whole process >= 5x faster than pyDatalog's; the 103 k-fact
program <= 5 s; the 52 k-fact points-to analysis <= 10 s. Times are printed, never asserted.

``--front-door``: how fast ground facts get in.  N facts of a two-column relation (a symbol
and a number, and a tracked variant with an assertion id per fact), side by side: Python's
csv.reader over the same rows (the floor), the ``.input`` reader (``.facts``, and tracked with
a provenance column), ``load_program`` on ``edge("n17", 17).`` lines and on tracked
``a17 :: edge(...)`` lines (best of --repeat), and ``polygraph eval prog.dl -F DIR -D OUT`` on
a transitive closure over the facts as a whole process; facts per second and each ratio to csv.

``--startup``: how light the core is.  ``polygraph --version`` and ``--help`` as fresh
processes (best and median wall time of --repeat, target 0.3 s; least CPU time) beside a bare
``python -c pass``, the heavy modules each imports, and the size on disk of the installed
distributions the core needs against the core with each extra (read from the installed
packages' metadata; nothing is downloaded).

    python -m benchmarks.whole_process [--data DIR] [--repeat 3] [--quick] [--python-path DIR]
    python -m benchmarks.whole_process --front-door [--facts 300000] [--repeat 3]
    python -m benchmarks.whole_process --startup [--repeat 7]
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Callable

from benchmarks.go_closure import GPAD, OBOGRAPHS, gpad_facts, ontology_facts
from benchmarks.harness import (CHECKOUT, Polygraph, Run, default_data, median, mib, print_table,
                                python, repeated, run, summarise, timed)
from polygraph_logic.resources import rule_file
from polygraph_logic.datalog.program import load_program, parse_program
from polygraph_logic.datalog.reading.souffle_input import read_facts
import tomllib

LUBM_FACTS = 103_074
POINTS_TO_FACTS = 52_000

# The pyDatalog side of the GO comparison: the same file, read by the same front door
# (pyDatalog cannot read Souffle's syntax), evaluated by pyDatalog, written as the same JSON.
PYDATALOG_PROCESS = """
import json, sys
from polygraph_logic.datalog.evaluate import tuple_key
from polygraph_logic.datalog.program import load_program
from polygraph_logic.datalog.pydatalog_engine import closure
rows = closure(load_program(sys.argv[1]))
json.dump({name: [list(t) for t in sorted(rows[name], key=tuple_key)] for name in sorted(rows)},
          sys.stdout, indent=2, ensure_ascii=False)
print()
"""


# --- the GO closure program as text ----------------------------------------------------

def write_go_program(data: Path, folder: Path) -> Path | None:
    """Writes rules/go_closure.dl with the slice's facts as .dl text into ``folder``; None without data."""
    if not (data / GPAD).is_file() or not (data / OBOGRAPHS).is_file():
        return None
    annotations, _ = gpad_facts(data / GPAD)
    path = folder / "go.dl"
    with open(path, "w", encoding="utf-8") as out:
        out.write(Path(rule_file("go_closure")).read_text("utf-8"))
        out.writelines(f"{fact}\n" for fact in ontology_facts(data / OBOGRAPHS))
        out.writelines(f"{fact}\n" for fact in annotations)
    return path


# --- a university ontology program (LUBM-like) ----------------------------------------

LUBM_BASE = {  # relation: arity of the generated facts
    "type": 2, "subOrganizationOf": 2, "worksFor": 2, "headOf": 2, "memberOf": 2, "takesCourse": 2,
    "teacherOf": 2, "advisor": 2, "publicationAuthor": 2, "undergraduateDegreeFrom": 2,
    "mastersDegreeFrom": 2, "doctoralDegreeFrom": 2, "teachingAssistantOf": 2, "name": 2,
    "emailAddress": 2, "telephone": 2, "researchInterest": 2,
}

_SUBCLASS = [  # (sub, super): the class hierarchy of univ-bench, one rule each
    ("FullProfessor", "Professor"), ("AssociateProfessor", "Professor"), ("AssistantProfessor", "Professor"),
    ("Chair", "Professor"), ("Professor", "Faculty"), ("Lecturer", "Faculty"), ("Faculty", "Employee"),
    ("AdministrativeStaff", "Employee"), ("ClericalStaff", "AdministrativeStaff"),
    ("SystemsStaff", "AdministrativeStaff"), ("Employee", "Person"), ("UndergraduateStudent", "Student"),
    ("GraduateStudent", "Student"), ("ResearchAssistant", "Student"), ("Student", "Person"),
    ("TeachingAssistant", "Person"), ("University", "Organization"),
    ("Department", "Organization"), ("College", "Organization"), ("ResearchGroup", "Organization"),
    ("GraduateCourse", "Course"), ("Course", "Work"), ("Article", "Publication"), ("JournalArticle", "Article"),
    ("ConferencePaper", "Article"), ("TechnicalReport", "Article"),
]

_LUBM_RULES = """
// property hierarchy, inverses and transitivity
worksFor(x, o) :- headOf(x, o).
memberOf(x, o) :- worksFor(x, o).
degreeFrom(x, u) :- undergraduateDegreeFrom(x, u).
degreeFrom(x, u) :- mastersDegreeFrom(x, u).
degreeFrom(x, u) :- doctoralDegreeFrom(x, u).
hasAlumnus(u, x) :- degreeFrom(x, u).
member(o, x) :- memberOf(x, o).
subOrganizationOf(x, z) :- subOrganizationOf(x, y), subOrganizationOf(y, z).
// domains, ranges and defined classes
type(x, "Chair") :- headOf(x, d), type(d, "Department").
type(x, "Student") :- takesCourse(x, _).
type(x, "Employee") :- worksFor(x, o), type(o, "Organization").
type(x, "TeachingAssistant") :- teachingAssistantOf(x, c), type(c, "Course").
type(x, "ResearchAssistant") :- worksFor(x, g), type(g, "ResearchGroup").
type(y, "Professor") :- advisor(_, y).
type(p, "Publication") :- publicationAuthor(p, _).
type(o, "University") :- degreeFrom(_, o).
// the 14 LUBM queries
q1(x) :- type(x, "GraduateStudent"), takesCourse(x, "GraduateCourse0_Dept0_Univ0").
q2(x, y, z) :- type(x, "GraduateStudent"), type(y, "University"), type(z, "Department"), memberOf(x, z),
    subOrganizationOf(z, y), undergraduateDegreeFrom(x, y).
q3(x) :- type(x, "Publication"), publicationAuthor(x, "AssistantProfessor0_Dept0_Univ0").
q4(x, n, e, t) :- type(x, "Professor"), worksFor(x, "Dept0_Univ0"), name(x, n), emailAddress(x, e),
    telephone(x, t).
q5(x) :- type(x, "Person"), memberOf(x, "Dept0_Univ0").
q6(x) :- type(x, "Student").
q7(x, y) :- type(x, "Student"), type(y, "Course"), takesCourse(x, y),
    teacherOf("AssociateProfessor0_Dept0_Univ0", y).
q8(x, y, e) :- type(x, "Student"), type(y, "Department"), memberOf(x, y), subOrganizationOf(y, "Univ0"),
    emailAddress(x, e).
q9(x, y, z) :- type(x, "Student"), type(y, "Faculty"), type(z, "Course"), advisor(x, y), teacherOf(y, z),
    takesCourse(x, z).
q10(x) :- type(x, "Student"), takesCourse(x, "GraduateCourse0_Dept0_Univ0").
q11(x) :- type(x, "ResearchGroup"), subOrganizationOf(x, "Univ0").
q12(x, y) :- type(x, "Chair"), type(y, "Department"), worksFor(x, y), subOrganizationOf(y, "Univ0").
q13(x) :- type(x, "Person"), hasAlumnus("Univ0", x).
q14(x) :- type(x, "UndergraduateStudent").
"""

_LUBM_QUERIES = {"q1": 1, "q2": 3, "q3": 1, "q4": 4, "q5": 1, "q6": 1, "q7": 2, "q8": 3, "q9": 3, "q10": 1,
                 "q11": 1, "q12": 2, "q13": 1, "q14": 1}


def lubm_program(facts: int = LUBM_FACTS, seed: int = 0) -> tuple[str, dict]:
    """Returns a LUBM-like program (declarations, 56 rules, ``facts`` ground facts) and its shape."""
    rng = random.Random(seed)
    lines: list[str] = []

    def fact(relation: str, *args) -> None:
        lines.append(f'{relation}({", ".join(json.dumps(a) for a in args)}).')

    def person(x: str, dept: str) -> None:
        fact("name", x, x)
        fact("emailAddress", x, f"{x}@{dept}.edu")
        fact("telephone", x, f"xxx-xxx-{rng.randrange(10_000):04d}")

    def degrees(x: str, *kinds: str) -> None:
        for kind in kinds:
            fact(f"{kind}DegreeFrom", x, f"Univ{rng.randrange(1000)}")

    univ = "Univ0"
    fact("type", univ, "University")
    d = 0
    while len(lines) < facts:
        dept = f"Dept{d}_{univ}"
        fact("type", dept, "Department")
        fact("subOrganizationOf", dept, univ)
        for g in range(rng.randint(10, 20)):
            group = f"ResearchGroup{g}_{dept}"
            fact("type", group, "ResearchGroup")
            fact("subOrganizationOf", group, dept)
        courses, graduate_courses, faculty = [], [], []
        ranks = [("FullProfessor", rng.randint(7, 10), 15), ("AssociateProfessor", rng.randint(10, 14), 10),
                 ("AssistantProfessor", rng.randint(8, 11), 5), ("Lecturer", rng.randint(5, 7), 3)]
        for rank, count, papers in ranks:
            for i in range(count):
                x = f"{rank}{i}_{dept}"
                faculty.append(x)
                fact("type", x, rank)
                fact("worksFor", x, dept)
                person(x, dept)
                fact("researchInterest", x, f"Research{rng.randrange(30)}")
                degrees(x, "undergraduate", "masters", "doctoral")
                for _ in range(rng.randint(1, 2)):
                    course = f"Course{len(courses)}_{dept}"
                    courses.append(course)
                    fact("type", course, "Course")
                    fact("teacherOf", x, course)
                if rank != "Lecturer":
                    for _ in range(rng.randint(1, 2)):
                        course = f"GraduateCourse{len(graduate_courses)}_{dept}"
                        graduate_courses.append(course)
                        fact("type", course, "GraduateCourse")
                        fact("teacherOf", x, course)
                for p in range(rng.randint(papers // 2, papers)):
                    paper = f"Publication{p}_{x}"
                    fact("type", paper, "Publication")
                    fact("publicationAuthor", paper, x)
        fact("headOf", f"FullProfessor0_{dept}", dept)
        professors = [x for x in faculty if not x.startswith("Lecturer")]
        for i in range(len(faculty) * rng.randint(8, 14)):
            x = f"UndergraduateStudent{i}_{dept}"
            fact("type", x, "UndergraduateStudent")
            fact("memberOf", x, dept)
            person(x, dept)
            for course in rng.sample(courses, rng.randint(2, 4)):
                fact("takesCourse", x, course)
            if rng.random() < 0.2:
                fact("advisor", x, rng.choice(professors))
        for i in range(len(faculty) * rng.randint(3, 4)):
            x = f"GraduateStudent{i}_{dept}"
            fact("type", x, "GraduateStudent")
            fact("memberOf", x, dept)
            person(x, dept)
            degrees(x, "undergraduate")
            for course in rng.sample(graduate_courses, rng.randint(1, 3)):
                fact("takesCourse", x, course)
            fact("advisor", x, rng.choice(professors))
            if rng.random() < 0.25:
                fact("teachingAssistantOf", x, rng.choice(courses))
            if rng.random() < 0.25:
                fact("worksFor", x, f"ResearchGroup{rng.randrange(10)}_{dept}")
        d += 1
    lines = lines[:facts]
    hierarchy = "".join(f'type(x, "{sup}") :- type(x, "{sub}").\n' for sub, sup in _SUBCLASS)
    derived = {"degreeFrom": 2, "hasAlumnus": 2, "member": 2, **_LUBM_QUERIES}
    declarations = "".join(
        f".decl {name}({', '.join(f'a{i}: symbol' for i in range(arity))})\n"
        for name, arity in {**LUBM_BASE, **derived}.items())
    outputs = "".join(f".output {name}\n" for name in _LUBM_QUERIES)
    text = "// generated: a LUBM-like university ontology (a stand-in of the same shape)\n" + declarations \
        + outputs + "// class hierarchy\n" + hierarchy + _LUBM_RULES + "\n".join(lines) + "\n"
    rules = len(_SUBCLASS) + sum(1 for line in _LUBM_RULES.split(".\n") if ":-" in line)
    return text, {"facts": len(lines), "rules": rules, "base_relations": len(LUBM_BASE),
                  "relations": len(LUBM_BASE) + len(derived)}


# --- a points-to analysis (Andersen-style with a call graph) --------------------------

_POINTS_TO_RULES = """
// Andersen's analysis
pointsTo(v, h) :- new(v, h).
pointsTo(v, h) :- assign(v, w), pointsTo(w, h).
pointsTo(v, h) :- load(v, b, f), pointsTo(b, g), heapPointsTo(g, f, h).
heapPointsTo(g, f, h) :- store(b, f, w), pointsTo(b, g), pointsTo(w, h).
// the call graph, built on the fly from the receivers' points-to sets
callEdge(s, m) :- vcall(s, r, n), pointsTo(r, h), heapType(h, t), lookup(t, n, m).
reachable(m) :- entry(m).
reachable(m) :- reachable(c), inMethod(s, c), callEdge(s, m).
pointsTo(t, h) :- callEdge(s, m), vcall(s, r, _), thisVar(m, t), pointsTo(r, h).
pointsTo(p, h) :- callEdge(s, m), actualArg(s, i, a), formalArg(m, i, p), pointsTo(a, h).
pointsTo(r, h) :- callEdge(s, m), callResult(s, r), returnVar(m, v), pointsTo(v, h).
calls(c, m) :- reachable(c), inMethod(s, c), callEdge(s, m).
"""

_POINTS_TO_DECLS = {
    "new": "v: symbol, h: symbol", "assign": "to: symbol, from: symbol",
    "load": "to: symbol, base: symbol, f: symbol", "store": "base: symbol, f: symbol, from: symbol",
    "vcall": "s: symbol, recv: symbol, name: symbol", "heapType": "h: symbol, t: symbol",
    "lookup": "t: symbol, name: symbol, m: symbol", "inMethod": "s: symbol, m: symbol",
    "actualArg": "s: symbol, i: number, a: symbol", "formalArg": "m: symbol, i: number, p: symbol",
    "callResult": "s: symbol, r: symbol", "returnVar": "m: symbol, v: symbol", "thisVar": "m: symbol, t: symbol",
    "entry": "m: symbol",
    "pointsTo": "v: symbol, h: symbol", "heapPointsTo": "g: symbol, f: symbol, h: symbol",
    "callEdge": "s: symbol, m: symbol", "reachable": "m: symbol", "calls": "c: symbol, m: symbol",
}


def points_to_program(facts: int = POINTS_TO_FACTS, seed: int = 0, classes: int = 2) -> tuple[str, dict]:
    """Returns an Andersen-style points-to program with call-graph rules and ``facts`` facts.

    The program is made of modules (a few classes each, with their own method names and
    fields, and an entry method), as a program is made of libraries: virtual calls
    dispatch within a module, so the analysis grows with the program rather than with
    its square; within a module, assignments, field accesses, calls, arguments and
    returns are random.
    """
    rng = random.Random(seed)
    lines: list[str] = []

    def fact(relation: str, *args) -> None:
        lines.append(f'{relation}({", ".join(json.dumps(a) for a in args)}).')

    module = 0
    while len(lines) < facts:
        prefix = f"M{module}"
        module += 1
        kinds = [f"{prefix}.C{c}" for c in range(classes)]
        names = [f"n{n}" for n in range(6)]
        fields = [f"{prefix}.f{f}" for f in range(4)]
        methods = []
        for c, cls in enumerate(kinds):
            for name in rng.sample(names, 4):
                methods.append(f"{cls}.{name}")
                fact("lookup", cls, name, f"{cls}.{name}")
            if c:  # a subclass inherits some of its superclass's methods
                for name in rng.sample(names, 2):
                    fact("lookup", cls, name, f"{kinds[0]}.{name}")
        fact("entry", methods[0])
        for m in methods:
            variables = [f"{m}/v{i}" for i in range(rng.randint(6, 12))]
            fact("thisVar", m, variables[0])
            for i in (1, 2):
                fact("formalArg", m, i, variables[i])
            fact("returnVar", m, variables[-1])
            for i, v in enumerate(variables[3:], 3):
                if rng.random() < 0.5:
                    h = f"{m}/new{i}"
                    fact("new", v, h)
                    fact("heapType", h, rng.choice(kinds))
            for _ in range(len(variables)):  # mostly forward, as in straight-line code
                i, j = sorted(rng.sample(range(len(variables)), 2))
                fact("assign", *((variables[j], variables[i]) if rng.random() < 0.9 else (variables[i], variables[j])))
            for _ in range(rng.randint(1, 2)):
                fact("store", rng.choice(variables), rng.choice(fields), rng.choice(variables))
                fact("load", rng.choice(variables), rng.choice(variables), rng.choice(fields))
            for j in range(rng.randint(1, 2)):
                s = f"{m}/call{j}"
                fact("inMethod", s, m)
                fact("vcall", s, rng.choice(variables), rng.choice(names))
                for i in (1, 2):
                    fact("actualArg", s, i, rng.choice(variables))
                fact("callResult", s, rng.choice(variables))
    lines = lines[:facts]
    declarations = "".join(f".decl {name}({columns})\n" for name, columns in _POINTS_TO_DECLS.items())
    outputs = "".join(f".output {name}\n" for name in ("pointsTo", "callEdge", "reachable", "calls"))
    text = "// generated: an Andersen-style points-to analysis (a stand-in of the same shape)\n" \
        + declarations + outputs + _POINTS_TO_RULES + "\n".join(lines) + "\n"
    rules = sum(1 for line in _POINTS_TO_RULES.splitlines() if ":-" in line)
    return text, {"facts": len(lines), "rules": rules, "base_relations": 14, "relations": len(_POINTS_TO_DECLS),
                  "modules": module}


# --- measuring -------------------------------------------------------------------------

def _csv_rows(folder: Path) -> dict[str, int]:
    return {path.stem: sum(1 for _ in open(path, encoding="utf-8")) for path in sorted(folder.glob("*.csv"))}


def measure_go(polygraph: Polygraph, data: Path, folder: Path, repeat: int, pydatalog_repeat: int, out) -> dict:
    """GO closure: ours and pyDatalog's, each a whole process writing the closure as JSON."""
    program = write_go_program(data, folder)
    if program is None:
        out(f"GO closure: skipped: {GPAD} and {OBOGRAPHS} not found in {data} (pass --data DIR)")
        return {"skipped": f"{GPAD} and {OBOGRAPHS} not found in {data}"}
    lines = sum(1 for _ in open(program, encoding="utf-8"))
    ours, ours_run = repeated(lambda: polygraph("eval", str(program), "--semiring", "boolean", "--json"), repeat,
                             "polygraph eval (GO)")
    why, why_run = repeated(lambda: polygraph("eval", str(program), "--json"), repeat, "polygraph eval --json (GO, why)")
    theirs, theirs_run = repeated(lambda: polygraph.python(PYDATALOG_PROCESS, str(program)), pydatalog_repeat,
                                 "pyDatalog process (GO)")
    mine, other = json.loads(ours_run.stdout), json.loads(theirs_run.stdout)
    agree = mine == other
    facts = sum(len(v) for v in mine.values())
    out(f"GO closure: {program.name}, {lines:,} lines (rules/go_closure.dl + the slice's facts as .dl text); "
        f"closure {facts:,} facts, JSON {len(ours_run.stdout) / 2**20:.1f} MiB Boolean, "
        f"{len(why_run.stdout) / 2**20:.1f} MiB why")
    print_table(["process", "median s", "best s", "peak RSS", "runs"],
                [[what, f"{entry['seconds']:.2f}", f"{entry['best']:.2f}", mib(entry["peak_mib"]), entry["runs"]]
                 for what, entry in (("polygraph eval --semiring boolean --json", ours),
                                     ("polygraph eval --json (why, cap 8)", why),
                                     ("pyDatalog (same file, same JSON)", theirs))], out, indent="  ")
    ratio = theirs["seconds"] / ours["seconds"]
    out(f"  ratio pyDatalog / ours, whole process, Boolean: {ratio:.1f}x (target >= 5x); "
        f"why: {theirs['seconds'] / why['seconds']:.1f}x; outputs agree: {agree}")
    return {"ours": ours, "why": why, "pydatalog": theirs, "ratio": ratio,
            "ratio_why": theirs["seconds"] / why["seconds"], "agree": agree, "facts": facts}


def measure_generated(polygraph: Callable[..., Run], name: str, text: str, shape: dict, target: float, folder: Path,
                      repeat: int, out) -> dict:
    """One generated program: `polygraph eval P.dl -D OUT --semiring boolean`, timed with its peak RSS."""
    program = folder / f"{name}.dl"
    program.write_text(text, encoding="utf-8")
    output = folder / f"{name}-out"
    out(f"{name}: GENERATED stand-in of the same shape (not Souffle's file): {shape['facts']:,} facts as .dl "
        f"text, {shape['rules']} rules, {shape['base_relations']} base relations ({shape['relations']} in all), "
        f"{len(text) / 2**20:.1f} MiB")
    first = polygraph("eval", str(program), "-D", str(output), "--semiring", "boolean")
    if first.code != 0:
        what = (f"killed after {first.seconds:.0f} s" if first.timed_out
                else f"exit status {first.code}: {first.stderr.strip().splitlines()[-1:]}")
        out(f"  polygraph eval {program.name} -D OUT --semiring boolean: did not finish ({what}); "
            f"target <= {target:g} s: NOT met")
        return {"failed": what, "seconds": first.seconds, "shape": shape, "target_seconds": target}
    rest = [polygraph("eval", str(program), "-D", str(output), "--semiring", "boolean").check(name)
            for _ in range(repeat - 1)]
    entry = summarise([first, *rest])
    rows = _csv_rows(output)
    out(f"  polygraph eval {program.name} -D OUT --semiring boolean: median {entry['seconds']:.2f} s "
        f"(best {entry['best']:.2f}, runs {entry['runs']}), peak RSS {mib(entry['peak_mib'])}; "
        f"target <= {target:g} s: {'met' if entry['seconds'] <= target else 'NOT met'}")
    out("  output rows: " + ", ".join(f"{k} {v:,}" for k, v in rows.items()))
    return {**entry, "shape": shape, "target_seconds": target, "output_rows": rows}


def measure(data: Path | None = None, repeat: int = 3, pydatalog_repeat: int = 1, quick: bool = False,
            out: Callable[[str], None] = print, python_path: str | None = None, timeout: float = 600) -> dict:
    """Runs every whole-process measurement; prints through ``out`` and returns the figures.

    ``python_path`` measures the polygraph_logic found there (another checkout) instead
    of the installed one; a process running past ``timeout`` seconds fails the run.
    """
    data = data or default_data()
    polygraph = Polygraph(python_path, timeout=timeout)
    figures: dict = {"code": polygraph.code()}
    out(f"measuring polygraph_logic from {figures['code']}")
    with tempfile.TemporaryDirectory(prefix="polygraph-whole-") as tmp:
        folder = Path(tmp)
        version, _ = repeated(lambda: polygraph("--version"), repeat, "polygraph --version")
        out(f"polygraph --version: {version['seconds']:.2f} s, peak RSS {mib(version['peak_mib'])} "
            "(the floor of every process below)")
        figures["version"] = version
        figures["go"] = measure_go(polygraph, data, folder, repeat, pydatalog_repeat, out)
        text, shape = lubm_program()
        figures["university"] = measure_generated(polygraph, "university", text, shape, 5, folder, repeat, out)
        text, shape = points_to_program()
        figures["points_to"] = measure_generated(polygraph, "points-to", text, shape, 10, folder, repeat, out)
    return figures


# --- the front door: facts per second ----------------------------------------------------

def write_front_door_inputs(folder: Path, n: int) -> None:
    """Writes the fact files and programs the front door's measurements read."""
    with open(folder / "edge.facts", "w") as handle:
        handle.writelines(f"n{i}\t{i}\n" for i in range(n))
    with open(folder / "tracked.facts", "w") as handle:
        handle.writelines(f"a{i}\tn{i}\t{i}\n" for i in range(n))
    (folder / "plain.dl").write_text("".join(f'edge("n{i}", {i}).\n' for i in range(n)))
    (folder / "tracked.dl").write_text("".join(f'a{i} :: edge("n{i}", {i}).\n' for i in range(n)))
    (folder / "closure.dl").write_text(
        ".decl edge(x: symbol, y: number)\n.input edge\n"
        ".decl link(x: number, y: number)\n.decl reach(x: number, y: number)\n.output reach\n"
        "link(i, j) :- edge(_, i), j = i + 1, j % 1000 != 0.\n"
        "reach(x, y) :- link(x, y), x % 1000 = 1.\nreach(x, z) :- reach(x, y), link(y, z).\n"
    )


def measure_front_door(n: int = 300_000, repeat: int = 3, out: Callable[[str], None] = print) -> dict:
    """``--front-door``: facts per second into the engine against the csv module; returns the figures."""
    with tempfile.TemporaryDirectory(prefix="polygraph-front-door-") as tmp:
        folder = Path(tmp)
        write_front_door_inputs(folder, n)
        declared = parse_program(
            ".decl edge(x: symbol, y: number)\n.input edge\n"
            ".decl tracked(x: symbol, y: number)\n.input tracked(provenance=1)\n").declarations
        plain, tracked = (next(d for d in declared.io if d.relation == r) for r in ("edge", "tracked"))
        kinds = declared.kinds("edge")

        def with_csv():
            with open(folder / "edge.facts", newline="") as f:
                return [(a, int(b)) for a, b in csv.reader(f, delimiter="\t")]

        rows = {
            "csv module (rows + int)": timed(with_csv, repeat, gc_off=False),
            ".facts": timed(lambda: read_facts(plain, kinds, declared.relations["edge"], folder), repeat, gc_off=False),
            ".facts tracked": timed(lambda: read_facts(tracked, kinds, declared.relations["tracked"], folder), repeat,
                                    gc_off=False),
            ".dl text": timed(lambda: load_program(folder / "plain.dl"), repeat, gc_off=False),
            ".dl tracked": timed(lambda: load_program(folder / "tracked.dl"), repeat, gc_off=False),
        }
        assert len(read_facts(plain, kinds, declared.relations["edge"], folder)) == n
        assert len(next(iter(load_program(folder / "tracked.dl").fact_tables().values()))) == n
        whole = Polygraph()("eval", folder / "closure.dl", "-F", folder, "-D", folder / "out", "--semiring",
                            "boolean").check("polygraph eval -F -D")
        reach = sum(1 for _ in open(folder / "out" / "reach.csv"))
    floor = rows["csv module (rows + int)"]
    out(f"front door: {n:,} facts, best of {repeat}")
    print_table(["input", "seconds", "facts/s", "x csv"],
                [[name, f"{seconds:.3f}", f"{n / seconds:,.0f}", f"{seconds / floor:.2f}"]
                 for name, seconds in rows.items()], out)
    out(f"whole process (-F/-D, closure): {whole.seconds:.2f} s, peak RSS {mib(whole.peak_mib)}, for {n:,} input "
        f"facts and {reach:,} reach facts")
    out(f"targets: .facts >= 300,000 facts/s ({n / rows['.facts']:,.0f}), .dl >= 100,000 facts/s "
        f"({n / rows['.dl text']:,.0f}); .facts within 3x of csv ({rows['.facts'] / floor:.2f}x)")
    return {"facts": n, "seconds": rows, "whole_process_s": whole.seconds, "reach": reach}


# --- start-up and installed size -----------------------------------------------------------

HEAVY = ("numpy", "rdflib", "anthropic", "sympy", "matplotlib", "pyDatalog", "rank_bm25", "lark")
STARTUP_TARGET = 0.3


def imported(flag: str) -> list[str]:
    """The heavy modules ``polygraph FLAG`` imports."""
    script = ("import sys; sys.argv = ['polygraph', %r]\nfrom polygraph_logic.cli import main\n"
              "try:\n    main()\nexcept SystemExit:\n    pass\n"
              "print(' '.join(m for m in %r if m in sys.modules), file=sys.stderr)") % (flag, HEAVY)
    return python(script).stderr.split()


def _name(requirement: str) -> str:
    return re.split(r"[\s;<>=!~\[(]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def closure(names: list[str]) -> set[str]:
    """The installed distributions ``names`` need, themselves included (extras' markers skipped)."""
    seen: set[str] = set()
    todo = [_name(n) for n in names]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        seen.add(name)
        todo.extend(_name(r) for r in dist.requires or () if "extra ==" not in r)
    return seen


def size(names: set[str]) -> int:
    total = 0
    for name in names:
        for file in metadata.distribution(name).files or ():
            path = Path(file.locate())
            if path.is_file():
                total += path.stat().st_size
    return total


def _requirements() -> list[str] | None:
    """The project's requirements in importlib.metadata's form: from the checkout's pyproject.toml
    when this script sits in one (the installed copy may be older), else from the installed metadata."""
    pyproject = CHECKOUT / "pyproject.toml"
    if pyproject.is_file():
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        return [*project.get("dependencies", ()),
                *(f'{r}; extra == "{extra}"' for extra, rs in project.get("optional-dependencies", {}).items()
                  for r in rs)]
    try:
        return list(metadata.distribution("polygraph_logic").requires or ())
    except metadata.PackageNotFoundError:
        return None


def measure_startup(repeat: int = 7, out: Callable[[str], None] = print) -> dict:
    """``--startup``: ``--version`` and ``--help`` as fresh processes, their imports, the installed size."""
    command = [sys.executable, "-m", "polygraph_logic.cli"]
    rows, figures = [], {"commands": {}}
    for label, argv in (("python -c pass", [sys.executable, "-c", "pass"]),
                        ("polygraph --version", [*command, "--version"]), ("polygraph --help", [*command, "--help"])):
        runs = [run(argv) for _ in range(repeat)]
        times = [r.seconds for r in runs]
        cpu = min((r.cpu_seconds for r in runs if r.cpu_seconds is not None), default=None)
        heavy = "" if label.startswith("python") else (" ".join(imported(argv[-1])) or "none")
        mark = "" if label.startswith("python") else (f"  (target {STARTUP_TARGET} s: "
                                                      f"{'met' if min(times) <= STARTUP_TARGET else 'missed'})")
        figures["commands"][label] = {"best": min(times), "median": median(times), "cpu": cpu, "heavy": heavy.split()}
        rows.append([label, f"{min(times):.3f}", f"{median(times):.3f}", "?" if cpu is None else f"{cpu:.3f}",
                     f"{heavy}{mark}"])
    print_table(["command", "best s", "median s", "cpu s", "heavy modules imported"], rows, out)
    requires = _requirements()
    if requires is None:
        out("installed size: no pyproject.toml beside this script and polygraph_logic is not installed; not measured")
        return figures
    core = [r for r in requires if "extra ==" not in r]
    core_set = closure(core)
    figures["core"] = {"distributions": len(core_set), "bytes": size(core_set)}
    out(f"installed size of the core's dependencies ({len(core_set)} distributions): "
        f"{figures['core']['bytes'] / 2**20:.1f} MiB")
    extras = sorted({m.group(1) for r in requires for m in [re.search(r'extra == "([^"]+)"', r)] if m})
    for extra in extras:
        wanted = [r.split(";")[0] for r in requires if f'extra == "{extra}"' in r]
        added = closure(wanted) - core_set
        missing = [_name(w) for w in wanted if _name(w) not in closure([w])]
        note = f" (not installed here: {', '.join(missing)})" if missing else ""
        figures[extra] = {"distributions": len(added), "bytes": size(added)}
        out(f"  + [{extra}]: {len(added)} more distributions, {size(added) / 2**20:.1f} MiB{note}")
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--front-door", action="store_true", help="instead: facts per second into the engine")
    mode.add_argument("--startup", action="store_true",
                      help="instead: polygraph --version and --help as fresh processes, and the installed size")
    parser.add_argument("--data", type=Path, default=None,
                        help="the GO slice's folder (default: $POLYGRAPH_DATA/go-pombase, else ../shared/data/go-pombase)")
    parser.add_argument("--repeat", type=int, default=None,
                        help="runs of each of our processes, the median kept (default 3; --front-door: best of 3; "
                             "--startup: 7)")
    parser.add_argument("--pydatalog-repeat", type=int, default=1, help="runs of the pyDatalog process")
    parser.add_argument("--quick", action="store_true", help="one run of each")
    parser.add_argument("--python-path", metavar="DIR",
                        help="measure the polygraph_logic of this checkout (e.g. a git worktree of an older commit)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds before a process is killed")
    parser.add_argument("--facts", type=int, default=300_000, help="--front-door: facts per input (default 300,000)")
    parser.add_argument("--write", type=Path, metavar="DIR",
                        help="only write the generated programs (university.dl, points-to.dl) into DIR")
    args = parser.parse_args(argv)
    if args.front_door:
        measure_front_door(args.facts, args.repeat or 3)
        return 0
    if args.startup:
        measure_startup(args.repeat or 7)
        return 0
    if args.write:
        args.write.mkdir(parents=True, exist_ok=True)
        (args.write / "university.dl").write_text(lubm_program()[0], encoding="utf-8")
        (args.write / "points-to.dl").write_text(points_to_program()[0], encoding="utf-8")
        return 0
    repeat = 1 if args.quick else (args.repeat or 3)
    figures = measure(args.data, repeat, args.pydatalog_repeat, args.quick, python_path=args.python_path,
                      timeout=args.timeout)
    return 0 if figures["go"].get("agree", True) else 1


if __name__ == "__main__":
    sys.exit(main())
