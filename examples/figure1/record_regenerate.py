"""Writes regenerate-answers.jsonl, the recorded answer of the README's regeneration of Figure 1: a FIXTURE.

    python examples/figure1/record_regenerate.py

No model is asked. Retracting PMID:40057077 (a31) trims the sentence-level AIM2 summary:
its first sentence ("AIM2 suppresses oral carcinoma.") rested on a31 alone. Regeneration
asks for the summary again from the evidence that still stands, which is paper C's one
assertion, a32 ("AIM2 localises to the cytosol"). ANSWERS holds the answer written by hand
for that prompt: one sentence, citing a32 only. The script renders the prompt exactly as
``polygraph regenerate`` does, so that the recorded line carries its sha256, and writes the
file in the recorded-answers format (``polygraph regenerate --replay`` reads it);
tests/test_docs.py checks that this script still writes the file as committed.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from polygraph_logic import build_graph  # noqa: E402
from polygraph_logic.llm.cache import RECORDED_FORMAT, prompt_sha256  # noqa: E402
from polygraph_logic.llm.regenerate import plan_regeneration  # noqa: E402
from polygraph_logic.llm.templates import load_template  # noqa: E402
from polygraph_logic.query.whatif import Deletion  # noqa: E402

MODEL = "recorded-fixture"
DELETION = Deletion(sources=("PMID:40057077",))
#: the answer to each rewrite, by the artifact rewritten
ANSWERS = {
    "summary:aim2": {"sentences": [{"text": "AIM2 localises to the cytosol.", "support": [["a32"]]}]},
}


def record(path: Path = HERE / "regenerate-answers.jsonl") -> Path:
    with tempfile.TemporaryDirectory() as scratch:
        graph = Path(scratch) / "figure1.graph"
        build_graph(HERE / "assertions.jsonl", HERE / "receipts.jsonl", [ROOT / "rules" / "ro.dl"]).write(graph)
        plan = plan_regeneration(graph, DELETION)
    lines = [{"format": RECORDED_FORMAT, "fixture": "written by examples/figure1/record_regenerate.py from "
              "answers written by hand; no model was asked"}]
    for rewrite in plan.rewrites:
        lines.append({"model": MODEL, "template": rewrite.template,
                      "version": load_template(rewrite.template).version,
                      "prompt_sha256": prompt_sha256(rewrite.prompt), "draw": 0,
                      "text": json.dumps(ANSWERS[rewrite.artifact]), "stop_reason": "tool_use"})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


if __name__ == "__main__":
    print(f"wrote {record().relative_to(ROOT)}")
