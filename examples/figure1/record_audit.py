"""Writes recorded-audit.jsonl, the recorded draws of the README's audit of Figure 1: a FIXTURE.

    python examples/figure1/record_audit.py

No model is asked: each draw answers whether the surviving evidence still holds one of
the sets of assertions the artifact's text really rests on (REASONS, read off the
example: the merge rests on either evidence group, the flat AIM2 summary states both
findings and so needs both, each sentence its own assertion). That is the example's
README in numbers: the merge agrees with its label, the flat summary's label leaks, the
sentence-level summary is trimmed. ``audit --oracle replay:examples/figure1/recorded-audit.jsonl``
replays them; tests/test_docs.py checks that this script still writes the file as committed.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from polygraph_logic.audit import ScriptedOracle, audit  # noqa: E402
from polygraph_logic import build_graph  # noqa: E402
from polygraph_logic.query.whatif import Deletion  # noqa: E402

#: what each graded artifact's text rests on: alternative sets of assertions
REASONS = {
    "merge:mapk-erk": [{"a12", "a13"}, {"a20", "a21"}],
    "summary:aim2-flat": [{"a31", "a32"}],
    "summary:aim2#s1": [{"a31"}],
    "summary:aim2#s2": [{"a32"}],
}
DELETIONS = [Deletion(sources=("PMID:40057077",)), Deletion(sources=("PMID:39973430",))]


def record(path: Path = HERE / "recorded-audit.jsonl") -> Path:
    asked = []

    def answer(task) -> bool:
        verdict = any(reason <= task.evidence_ids for reason in REASONS[task.artifact])
        asked.append({"deletion": task.deletion.name, "artifact": task.artifact, "draw": task.draw,
                      "verdict": verdict})
        return verdict

    with tempfile.TemporaryDirectory() as scratch:
        graph = Path(scratch) / "figure1.graph"
        build_graph(HERE / "assertions.jsonl", HERE / "receipts.jsonl", [ROOT / "rules" / "ro.dl"]).write(graph)
        audit(graph, DELETIONS, ScriptedOracle(answer), draws=5, tau=0.2)
    path.write_text("".join(json.dumps(line) + "\n" for line in asked), encoding="utf-8")
    return path


if __name__ == "__main__":
    print(f"wrote {record().relative_to(ROOT)}")
