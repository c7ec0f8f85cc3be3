"""Benchmark: what why-provenance costs over a Boolean evaluation, beside clingo and Nemo.

Each workload is a program generated into a temporary folder (deterministic seeds) with its
given facts tracked (``e17 :: edge(3, 17).``, one assertion id per fact):

  random          path(x, z) :- edge(x, y), path(y, z): transitive closure of a random DAG (edges a < b)
  random-cyclic   the same closure of a random graph with cycles (a giant strongly connected component)
  grid            the same closure of an NxN grid (edges right and down; 50x50: 1.6 M closure facts)
  same-generation sg(x, y) :- parent(p, x), sg(p, q), parent(q, y) on a complete binary tree
  go-ro           rules/go_closure.dl over the GO slice (skipped, and said so, when the data is absent)

Each is measured as whole processes, each a child with its own peak RSS (harness.run), the
variants alternated within each of --repeat rounds (medians printed):

  boolean      polygraph eval --semiring boolean -D OUT prog.dl
  duckdb       polygraph eval --engine duckdb --semiring boolean -D OUT prog.dl (set at a time on DuckDB,
               engines/duckdb_eval.py; skipped, and said so, when duckdb is not importable)
  why          polygraph eval --semiring why -D OUT prog.dl (the provenance circuit, datalog/circuit_eval.py)
  why-labels   the previous engine: evaluate(load_program(prog), "why", cap=8, circuit=False) and
               souffle_output.write_outputs in a Python child, stopped after --limit seconds
               (its peak is still read: the child ends itself at the limit)
  clingo       the same Boolean program in ASP (python -c with the clingo API: ground, solve, count)
  nemo         the same Boolean program in Nemo's syntax, its facts @import-ed from CSV files
               (nmo_python: load, reason, write the outputs)

and in this process, the program loaded once, ``evaluate`` alone under boolean and why
(``eval`` columns), which separates the evaluation from the fixed cost of parsing and output.
clingo and Nemo get the program translated mechanically from the parsed .dl (facts, rules of
atoms and comparisons); they are skipped, and said so, when not importable.  The script checks
that polygraph's boolean, duckdb and why outputs are the same files, and that the row counts of
polygraph, clingo and Nemo agree.  Times are printed, never asserted.  Every child reads the
package's bytecode compiled once before the first (``compileall``), as an installed package
does, even where PYTHONDONTWRITEBYTECODE is set.

The default sizes keep each Boolean process at 2-16 s on a 2-core machine: random, 20,000 nodes
and 24,000 edges (357 k closure facts; 50,000 edges would close to 7.2 M); random-cyclic, 700
nodes and 2,100 edges (429 k); grid 50x50 (1.6 M); a tree of depth 9 (349 k pairs; depth 10: 1.4 M).

    python -m benchmarks.provenance_cost [--quick] [--repeat 3] [--limit 300] [--json FILE]

(pip install "polygraph_logic[peers]" brings clingo and nemo-python.)
"""

from __future__ import annotations

import argparse
import csv
import filecmp
import importlib.util
import json
import random
import sys
import tempfile
from pathlib import Path
from typing import Callable

from benchmarks.go_closure import GPAD, OBOGRAPHS
from benchmarks.harness import Polygraph, Run, default_data, median, print_table, ratio, run, timings
from benchmarks.whole_process import write_go_program
from polygraph_logic.datalog.directives import Declaration, IODirective
from polygraph_logic.datalog.evaluate import evaluate
from polygraph_logic.datalog.program import load_program
from polygraph_logic.datalog.reading.parser import parse_clauses
from polygraph_logic.datalog.syntax import Atom, Comparison, Constant, Fact, Rule, Variable
from polygraph_logic.errors import PolygraphError

VARIANTS = ("boolean", "duckdb", "why", "why-labels", "clingo", "nemo")
STOPPED = 124  # the exit code of a why-labels child that reached its limit

CLOSURE = "path(x, y) :- edge(x, y).\npath(x, z) :- edge(x, y), path(y, z).\n"
SAME_GENERATION = ("sg(x, y) :- parent(p, x), parent(p, y), x != y.\n"
                   "sg(x, y) :- parent(p, x), sg(p, q), parent(q, y).\n")
