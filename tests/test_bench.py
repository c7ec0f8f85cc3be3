"""The bench report: headline figures, Markdown, the plot and the script's options.

The benchmarks themselves are timed by `python -m benchmarks.run_all`, never by tests; here the
report is written from known figures and checked.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.run_all import BenchReport, plot_latency
from polygraph_logic.cli import build_parser

FIGURES = {
    "go_closure": {"ratio_why": 19.6, "ratio_boolean": 28.3, "agree": True,
                   "seconds": {"pydatalog": 5.698, "ours_why": 0.291, "ours_boolean": 0.201}},
    "build": {"synthetic": {"artifacts": 26533, "seconds": {"total": 4.24}, "peak_traced_mib": 43.0,
                            "label_bytes_per_artifact": 5.0, "max_rss_mib": 210.0},
              "go": {"skipped": "not found"}},
    "whatif": {
        "synthetic": {"latency": {"ratio_scan": 641.3, "ours_ms": 0.025, "scan_ms": 16.218, "ratio_sympy": 1726963.0,
                                  "sympy_extrapolated": True,
                                  "batch": {"ratio_scan": 10.1, "touched": 4569},
                                  "points": [(12, 0.02), (40, 0.05), (4569, 1.49)]},
                      "exact": {"ratio": 1600.2, "exact_ms": 0.35, "recompute_ms": 564.82}},
        "scaling": {"factor": 10, "ratio": 1.03, "same_touched": True},
        "go": {"skipped": "not found"},
    },
    "scale": {"version": {"seconds": 0.36, "peak_mib": 56.0},
              "scales": [{"scale": 1, "assertions": 2800, "graph_bytes": 7 * 2**20,
                          "build": {"seconds": 2.7, "peak_mib": 108.0}, "whatif": {"seconds": 1.4, "peak_mib": 144.0},
                          "exact": {"seconds": 3.6, "ratio": 0.2}},
                         {"scale": 10, "assertions": 28000, "failed": "build"}],
              "summary": {"whatif_growth": {"from": 1, "to": 3, "ratio": 2.5},
                          "slopes": {"build time": 1.5, "what-if time": 1.4}}},
    "export": {"graphs": {"full": {"artifacts": 26533}},
               "formats": {"full": {"trig": {"seconds": 3.5, "bytes_per_artifact": 1786.0, "quads": 572606,
                                             "peak_traced_bytes": 4 * 2**20, "reparsed_quads": 572606}}}},
}


def test_headline_has_every_ratio():
    rows = dict(BenchReport(quick=False, figures=FIGURES).headline())
    assert rows["GO closure: pyDatalog / ours (why, cap 8)"].startswith("19.6x")
    assert rows["what-if single source, synthetic paper scale: full scan / ours"].startswith("641.3x")
    assert "scaled" in rows["what-if single source, synthetic paper scale: sympy / ours"]
    assert rows["what-if 10% retract-source, synthetic paper scale: full scan / ours"].startswith("10.1x")
    assert rows["exact what-if, synthetic paper scale: recompute / ours"].startswith("1600.2x")
    assert rows["what-if scaling, graph 10x larger"].startswith("latency ratio 1.03x")
    assert "26,533 artifacts" in rows["build, synthetic paper scale"] and "43 MiB" in rows["build, synthetic paper scale"]
    assert rows["export trig, 26,533 artifacts"] == ("3.50 s, 1786 bytes per artifact, peak 4.0 MiB traced; "
                                                     "pyoxigraph re-parsed 572,606 of 572,606 quads")
    assert rows["scale x1: build, graph, what-if"] == (
        "2,800 assertions; build 2.7 s, peak 108 MiB; graph 7.0 MiB; what-if 1.40 s whole process, peak 144 MiB; "
        "recompute / exact what-if 0.20x")
    assert rows["scale x10"] == "build failed" and rows["scale: what-if whole process x3 / x1"] == "2.50x"
    assert rows["scale: what-if x1 / polygraph --version"] == "3.9x (0.36 s)"
    assert rows["scale: slopes against graph size (log-log)"] == "build time 1.50, what-if time 1.40"
    # skipped graphs give no rows rather than empty ones
    assert not any("GO slice" in what for what in rows)


def test_markdown_report_lists_output_and_plot():
    report = BenchReport(quick=True, figures=FIGURES, output={"building graphs": ["line one", "line two"]},
                         seconds={"building graphs": 12.0})
    text = report.markdown("whatif-latency.png")
    assert text.startswith("# polygraph_logic benchmark report (quick)")
    assert "| GO closure: pyDatalog / ours (Boolean) | 28.3x |" in text
    assert "![what-if latency against touched artifacts](whatif-latency.png)" in text
    assert "## building graphs (12 s)\n\n```\nline one\nline two\n```" in text


def test_plot_is_a_png(tmp_path):
    # without the extra, plot_latency is missing_extra (tests/test_startup.py checks the message)
    pytest.importorskip("matplotlib", reason='the plot is drawn by matplotlib, the [bench] extra')
    path = tmp_path / "plot.png"
    assert plot_latency(FIGURES["whatif"], path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not plot_latency({"go": {"skipped": "x"}}, tmp_path / "none.png")
    assert not (tmp_path / "none.png").exists()


def test_figures_are_json_serialisable():
    from benchmarks.run_all import _jsonable
    text = json.dumps(_jsonable(FIGURES))
    assert json.loads(text)["whatif"]["synthetic"]["latency"]["points"][0] == [12, 0.02]


def test_run_all_refuses_an_unknown_option(capsys):
    from benchmarks.run_all import main
    with pytest.raises(SystemExit) as stop:
        main(["--quick", "--no-such-flag"])
    assert stop.value.code == 2 and "--no-such-flag" in capsys.readouterr().err


def test_the_command_line_has_no_bench_command(capsys):
    # the benchmarks live outside the package (benchmarks/, not in the wheel): no command runs them
    with pytest.raises(SystemExit):
        build_parser().parse_args(["bench", "--quick"])
    assert "invalid choice: 'bench'" in capsys.readouterr().err


def test_default_data_follows_the_environment_then_the_checkout(tmp_path, monkeypatch):
    from benchmarks.run_all import default_data
    monkeypatch.setenv("POLYGRAPH_DATA", str(tmp_path))
    assert default_data() == tmp_path  # a folder holding the slice itself
    (tmp_path / "shared-data" / "go-pombase").mkdir(parents=True)
    monkeypatch.setenv("POLYGRAPH_DATA", str(tmp_path / "shared-data"))
    assert default_data() == tmp_path / "shared-data" / "go-pombase"  # the shared data folder
    monkeypatch.delenv("POLYGRAPH_DATA")
    (tmp_path / "work").mkdir()
    data = tmp_path / "shared" / "data" / "go-pombase"
    data.mkdir(parents=True)
    (data / "truncated-pombase.gpad").write_text("!gpa-version: 2.0\n")
    monkeypatch.chdir(tmp_path / "work")
    found = default_data()
    # the checkout's own data when it is there, else the folder beside the current one
    assert (found / "truncated-pombase.gpad").is_file()


def test_harness_measures_a_child_process_and_fits_slopes():
    import sys

    from benchmarks import harness, scale
    done = harness.run([sys.executable, "-c", "import sys; b = bytearray(64 * 2**20); print('ok'); sys.exit(3)"])
    assert done.code == 3 and done.stdout.strip() == "ok" and done.seconds > 0
    assert done.peak_mib is None or done.peak_mib >= 64  # the child's own peak, not this process's
    small = harness.run([sys.executable, "-c", "pass"])
    assert small.code == 0 and (small.peak_mib is None or small.peak_mib < done.peak_mib)
    with pytest.raises(RuntimeError, match="exited with 3"):
        done.check("child")
    assert harness.slope([(1, 2.0), (10, 20.0), (40, 80.0)]) == pytest.approx(1.0)
    assert harness.slope([(1, 5.0), (10, 5.0)]) == pytest.approx(0.0) and harness.slope([(1, 5.0)]) is None
    assert scale.settled('{"settled_by_rederivation": 4}') == 4 and scale.settled('{"uncertain": ["a", "b"]}') == 2
    assert scale.settled("not json") == 0


def test_harness_stops_a_child_at_its_time_limit_and_aligns_tables():
    import sys

    from benchmarks import harness
    done = harness.run([sys.executable, "-c", "import time; print('started', flush=True); time.sleep(30)"], timeout=1)
    assert done.timed_out and done.code is None and done.seconds < 20 and done.stdout.strip() == "started"
    assert done.last_words() == ["did not finish in 1 s (stopped)"]
    with pytest.raises(RuntimeError, match="did not finish in 1 s"):
        done.check("child")
    echoed = harness.run([sys.executable, "-c", "import sys; print(sys.stdin.read().upper())"], input="abc", peak=False)
    assert echoed.code == 0 and echoed.stdout.strip() == "ABC"
    assert harness.table(["name", "n"], [["a", 1], ["bbb", "100"]]) == ["name    n", "a       1", "bbb   100"]
    seconds, result = harness.timings(lambda: 7, repeat=3)
    assert len(seconds) == 3 and result == 7 and harness.timed(lambda: None, 2) >= 0


def test_headline_has_the_whole_process_rows():
    figures = {"whole_process": {
        "go": {"ratio": 7.3, "ratio_why": 3.5, "agree": True, "pydatalog": {"seconds": 7.7}, "ours": {"seconds": 1.05}},
        "university": {"seconds": 2.19, "target_seconds": 5, "peak_mib": 76.0},
        "points_to": {"failed": "killed after 240 s", "seconds": 240.0}}}
    rows = dict(BenchReport(quick=True, figures=figures).headline())
    assert rows["GO closure whole process (eval --json): pyDatalog / ours"] == (
        "7.3x Boolean (7.70 s vs 1.05 s), 3.5x why; outputs agree: True")
    assert rows["whole process, generated LUBM-like program, 103,074 facts"] == (
        "2.19 s (target <= 5 s), peak RSS 76 MiB")
    assert rows["whole process, generated points-to analysis, 52,000 facts"] == "did not finish (killed after 240 s)"


def test_headline_has_the_distributed_rows():
    build = {"python": {"evaluate_s": 3.1, "rounds": 0},
             "duckdb": {"evaluate_s": 1.55, "python_over": 2.0, "rounds": 40, "median_s": 0.012, "identical": True},
             "spark": {"evaluate_s": 62.0, "python_over": 0.05, "rounds": 40, "median_s": 0.9, "identical": False}}
    whatif = {"single source": {"python": 0.4, "duckdb": 30.0, "spark": 2100.0, "touched": 12}}
    rows = dict(BenchReport(quick=True, figures={"distributed": {
        "scales": {1: {"build": build, "whatif": whatif}}}}).headline())
    assert rows["distributed x1: build evaluate, python / duckdb"] == (
        "2x (3.10 s vs 1.55 s; 40 rounds, median 12 ms; labels identical: yes)")
    assert rows["distributed x1: build evaluate, python / spark"].endswith("median 900 ms; labels identical: NO)")
    assert rows["distributed x1: SQL what-if, single source"] == (
        "python 0.4 ms, duckdb 30.0 ms, spark 2100.0 ms (median touched 12)")
    del build["spark"], whatif["single source"]["spark"]
    rows = dict(BenchReport(quick=True, figures={"distributed": {
        "spark_skipped": "pyspark is not installed", "scales": {1: {"build": build, "whatif": whatif}}}}).headline())
    assert rows["distributed: Spark"] == "skipped (pyspark is not installed)"
    assert "distributed x1: build evaluate, python / spark" not in rows
    assert dict(BenchReport(quick=True, figures={"distributed": {"skipped": "duckdb is not installed"}}).headline()) == {
        "distributed": "skipped (duckdb is not installed)"}


def test_engine_pairs_are_judged_by_adjacent_builds():
    """benchmarks/engines.py --pairs: each pair's ratio is of its own two builds, the verdict
    holds for the medians and, separately, for every pair (figures chosen by hand)."""
    from benchmarks import engines
    pairs = [({"total": 80.0, "rss_mb": 1000.0}, {"total": 15.0, "rss_mb": 240.0}),   # 5.33x, 24%
             ({"total": 90.0, "rss_mb": 1000.0}, {"total": 20.0, "rss_mb": 240.0}),   # 4.5x, 24%
             ({"total": 75.0, "rss_mb": 1000.0}, {"total": 14.0, "rss_mb": 260.0})]   # 5.36x, 26%
    summary = engines.pair_summary(pairs)
    assert summary["speedups"] == pytest.approx([80 / 15, 4.5, 75 / 14])
    assert summary["peaks"] == pytest.approx([0.24, 0.24, 0.26])
    assert summary["median_speedup"] == pytest.approx(80 / 15) and summary["median_peak"] == pytest.approx(0.24)
    assert summary["met"] == [True, False, False]
    assert summary["met_median"] and not summary["met_every"]
    slow = engines.pair_summary([({"total": 80.0, "rss_mb": 1000.0}, {"total": 16.1, "rss_mb": 200.0})])
    assert not slow["met_median"] and not slow["met_every"]


def test_statement_kinds_and_profile_sums(tmp_path):
    """benchmarks/engines.py --statements: statements sorted into kinds; DuckDB's JSON profiles summed."""
    from benchmarks import engines
    assert engines.statement_kind("CREATE OR REPLACE TEMP TABLE c3 AS SELECT 1") == "derive"
    assert engines.statement_kind("INSERT  INTO c12\n SELECT k0 FROM d12") == "derive"
    assert engines.statement_kind("INSERT INTO d3 WITH c AS NOT MATERIALIZED (SELECT * FROM c3) SELECT 1") == "merge"
    assert engines.statement_kind("DELETE FROM r3 USING d3 WHERE r3.k0 = d3.k0") == "relation update"
    assert engines.statement_kind("INSERT INTO r3 SELECT * FROM d3") == "relation update"
    other = "INSERT INTO rules SELECT n_num, tree FROM rules_in"
    assert engines.statement_kind(other) == other
    assert engines.statement_kind("COPY (SELECT * FROM facts) TO 'x.parquet'") == "file written"
    leaf = {"name": "SEQ_SCAN", "timing": 0.25, "children": []}
    join = {"name": "HASH_JOIN", "timing": 0.5, "children": [leaf, dict(leaf, timing=0.75)]}
    for number, scale in enumerate((1, 2)):
        (tmp_path / f"derive-{number}.json").write_text(json.dumps({
            "planner": {"total_time": 0.01 * scale}, "optimizer": {"total_time": 0.02 * scale},
            "physical_planner": {"total_time": 0.005 * scale}, "query": {"total_time": 1.0 * scale},
            "operator": [join]}))
    summary = engines.profile_summary(tmp_path)
    assert summary["statements"] == 2
    assert summary["planning"] == pytest.approx(0.035 * 3) and summary["running"] == pytest.approx(3.0 - 0.105)
    assert summary["operators"] == pytest.approx({"HASH_JOIN": 1.0, "SEQ_SCAN": 2.0})


