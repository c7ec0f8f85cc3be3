"""One command for every benchmark: runs them side by side and writes a Markdown report.

    python -m benchmarks.run_all [--quick] [-o REPORT_DIR] [--data DIR]

run from the repository's root (the benchmarks are not installed with the package).
The benchmark scripts in ``benchmarks/`` each expose ``measure(...) -> dict`` and print what
they measure; this module runs them in one process, one after another (never in
parallel: two cores shared by two timings distort both ratios), keeps every printed
line, and writes

- ``REPORT_DIR/report.md``: machine, date, commit, a headline table of every ratio and
  peak memory, then each benchmark's full output;
- ``REPORT_DIR/whatif-latency.png``: what-if latency against touched artifacts;
- ``REPORT_DIR/figures.json``: the figures as numbers, for anyone who wants to plot more.

Times are measured and printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from benchmarks import (build_graph, distributed, export, go_closure, one_graph, scale,
                        souffle_programs, whatif, whole_process)
from benchmarks.harness import CHECKOUT, Stopwatch, default_data, run
from polygraph_logic.errors import PolygraphError
from polygraph_logic.files import write_text_atomically

__all__ = ["BenchReport", "default_data", "plot_latency", "run_bench"]


@dataclass
class BenchReport:
    """What one ``bench`` run measured: figures per benchmark and their printed output."""

    quick: bool
    figures: dict = field(default_factory=dict)
    output: dict[str, list[str]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    started: str = ""

    def headline(self) -> list[tuple[str, str]]:
        """Returns (what, figure) rows for the report's headline table."""
        rows: list[tuple[str, str]] = []
        closure = self.figures.get("go_closure", {})
        if "ratio_why" in closure:
            s = closure["seconds"]
            rows.append(("GO closure: pyDatalog / ours (why, cap 8)",
                         f"{closure['ratio_why']:.1f}x ({s['pydatalog']:.3f} s vs {s['ours_why']:.3f} s; "
                         f"closures agree: {closure['agree']})"))
            rows.append(("GO closure: pyDatalog / ours (Boolean)", f"{closure['ratio_boolean']:.1f}x"))
        for name, build in self.figures.get("build", {}).items():
            if "artifacts" in build:
                peak = f", peak {build['peak_traced_mib']:.0f} MiB traced" if build.get("peak_traced_mib") else ""
                rows.append((f"build, {_graph_name(name)}",
                             f"{build['artifacts']:,} artifacts in {build['seconds']['total']:.2f} s{peak}; "
                             f"{build['label_bytes_per_artifact']:.1f} label bytes per artifact; "
                             f"max RSS {build['max_rss_mib']:.0f} MiB"))
        for name in ("synthetic", "go"):
            whatif = self.figures.get("whatif", {}).get(name, {})
            latency = whatif.get("latency")
            if not latency:
                continue
            graph = _graph_name(name)
            rows.append((f"what-if single source, {graph}: full scan / ours",
                         f"{latency['ratio_scan']:.1f}x ({latency['ours_ms']:.3f} ms vs {latency['scan_ms']:.3f} ms)"))
            if "ratio_sympy" in latency:
                note = ", sympy timed on a label sample and scaled" if latency.get("sympy_extrapolated") else ""
                rows.append((f"what-if single source, {graph}: sympy / ours", f"{latency['ratio_sympy']:,.0f}x{note}"))
            batch = latency["batch"]
            rows.append((f"what-if 10% retract-source, {graph}: full scan / ours",
                         f"{batch['ratio_scan']:.1f}x ({batch['touched']:,} touched)"))
            exact = whatif.get("exact")
            if exact:
                rows.append((f"exact what-if, {graph}: recompute / ours",
                             f"{exact['ratio']:.1f}x ({exact['exact_ms']:.2f} ms vs {exact['recompute_ms']:.1f} ms)"))
        scaling = self.figures.get("whatif", {}).get("scaling")
        if scaling:
            rows.append((f"what-if scaling, graph {scaling['factor']}x larger",
                         f"latency ratio {scaling['ratio']:.2f}x (same touched artifacts: {scaling['same_touched']})"))
        rows += _whole_process_rows(self.figures.get("whole_process", {}))
        rows += souffle_programs.headline(self.figures.get("souffle_programs", {}))
        rows += _distributed_rows(self.figures.get("distributed", {}))
        rows += _scale_rows(self.figures.get("scale", {}))
        rows += one_graph.headline(self.figures.get("one_graph", {}))
        for source, entry in self.figures.get("go_whatif", {}).get("sources", {}).items():
            rows.append((f"GO slice: recompute / what-if whole process, {source}",
                         f"{entry['ratio']:.1f}x ({entry['whatif_s']:.2f} s vs {entry['recompute_s']:.2f} s); "
                         f"--exact {entry['ratio_exact']:.1f}x{' (most capped verdicts)' if entry['most_capped'] else ''}"))
        export = self.figures.get("export", {})
        artifacts = export.get("graphs", {}).get("full", {}).get("artifacts")
        for variant, entry in export.get("formats", {}).get("full", {}).items():
            rows.append((f"export {variant}, {artifacts:,} artifacts",
                         f"{entry['seconds']:.2f} s, {entry['bytes_per_artifact']:.0f} bytes per artifact, "
                         f"peak {entry['peak_traced_bytes'] / 2**20:.1f} MiB traced; pyoxigraph re-parsed "
                         f"{entry['reparsed_quads']:,} of {entry['quads']:,} quads"))
        return rows

    def markdown(self, plot: str | None) -> str:
        """Returns the report as Markdown."""
        lines = [f"# polygraph_logic benchmark report{' (quick)' if self.quick else ''}", "",
                 f"- date: {self.started}", f"- machine: {platform.platform()}, {os.cpu_count()} cores, "
                 f"Python {platform.python_version()}", f"- commit: {_commit()}",
                 f"- command: `python -m benchmarks.run_all{' --quick' if self.quick else ''}`", "",
                 "## Headline figures", "", "| measurement | figure |", "|---|---|"]
        lines += [f"| {what} | {figure} |" for what, figure in self.headline()]
        if plot:
            lines += ["", f"![what-if latency against touched artifacts]({plot})"]
        for name, output in self.output.items():
            lines += ["", f"## {name} ({self.seconds.get(name, 0):.0f} s)", "", "```", *output, "```"]
        return "\n".join(lines) + "\n"


