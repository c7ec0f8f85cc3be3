"""Benchmark: what hub entities cost, the synthetic graph's copies sharing their busiest targets.

In the synthetic graph the copies are disjoint, so the closure grows with the number of copies.
A real graph has hubs (a cell compartment, an organ) that many entities are located in or part
of; two chains of the RO then relate every pair of a hub's neighbours:

    located_in ∘ inverse(located_in) -> spatially coextensive with (RO:0002379)
    has_part ∘ part_of               -> overlaps (RO:0002131)

``synthetic_copies.share_hubs`` (``generate --hubs``) makes the copies share the H busiest located_in / part_of targets of the
first copy.  Two series, each graph built by DuckDB writing the tables folder, each build a
child process of its own (its peak RSS its own), one after the other in this run:

- ``--hubs`` at ``--copies`` (default x40 with 0, 20, 40 and 80 hubs): facts, the two chains'
  edges, monomials, capped (inexact) labels and the derivations their circuit stores, seconds
  (the circuit's among them) and peak RSS, each against the disjoint graph, and a whole-process
  single-source what-if on the folder built;
- ``--copies-series`` at ``--series-hubs`` (default x10, x20, x40 with 20 hubs): how the chains'
  edges grow with the copies, as the exponent of a doubling (1: linear, 2: quadratic).

    python -m benchmarks.hubs [--copies 40] [--hubs 0 10 20 40] [--copies-series 10 20 40]
                              [--series-hubs 20] [--memory-limit SIZE] [--lazy]
                              [--hub-sides hub|both] [--hub-cycles keep|break]

``--hub-sides both`` shares each hub on both sides (edges into and out of it, as a graph merged
from many documents does); ``--hub-cycles break`` then leaves out of the sharing each edge among
hubs that would close a part_of cycle (``keep``, the default, keeps them: extraction noise).

With ``--lazy`` the two chains are declared ``.lazy`` (datalog/lazy/part.py): the build leaves them,
and what follows from them, to ``ask``; each row then adds a whole-process ``ask``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from pathlib import Path

from benchmarks.engines import child_run, write_inputs
from benchmarks.harness import run
from polygraph_logic.graph.tables.layout import table_path

#: the chains' conclusions, the predicates that grow with the square of a hub's neighbours
CHAINS = {"RO:0002379": "coextensive", "RO:0002131": "overlaps"}


def measure(copies: int, hubs: int, memory_limit: str | None, timeout: float | None = None,
            lazy: bool = False, sides: str = "hub", cycles: str = "keep") -> dict | str:
    """Builds the graph of ``copies`` sharing ``hubs`` (with ``lazy``: the two chains declared
    ``.lazy``) and counts what its folder holds; what stopped the build (a string) when it
    failed or ran past ``timeout`` seconds.  A lazy graph also reports a whole-process
    single-source what-if and an ``ask`` of the lazy overlaps of a hub's neighbour."""
    import duckdb  # duckdb is an optional extra
    with tempfile.TemporaryDirectory(prefix="polygraph-hubs-") as work:
        directory = Path(work)
        graph = write_inputs(directory, copies, hubs, sides, cycles)
        if lazy:
            (directory / "lazy.dl").write_text(LAZY)
        built = child_run(directory, "tables", 8, memory_limit, timeout)
        if isinstance(built, list):  # what the build said last
            return "; ".join(built)
        queries = _queries(directory, graph, lazy)
        facts = str(table_path(directory / "direct.tables", "facts")).replace("'", "''")
        derivations = str(table_path(directory / "direct.tables", "derivations")).replace("'", "''")
        # one scan of the facts file: its counts, and each chain's edges (an edge's args: [s, p, o])
        per_chain = "".join(f", count(*) FILTER (WHERE relation = 'edge' AND json_extract_string(args, '$[1]') = "
                            f"'{predicate}')" for predicate in CHAINS)
        con = duckdb.connect()
        total, edges, monomials, inexact, *chains = con.execute(
            f"SELECT count(*), count(*) FILTER (WHERE relation = 'edge'), sum(len(label)), "
            f"count(*) FILTER (WHERE NOT exact){per_chain} FROM read_parquet('{facts}')").fetchone()
        gates = con.execute(f"SELECT count(*) FROM read_parquet('{derivations}')").fetchone()[0]
        con.close()
    return {"copies": copies, "hubs": hubs, "assertions": len(graph.assertions), "facts": total, "edges": edges,
            "monomials": int(monomials), "inexact": inexact, **dict(zip(CHAINS.values(), chains)),
            "derivations": gates, "circuit": built["seconds"].get("circuit", 0.0),
            "seconds": built["total"], "evaluate": built["seconds"]["evaluate"], "rss_mb": built["rss_mb"],
            "rounds": len(built["rounds"]), "lazy": lazy, **queries}


#: the chains that relate every pair of a hub's neighbours, left unmaterialized
LAZY = '.lazy edge(_, "RO:0002379", _), edge(_, "RO:0002131", _)\n'


def _cli(*arguments) -> list[str]:
    return [sys.executable, "-m", "polygraph_logic.cli", *map(str, arguments)]


