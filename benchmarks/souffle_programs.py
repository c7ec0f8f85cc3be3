"""Benchmark: recursive Soufflé programs, with existential negation or arithmetic, as whole processes.

Nine generated programs in Soufflé's own form (a ``.dl`` file with ``.decl``, ``.input``
and ``.output``, and a folder of tab-separated ``.facts``), each run as
``polygraph eval PROG.dl -F FACTS -D OUT --semiring boolean``:

  blocked     reachability through unblocked nodes: ``r(x, z) :- r(x, y), e(y, z), !blocked(z, _)``
              and ``unreach(x) :- node(x), !reach(x)``
  same_gen    same generation with negations inside the recursion, and ``lonely(x) :- parent(x, _), !sg(x, _)``
  points_to   a points-to analysis (assign, load, store) with ``!cast(v, _)`` in its recursive rules
  nested      nested ``!a(x, _)``, ``!b(_, z, _)``, ``!p(_, x)`` patterns over large relations
  independent a chain recursion of n rounds, one fact each, whose rule has a body part
              sharing no variable with the rest (``a(x) :- b(x), c(y), d(y)``), the shape of
              Soufflé's independent_body3
  catalan     naturals up to a limit, binomial coefficients by ``choose(n + 1, k + 1, v1 + v2) :-
              choose(n, k, v1), choose(n, k + 1, v2)`` and ``catalan(n, v) :- choose(2 * n, n, c),
              naturals(v), v = c / (n + 1)``: Soufflé's example catalan with its limit as n
  amicable    numbers up to n, their factors by ``num(x), num(f), f <= x / 2, x % f = 0``, the
              sum of each one's factors and the amicable pairs: Soufflé's example amicable
  c_points_to a points-to analysis for C over symbols (direct flows, loads, stores, objects
              reachable through memory, escaping pointers), the shape of Soufflé's example
              hmmer, on a generated program of n variables
  queens      n queens as lists of records, with the relations on squares inlined into the
              recursive rule (a body of sixty steps): Soufflé's inline_nqueens, n the board's side

Each program runs at two sizes, measured side by side in one run:

- small: polygraph against pyDatalog (the bridge, polygraph_logic/datalog/pydatalog_engine.py,
  in its own process, reading the same files), outputs compared; pyDatalog evaluates top
  down and takes minutes on these programs, so its size is small;
- large: polygraph alone, and with ``--before CHECKOUT`` the polygraph_logic of that checkout
  too (an earlier commit), alternately, with its outputs compared to today's.

Times are printed, never asserted; the exit status is 1 only if two engines' outputs differ.

    python -m benchmarks.souffle_programs [--before CHECKOUT] [--repeat 3] [--quick]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path
from typing import Callable

from benchmarks.harness import Polygraph, print_table, ratio

# --- the programs ------------------------------------------------------------------------

BLOCKED = """\
.decl e(x: number, y: number)
.input e
.decl blocked(x: number, why: number)
.input blocked
.decl start(x: number)
.input start
.decl node(x: number)
node(x) :- e(x, _).
node(y) :- e(_, y).
.decl r(x: number, y: number)
.output r
r(x, y) :- start(x), e(x, y), !blocked(y, _).
r(x, z) :- r(x, y), e(y, z), !blocked(z, _).
.decl reach(x: number)
reach(x) :- start(x).
reach(y) :- reach(x), e(x, y), !blocked(y, _).
.decl unreach(x: number)
.output unreach
unreach(x) :- node(x), !reach(x).
"""

SAME_GEN = """\
.decl parent(c: number, p: number)
.input parent
.decl odd(x: number)
.input odd
.decl sg(x: number, y: number)
.output sg
sg(x, y) :- parent(x, p), parent(y, p), x != y, !odd(x).
sg(x, y) :- parent(x, a), sg(a, b), parent(y, b), !odd(y), !parent(y, x).
.decl lonely(x: number)
.output lonely
lonely(x) :- parent(x, _), !sg(x, _).
"""

POINTS_TO = """\
.decl alloc(v: number, h: number)
.input alloc
.decl assign(to: number, from: number)
.input assign
.decl load(to: number, base: number, f: number)
.input load
.decl store(base: number, f: number, from: number)
.input store
.decl cast(v: number, t: number)
.input cast
.decl vpt(v: number, h: number)
.output vpt
vpt(v, h) :- alloc(v, h).
vpt(v, h) :- assign(v, w), vpt(w, h), !cast(v, _).
vpt(v, h) :- load(v, b, f), vpt(b, hb), hpt(hb, f, h).
.decl hpt(h: number, f: number, to: number)
hpt(hb, f, h) :- store(a, f, v), vpt(a, hb), vpt(v, h), !cast(a, _).
.decl unused(h: number)
.output unused
unused(h) :- alloc(_, h), !hpt(_, _, h).
"""

NESTED = """\
.decl a(x: number, y: number)
.input a
.decl b(x: number, y: number, z: number)
.input b
.decl c(x: number)
.input c
.decl p(x: number, y: number)
.output p
p(x, y) :- a(x, y), !b(y, _, _), !c(x).
p(x, z) :- p(x, y), a(y, z), !b(_, z, _), !b(z, _, 3).
.decl q(x: number)
.output q
q(x) :- a(x, _), !p(x, _), !p(_, x).
"""

INDEPENDENT = """\
.decl start(x: number)
.input start
.decl limit(n: number)
.input limit
.decl c(x: number)
.input c
.decl d(x: number)
.input d
.decl a(x: number)
.decl b(x: number)
b(x) :- start(x).
a(x) :- b(x), c(y), d(y).
b(x + 1) :- a(x), limit(n), x < n.
.decl low(x: number)
.output low
low(x) :- a(x), x % 1000 = 7.
"""


CATALAN = """\
.decl lim(n: number)
.input lim
.decl naturals(n: number)
naturals(0).
naturals(n + 1) :- naturals(n), n < s, lim(s).
.decl choose(n: number, k: number, v: number)
choose(n, n, 1) :- naturals(n).
choose(n, (n - k), v) :- choose(n, k, v).
choose(n + 1, k + 1, v1 + v2) :- choose(n, k, v1), choose(n, k + 1, v2).
.decl catalan(n: number, v: number)
.output catalan
catalan(n, v) :- choose(2 * n, n, c), naturals(v), v = c / (n + 1).
"""

AMICABLE = """\
.decl lim(n: number)
.input lim
.decl num(x: number)
num(1).
num(x + 1) :- num(x), x < l, lim(l).
.decl factor(x: number, f: number)
factor(x, f) :- num(x), num(f), f <= x / 2, x % f = 0.
.decl factor_sum(x: number, fs: number)
factor_sum(x, f) :- num(x), f = sum i : factor(x, i).
.decl amicable(a: number, b: number)
.output amicable
amicable(a, b) :- factor_sum(a, b), factor_sum(b, a), a < b.
"""

C_POINTS_TO = """\
.type Var <: symbol
.type Obj <: symbol
.decl DirectFlow(v: Var, w: Var)
.input DirectFlow
.decl Load(v: Var, w: Var)
.input Load
.decl Store(v: Var, w: Var)
.input Store
.decl ExtReturn(v: Var, w: Var)
.input ExtReturn
.decl EscapePtr(v: Var)
.input EscapePtr
.decl HeapAlloc(v: Var, o: Obj)
.input HeapAlloc
.decl StackAlloc(v: Var, o: Obj)
.input StackAlloc
.decl LptrVar(v: Var)
.decl IsPtr(v: Var, o: Obj)
.decl Memory(o1: Obj, o2: Obj)
.decl IsReachable(v: Var, o: Obj)
.decl CFormat(o: Obj)
.decl CPtrLoad(v1: Var, v2: Var)
.output CPtrLoad
.decl CPtrStore(v1: Var, v2: Var)
.output CPtrStore
LptrVar(v) :- StackAlloc(v, _).
LptrVar(v) :- HeapAlloc(v, _).
LptrVar(v) :- Load(_, v).
LptrVar(v) :- Store(_, v).
LptrVar(v) :- DirectFlow(v, w), LptrVar(w).
LptrVar(v) :- DirectFlow(w, v), LptrVar(w).
IsPtr(v, o) :- HeapAlloc(v, o).
IsPtr(v, o) :- StackAlloc(v, o).
IsPtr(dest, o) :- DirectFlow(src, dest), IsPtr(src, o).
IsPtr(dest, o) :- Load(dest, addr), IsPtr(addr, o1), Memory(o1, o).
IsPtr(v, o) :- ExtReturn(arg, v), IsReachable(arg, o).
Memory(o1, o2) :- Store(src, addr), IsPtr(src, o2), IsPtr(addr, o1).
IsReachable(v, o) :- IsPtr(v, o).
IsReachable(v, o) :- Memory(o1, o), IsReachable(v, o1).
CFormat(o) :- EscapePtr(v), IsReachable(v, o).
IsPtr(v, "ttt_obj") :- ExtReturn(_, v).
CFormat("ttt_obj") :- ExtReturn(_, _).
Memory("ttt_obj", "ttt_obj") :- ExtReturn(_, _).
CPtrLoad(dest, addr) :- Load(dest, addr), IsPtr(addr, o), CFormat(o), LptrVar(dest).
CPtrStore(src, addr) :- Store(src, addr), IsPtr(addr, o), CFormat(o), LptrVar(src).
CFormat(o) :- CPtrLoad(_, v), IsPtr(v, o).
CFormat(o) :- CPtrStore(_, v), IsPtr(v, o).
CFormat(o) :- Load(v, addr), IsPtr(addr, o), !LptrVar(v).
CFormat(o) :- Store(v, addr), IsPtr(addr, o), !LptrVar(v).
"""

QUEENS = """\
.decl size(n: number)
.input size
.decl solution(qs: QueenList)
.output solution
solution(qs) :- compatible(qs, s), size(s).
.decl up_to_size(x: number)
up_to_size(1).
up_to_size(x + 1) :- up_to_size(x), !size(x).
.type Position = [x: number, y: number]
.decl on_board(p: Position) inline
on_board([x, y]) :- up_to_size(x), up_to_size(y).
.type QueenList = [p: Position, qs: QueenList]
.decl non_diagonals(p: Position, q: Position) inline
non_diagonals([px, py], [qx, qy]) :- px - qx != py - qy, qx - px != py - qy, on_board([px, py]), on_board([qx, qy]).
.decl sympathetic(p: Position, q: Position) inline
sympathetic(p, q) :- non_diagonals(p, q), px != qx, py != qy, p = [px, py], q = [qx, qy].
.decl compatible(qs: QueenList, n: number)
compatible([p, nil], 1) :- on_board(p).
compatible([p, [head, tail]], n + 1) :- sympathetic(p, head), compatible([p, tail], n), compatible([head, tail], n),
    p = [px, py], head = [hx, hy], px > hx.