GO_OUTPUTS = ("annotation", "subclass_of", "part_of", "regulates", "negatively_regulates", "positively_regulates",
              "has_part", "occurs_in")

# the previous engine, as `polygraph eval -D` would run it; ends itself at the limit (argv[3])
# so that the launcher still reads its peak
WHY_LABELS = """
import os, signal, sys
signal.signal(signal.SIGALRM, lambda *_: os._exit(124))
signal.alarm(max(1, int(float(sys.argv[3]))))
from polygraph_logic.datalog.evaluate import evaluate
from polygraph_logic.datalog.program import load_program
from polygraph_logic.datalog.souffle_output import write_outputs
write_outputs(evaluate(load_program(sys.argv[1]), "why", cap=8, circuit=False), sys.argv[2])
"""

CLINGO = """
import collections, json, sys, clingo
control = clingo.Control(["--warn=none"])
with open(sys.argv[1], encoding="utf-8") as handle:
    control.add("base", [], handle.read())
control.ground([("base", [])])
counts = collections.Counter()
control.solve(on_model=lambda model: counts.update(symbol.name for symbol in model.symbols(shown=True)))
print(json.dumps(counts))
"""

NEMO = """
import json, sys
from pathlib import Path
from nmo_python import NemoEngine, NemoOutputManager, load_string
engine = NemoEngine(load_string(Path(sys.argv[1]).read_text(encoding="utf-8")))
engine.reason()
folder, counts = Path(sys.argv[2]), {}
for relation in sys.argv[3:]:
    engine.write_result(relation, NemoOutputManager(str(folder), overwrite=True))
    written = folder / f"{relation}.csv"
    counts[relation] = sum(1 for _ in open(written, "rb")) if written.exists() else 0
print(json.dumps(counts))
"""


# --- the workloads ------------------------------------------------------------------------

def random_graph(nodes: int, edges: int, seed: int, dag: bool) -> list[tuple[int, int]]:
    """``edges`` distinct edges a -> b, a != b; with ``dag``, a < b."""
    rnd, chosen = random.Random(seed), set()
    while len(chosen) < edges:
        a = rnd.randrange(nodes - 1 if dag else nodes)
        b = rnd.randrange(a + 1, nodes) if dag else rnd.randrange(nodes)
        if a != b:
            chosen.add((a, b))
    return sorted(chosen)


def grid(n: int) -> list[tuple[int, int]]:
    return [(r * n + c, r * n + c + step) for r in range(n) for c in range(n)
            for step, inside in ((1, c + 1 < n), (n, r + 1 < n)) if inside]


