"""Benchmark: a graph file's build with capped labels and with witness labels, against the Boolean
closure of the same program, on the synthetic graph's copies with and without hubs.

Each variant is a child process of its own (its peak RSS its own), alternated within each round:

- ``boolean``: the build's program (inputs loaded and compiled, RO rules) evaluated under the
  Boolean semiring, nothing written: the closure's price;
- ``capped``: ``polygraph build -o G.graph`` (the Python engine: a semi-naive fixpoint over capped
  labels, then the derivations of every capped fact found again from the stored rules);
- ``witness``: ``polygraph build --labels witness -o G.graph`` (the Boolean closure with one gate
  per derivation, one support set per fact, the gates of every inexact fact stored as the circuit);
- ``duckdb-capped`` and ``duckdb-witness``: the same labels built by DuckDB into a graph folder
  (``build --engine duckdb --tables``; witness labels set at a time, engines/sql_witness.py);
- ``duckdb-boolean``: the build's program's Boolean closure on DuckDB (engines/duckdb_eval.py,
  the engine ``eval --engine duckdb`` runs), nothing written: the closure's price on the engine
  that builds the duckdb variants (their ratio to it is printed too).

For each graph, the variants' what-if verdicts under trust-all for the retracted sources are
checked to agree (the circuit settles every verdict a witness cannot).

    python -m benchmarks.witness_builds [--copies 20] [--hubs 0 40] [--hub-cycles keep|break]
        [--rounds 1] [--before CHECKOUT [--before-variant capped]]
        [--variants boolean capped witness duckdb-capped duckdb-witness duckdb-boolean] [--memory-limit 2GB]
        [--timeout SECONDS]

Hubs are shared on both sides (``generate --hub-sides both``); ``--hub-cycles break`` leaves out
of the sharing the edges among hubs that would close a part_of cycle.  ``--before`` adds the
build of another checkout (a git worktree of an earlier commit), run from its folder, as
``before``: the variant ``--before-variant`` names (capped unless said).  ``--timeout``: a
variant still running then is stopped; a variant stopped or failed (out of memory under
``--memory-limit``) is reported as such, with what it said last, and the others go on.

Figures go to docs/bench/current.md, as printed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.harness import run

_BOOLEAN = """
import sys, time
from polygraph_logic.graph.build import prepare_build
from polygraph_logic.datalog.evaluate import evaluate
from polygraph_logic.resources import rule_file
p = prepare_build(sys.argv[1], sys.argv[2], [str(rule_file("ro"))], 8)
started = time.perf_counter()
model = evaluate(p.program, "boolean")
print(sum(len(model.facts(r)) for r in model.relations()))
"""

_DUCKDB_BOOLEAN = """
import sys
from polygraph_logic.graph.build import prepare_build
from polygraph_logic.engines.duckdb_eval import boolean_closure
from polygraph_logic.resources import rule_file
p = prepare_build(sys.argv[1], sys.argv[2], [str(rule_file("ro"))], 8)
with boolean_closure(p.program, sys.argv[3] or None) as tables:
    print(sum(tables.size(r) for r in tables.plan.relations))
"""

_VERDICTS = """
import sys, json
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.query.whatif import Deletion, what_if
sources = [line.strip() for line in open(sys.argv[2]) if line.strip()]
with Graph(sys.argv[1]) as graph:
    print(json.dumps(sorted(what_if(graph, Deletion(sources=tuple(sources)), "trust-all").dead)))
