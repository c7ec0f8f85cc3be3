"""One graph at every scale: every reading command on a folder built by DuckDB, x1 to x400.

For each scale the synthetic graph (``generate --copies N``: the graph and N-1 disjoint copies)
is built by DuckDB into a folder under ``--memory-limit`` (timed, with its peak), then each
command runs on it as a whole process (start-up included), ``--repeat`` times: the median wall
time and the largest peak RSS are printed, with the ratio to x1.  The commands ask about the
first copy, which is the x1 graph itself, so every scale answers the same question.

Side by side, in the same run:

- ``sql-whatif`` (the folder's only command before folders were read in place: trust-all
  label verdicts by one SQL query) against ``whatif`` on the same folder;
- at the scales up to ``--file-max``, the graph file of the same inputs (``build --engine
  duckdb -o``), its build and its ``whatif``;
- with ``--before CHECKOUT`` (a checkout of an earlier commit, e.g. a ``git worktree``), each
  command run by that code too, on the same folder, alternately with this code: before and
  after, and their ratio (``--only`` names the commands to time).

The explorer's what-if (a ``POST /api/whatif`` to ``polygraph serve`` on the folder, the server
started once) is timed beside the commands.  ``export`` writes the whole graph (N-Quads) at the scales up to ``--export-max`` (about 5 GB of
text at x40).

``--versions`` times versions instead, on the folder and (up to ``--file-max``) the graph file
side by side: ``add`` of a batch of new assertions (a new source repeating claims of the first
copy, so that labels grow and the closure moves) to a copy of the graph, ``--repeat`` times, then
``whatif`` on the grown graph (its latest version, read through the added files) and at ``--at 1``.

    python -m benchmarks.one_graph [--copies 1 10 40 400] [--repeat 3]
                 [--memory-limit 3GB] [--work DIR] [--file-max 10] [--export-max 40]
                 [--before CHECKOUT] [--only COMMAND ...] [--versions]
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Callable

from benchmarks.harness import Polygraph, Run, mib, print_table

SOURCE = "synthetic:doc0002"       # a source of the first copy (the x1 graph itself)
ARTIFACT = "edge:0125a1298d46"     # an entailed edge of the first copy

COMMANDS = {
    "whatif trust-all": ["whatif", "{g}", "--retract-source", SOURCE],
    "whatif deployed": ["whatif", "{g}", "--retract-source", SOURCE, "--policy", "deployed"],
    "whatif flat": ["whatif", "{g}", "--retract-source", SOURCE, "--policy", "flat"],
    "whatif --exact": ["whatif", "{g}", "--retract-source", SOURCE, "--exact"],
    "why": ["why", "{g}", ARTIFACT],
    "whynot": ["whynot", "{g}", ARTIFACT, "--retract-source", SOURCE],
    "robustness": ["robustness", "{g}", ARTIFACT],
    "top-sources --limit 20": ["top-sources", "{g}", "--limit", "20"],
    "contradictions": ["contradictions", "{g}"],
    "rests-on": ["rests-on", "{g}", "--kind", "model_hypothesis"],
    # every artifact rests on the synthetic graph's one kind: a listing as long as the graph
    "rests-on source_claim": ["rests-on", "{g}", "--kind", "source_claim"],
    "rests-on source_claim --limit 20": ["rests-on", "{g}", "--kind", "source_claim", "--limit", "20"],
    "info": ["info", "{g}"],
    "show --limit 20": ["show", "{g}", "--limit", "20"],
    "log": ["log", "{g}"],
    "ask (a bound argument)": ["ask", "{g}", 'edge("vabremab", _, _)'],
    # every edge matches: the answers streamed a page at a time (an earlier checkout has no --limit)
    "ask (every argument free) --limit 20": ["ask", "{g}", "edge(_, _, _)", "--limit", "20"],
    "check": ["check", "{g}"],
    "sql-whatif (before)": ["sql-whatif", "{g}", "--retract-source", SOURCE],
}


#: the explorer's what-if: a click on a source in `polygraph serve`'s page
EXPLORER = "explorer whatif (POST /api/whatif)"


def explorer_whatif(polygraph: Polygraph, folder: Path, repeat: int, timeout: float = 600) -> dict:
    """The explorer's what-if as a user clicks it: ``polygraph serve`` started on the folder (its
    start not timed), then ``repeat`` ``POST /api/whatif`` retracting SOURCE under trust-all: the
    median seconds of a request, and the server's peak RSS when done (Linux: VmHWM)."""
    with socket.socket() as probe:  # a free port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-P", "-m", "polygraph_logic.cli", "serve", str(folder), "--port",
                               str(port)], env=polygraph.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        started = time.monotonic()
        while True:  # until it answers
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).read()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() - started > timeout:
                    return {"failed": (server.stderr.read().decode(errors="replace").strip().splitlines() or
                                       ["did not start"])[-1] if server.poll() is not None else "did not start"}
                time.sleep(0.1)
        body = json.dumps({"source": [SOURCE], "policy": ["trust-all"]}).encode()
        seconds = []
        for _ in range(repeat):
            request = urllib.request.Request(f"http://127.0.0.1:{port}/api/whatif", data=body,
                                             headers={"Content-Type": "application/json"})
            began = time.perf_counter()
            json.loads(urllib.request.urlopen(request, timeout=timeout).read())
            seconds.append(time.perf_counter() - began)
        status = Path(f"/proc/{server.pid}/status")
        peak = next((int(line.split()[1]) / 1024 for line in status.read_text().splitlines()
                     if line.startswith("VmHWM:")), None) if status.exists() else None
        return {"seconds": statistics.median(seconds), "peak_mib": peak}
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _median_run(polygraph: Polygraph, command: list[str], repeat: int, before=lambda: None) -> dict:
    """The median time and largest peak of ``repeat`` runs (``before``: called ahead of each, untimed)."""
    runs: list[Run] = []
    for _ in range(repeat):
        before()
        runs.append(polygraph(*command))
    failed = [r for r in runs if r.code != 0]
    if failed:
        return {"failed": "; ".join(failed[0].last_words())}
    return {"seconds": statistics.median(r.seconds for r in runs),
            "peak_mib": max(r.peak_mib or 0 for r in runs)}