def _queries(directory: Path, graph, lazy: bool) -> dict:
    """Whole-process seconds of ``whatif --retract-source`` (the first retracted source) and,
    with ``lazy``, of ``ask`` for the lazy overlaps of the subject of the first part_of assertion."""
    folder = directory / "direct.tables"
    source = graph.retracted[0]
    whatif = run(_cli("whatif", folder, "--retract-source", source, "--json")).check("whatif")
    if not lazy:
        return {"whatif_s": whatif.seconds}
    subject = next(a.subject for a in graph.assertions if a.predicate == "BFO:0000050")
    asked = run(_cli("ask", folder, f'edge("{subject}", "RO:0002131", _)', "--json")).check("ask")
    return {"whatif_s": whatif.seconds, "ask_s": asked.seconds, "asked": len(json.loads(asked.stdout)["answers"])}

def _row(m: dict | str, base: dict | None, copies: int, hubs: int) -> str:
    if isinstance(m, str):
        return f"  x{copies:<3d} {hubs:3d} hubs: {m}"
    def grown(key: str) -> str:
        return f" ({m[key] / base[key]:.2f}x)" if base and base[key] else ""
    return (f"  x{m['copies']:<3d} {m['hubs']:3d} hubs: {m['facts']:>10,} facts{grown('facts')}, "
            f"{m['edges']:>10,} edges, coextensive {m['coextensive']:>9,}, overlaps {m['overlaps']:>9,}, "
            f"{m['monomials']:>10,} monomials{grown('monomials')}, {m['inexact']:,} inexact, "
            f"{m['derivations']:,} derivations stored; "
            f"{m['seconds']:6.2f} s{grown('seconds')} (evaluate {m['evaluate']:.2f} s, {m['rounds']} rounds, "
            f"circuit {m['circuit']:.2f} s), "
            f"peak {m['rss_mb']:.0f} MB{grown('rss_mb')}"
            + f"; whatif {m['whatif_s']:.2f} s"
            + (f", ask {m['ask_s']:.2f} s ({m['asked']} lazy facts)" if m.get("lazy") else ""))


def exponent(small: int, large: int, copies_small: int, copies_large: int) -> float:
    """The power of the copies that takes ``small`` to ``large`` (1 linear, 2 quadratic)."""
    if small <= 0 or large <= 0:
        return float("nan")
    return math.log(large / small) / math.log(copies_large / copies_small)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=40, help="the copies of the --hubs series")
    parser.add_argument("--hubs", type=int, nargs="*", default=[0, 20, 40, 80],
                        help="hubs shared by every copy, one build each (0 first: the disjoint graph)")
    parser.add_argument("--copies-series", type=int, nargs="*", default=[10, 20, 40])
    parser.add_argument("--series-hubs", type=int, default=20)
    parser.add_argument("--memory-limit", default=None, help="DuckDB's limit for every build (e.g. 4GB)")
    parser.add_argument("--lazy", action="store_true",
                        help="declare the two chains (spatially coextensive with, overlaps) .lazy in every "
                             "build, and time a what-if and an ask on each")
    parser.add_argument("--hub-sides", choices=("hub", "both"), default="hub",
                        help="share a hub on its hub side only (default) or on both sides, edges into and out "
                             "of it, as a graph merged from many documents does (generate --hub-sides)")
    parser.add_argument("--hub-cycles", choices=("keep", "break"), default="keep",
                        help="with --hub-sides both: keep the part_of cycles among hubs (default) or break "
                             "them (generate --hub-cycles)")
    parser.add_argument("--timeout", type=float, default=600, metavar="SECONDS",
                        help="a build still running after this long is stopped and said so (default 600)")
    args = parser.parse_args(argv)
    limit = f", --memory-limit {args.memory_limit}" if args.memory_limit else ""
    if args.hubs:
        lazy = ", the chains .lazy" if args.lazy else ""
        sides = f", shared on {args.hub_sides} sides, cycles {args.hub_cycles}" if args.hub_sides == "both" else ""
        print(f"x{args.copies}, hubs shared by every copy (duckdb -> tables, cap 8{limit}{lazy}{sides}; growth "
              f"against {args.hubs[0]} hubs):", flush=True)
        base = None
        for hubs in args.hubs:
            m = measure(args.copies, hubs, args.memory_limit, args.timeout, args.lazy, args.hub_sides, args.hub_cycles)
            print(_row(m, base, args.copies, hubs), flush=True)
            if base is None and isinstance(m, dict):
                base = m
    if args.copies_series:
        print(f"{args.series_hubs} hubs, copies growing (the exponent of the copies: 1 linear, 2 quadratic):",
              flush=True)
        series = []
        for copies in args.copies_series:
            m = measure(copies, args.series_hubs, args.memory_limit, args.timeout, args.lazy, args.hub_sides,
                        args.hub_cycles)
            print(_row(m, series[0] if series else None, copies, args.series_hubs), flush=True)
            if isinstance(m, dict):
                series.append(m)
        for small, large in zip(series, series[1:]):
            parts = ", ".join(f"{key} {exponent(small[key], large[key], small['copies'], large['copies']):.2f}"
                              for key in ("facts", "coextensive", "overlaps", "monomials", "seconds"))
            print(f"  x{small['copies']} -> x{large['copies']}: exponent of {parts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
