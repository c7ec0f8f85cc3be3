"""``polygraph construct`` end to end on examples/corpus with a scripted model (no network).

The scripted model reads each prompt the way a careful constructor would: it extracts
the claims of a fixed phrase table, merges the MAPK/ERK spellings with one evidence
bundle per document, and writes one sentence per evidence line. The expected
assertions, merge and summaries are worked out by hand from the four documents, and
the written files are checked by ``polygraph build`` and a what-if deletion.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from polygraph_logic.cli import main
from polygraph_logic.llm.construct import Constructor, construct, read_corpus, read_relations, split_sentences
from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.index import GraphIndex
from polygraph_logic.graph.records import load_assertions, load_receipts
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.llm import ModelClient, QuotaBanner
from polygraph_logic.query.whatif import Deletion, what_if
from test_llm_client import KEY, ScriptedAPI

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "examples" / "corpus"
PHRASES = {
    "The MAPK/ERK pathway regulates apoptosis": ("MAPK/ERK pathway", "RO:0002211", "apoptosis"),
    "ERK1/2 cascade controls apoptotic death": ("ERK1/2 cascade", "RO:0002211", "apoptosis"),
    "MAPK/ERK activation drives cell proliferation": ("MAPK/ERK", "RO:0002213", "cell proliferation"),
    "The ERK1/2 cascade (MAPK/ERK) promotes": ("ERK1/2 cascade", "RO:0002213", "cell proliferation"),
    "AIM2 suppresses oral carcinoma": ("AIM2", "RO:0002212", "oral carcinoma"),
    "AIM2 localises to the cytosol": ("AIM2", "RO:0001025", "cytosol"),
}
SPELLINGS = ("MAPK/ERK", "MAPK/ERK pathway", "ERK1/2 cascade")
EVIDENCE_LINE = re.compile(r"^\[(\S+)\] (.*?) \| (\S+) \| (.*?) \| (.*)$", re.MULTILINE)


def evidence(prompt: str) -> list[tuple[str, str, str, str]]:
    return [m.groups()[:4] for m in EVIDENCE_LINE.finditer(prompt)]


def scripted(template: str, prompt: str) -> str:
    """A constructor that answers every construction template from what the prompt shows."""
    if template == "extract-claims":
        claims = [{"subject": s, "predicate": p, "object": o, "cites": [sid]}
                  for sid, text in re.findall(r"^\[(s\d+)\] (.*)$", prompt, re.MULTILINE)
                  for phrase, (s, p, o) in PHRASES.items() if phrase in text]
        return json.dumps({"claims": claims})
    if template == "merge-with-receipts":
        names = prompt.split("one per line:\n", 1)[1].split("\n\n", 1)[0].splitlines()
        members = [n for n in SPELLINGS if n in names]
        bundles: dict[str, list[str]] = {}
        for ident, subject, _, _ in evidence(prompt):
            if subject in members:
                bundles.setdefault(ident.split("#")[0], []).append(ident)
        merges = [{"canonical": "MAPK/ERK", "members": members, "support": list(bundles.values())}]
        return json.dumps({"merges": merges if len(members) > 1 else []})
    lines = evidence(prompt)
    sentences = [{"text": f"{s} {p} {o}.", "support": [[ident]]} for ident, s, p, o in lines]
    if template == "summary-sentences":
        return json.dumps({"sentences": sentences})
    text = " ".join(s["text"] for s in sentences)
    if template == "summary-flat":
        return json.dumps({"summary": text, "support": [[ident] for ident, *_ in lines]})
    return json.dumps({"summary": text, "support": [[ident for ident, *_ in lines]]})


@pytest.fixture(autouse=True)
def environment(monkeypatch):
    monkeypatch.delenv("POLYGRAPH_MODEL", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


def run(tmp_path, api, out="out", concurrency=4, **options):
    with ModelClient(cache=tmp_path / "cache.sqlite", http_client=api.http(), sleep=lambda s: None,
                     concurrency=concurrency) as client:
        return construct(CORPUS, tmp_path / out, client, **options)


def test_read_corpus_finds_the_four_example_documents():
    documents = read_corpus(CORPUS)
    assert [d.source for d in documents] == [f"example:doc-{i}" for i in range(1, 5)]
    assert all("Invented example text" in d.text for d in documents)  # marked as an example
    assert split_sentences(documents[0].text) == [
        "Invented example text for polygraph construct; it is not a real abstract.",
        "The MAPK/ERK pathway regulates apoptosis in oral keratinocytes.",
        "Signalling through the ERK1/2 cascade controls apoptotic death of these cells."]


def test_corpus_errors(tmp_path):
    (tmp_path / "a.json").write_text('[{"source": "s:1", "text": "x"}, {"source": "s:1", "text": "y"}]')
    with pytest.raises(PolygraphError, match="already used by") as raised:
        read_corpus(tmp_path)
    assert raised.value.code == "duplicate_source"
    (tmp_path / "a.json").write_text('{"text": "no source"}')
    with pytest.raises(PolygraphError, match="needs a non-empty 'source'"):
        read_corpus(tmp_path)
    (tmp_path / "a.json").unlink()
    (tmp_path / "b.jsonl").write_text('{"source": "s:1", "text": "x"}\n{broken\n')
    with pytest.raises(PolygraphError, match="not valid JSON") as raised:
        read_corpus(tmp_path)
    assert raised.value.position.line == 2


def test_construct_writes_what_polygraph_build_accepts(tmp_path, capsys):
    api = ScriptedAPI(scripted)
    report = run(tmp_path, api)
    out = tmp_path / "out"
    assertions = load_assertions(out / "assertions.jsonl")
    by_id = {a.id: a for a in assertions}
    assert sorted(by_id) == ["example-doc-1#1", "example-doc-1#2", "example-doc-2#1", "example-doc-2#2",
                             "example-doc-3#1", "example-doc-4#1"]
    assert by_id["example-doc-1#2"].triple == ("ERK1/2 cascade", "RO:0002211", "apoptosis")
    assert by_id["example-doc-1#2"].source == "example:doc-1"
    assert by_id["example-doc-1#2"].text == \
        "Signalling through the ERK1/2 cascade controls apoptotic death of these cells."
    receipts = {r.artifact: r for r in load_receipts(out / "receipts.jsonl", set(by_id))}
    assert sorted(receipts) == ["merge:mapk-erk", "summary:aim2", "summary:mapk-erk"]
    merge = receipts["merge:mapk-erk"]
    assert merge.content == {"canonical": "MAPK/ERK", "members": list(SPELLINGS)}
    assert set(merge.support) == {frozenset({"example-doc-1#1", "example-doc-1#2"}),
                                  frozenset({"example-doc-2#1", "example-doc-2#2"})}
    aim2 = receipts["summary:aim2"]
    assert [s.support for s in aim2.sentences] == [(frozenset({"example-doc-3#1"}),),
                                                   (frozenset({"example-doc-4#1"}),)]
    assert len(receipts["summary:mapk-erk"].sentences) == 4
    # 4 extraction calls, 1 merge batch, 2 communities
    assert len(api.requests) == 7
    assert (report.assertions, report.merges, report.summaries, report.sentences) == (6, 1, 2, 6)
    assert report.usage["calls"] == 7 and report.usage["input_tokens"] == 700 and report.failures == []
    assert json.loads((out / "construct.json").read_text())["usage"]["output_tokens"] == 140

    graph = tmp_path / "example.graph"
    assert main(["build", "--assertions", str(out / "assertions.jsonl"), "--receipts", str(out / "receipts.jsonl"),
                 "--rules", "ro", "-o", str(graph)]) == 0
    index = GraphIndex(Graph(graph))
    outcome = what_if(index, Deletion(sources=("example:doc-1",)), "trust-all")
    assert "merge:mapk-erk" in outcome.kept  # document 2 alone still supports the merge
    outcome = what_if(index, Deletion(sources=("example:doc-3",)), "trust-all")
    assert outcome.summaries["summary:aim2"] == {"status": "trimmed", "sentences": 2, "dead_sentences": 1}


def test_a_rerun_answers_from_the_cache_and_writes_the_same_files(tmp_path, capsys, monkeypatch):
    run(tmp_path, ScriptedAPI(scripted))
    again = ScriptedAPI(scripted)
    report = run(tmp_path, again, out="again")
    assert again.requests == [] and report.usage["calls"] == 0 and report.usage["cached"] == 7
    for name in ("assertions.jsonl", "receipts.jsonl"):
        assert (tmp_path / "out" / name).read_bytes() == (tmp_path / "again" / name).read_bytes()
    # the command line, without any key, resumes entirely from that cache
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    out = tmp_path / "cli"
    assert main(["construct", str(CORPUS), "-o", str(out), "--cache", str(tmp_path / "cache.sqlite")]) == 0
    printed = capsys.readouterr().out
    assert "6 assertions, 1 merges, 2 summaries (6 sentences)" in printed and ": 0 calls, 7 answered" in printed
    assert (out / "receipts.jsonl").read_bytes() == (tmp_path / "out" / "receipts.jsonl").read_bytes()


def test_an_empty_extraction_refuses_to_write(tmp_path):
    api = ScriptedAPI(lambda template, prompt: '{"claims": []}')
    with pytest.raises(PolygraphError, match="refusing to write a graph that extracted nothing") as raised:
        run(tmp_path, api)
    assert raised.value.code == "nothing_extracted" and not (tmp_path / "out").exists()
    (tmp_path / "cache.sqlite").unlink()  # else the empty answers above are served again
    refused = ScriptedAPI()
    refused.script = [("I can't help with that.",)] * 4
    with pytest.raises(PolygraphError, match=r"\(4 refusal\)"):
        run(tmp_path, refused, out="refused")
    assert not (tmp_path / "refused").exists()


def test_a_quota_banner_stops_the_run_and_a_rerun_resumes(tmp_path):
    calls = []

    def answer(template, prompt):  # the second call meets the session limit
        calls.append(template)
        return "Claude AI usage limit reached|1767225600" if len(calls) == 2 else scripted(template, prompt)

    with pytest.raises(QuotaBanner):
        run(tmp_path, ScriptedAPI(answer), concurrency=1)  # one call at a time: the banner is the second
    # after the banner nothing more is sent (documents 3 and 4 are not asked)
    assert not (tmp_path / "out").exists() and calls == ["extract-claims"] * 2
    resumed = ScriptedAPI(scripted)
    report = run(tmp_path, resumed)
    # document 1 comes from the cache; the banner was not stored, so document 2 is asked again
    assert len(resumed.requests) == 6 and report.usage["cached"] == 1
    clean = tmp_path / "clean"
    clean.mkdir()
    run(clean, ScriptedAPI(scripted))
    for name in ("assertions.jsonl", "receipts.jsonl"):
        # the same records, but each call's acquisition time: the runs asked at different moments
        assert _timeless(tmp_path / "out" / name) == _timeless(clean / "out" / name)


def _timeless(path) -> list[dict]:
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for record in records:
        (record.get("acquisition") or {}).pop("time", None)
    return records


def test_cli_prints_how_to_resume_after_a_banner(tmp_path, capsys, monkeypatch):
    import polygraph_logic.cli.construct as command
    api = ScriptedAPI(scripted)
    api.script = [("You've hit your session limit · resets 3pm",)]
    monkeypatch.setattr(command, "ModelClient", lambda model, cache, max_retries, **options:
                        ModelClient(model, cache, api.http(), max_retries, **{**options, "concurrency": 1}))
    assert main(["construct", str(CORPUS), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "quota_banner" in err and "run the same command again to resume" in err
    assert (tmp_path / "out" / "cache.sqlite").exists() and not (tmp_path / "out" / "assertions.jsonl").exists()


def test_lost_items_are_reported_and_left_out(tmp_path):
    def answer(template, prompt):
        if template == "merge-with-receipts":  # a receipt citing evidence it was not shown
            return json.dumps({"merges": [{"canonical": "MAPK/ERK", "members": ["MAPK/ERK", "ERK1/2 cascade"],
                                           "support": [["example-doc-9#1"]]}]})
        if template == "summary-sentences" and "AIM2" in prompt.split("Evidence,")[0]:
            return "Output blocked by content filtering policy"
        return scripted(template, prompt)
    report = run(tmp_path, ScriptedAPI(answer))
    assert sorted((f["step"], f["code"]) for f in report.failures) == [("merge", "unknown_citation"),
                                                                       ("summary", "refusal")]
    receipts = [json.loads(line) for line in (tmp_path / "out" / "receipts.jsonl").read_text().splitlines()]
    # unmerged, the spellings stay apart: the hub is the first of the entities that the most
    # assertions mention (ERK1/2 cascade, apoptosis and cell proliferation: two each)
    assert [r["artifact"] for r in receipts] == ["summary:erk1-2-cascade"]
    assert "2 item(s) lost: 1 refusal, 1 unknown_citation" in "\n".join(report.lines())


def test_flat_and_whole_summary_formats_build(tmp_path):
    run(tmp_path, ScriptedAPI(scripted), summary_formats=("sentences", "flat", "whole"), limit=3)
    out = tmp_path / "out"
    assertions = load_assertions(out / "assertions.jsonl")
    assert {a.source for a in assertions} == {"example:doc-1", "example:doc-2", "example:doc-3"}
    receipts = {r.artifact: r for r in load_receipts(out / "receipts.jsonl", {a.id for a in assertions})}
    assert sorted(receipts) == ["merge:mapk-erk", "summary:mapk-erk", "summary:mapk-erk-flat",
                                "summary:mapk-erk-whole"]  # AIM2 has one assertion: no community
    flat, whole = receipts["summary:mapk-erk-flat"], receipts["summary:mapk-erk-whole"]
    assert len(flat.support) == 4 and len(whole.support) == 1 and len(next(iter(whole.support))) == 4
    assert flat.content["text"] == whole.content["text"] and flat.content["format"] == "flat"
    assert main(["build", "--assertions", str(out / "assertions.jsonl"), "--receipts", str(out / "receipts.jsonl"),
                 "-o", str(tmp_path / "g.graph")]) == 0


def test_the_key_appears_in_no_output_file(tmp_path, caplog):
    caplog.set_level("DEBUG")
    run(tmp_path, ScriptedAPI(scripted))
    files = [*(tmp_path / "out").iterdir(), tmp_path / "cache.sqlite"]
    assert len(files) == 4 and all(KEY.encode() not in f.read_bytes() for f in files)
    assert KEY not in caplog.text


def test_relations_file_restricts_the_predicates(tmp_path):
    path = tmp_path / "relations.txt"
    path.write_text("# legal schema\nex:cites cites\nex:overrules\n")
    assert read_relations(path) == {"ex:cites": "cites", "ex:overrules": "ex:overrules"}
    api = ScriptedAPI(scripted)
    with ModelClient(cache=None, http_client=api.http()) as client:
        constructor = Constructor(client, relations=read_relations(path))
        documents = read_corpus(CORPUS)[:1]
        assert constructor.extract(documents) == []  # RO predicates are not allowed here
    assert constructor.failures[0]["code"] == "schema_violation"
    assert "ex:cites cites\nex:overrules ex:overrules" in api.prompts[0]


def test_examples_corpus_is_self_contained(tmp_path):
    copy = tmp_path / "corpus"
    shutil.copytree(CORPUS, copy)
    assert (copy / "README.md").exists() and len(read_corpus(copy)) == 4


def test_each_extracted_assertion_names_its_agent_and_the_call_the_cache_recorded(tmp_path):
    """The agent and acquisition of every assertion equal the answer cache's agent record of the
    extraction call of its document (the model layer's own record), and survive a build."""
    from datetime import datetime, timezone

    from polygraph_logic.llm import AnswerCache

    run(tmp_path, ScriptedAPI(scripted))
    records = [r for r in AnswerCache(tmp_path / "cache.sqlite").agent_records() if r["template"] == "extract-claims"]
    assert len(records) == 4
    assertions = load_assertions(tmp_path / "out" / "assertions.jsonl")
    calls = {}
    for a in assertions:
        agent, call = a.evidence.agent, a.evidence.acquisition
        matching = [r for r in records if r["prompt_sha256"] == call.prompt_sha256]
        assert len(matching) == 1  # one extraction call per document, each its own prompt
        record = matching[0]
        model = record["response_model"] or record["model"]
        assert agent.type == "model" and agent.model == model and agent.prompt == "extract-claims"
        assert agent.prompt_version == record["version"] and len(agent.prompt_sha256) == 64
        assert agent.id == f"model:{model}/extract-claims@{record['version']}"
        assert call.type == "model_call" and call.used == (a.source,) and call.message_id == record["message_id"]
        assert call.time == datetime.fromtimestamp(record["created"], timezone.utc).replace(microsecond=0)
        calls.setdefault(call.id, set()).add(a.source)
    assert len(calls) == 4 and all(len(sources) == 1 for sources in calls.values())
    assert len({a.evidence.agent for a in assertions}) == 1  # one model, one template
    graph = tmp_path / "g.graph"
    assert main(["build", "--assertions", str(tmp_path / "out" / "assertions.jsonl"), "-o", str(graph)]) == 0
    with Graph(graph) as built:
        assert {a.id: a.evidence for a in built.assertions.values()} == {a.id: a.evidence for a in assertions}
