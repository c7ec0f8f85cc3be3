"""Writes the recorded answers of the offline tour of examples/corpus: a FIXTURE, not a model.

    python examples/corpus/record_fixture.py        # rewrites examples/corpus/recorded/

No network, no key, no model: every answer is made here, deterministically, from the
corpus and the prompts the pipeline renders, by the rules below, which follow what the
four invented documents say. The files stand in for what a model would answer, so that
``construct --replay`` and ``audit --oracle replay:`` run the whole model-facing half
offline; tests/test_docs.py checks that this script still writes exactly the files in
the repository (a changed prompt template makes them stale).

- ``recorded/answers.jsonl`` (``polygraph-recorded-answers/1``): one answer per prompt
  the constructor asks, under the model name ``recorded-fixture``:
  claims: the triples listed in CLAIMS, each citing the sentence that states it;
  merges: the names of one SYNONYMS group shown together, one support set per document
  whose claims show two of the names in parallel (same predicate and object);
  summaries: one sentence per evidence line, citing that line.
- ``recorded/audit.jsonl`` (the JSON Lines form ``audit --oracle replay:`` reads): the
  draws of an audit of the built graph under the tour's deletion (``example:doc-1``):
  a merge re-derives when the surviving evidence still shows two members in parallel; a
  sentence re-derives when a surviving assertion states its subject and object.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from polygraph_logic.audit import ScriptedOracle, audit  # noqa: E402
from polygraph_logic.llm.construct import construct  # noqa: E402
from polygraph_logic import build_graph  # noqa: E402
from polygraph_logic.llm import RECORDED_FORMAT, ModelClient  # noqa: E402
from polygraph_logic.llm.cache import prompt_sha256  # noqa: E402
from polygraph_logic.llm.formats import Reply  # noqa: E402
from polygraph_logic.query.whatif import Deletion  # noqa: E402

MODEL = "recorded-fixture"
NOTE = ("a fixture written by examples/corpus/record_fixture.py from the corpus and the prompts, "
        "not answers of a model")
TOUR_DELETION = Deletion(sources=("example:doc-1",))
DRAWS = 5

#: what each document states: (words of the sentence that states it, subject, predicate, object)
CLAIMS = {
    "example:doc-1": [("regulates apoptosis", "MAPK/ERK pathway", "RO:0002211", "apoptosis"),
                      ("controls apoptotic death", "ERK1/2 cascade", "RO:0002211", "apoptosis")],
    "example:doc-2": [("MAPK/ERK activation drives", "MAPK/ERK", "RO:0002213", "cell proliferation"),
                      ("promotes cell proliferation", "ERK1/2 cascade", "RO:0002213", "cell proliferation")],
    "example:doc-3": [("suppresses oral carcinoma", "AIM2", "RO:0002212", "oral carcinoma")],
    "example:doc-4": [("localises to the cytosol", "AIM2", "RO:0001025", "cytosol")],
}
#: names that denote one entity, the canonical name first
SYNONYMS = [["MAPK/ERK", "MAPK/ERK pathway", "ERK1/2 cascade"]]

_EVIDENCE = re.compile(r"^\[([^\]\s]+)\] (.*?) \| (\S+) \| (.*?) \| ", re.MULTILINE)


def _section(prompt: str, heading: str) -> str:
    """Returns the lines of ``prompt`` after the line starting with ``heading``, up to a blank line."""
    lines = prompt.split(heading, 1)[1].split("\n")[1:]
    return "\n".join(lines[:lines.index("")] if "" in lines else lines)


def _claims(prompt: str) -> dict:
    source = re.search(r"\(source (\S+)\)", prompt).group(1)
    sentences = dict(re.findall(r"^\[(s\d+)\] (.*)$", prompt, re.MULTILINE))
    claims = []
    for words, subject, predicate, obj in CLAIMS.get(source, ()):
        cited = [sid for sid, text in sentences.items() if words in text]
        claims.append({"subject": subject, "predicate": predicate, "object": obj, "cites": cited})
    return {"claims": claims}


def _evidence(prompt: str) -> list[tuple[str, str, str, str]]:
    return _EVIDENCE.findall(prompt)


def _parallel(evidence, members) -> list[list[str]]:
    """Per document (the id before '#'), the ids of claims stating two members in parallel."""
    by_document: dict[str, list[tuple]] = {}
    for line in evidence:
        by_document.setdefault(line[0].split("#")[0], []).append(line)
    sets = []
    for document in sorted(by_document):
        lines = [line for line in by_document[document] if line[1] in members]
        pairs = sorted({a[0] for a in lines for b in lines
                        if a[1] != b[1] and (a[2], a[3]) == (b[2], b[3])})
        if pairs:
            sets.append(pairs)
    return sets


def _merges(prompt: str) -> dict:
    names = set(_section(prompt, "Entity names, one per line:").splitlines())
    evidence = _evidence(prompt)
    merges = []
    for group in SYNONYMS:
        members = [name for name in group if name in names]
        support = _parallel(evidence, members)
        if len(members) >= 2 and support:
            merges.append({"canonical": members[0], "members": members, "support": support})
    return {"merges": merges}


def _sentences(prompt: str) -> dict:
    return {"sentences": [{"text": f"{subject} {_LABELS.get(predicate, predicate)} {obj}.", "support": [[aid]]}
                          for aid, subject, predicate, obj in _evidence(prompt)]}


_LABELS = {"RO:0002211": "regulates", "RO:0002212": "negatively regulates", "RO:0002213": "positively regulates",
           "RO:0001025": "is located in"}
ANSWERS = {"extract-claims": _claims, "merge-with-receipts": _merges, "summary-sentences": _sentences}


class Recorder(ModelClient):
    """A ModelClient that answers each prompt with the rules above and keeps what it answered."""

    def __init__(self):
        super().__init__(MODEL, cache=None, max_retries=0, concurrency=1)  # one at a time: the file's order
        self.recorded: list[dict] = []

    def _ask(self, asked):
        prompt, template = asked.prompt.text, asked.template
        text = json.dumps(ANSWERS[template.name](prompt), ensure_ascii=False)
        self.recorded.append({"model": MODEL, "template": template.name, "version": template.version,
                              "prompt_sha256": prompt_sha256(prompt), "draw": asked.question.draw, "text": text,
                              "stop_reason": "end_turn", "prompt": prompt})
        return Reply(text, True, "end_turn")


def _reader(task) -> bool:
    """Whether the surviving evidence still shows the artifact (the rules in the docstring)."""
    evidence = [(a.id, a.subject, a.predicate, a.object) for a in task.evidence]
    if task.layer == "merge":
        members = [m.strip() for m in task.text.split("members:", 1)[1].split(",")] if "members:" in task.text \
            else [name for group in SYNONYMS for name in group]
        return bool(_parallel(evidence, members))
    return any(subject in task.text and obj in task.text for _, subject, _, obj in evidence)


def record(out: Path = HERE / "recorded") -> list[Path]:
    """Writes answers.jsonl and audit.jsonl into ``out``; returns their paths."""
    out.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        recorder = Recorder()
        construct(HERE, Path(scratch) / "out", recorder)
        answers = out / "answers.jsonl"
        lines = [{"format": RECORDED_FORMAT, "fixture": NOTE}, *recorder.recorded]
        answers.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
        graph = Path(scratch) / "example.graph"
        build_graph(Path(scratch) / "out" / "assertions.jsonl", Path(scratch) / "out" / "receipts.jsonl",
                    [ROOT / "rules" / "ro.dl"]).write(graph)
        asked: list[dict] = []

        def answer(task) -> bool:
            verdict = _reader(task)
            asked.append({"deletion": task.deletion.name, "artifact": task.artifact, "draw": task.draw,
                          "verdict": verdict})
            return verdict
        audit(graph, [TOUR_DELETION], ScriptedOracle(answer), draws=DRAWS, tau=0.2)
    draws = out / "audit.jsonl"
    draws.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n"
                             for line in sorted(asked, key=lambda d: (d["deletion"], d["artifact"], d["draw"]))),
                     encoding="utf-8")
    return [answers, draws]


if __name__ == "__main__":
    for path in record():
        print(f"wrote {path.relative_to(ROOT)}")