"""


def blocked_facts(n: int, rnd: random.Random) -> dict[str, set]:
    nodes = max(n // 5, 10)
    return {"e": {(rnd.randrange(nodes), rnd.randrange(nodes)) for _ in range(n)},
            "blocked": {(rnd.randrange(nodes), rnd.randrange(50)) for _ in range(nodes)},
            "start": {(i,) for i in range(5)}}


def same_gen_facts(n: int, rnd: random.Random) -> dict[str, set]:
    parent, level, nxt = set(), list(range(50)), 50  # a forest, each level of at most 2,000
    while nxt < n:
        children = list(range(nxt, min(n, nxt + 2000)))
        parent |= {(c, rnd.choice(level)) for c in children}
        level, nxt = children, nxt + len(children)
    return {"parent": parent, "odd": {(x,) for x in range(0, n, 7)}}


def points_to_facts(n: int, rnd: random.Random) -> dict[str, set]:
    v, h, f = max(n // 4, 10), max(n // 20, 2), 20
    return {"alloc": {(rnd.randrange(v), rnd.randrange(h)) for _ in range(v // 2)},
            "assign": {(rnd.randrange(v), rnd.randrange(v)) for _ in range(n // 2)},
            "load": {(rnd.randrange(v), rnd.randrange(v), rnd.randrange(f)) for _ in range(n // 8)},
            "store": {(rnd.randrange(v), rnd.randrange(f), rnd.randrange(v)) for _ in range(n // 8)},
            "cast": {(rnd.randrange(v), rnd.randrange(5)) for _ in range(v // 3)}}


def nested_facts(n: int, rnd: random.Random) -> dict[str, set]:
    m = max(n // 5, 10)
    return {"a": {(rnd.randrange(m), rnd.randrange(m)) for _ in range(n)},
            "b": {(rnd.randrange(m), rnd.randrange(m), rnd.randrange(10)) for _ in range(n)},
            "c": {(rnd.randrange(m),) for _ in range(m // 2)}}


def independent_facts(n: int, rnd: random.Random) -> dict[str, set]:
    c = {(rnd.randrange(4 * n),) for _ in range(2_000)}
    return {"start": {(0,)}, "limit": {(n,)}, "c": c,
            "d": {(rnd.randrange(4 * n),) for _ in range(2_000)} | {max(c)}}


def limit_facts(n: int, rnd: random.Random) -> dict[str, set]:
    return {"lim": {(n,)}}


def c_points_to_facts(n: int, rnd: random.Random) -> dict[str, set]:
    """A C program of n variables in functions of 40: direct flows, loads and stores within a
    function, one flow in 400 from another function (a call), a stack object or two per
    function and a heap object in every fourth, returns from external calls and escaping
    pointers (random flows across the whole program make every variable point to everything)."""
    size = 40
    functions = max(n // size, 1)

    def local(f: int) -> str:
        return f"v{f * size + rnd.randrange(size)}"

    def within(count: int) -> set:
        return {(local(f), local(f)) for f in (rnd.randrange(functions) for _ in range(count))}

    calls = {(local(rnd.randrange(functions)), local(rnd.randrange(functions))) for _ in range(n // 400)}
    return {"DirectFlow": within(n) | calls,
            "Load": within(n // 3),
            "Store": within(n // 20),
            "ExtReturn": within(n // 10),
            "EscapePtr": {(local(rnd.randrange(functions)),) for _ in range(n // 12)},
            "HeapAlloc": {(local(f), f"heap{f}") for f in range(0, functions, 4)},
            "StackAlloc": {(local(f), f"stack{f}.{i}") for f in range(functions) for i in range(rnd.randrange(1, 3))}}


# name -> (program text, facts(n, random), small n (with pyDatalog; None: not run with pyDatalog,
# which does not finish it, even at 100 facts, in 600 s, or cannot read it), large n, what it is)
PROGRAMS: dict[str, tuple[str, Callable, int, int, str]] = {
    "blocked": (BLOCKED, blocked_facts, 1_000, 100_000, "reachability with !blocked(y, _), unreach by !reach(x)"),
    "same_gen": (SAME_GEN, same_gen_facts, 600, 20_000, "same generation, negations in the recursion"),
    "points_to": (POINTS_TO, points_to_facts, None, 4_000, "points-to with !cast(v, _) in the recursion"),
    "nested": (NESTED, nested_facts, 5_000, 100_000, "nested !b(_, z, _), !p(x, _), !p(_, x)"),
    "independent": (INDEPENDENT, independent_facts, 200, 200_000, "n rounds of one fact, an independent c(y), d(y)"),
    "catalan": (CATALAN, limit_facts, None, 200, "binomials to n, catalan by v = c / (n + 1)"),
    "amicable": (AMICABLE, limit_facts, None, 3_000, "factors by f <= x / 2, x % f = 0, their sums"),
    "c_points_to": (C_POINTS_TO, c_points_to_facts, None, 6_000, "C points-to over symbols (hmmer's shape)"),
    "queens": (QUEENS, lambda n, rnd: {"size": {(n,)}}, None, 6, "n queens, records, an inlined body"),
}


QUICK = {"catalan": 60, "amicable": 600, "queens": 5}  # --quick sizes where a tenth is not one


def write_program(folder: Path, name: str, n: int, seed: int = 0) -> tuple[Path, Path, int]:
    """Writes PROG.dl and facts/REL.facts for ``name`` at size ``n``; returns the program, the
    facts folder and the number of facts."""
    text, make, *_ = PROGRAMS[name]
    folder.mkdir(parents=True, exist_ok=True)
    facts = folder / "facts"
    facts.mkdir(exist_ok=True)
    count = 0
    for relation, rows in make(n, random.Random(seed)).items():
        with open(facts / f"{relation}.facts", "w", encoding="utf-8") as out:
            out.writelines("\t".join(map(str, row)) + "\n" for row in sorted(rows))
        count += len(rows)
    program = folder / f"{name}.dl"
    program.write_text(text, encoding="utf-8")
    return program, facts, count


# --- the engines ----------------------------------------------------------------------------

# pyDatalog's side: the same files through the same front door, the .output relations written
# as REL.csv into the folder given (rows sorted as text: compared as sets of lines)
PYDATALOG_PROCESS = """
import sys
from pathlib import Path
from polygraph_logic.datalog.program import load_program
from polygraph_logic.datalog.pydatalog_engine import closure
program = load_program(sys.argv[1], fact_dir=sys.argv[2])
rows = closure(program)
out = Path(sys.argv[3])
out.mkdir(parents=True, exist_ok=True)
for directive in program.declarations.io:
    if directive.kind == "output":
        lines = sorted("\\t".join(map(str, row)) for row in rows.get(directive.relation, ()))
        (out / f"{directive.relation}.csv").write_text("".join(line + "\\n" for line in lines), encoding="utf-8")
