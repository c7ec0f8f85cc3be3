"""The bench report: headline figures, Markdown, the plot and the command's wiring.

The benchmarks themselves are timed by `polygraph bench`, never by tests; here the
report is written from known figures and checked.
"""

from __future__ import annotations

import json

import pytest

from polygraph_logic.bench import BenchReport, plot_latency
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
    path = tmp_path / "plot.png"
    assert plot_latency(FIGURES["whatif"], path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not plot_latency({"go": {"skipped": "x"}}, tmp_path / "none.png")
    assert not (tmp_path / "none.png").exists()


def test_figures_are_json_serialisable():
    from polygraph_logic.bench import _jsonable
    text = json.dumps(_jsonable(FIGURES))
    assert json.loads(text)["whatif"]["synthetic"]["latency"]["points"][0] == [12, 0.02]


def test_bench_command_is_wired():
    args = build_parser().parse_args(["bench", "--quick", "-o", "somewhere"])
    assert args.quick and args.output == "somewhere" and callable(args.run)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["bench", "--no-such-flag"])


def test_default_data_follows_the_environment_then_the_checkout(tmp_path, monkeypatch):
    from polygraph_logic.bench import default_data
    monkeypatch.setenv("POLYGRAPH_DATA", str(tmp_path))
    assert default_data() == tmp_path
    monkeypatch.delenv("POLYGRAPH_DATA")
    (tmp_path / "work").mkdir()
    data = tmp_path / "shared" / "data" / "go-pombase"
    data.mkdir(parents=True)
    (data / "truncated-pombase.gpad").write_text("!gpa-version: 2.0\n")
    monkeypatch.chdir(tmp_path / "work")
    found = default_data()
    # the checkout's own data when it is there, else the folder beside the current one
    assert (found / "truncated-pombase.gpad").is_file()