def binary_tree(depth: int) -> list[tuple[int, int]]:
    """parent(p, c) of a complete binary tree of ``depth`` levels below the root."""
    return [((c - 1) // 2, c) for c in range(1, 2 ** (depth + 1) - 1)]


def write_generated(path: Path, given: str, derived: str, rules: str, rows: list[tuple[int, int]]) -> Path:
    with open(path, "w", encoding="utf-8") as out:
        out.write(f".decl {given}(x: number, y: number)\n.decl {derived}(x: number, y: number)\n.output {derived}\n")
        out.write(rules)
        out.writelines(f"{given[0]}{i} :: {given}({a}, {b}).\n" for i, (a, b) in enumerate(rows, 1))
    return path


def workloads(args, folder: Path, out: Callable[[str], None]) -> list[tuple[str, Path | None, str]]:
    """(name, program or None when skipped, what it is) of the workloads asked for."""
    made = {
        "random": lambda: (write_generated(folder / "random.dl", "edge", "path", CLOSURE,
                                           random_graph(args.nodes, args.edges, args.seed, True)),
                           f"{args.nodes:,} nodes, {args.edges:,} edges a < b"),
        "random-cyclic": lambda: (write_generated(folder / "random-cyclic.dl", "edge", "path", CLOSURE,
                                                  random_graph(args.cyclic_nodes, args.cyclic_edges, args.seed, False)),
                                  f"{args.cyclic_nodes:,} nodes, {args.cyclic_edges:,} edges"),
        "grid": lambda: (write_generated(folder / "grid.dl", "edge", "path", CLOSURE, grid(args.grid)),
                         f"{args.grid}x{args.grid} grid"),
        "same-generation": lambda: (write_generated(folder / "same-generation.dl", "parent", "sg", SAME_GENERATION,
                                                    binary_tree(args.depth)),
                                    f"binary tree of depth {args.depth}"),
        "go-ro": lambda: _go(args.data or default_data(), folder),
    }
    chosen = []
    for name in args.workloads:
        program, what = made[name]()
        if program is None:
            out(f"{name}: skipped: {what}")
        chosen.append((name, program, what))
    return chosen


def _go(data: Path, folder: Path) -> tuple[Path | None, str]:
    program = write_go_program(data, folder)
    if program is None:
        return None, f"{GPAD} and {OBOGRAPHS} not found in {data} (pass --data DIR)"
    with open(program, "a", encoding="utf-8") as handle:
        handle.writelines(f".output {relation}\n" for relation in GO_OUTPUTS)
    return program, "rules/go_closure.dl, the GO slice's facts"


# --- clingo and Nemo: the program translated ---------------------------------------------------

class NotTranslated(Exception):
    pass


def translate(program: Path) -> dict[str, str | list[str]]:
    """The parsed program as clingo's text (facts inline) and Nemo's (facts imported from REL.csv files
    written beside the program: its parser takes about 0.5 ms a fact line), and its output relations;
    raises NotTranslated for anything but facts, rules of atoms and comparisons, declarations and outputs."""
    outputs, arities, clingo, nemo, rows = [], {}, [], [], {}
    for clause in parse_clauses(program.read_text(encoding="utf-8"), str(program)):
        if isinstance(clause, Fact):
            arities.setdefault(clause.atom.relation, len(clause.atom.args))
            clingo.append(_atom(clause.atom, "clingo") + ".")
            rows.setdefault(clause.atom.relation, []).append([_value(t) for t in clause.atom.args])
        elif isinstance(clause, Rule):
            arities.setdefault(clause.head.relation, len(clause.head.args))
            for dialect, lines in (("clingo", clingo), ("nemo", nemo)):
                body = ", ".join(_literal(literal, dialect) for literal in clause.body)
                lines.append(f"{_atom(clause.head, dialect)} :- {body}.")
        elif isinstance(clause, IODirective) and clause.kind == "output":
            outputs.append(clause.relation)
        elif not isinstance(clause, (Declaration, IODirective)):
            raise NotTranslated(type(clause).__name__)
    for relation, values in rows.items():
        path = program.parent / f"{program.stem}-nemo-{relation}.csv"
        with open(path, "w", encoding="utf-8", newline="") as handle:
            csv.writer(handle).writerows(values)
        kinds = ", ".join("int" if all(isinstance(row[i], int) for row in values) else "string"
                          for i in range(arities[relation]))
        nemo.insert(0, f'@import {relation} :- csv{{resource="{path}", format=({kinds})}}.')
    clingo += [f"#show {r}/{arities[r]}." for r in outputs if r in arities]
    nemo += [f"@export {r} :- csv{{}}." for r in outputs if r in arities]
    return {"clingo": "\n".join(clingo) + "\n", "nemo": "\n".join(nemo) + "\n", "outputs": outputs}


def _value(term) -> int | str:
    if isinstance(term, Constant) and isinstance(term.value, (int, str)) and not isinstance(term.value, bool):
        return term.value
    raise NotTranslated(type(term).__name__)


def _literal(literal, dialect: str) -> str:
    if isinstance(literal, Atom):
        return _atom(literal, dialect)
    if isinstance(literal, Comparison) and literal.op in ("!=", "<", "<=", ">", ">="):
        return f"{_term(literal.left, dialect)} {literal.op} {_term(literal.right, dialect)}"
    raise NotTranslated(type(literal).__name__)


def _atom(atom: Atom, dialect: str) -> str:
    return f"{atom.relation}({', '.join(_term(t, dialect) for t in atom.args)})"


def _term(term, dialect: str) -> str:
    if isinstance(term, Variable):
        return f"V{term.name}" if dialect == "clingo" else f"?{term.name}"
    if isinstance(term, Constant) and isinstance(term.value, int) and not isinstance(term.value, bool):
        return str(term.value)
    if isinstance(term, Constant) and isinstance(term.value, str):
        return '"' + term.value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    raise NotTranslated(type(term).__name__)


def peers() -> dict[str, str | None]:
    """clingo, nmo_python and duckdb: None when importable, else why they are skipped."""
    return {name: None if importlib.util.find_spec(module) else f"{module} is not importable (pip install {package})"
            for name, module, package in (("clingo", "clingo", "clingo"), ("nemo", "nmo_python", "nemo-python"),
                                          ("duckdb", "duckdb", "polygraph_logic[duckdb]"))}


# --- measuring -----------------------------------------------------------------------------

def compiled_bytecode() -> None:
    """Compiles the package's modules to bytecode once, so that no child compiles them at its
    start (an installed package has them; PYTHONDONTWRITEBYTECODE keeps a child from writing them)."""
    import compileall
    import polygraph_logic
    compileall.compile_dir(str(Path(polygraph_logic.__file__).parent), quiet=1)


def csv_counts(folder: Path) -> dict[str, int]:
    return {path.stem: sum(1 for _ in open(path, "rb")) for path in sorted(folder.glob("*.csv"))}


def same_files(one: Path, other: Path) -> bool:
    names = sorted(p.name for p in one.glob("*.csv"))
    return names == sorted(p.name for p in other.glob("*.csv")) and \
        all(filecmp.cmp(one / n, other / n, shallow=False) for n in names)


def measure_workload(name: str, program: Path, what: str, skipped: dict, repeat: int, limit: float) -> dict:
    """One workload: its variants as alternated child processes, outputs and counts compared, then
    ``evaluate`` alone in this process."""
    folder = program.parent / f"{name}-out"
    polygraph, labels = Polygraph(timeout=limit), Polygraph(timeout=limit + 30)
    entry: dict = {"workload": name, "what": what, "skipped": dict(skipped)}
    try:
        translated = translate(program)
    except NotTranslated as error:
        translated = None
        entry["skipped"].update({e: f"not translated ({error})" for e in ("clingo", "nemo")})
    if translated:
        for dialect, suffix in (("clingo", ".lp"), ("nemo", ".rls")):
            program.with_suffix(suffix).write_text(translated[dialect], encoding="utf-8")
    commands: dict[str, Callable[[], Run]] = {
        "boolean": lambda: polygraph("eval", "--semiring", "boolean", "-D", folder / "boolean", program),
        "duckdb": lambda: polygraph("eval", "--engine", "duckdb", "--semiring", "boolean", "-D", folder / "duckdb",
                                    program),
        "why": lambda: polygraph("eval", "--semiring", "why", "-D", folder / "why", program),
        "why-labels": lambda: labels.python(WHY_LABELS, program, folder / "why-labels", limit),
        "clingo": lambda: run([sys.executable, "-c", CLINGO, program.with_suffix(".lp")], timeout=limit),
        "nemo": lambda: run([sys.executable, "-c", NEMO, program.with_suffix(".rls"), folder / "nemo",
                             *translated["outputs"]], timeout=limit),
    }
    runs: dict[str, list[Run]] = {v: [] for v in VARIANTS if v not in entry["skipped"]}
    for _ in range(repeat):  # alternately, so that a busy moment of the machine hits every variant
        for variant, done in runs.items():
            if not done or done[-1].code == 0:  # one that failed or was stopped is not run again
                done.append(commands[variant]())
    entry["runs"] = {variant: _summary(done, limit) for variant, done in runs.items()}
    if "failed" in entry["runs"]["boolean"]:
        return entry
    counts = {"polygraph": csv_counts(folder / "boolean")}
    entry["closure"] = sum(counts["polygraph"].values())
    entry["same_output"] = same_files(folder / "boolean", folder / "why") if entry["runs"].get("why", {}).get("ok") else None
    entry["duckdb_same"] = (same_files(folder / "boolean", folder / "duckdb")
                            if entry["runs"].get("duckdb", {}).get("ok") else None)
    entry["labels_same"] = (same_files(folder / "boolean", folder / "why-labels")
                            if entry["runs"].get("why-labels", {}).get("ok") else None)
    for peer in ("clingo", "nemo"):
        if entry["runs"].get(peer, {}).get("ok"):
            counts[peer] = {r: runs[peer][-1].json().get(r, 0) for r in translated["outputs"]}
    entry["counts"] = counts
    entry["counts_agree"] = all(c == counts["polygraph"] for c in counts.values()) if len(counts) > 1 else None
    entry["eval"] = in_process(program, repeat, limit)
    return entry


def _summary(done: list[Run], limit: float) -> dict:
    last = done[-1]
    if last.timed_out or last.code == STOPPED:
        return {"did_not_finish": limit, "peak_mib": last.peak_mib}
    if last.code != 0:
        return {"failed": last.last_words()[0][:120], "peak_mib": last.peak_mib}
    peaks = [r.peak_mib for r in done if r.peak_mib is not None]
    return {"ok": True, "seconds": median(r.seconds for r in done), "peak_mib": max(peaks) if peaks else None,
            "runs": [round(r.seconds, 3) for r in done]}


def in_process(path: Path, repeat: int, limit: float) -> dict:
    """The program loaded once; ``evaluate`` alone under boolean and why (the circuit), alternately."""
    load, program = timings(lambda: load_program(path), 1, gc_off=False)
    seconds: dict[str, list[float]] = {"boolean": [], "why": []}
    try:
        for _ in range(repeat):
            for semiring, done in seconds.items():
                done.extend(timings(lambda: evaluate(program, semiring, cap=8, timeout=limit), 1, gc_off=False)[0])
    except PolygraphError as error:
        return {"load": load[0], "failed": str(error)[:120]}
    return {"load": load[0], **{s: median(done) for s, done in seconds.items()}}


# --- printing ------------------------------------------------------------------------------------

def _s(entry: dict, variant: str) -> str:
    figures = entry.get("runs", {}).get(variant)
    if figures is None:
        return "skipped" if variant in entry.get("skipped", {}) else "-"
    if "did_not_finish" in figures:
        return f"did not finish in {figures['did_not_finish']:g} s"
    return "failed" if "failed" in figures else f"{figures['seconds']:.2f}"


def _of(entry: dict, variant: str, key: str) -> float | None:
    return entry.get("runs", {}).get(variant, {}).get(key)


def _x(value: float) -> str:
    return "-" if value != value else f"{value:.2f}x"


def report(entries: list[dict], out: Callable[[str], None]) -> None:
    rows = []
    for e in entries:
        b, w, ev = _of(e, "boolean", "seconds"), _of(e, "why", "seconds"), e.get("eval", {})
        bp, wp = _of(e, "boolean", "peak_mib"), _of(e, "why", "peak_mib")
        closure = f"{e['closure']:,}" if "closure" in e else "skipped" if "all" in e["skipped"] else "-"
        dd = _of(e, "duckdb", "seconds")
        rows.append([e["workload"], closure, _s(e, "boolean"), _s(e, "why"),
                     _x(ratio(w, b)), f"{bp:,.0f}" if bp else "-", f"{wp:,.0f}" if wp else "-", _x(ratio(wp, bp)),
                     *(f"{ev[k]:.2f}" if k in ev else "-" for k in ("boolean", "why")),
                     _x(ratio(ev.get("why"), ev.get("boolean"))), _s(e, "why-labels"), _s(e, "clingo"),
                     _s(e, "nemo"), _x(ratio(b, _of(e, "clingo", "seconds"))), _x(ratio(b, _of(e, "nemo", "seconds"))),
                     _s(e, "duckdb"), _x(ratio(dd, _of(e, "nemo", "seconds"))),
                     _x(ratio(min(x for x in (b, dd) if x is not None) if b is not None else None,
                              _of(e, "nemo", "seconds")))])
    out("")
    out("whole processes, median seconds and peak RSS (MiB); eval: evaluate() alone in this process, median seconds")
    print_table(["workload", "closure facts", "boolean s", "why s", "why/boolean", "boolean MB", "why MB",
                 "peak ratio", "eval bool s", "eval why s", "eval why/bool", "why-labels s", "clingo s", "nemo s",
                 "boolean/clingo", "boolean/nemo", "duckdb s", "duckdb/nemo", "best/nemo"], rows, out, indent="  ")
    out("")
    for e in entries:
        if "runs" not in e:
            out(f"  {e['workload']}: " + "; ".join(f"{v}" for v in e["skipped"].values()))
            continue
        labels = e["runs"].get("why-labels", {})
        peak = (f"peak {labels['peak_mib']:,.0f} MB" if labels.get("peak_mib") else "peak unknown") \
            + (" when stopped" if "did_not_finish" in labels else "")
        notes = [f"why-labels {_s(e, 'why-labels')}{' s' if labels.get('ok') else ''} ({peak}"
                 + (", same output" if e.get("labels_same") else ", output differs" if e.get("labels_same") is False
                    else "") + ")"]
        if e.get("same_output") is not None:
            notes.append("boolean and why outputs identical" if e["same_output"] else "boolean and why outputs DIFFER")
        if e.get("duckdb_same") is not None:
            notes.append("boolean and duckdb outputs identical" if e["duckdb_same"]
                         else "boolean and duckdb outputs DIFFER")
        if e.get("counts_agree") is not None:
            notes.append("counts agree" if e["counts_agree"] else f"counts MISMATCH: {e['counts']}")
        notes += [f"{k}: {v}" for k, v in e.get("skipped", {}).items()]
        notes += [f"{k}: {v['failed']}" for k, v in e["runs"].items() if "failed" in v]
        if "failed" in e.get("eval", {}):
            notes.append(f"in-process eval: {e['eval']['failed']}")
        out(f"  {e['workload']} ({e['what']}): " + "; ".join(notes))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a minute or two) and a 60 s limit")
    parser.add_argument("--repeat", type=int, default=3, help="rounds of the alternated variants (medians)")
    parser.add_argument("--limit", type=float, default=None, metavar="SECONDS",
                        help="stop a process after SECONDS (default 300; 60 with --quick)")
    parser.add_argument("--workloads", nargs="+", default=["random", "random-cyclic", "grid", "same-generation",
                                                            "go-ro"],
                        choices=["random", "random-cyclic", "grid", "same-generation", "go-ro"])
    parser.add_argument("--nodes", type=int, help="random: nodes (default 20,000; 2,000 with --quick)")
    parser.add_argument("--edges", type=int, help="random: edges a < b (default 24,000; 2,400 with --quick)")
    parser.add_argument("--cyclic-nodes", type=int, help="random-cyclic: nodes (default 700; 200 with --quick)")
    parser.add_argument("--cyclic-edges", type=int, help="random-cyclic: edges (default 2,100; 600 with --quick)")
    parser.add_argument("--grid", type=int, help="grid: side (default 50; 20 with --quick)")
    parser.add_argument("--depth", type=int, help="same-generation: depth of the tree (default 9; 7 with --quick)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random graphs")
    parser.add_argument("--data", type=Path, help="the GO slice's folder (default: $POLYGRAPH_DATA/go-pombase, "
                                                  "else ../shared/data/go-pombase)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the figures as JSON to FILE")
    parser.add_argument("--skip", nargs="+", default=[], choices=[v for v in VARIANTS if v != "boolean"],
                        metavar="VARIANT", help="variants not to run (reported as skipped): why, why-labels, "
                                                "clingo, nemo")
    args = parser.parse_args(argv)
    defaults = dict(nodes=(20_000, 2_000), edges=(24_000, 2_400), cyclic_nodes=(700, 200),
                    cyclic_edges=(2_100, 600), grid=(50, 20), depth=(9, 7), limit=(300, 60))
    for key, (full, quick) in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, quick if args.quick else full)
    skipped = {k: v for k, v in peers().items() if v}
    skipped.update({variant: "--skip" for variant in args.skip})
    compiled_bytecode()
    for peer, why in skipped.items():
        print(f"{peer}: skipped: {why}")
    entries = []
    with tempfile.TemporaryDirectory(prefix="polygraph-provenance-") as tmp:
        for name, program, what in workloads(args, Path(tmp), print):
            if program is None:
                entries.append({"workload": name, "what": what, "skipped": {"all": what}})
                continue
            entry = measure_workload(name, program, what, skipped, args.repeat, args.limit)
            print(f"  {name}: {entry.get('closure', 0):,} closure facts; "
                  + ", ".join(f"{v} {_s(entry, v)}" + (" s" if _of(entry, v, "ok") else "") for v in VARIANTS),
                  flush=True)
            entries.append(entry)
    report(entries, print)
    if args.json:
        args.json.write_text(json.dumps({"options": {k: str(v) if isinstance(v, Path) else v
                                                     for k, v in vars(args).items()}, "workloads": entries},
                                        indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