def _side_by_side(before: Polygraph, after: Polygraph, command: list[str], repeat: int) -> tuple[dict, dict]:
    """The command run ``repeat`` times by each code, alternately (the machine's drift shared)."""
    runs: dict[str, list[Run]] = {"before": [], "after": []}
    for _ in range(repeat):
        runs["before"].append(before(*command))
        runs["after"].append(after(*command))
    out = []
    for key in ("before", "after"):
        failed = [r for r in runs[key] if r.code != 0]
        out.append({"failed": "; ".join(failed[0].last_words())} if failed else
                   {"seconds": statistics.median(r.seconds for r in runs[key]),
                    "peak_mib": max(r.peak_mib or 0 for r in runs[key])})
    return out[0], out[1]


def measure(copies=(1, 10, 40), repeat: int = 3, memory_limit: str = "3GB", work: Path | None = None,
            file_max: int = 10, export_max: int = 40, timeout: float = 1800,
            out: Callable[[str], None] = print, before: str | None = None,
            only: tuple[str, ...] | None = None, versions: bool = False) -> dict:
    """Builds each scale and times every command on it (``only``: those named), with ``before``
    (a checkout) also by that code, or (``versions``) adds and reads after them; prints the
    tables; returns the figures."""
    # the last MiB of each output kept: rests-on source_claim prints a line per artifact (x400: 10.6 M)
    polygraph = Polygraph(timeout=timeout, tail=2**20)
    earlier = Polygraph(python_path=str(Path(before).resolve()), timeout=timeout, tail=2**20) if before else None
    commands = {name: command for name, command in COMMANDS.items() if not only or name in only}
    owned = work is None
    work = Path(tempfile.mkdtemp(prefix="polygraph-one-graph-")) if owned else Path(work)
    work.mkdir(parents=True, exist_ok=True)
    figures: dict = {"scales": {}}
    try:
        for n in copies:
            inputs, folder, file = work / f"x{n}", work / f"x{n}.tables", work / f"x{n}.graph"
            scale: dict = {"commands": {}}
            if not (inputs / "assertions.jsonl").is_file():
                polygraph("generate", "-o", inputs, "--copies", n).check(f"generate x{n}")
            if not folder.is_dir():
                built = polygraph("build", "--assertions", inputs / "assertions.jsonl", "--receipts",
                                  inputs / "receipts.jsonl", "--rules", "ro", "--engine", "duckdb",
                                  "--memory-limit", memory_limit, "--tables", folder).check(f"build x{n}")
                scale["build"] = {"seconds": built.seconds, "peak_mib": built.peak_mib}
                out(f"x{n}: build --engine duckdb --tables --memory-limit {memory_limit}: {built.seconds:.1f} s, "
                    f"peak {mib(built.peak_mib)}")
            if versions:
                if n <= file_max and not file.is_file():
                    polygraph("build", "--assertions", inputs / "assertions.jsonl", "--receipts",
                              inputs / "receipts.jsonl", "--rules", "ro", "--engine", "duckdb",
                              "--memory-limit", memory_limit, "-o", file).check(f"build x{n} file")
                forms = {"folder": folder, **({"graph file": file} if n <= file_max else {})}
                figures.setdefault("versions", {})[n] = measure_versions(polygraph, work, n, forms, repeat)
                _print_versions(figures["versions"], out)
                continue
            for name, command in commands.items():
                command = [c.replace("{g}", str(folder)) for c in command]
                if earlier is None:
                    scale["commands"][name] = _median_run(polygraph, command, repeat)
                else:
                    scale.setdefault("before", {})[name], scale["commands"][name] = \
                        _side_by_side(earlier, polygraph, command, repeat)
            if not only or EXPLORER in only:
                if earlier is not None:
                    scale.setdefault("before", {})[EXPLORER] = explorer_whatif(earlier, folder, repeat)
                scale["commands"][EXPLORER] = explorer_whatif(polygraph, folder, repeat)
            if n <= export_max and not only:
                target = work / f"x{n}.nq"
                scale["commands"]["export (whole graph)"] = _median_run(
                    polygraph, ["export", str(folder), "-o", str(target)], 1)
                scale["export_bytes"] = target.stat().st_size if target.exists() else None
                target.unlink(missing_ok=True)
            if n <= file_max and not only:
                if not file.is_file():
                    built = polygraph("build", "--assertions", inputs / "assertions.jsonl", "--receipts",
                                      inputs / "receipts.jsonl", "--rules", "ro", "--engine", "duckdb",
                                      "--memory-limit", memory_limit, "-o", file).check(f"build x{n} file")
                    scale["file_build"] = {"seconds": built.seconds, "peak_mib": built.peak_mib}
                    out(f"x{n}: build --engine duckdb -o FILE.graph: {built.seconds:.1f} s, peak {mib(built.peak_mib)}")
                scale["file_whatif"] = _median_run(polygraph, [c.replace("{g}", str(file))
                                                               for c in COMMANDS["whatif trust-all"]], repeat)
            figures["scales"][n] = scale
            _print(figures, out)
    finally:
        if owned:
            shutil.rmtree(work, ignore_errors=True)
    return figures