def _scale_rows(figures: dict) -> list[tuple[str, str]]:
    """Returns the headline rows of the scale benchmark: each scale, then growth and slopes."""
    def mib(value):
        return "?" if value is None else f"{value:,.0f} MiB"

    rows = []
    for entry in figures.get("scales", []):
        if "whatif" not in entry:
            rows.append((f"scale x{entry['scale']}", f"{entry.get('failed', 'not measured')} failed"))
            continue
        build, whatif, exact = entry["build"], entry["whatif"], entry.get("exact")
        figure = (f"{entry['assertions']:,} assertions; build {build['seconds']:.1f} s, peak {mib(build['peak_mib'])}; "
                  f"graph {entry['graph_bytes'] / 2**20:,.1f} MiB; what-if {whatif['seconds']:.2f} s whole process, "
                  f"peak {mib(whatif['peak_mib'])}")
        if exact:
            figure += f"; recompute / exact what-if {exact['ratio']:.2f}x"
        rows.append((f"scale x{entry['scale']}: build, graph, what-if", figure))
    summary = figures.get("summary", {})
    growth = summary.get("whatif_growth")
    if growth:
        rows.append((f"scale: what-if whole process x{growth['to']} / x{growth['from']}", f"{growth['ratio']:.2f}x"))
    largest = next((e for e in reversed(figures.get("scales", [])) if "whatif" in e), None)
    version = largest.get("version", figures.get("version", {})).get("seconds") if largest else None
    if largest and version:
        rows.append((f"scale: what-if x{largest['scale']} / polygraph --version",
                     f"{largest['whatif']['seconds'] / version:.1f}x ({version:.2f} s)"))
    if summary.get("slopes"):
        rows.append(("scale: slopes against graph size (log-log)",
                     ", ".join(f"{name} {value:.2f}" for name, value in summary["slopes"].items())))
    return rows