"""


def _generate(folder: Path, copies: int, hubs: int, cycles: str = "keep") -> Path:
    out = folder / f"x{copies}-h{hubs}"
    if not (out / "assertions.jsonl").exists():
        argv = ["generate", "--copies", str(copies), "-o", str(out)]
        if hubs:
            argv += ["--hubs", str(hubs), "--hub-sides", "both", "--hub-cycles", cycles]
        subprocess.run([sys.executable, "-m", "polygraph_logic", *argv], check=True, capture_output=True)
    return out


VARIANTS = ("boolean", "capped", "witness", "duckdb-capped", "duckdb-witness", "duckdb-boolean")


def _variant(name: str, inputs: Path, graph: Path, before: Path | None, limit: str | None = None,
             before_variant: str = "capped", timeout: float | None = None) -> tuple[float, float, str] | str:
    """One whole process: one of VARIANTS or ``before`` (the variant ``before_variant`` of the
    checkout ``before``, run from its folder); what it said when it failed or ran past ``timeout``."""
    a, r = str(inputs / "assertions.jsonl"), str(inputs / "receipts.jsonl")
    kind = before_variant if name == "before" else name
    if kind == "boolean":
        argv = [sys.executable, "-c", _BOOLEAN, a, r]
    elif kind == "duckdb-boolean":
        argv = [sys.executable, "-c", _DUCKDB_BOOLEAN, a, r, limit or ""]
    elif kind.startswith("duckdb-"):
        import shutil
        shutil.rmtree(graph, ignore_errors=True)
        argv = [sys.executable, "-m", "polygraph_logic", "build", "--assertions", a, "--receipts", r, "--rules", "ro",
                "--engine", "duckdb", "--tables", str(graph), "--labels", kind.split("-", 1)[1]]
        argv += ["--memory-limit", limit] if limit else []
    else:
        graph.unlink(missing_ok=True)
        argv = [sys.executable, "-m", "polygraph_logic", "build", "--assertions", a, "--receipts", r,
                "--rules", "ro", "-o", str(graph)] + (["--labels", kind] if kind == "witness" else [])
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = run(argv, cwd=before if name == "before" else Path.cwd(), env=env, timeout=timeout)
    if done.timed_out:
        return f"did not finish in {timeout:g} s"
    if done.code:
        return f"failed: {' '.join(done.last_words(1))[:200]}"
    said = done.stdout.strip().splitlines() if done.stdout else []
    return done.seconds, done.peak_mib or 0.0, said[-1] if said else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=20)
    parser.add_argument("--hubs", type=int, nargs="+", default=[0, 40])
    parser.add_argument("--hub-cycles", choices=("keep", "break"), default="keep",
                        help="keep the part_of cycles among the hubs (default) or break them (generate --hub-cycles)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--before", type=Path, help="a checkout whose build runs too (as 'before')")
    parser.add_argument("--before-variant", choices=VARIANTS, default="capped",
                        help="the variant --before runs (default: capped)")
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS[:3]))
    parser.add_argument("--memory-limit", help="DuckDB's memory limit for the duckdb variants")
    parser.add_argument("--timeout", type=float, help="stop a variant still running after this many seconds")
    args = parser.parse_args(argv)
    variants = tuple(dict.fromkeys(["boolean", *args.variants])) + (("before",) if args.before else ())
    with tempfile.TemporaryDirectory(prefix="witness-bench-") as tmp:
        folder = Path(tmp)
        rows = []
        for hubs in args.hubs:
            inputs = _generate(folder, args.copies, hubs, args.hub_cycles)
            runs: dict[str, list] = {v: [] for v in variants}
            for round_ in range(args.rounds):
                for name in variants:
                    found = _variant(name, inputs, _graph(folder, name, hubs), args.before, args.memory_limit,
                                     args.before_variant, args.timeout)
                    runs[name].append(found)
                    said = found if isinstance(found, str) else f"{found[0]:.2f} s, {found[1]:.0f} MB"
                    print(f"  x{args.copies} {hubs} hubs round {round_ + 1} {name}: {said}", flush=True)
            best = {name: min((r for r in runs[name] if not isinstance(r, str)), default=runs[name][0])
                    for name in variants}
            built = [name for name in variants if name not in ("boolean", "duckdb-boolean")]
            verdicts = {name: subprocess.run([sys.executable, "-c", _VERDICTS, str(_graph(folder, name, hubs)),
                                              str(inputs / "retracted.txt")], check=True, capture_output=True,
                                             text=True).stdout for name in built if not isinstance(best[name], str)}
            agree = len(set(verdicts.values())) <= 1
            dead = len(json.loads(next(iter(verdicts.values())))) if verdicts else None
            rows.append((hubs, best, agree, dead))
        cycles = f", hub cycles {args.hub_cycles}" if any(args.hubs) else ""
        print(f"\nx{args.copies}, builds (RO rules{cycles}; boolean: the Python engine's closure, nothing written), "
              f"best of {args.rounds}: seconds, peak MB")
        same = [name for name in built if name.startswith("duckdb-")] if "duckdb-boolean" in variants else []
        print(f"  {'hubs':>4}  " + "  ".join(f"{name:>15}" for name in variants) + "  "
              + "  ".join(f"{name + '/bool':>15}" for name in built)
              + "".join(f"  {name + '/duckdb-boolean':>29}" for name in same)
              + "  verdicts (trust-all, the retracted sources)")
        for hubs, best, agree, dead in rows:
            b = best["boolean"]
            cells = "  ".join(f"{'stopped/failed':>15}" if isinstance(best[name], str) else
                              f"{best[name][0]:8.2f} s {best[name][1]:4.0f}" for name in variants)
            ratios = "  ".join(f"{'-':>15}" if isinstance(best[name], str) or isinstance(b, str) else
                               f"{best[name][0] / b[0]:14.2f}x" for name in built)
            db = best.get("duckdb-boolean")
            ratios += "".join(f"  {'-':>29}" if isinstance(best[name], str) or isinstance(db, str) else
                              f"  {best[name][0] / db[0]:28.2f}x" for name in same)
            said = (f"{'agree' if agree else 'DIFFER'} ({dead:,} dead)" if dead is not None else "no graph built")
            counts = {best[name][2] for name in ("boolean", "duckdb-boolean") if name in best
                      and not isinstance(best[name], str)}
            if "duckdb-boolean" in best:
                said += f"; closures {'agree (' + next(iter(counts)) + ' facts)' if len(counts) == 1 else 'DIFFER'}"
            print(f"  {hubs:>4}  {cells}  {ratios}  {said}")
    return 0


def _graph(folder: Path, name: str, hubs: int) -> Path:
    """Where variant ``name`` writes its graph (a folder for the duckdb variants)."""
    return folder / (f"{name}-{hubs}" if name.startswith("duckdb-") else f"{name}-{hubs}.graph")


if __name__ == "__main__":
    raise SystemExit(main())