#: how many assertions the batch ``--versions`` adds
BATCH = 50


def _batch(inputs: Path, target: Path) -> Path:
    """A new source's assertions: the first copy's first BATCH claims said of new subjects (new
    facts that the ontology's rules join with the graph's, without changing its capped labels:
    ``add`` then evaluates incrementally, as it does for most additions)."""
    with open(inputs / "assertions.jsonl", encoding="utf-8") as handle:
        lines = [json.loads(line) for _, line in zip(range(BATCH), handle)]
    target.write_text("".join(json.dumps({**record, "id": f"bench-added-{i}", "source": "bench:added",
                                          "subject": f"bench:entity{i % 10}"}) + "\n"
                              for i, record in enumerate(lines)), encoding="utf-8")
    return target


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def _copy(graph: Path, target: Path) -> None:
    _remove(target)
    if graph.is_dir():
        shutil.copytree(graph, target)
    else:
        shutil.copyfile(graph, target)


def measure_versions(polygraph: Polygraph, work: Path, n: int, graphs: dict[str, Path], repeat: int) -> dict:
    """``add`` of BATCH assertions to a copy of each graph (``repeat`` times), then ``whatif`` on the
    grown copy at its latest version and at version 1; returns {form: {step: figures}}."""
    batch = _batch(work / f"x{n}", work / f"x{n}-batch.jsonl")
    figures: dict = {}
    for form, graph in graphs.items():
        grown = work / f"x{n}-grown{graph.suffix}"
        figures[form] = {"add": _median_run(polygraph, ["add", str(grown), "--assertions", str(batch)], repeat,
                                            before=lambda: _copy(graph, grown))}
        for name, extra in (("whatif, latest of 2 versions", []), ("whatif --at 1", ["--at", "1"])):
            figures[form][name] = _median_run(polygraph, ["whatif", str(grown), "--retract-source", SOURCE, *extra],
                                              repeat)
        _remove(grown)
    return figures