def _distributed_rows(figures: dict) -> list[tuple[str, str]]:
    """Returns the headline rows of the distributed section: builds by engine, SQL what-ifs."""
    rows = []
    if figures.get("skipped"):
        return [("distributed", f"skipped ({figures['skipped']})")]
    if figures.get("spark_skipped"):
        rows.append(("distributed: Spark", f"skipped ({figures['spark_skipped']})"))
    for k, entry in figures.get("scales", {}).items():
        build = entry["build"]
        python = build["python"]
        for engine in ("duckdb", "spark"):
            if engine not in build:
                continue
            e = build[engine]
            rows.append((f"distributed x{k}: build evaluate, python / {engine}",
                         f"{e['python_over']:.3g}x ({python['evaluate_s']:.2f} s vs {e['evaluate_s']:.2f} s; "
                         f"{e['rounds']} rounds, median {e['median_s'] * 1000:.0f} ms; "
                         f"labels identical: {'yes' if e['identical'] else 'NO'})"))
        for group, times in entry.get("whatif", {}).items():
            engines = [name for name in ("duckdb", "spark") if name in times]
            rows.append((f"distributed x{k}: SQL what-if, {group}",
                         ", ".join(f"{name} {times[name]:.1f} ms" for name in ["python", *engines])
                         + f" (median touched {times['touched']:,.0f})"))
    return rows


def _whole_process_rows(whole: dict) -> list[tuple[str, str]]:
    """Returns the headline rows of the whole-process benchmark (polygraph eval as a process)."""
    rows = []
    go = whole.get("go", {})
    if "ratio" in go:
        rows.append(("GO closure whole process (eval --json): pyDatalog / ours",
                     f"{go['ratio']:.1f}x Boolean ({go['pydatalog']['seconds']:.2f} s vs {go['ours']['seconds']:.2f} s), "
                     f"{go['ratio_why']:.1f}x why; outputs agree: {go['agree']}"))
    for key, what in (("university", "generated LUBM-like program, 103,074 facts"),
                      ("points_to", "generated points-to analysis, 52,000 facts")):
        entry = whole.get(key)
        if not entry:
            continue
        if "failed" in entry:
            rows.append((f"whole process, {what}", f"did not finish ({entry['failed']})"))
            continue
        peak = "?" if entry.get("peak_mib") is None else f"{entry['peak_mib']:,.0f} MiB"
        rows.append((f"whole process, {what}",
                     f"{entry['seconds']:.2f} s (target <= {entry['target_seconds']:g} s), peak RSS {peak}"))
    return rows


def _graph_name(name: str) -> str:
    return {"synthetic": "synthetic paper scale", "go": "GO slice"}.get(name, name)


def _commit() -> str:
    found = run(["git", "rev-parse", "--short", "HEAD"], cwd=CHECKOUT, timeout=5, peak=False)
    return found.stdout.strip() if found.code == 0 and found.stdout.strip() else "unknown"


def _pyplot():
    """Returns matplotlib's pyplot (headless); matplotlib is the ``[bench]`` extra, not a core dependency."""
    try:
        import matplotlib  # matplotlib is the [bench] extra; run_all says when it is missing
    except ImportError:
        raise PolygraphError("missing_extra", 'the bench plot needs matplotlib: pip install "polygraph_logic[bench]"') \
            from None
    matplotlib.use("Agg")  # no display needed, nothing opens a window
    from matplotlib import pyplot  # matplotlib is the [bench] extra; run_all says when it is missing
    return pyplot


def plot_latency(figures: dict, path: Path) -> bool:
    """Draws what-if latency against touched artifacts (log-log) into ``path``; False without points."""
    pyplot = _pyplot()

    series = [(name, figures.get(name, {}).get("latency", {}).get("points")) for name in ("synthetic", "go")]
    series = [(name, points) for name, points in series if points]
    if not series:
        return False
    figure, axes = pyplot.subplots(figsize=(6.4, 4.2), dpi=120)
    for (name, points), marker in zip(series, "os"):
        axes.scatter([max(t, 1) for t, _ in points], [ms for _, ms in points], label=_graph_name(name),
                     marker=marker, alpha=0.7)
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("touched artifacts")
    axes.set_ylabel("what-if latency (ms, best of 5-7)")
    axes.set_title("what-if latency follows the touched artifacts")
    axes.legend()
    axes.grid(True, which="both", alpha=0.3)
    figure.tight_layout()
    figure.savefig(path)
    pyplot.close(figure)
    return True