"""


def outputs(folder: Path) -> dict[str, list[str]]:
    """Every REL.csv of a folder as its sorted lines."""
    return {path.stem: sorted(path.read_text(encoding="utf-8").splitlines()) for path in sorted(folder.glob("*.csv"))}


def measure_one(polygraph: Polygraph, before: Polygraph | None, pydatalog: bool, name: str, n: int,
                folder: Path, repeat: int, say: Callable[[dict], None] = lambda entry: None) -> dict:
    """One program at one size: polygraph (and the earlier checkout, and pyDatalog) with outputs compared."""
    program, facts, count = write_program(folder / f"{name}-{n}", name, n)
    out = folder / f"{name}-{n}" / "ours"
    entry: dict = {"program": name, "n": n, "facts": count}
    timings = {"ours": [], "before": []}
    for _ in range(repeat):  # alternately, so that a busy moment of the machine hits both
        timings["ours"].append(polygraph("eval", program, "-F", facts, "-D", out, "--semiring", "boolean")
                               .check(f"polygraph eval {name}"))
        if before is not None:
            timings["before"].append(before("eval", program, "-F", facts, "-D", out.with_name("before"),
                                            "--semiring", "boolean"))
    entry["ours"] = _summary(timings["ours"])
    mine = outputs(out)
    entry["output_rows"] = sum(len(rows) for rows in mine.values())
    if before is not None:
        entry["before"] = _summary(timings["before"])
        if "failed" not in entry["before"]:
            entry["before_agree"] = outputs(out.with_name("before")) == mine
    if pydatalog:
        theirs = _summary([polygraph.python(PYDATALOG_PROCESS, program, facts, out.with_name("pydatalog"))])
        entry["pydatalog"] = theirs
        if "failed" not in theirs:
            entry["pydatalog_agree"] = outputs(out.with_name("pydatalog")) == mine
    say(entry)
    return entry


def _summary(runs) -> dict:
    finished = [r for r in runs if r.code == 0]
    if len(finished) < len(runs):
        failed = next(r for r in runs if r.code != 0)
        return {"failed": failed.last_words()[0], "seconds": failed.seconds}
    seconds = sorted(r.seconds for r in finished)
    return {"seconds": seconds[len(seconds) // 2], "best": seconds[0], "runs": [round(s, 2) for s in seconds]}


def measure(before: str | None = None, repeat: int = 3, quick: bool = False, timeout: float = 300,
            out: Callable[[str], None] = print) -> dict:
    """Runs every program at its small and its large size; prints the tables, returns the figures.
    A process running past ``timeout`` seconds is stopped and reported as not finished."""
    polygraph = Polygraph(timeout=timeout)
    earlier = Polygraph(before, timeout=timeout) if before else None
    figures: dict = {"code": polygraph.code(), "before": earlier.code() if earlier else None, "programs": []}
    out(f"measuring polygraph_logic from {figures['code']}"
        + (f" against {figures['before']} (--before)" if earlier else ""))
    with tempfile.TemporaryDirectory(prefix="polygraph-souffle-") as tmp:
        folder = Path(tmp)
        def say(entry: dict) -> None:
            out(f"  {entry['program']} ({entry['facts']:,} facts): ours {_seconds(entry['ours'])} s"
                + "".join(f", {k} {_seconds(entry[k])} s" for k in ("before", "pydatalog") if k in entry))

        for name, (_, _, small, large, what) in PROGRAMS.items():
            if quick:
                small, large = small and max(small // 4, 50), QUICK.get(name, max(large // 10, 100))
            if small is not None:
                figures["programs"].append({**measure_one(polygraph, None, True, name, small, folder, 1, say),
                                            "what": what})
            figures["programs"].append({**measure_one(polygraph, earlier, False, name, large, folder, repeat, say),
                                        "what": what})
    _print(figures, out)
    return figures


def _seconds(entry: dict | None) -> str:
    if entry is None:
        return "-"
    return f"failed ({entry['failed'][:60]})" if "failed" in entry else f"{entry['seconds']:.2f}"


def _print(figures: dict, out: Callable[[str], None]) -> None:
    out("")
    out("polygraph eval PROG.dl -F FACTS -D OUT --semiring boolean, whole processes, median seconds:")
    rows = []
    for e in figures["programs"]:
        ours = e["ours"]["seconds"]
        theirs = e.get("pydatalog") or e.get("before")
        column = "pyDatalog" if "pydatalog" in e else "before"
        agree = e.get("pydatalog_agree", e.get("before_agree"))
        rows.append([e["program"], f"{e['facts']:,}", f"{e['output_rows']:,}", f"{ours:.2f}",
                     f"{column} {_seconds(theirs)}" if theirs else "-",
                     f"{ratio(theirs.get('seconds'), ours):.1f}x" if theirs and "failed" not in theirs else "-",
                     "-" if agree is None else ("yes" if agree else "NO")])
    print_table(["program", "facts in", "rows out", "ours s", "other s", "other / ours", "same output"], rows, out,
                indent="  ")


def headline(figures: dict) -> list[tuple[str, str]]:
    """Returns (what, figure) rows for ``python -m benchmarks.run_all``'s headline table."""
    rows = []
    for e in figures.get("programs", []):
        for other, label in (("pydatalog", "pyDatalog"), ("before", "before")):
            theirs = e.get(other)
            if theirs is None:
                continue
            agree = e.get(f"{other}_agree")
            figure = (f"did not finish ({theirs['failed']})" if "failed" in theirs else
                      f"{ratio(theirs['seconds'], e['ours']['seconds']):.1f}x ({theirs['seconds']:.2f} s vs "
                      f"{e['ours']['seconds']:.2f} s; same output: {'yes' if agree else 'NO'})")
            rows.append((f"Soufflé program {e['program']}, {e['facts']:,} facts: {label} / ours", figure))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", metavar="CHECKOUT",
                        help="also time the polygraph_logic of this checkout (an earlier commit) on the large sizes")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each large program (median)")
    parser.add_argument("--quick", action="store_true", help="sizes a quarter (small) and a tenth (large, or QUICK)")
    parser.add_argument("--timeout", type=float, default=300, metavar="SECONDS", help="stop a process after SECONDS")
    args = parser.parse_args(argv)
    figures = measure(args.before, args.repeat, args.quick, args.timeout)
    agree = [e.get(k) for e in figures["programs"] for k in ("pydatalog_agree", "before_agree")]
    return 1 if any(a is False for a in agree) else 0


if __name__ == "__main__":
    sys.exit(main())