def _print_versions(versions: dict, out: Callable[[str], None]) -> None:
    rows = [[f"x{n}", step, *(_cell(forms.get(form, {}).get(step), None) for form in ("folder", "graph file"))]
            for n, forms in sorted(versions.items()) for step in next(iter(forms.values()))]
    out(f"versions, whole process, median wall time and peak RSS (add: {BATCH} assertions of a new source):")
    print_table(["scale", "step", "folder", "graph file"], rows, out=out, indent="  ")


def _cell(entry: dict | None, base: dict | None) -> str:
    if not entry:
        return "-"
    if "failed" in entry:
        return "failed: " + entry["failed"][:40]
    ratio = f" ({entry['seconds'] / base['seconds']:.2f}x)" if base and "seconds" in base else ""
    return f"{entry['seconds']:.2f} s{ratio} {mib(entry['peak_mib'])}"


def _print(figures: dict, out: Callable[[str], None]) -> None:
    scales = sorted(figures["scales"])
    names = {name for s in scales for name in figures["scales"][s]["commands"]}
    rows = []
    for name in [*COMMANDS, EXPLORER, "export (whole graph)"]:
        if name not in names:
            continue
        base = figures["scales"][scales[0]]["commands"].get(name)
        rows.append([name, *(_cell(figures["scales"][s]["commands"].get(name), base) for s in scales)])
    base = figures["scales"][scales[0]].get("file_whatif")
    rows.append(["whatif on the graph file", *(_cell(figures["scales"][s].get("file_whatif"), base)
                                               for s in scales)])
    out("whole process, median wall time (ratio to the smallest scale) and peak RSS:")
    print_table(["command", *(f"x{s} folder" for s in scales)], rows, out=out, indent="  ")
    if any("before" in figures["scales"][s] for s in scales):
        rows = []
        for s in scales:
            for name, old in figures["scales"][s].get("before", {}).items():
                rows.append([f"x{s}", name, _cell(old, None), _cell(figures["scales"][s]["commands"][name], old)])
        out("before (the --before checkout) and after (this code), on the same folder, run alternately "
            "(after: ratio to before):")
        print_table(["scale", "command", "before", "after"], rows, out=out, indent="  ")


def headline(figures: dict) -> list[tuple[str, str]]:
    """(what, figure) rows for `python -m benchmarks.run_all`'s headline table: the folder's what-if and why
    at the largest scale measured, against x1."""
    scales = sorted(figures.get("scales", {}))
    if not scales:
        return []
    rows = []
    for name in ("whatif trust-all", "why", "top-sources --limit 20"):
        small = figures["scales"][scales[0]]["commands"].get(name, {})
        large = figures["scales"][scales[-1]]["commands"].get(name, {})
        if "seconds" in small and "seconds" in large:
            rows.append((f"folder, {name}: x{scales[-1]} / x{scales[0]} (whole process)",
                         f"{large['seconds'] / small['seconds']:.2f}x ({large['seconds']:.2f} s, "
                         f"{mib(large['peak_mib'])} vs {small['seconds']:.2f} s)"))
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, nargs="+", default=[1, 10, 40])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--memory-limit", default="3GB")
    parser.add_argument("--work", type=Path, help="keep inputs, folders and files here (reused when present)")
    parser.add_argument("--file-max", type=int, default=10, help="build and time the graph file up to this scale")
    parser.add_argument("--export-max", type=int, default=40, help="export the whole graph up to this scale")
    parser.add_argument("--before", metavar="CHECKOUT",
                        help="also run each command by the polygraph_logic of this checkout (an earlier commit)")
    parser.add_argument("--only", nargs="+", metavar="COMMAND", choices=list(COMMANDS),
                        help="time only these commands (no export, no graph file)")
    parser.add_argument("--versions", action="store_true",
                        help="time add and the what-if after it, folder and graph file, instead of the commands")
    args = parser.parse_args(argv)
    measure(tuple(args.copies), args.repeat, args.memory_limit, args.work, args.file_max, args.export_max,
            before=args.before, only=tuple(args.only) if args.only else None, versions=args.versions)


if __name__ == "__main__":
    main()