@pytest.mark.slow  # builds the hub series twice over (8 s): with the slow tests (.ci/run)
def test_hub_growth_counts_what_the_python_engine_derives(tmp_path):
    """benchmarks/hubs.py: the chains' edges counted in the DuckDB folder are those the Python
    engine derives from the same inputs (two copies sharing three hubs), and sharing hubs adds
    chain edges; the exponent of the copies reads 1 for linear growth and 2 for quadratic."""
    from benchmarks import hubs
    from benchmarks.engines import write_inputs
    from polygraph_logic import build_graph
    from polygraph_logic.resources import rule_file
    assert hubs.exponent(100, 200, 10, 20) == pytest.approx(1.0)
    assert hubs.exponent(100, 400, 10, 20) == pytest.approx(2.0)
    shared, disjoint = hubs.measure(2, 3, None), hubs.measure(2, 0, None)
    write_inputs(tmp_path, 2, 3)
    model = build_graph(tmp_path / "assertions.jsonl", tmp_path / "receipts.jsonl", [rule_file("ro")], cap=8,
                        engine="python").model
    for predicate, name in hubs.CHAINS.items():
        assert shared[name] == sum(1 for _, p, _ in model.facts("edge") if p == predicate)
        assert shared[name] > disjoint[name]
    assert shared["facts"] == sum(len(model.facts(relation)) for relation in model.relations())


@pytest.mark.slow
def test_one_graph_benchmark_runs_every_command_on_a_folder(tmp_path):
    """benchmarks/one_graph.py at x1: every command answers on the DuckDB folder
    (none failed), the graph file's what-if is timed beside it, and the table names each."""
    pytest.importorskip("duckdb")
    from benchmarks import one_graph
    printed: list[str] = []
    figures = one_graph.measure(copies=(1,), repeat=1, work=tmp_path, file_max=1, export_max=1,
                                out=printed.append)
    commands = figures["scales"][1]["commands"]
    assert set(commands) == {*one_graph.COMMANDS, one_graph.EXPLORER, "export (whole graph)"}
    assert not [name for name, entry in commands.items() if "failed" in entry]
    assert figures["scales"][1]["export_bytes"] > 1_000_000
    assert "seconds" in figures["scales"][1]["file_whatif"]
    text = "\n".join(printed)
    assert all(name in text for name in commands) and "whatif on the graph file" in text