def run_bench(report_dir: str | Path, quick: bool = False, data: Path | None = None,
              say: Callable[[str], None] = print) -> BenchReport:
    """Runs every benchmark in turn, writes report.md, the plot and figures.json; returns the report.

    ``data`` is the GO slice's folder (default: ``default_data()``); benchmarks on the GO
    slice are skipped, and say so, when it is absent.
    """
    _pyplot()  # a missing [bench] extra fails now, not after half an hour of benchmarks
    report_dir = Path(report_dir)
    report_dir.mkdir(parents=True, exist_ok=True)
    data = data if data is not None else default_data()
    report = BenchReport(quick, started=time.strftime("%Y-%m-%d %H:%M:%S %Z"))
    steps = [
        ("go_closure", "engine vs pyDatalog: the GO closure",
         lambda out: go_closure.measure(data, repeat=1 if quick else 3, out=out)),
        ("whole_process", "whole processes: polygraph eval vs a pyDatalog process, generated Souffle-suite stand-ins",
         lambda out: whole_process.measure(data, repeat=1 if quick else 3, quick=quick, out=out)),
        ("souffle_programs", "Soufflé programs with existential negation: polygraph eval vs pyDatalog processes",
         lambda out: souffle_programs.measure(repeat=1 if quick else 3, quick=quick, out=out)),
        ("build", "building graphs", lambda out: build_graph.measure(data=data, trace=True, trace_go=not quick, out=out)),
        ("whatif", "what-if vs full scan and sympy, exact re-derivation vs recompute",
         lambda out: whatif.measure(quick, data, out=out)),
        ("export", "RDF export", lambda out: export.measure(quick=quick, out=out)),
        ("scale", "scale: the synthetic graph x1 to x40, each command its own process",
         lambda out: scale.measure((1, 3) if quick else scale.SCALES, repeat=3, out=out)),
        ("go_whatif", "GO slice: what-if as a whole process vs a from-scratch Boolean recompute",
         lambda out: scale.measure_go(data, repeat=1 if quick else 3, out=out)),
        ("distributed", "distributed: Python, DuckDB and Spark SQL builds, the SQL what-if (x1)",
         lambda out: distributed.measure((1,), quick=quick, out=out)),
        ("one_graph", "one graph at every scale: every command on a DuckDB folder",
         lambda out: one_graph.measure((1, 3) if quick else (1, 10, 40), repeat=1 if quick else 3,
                                       file_max=3 if quick else 10, export_max=3 if quick else 10, out=out)),
    ]
    for key, title, step in steps:
        lines: list[str] = []

        def out(line: str = "", lines=lines) -> None:
            lines.append(str(line))
            say(str(line))

        say(f"\n## {title}")
        clock = Stopwatch()
        report.figures[key] = step(out)
        report.seconds[title] = clock()
        report.output[title] = lines
    plot = "whatif-latency.png" if plot_latency(report.figures.get("whatif", {}), report_dir / "whatif-latency.png") \
        else None
    write_text_atomically(report_dir / "report.md", report.markdown(plot))
    figures = {key: _jsonable(value) for key, value in report.figures.items()}
    write_text_atomically(report_dir / "figures.json", json.dumps(figures, indent=1, sort_keys=True) + "\n")
    return report


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def main(argv: list[str] | None = None) -> int:
    """Runs every benchmark and writes the report; returns the exit status (2 on a user error)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and deletions, smaller graphs, x1 and x3")
    parser.add_argument("-o", "--output", default="bench-report", metavar="REPORT_DIR",
                        help="where to write the report (default: bench-report)")
    parser.add_argument("--data", type=Path, metavar="DIR",
                        help="the GO slice's folder (default: $POLYGRAPH_DATA/go-pombase, else ../shared/data/go-pombase)")
    args = parser.parse_args(argv)
    try:
        report = run_bench(args.output, quick=args.quick, data=args.data)
    except PolygraphError as error:
        print(error, file=sys.stderr)
        return 2
    print(f"\nreport: {Path(args.output) / 'report.md'}")
    for what, figure in report.headline():
        print(f"  {what}: {figure}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
