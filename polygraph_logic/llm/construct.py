"""The constructor: documents in, assertions and receipts (claims, merges, summaries) out.

A one-way pipeline of model calls, each through ModelClient (cached, guarded, strictly
parsed), each emitting its receipt in the call that creates the artifact:

1. extraction: a document, shown as numbered sentences, becomes claims; each claim is
   an assertion ``<source-slug>#<n>`` of the document's source, citing its sentences, naming
   its agent (the model and the prompt template) and acquisition (the call: ``call_evidence``);
2. merges: entity names, in batches of names that share a word, with the assertions
   that mention them, become merges whose support sets cite those assertions;
3. communities: connected groups of (merged) entities, split when large;
4. summaries: one per community, by default one receipt per sentence (``sentences``);
   the study's ``flat`` and ``whole`` formats are there for comparison.

The result is ``assertions.jsonl`` and ``receipts.jsonl`` in the formats ``polygraph
build`` reads, and ``construct.json`` with the cost report. A re-run asks the cache
first, so an interrupted construction resumes where it stopped. A graph that extracted
nothing from a non-empty corpus is never written: that is what a cached quota banner
looks like downstream.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Mapping

from polygraph_logic.errors import PolygraphError
from polygraph_logic.files import write_text_atomically
from polygraph_logic.graph.agents import Acquisition, Agent
from polygraph_logic.graph.assertions import Assertion
from polygraph_logic.graph.evidence import Evidence
from polygraph_logic.llm.client import Completion, ModelClient, Question
from polygraph_logic.llm.corpus import Document, read_corpus, read_relations, slug, split_sentences
from polygraph_logic.llm.errors import EmptyAnswer, Refusal, SchemaViolation, UnknownCitation
from polygraph_logic.llm.evidence_lines import render_evidence
from polygraph_logic.llm.schemas import Shown
from polygraph_logic.progress import Progress

__all__ = ["DEFAULT_RELATIONS", "SUMMARY_TEMPLATES", "ConstructReport", "Constructor", "Document", "construct",
           "read_corpus", "read_relations", "slug", "split_sentences"]

#: the relations a claim may use by default: RO/BFO predicates of biomedical abstracts
DEFAULT_RELATIONS = {
    "RO:0002211": "regulates",
    "RO:0002212": "negatively regulates",
    "RO:0002213": "positively regulates",
    "RO:0002411": "causally upstream of",
    "RO:0001025": "located in",
    "BFO:0000050": "part of",
    "RO:0002331": "involved in",
    "RO:0002327": "enables",
    "RO:0002434": "interacts with",
    "RO:0003302": "causes or contributes to condition",
}
#: summary formats and the template that elicits each
SUMMARY_TEMPLATES = {"sentences": "summary-sentences", "flat": "summary-flat", "whole": "summary-whole"}
#: failures that lose one item (so do a batch request's errors: ``batch_errored``, ``batch_expired``, ...);
#: any other ModelError (a quota banner, an API that stays down, a missing key) stops the run,
#: since every later call would fail the same way
SKIPPABLE = (Refusal, EmptyAnswer, SchemaViolation, UnknownCitation)
_WORD = re.compile(r"[a-z][a-z0-9]*")


@dataclass
class ConstructReport:
    """What a construction produced, what it cost and what failed."""

    model: str
    documents: int = 0
    assertions: int = 0
    merges: int = 0
    summaries: int = 0
    sentences: int = 0
    failures: list[dict] = field(default_factory=list)
    usage: dict = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    cost: str = ""  # the usage as one line: calls, tokens by kind, dollars

    def to_json(self) -> dict:
        """Returns the report as a JSON object."""
        return {"format": "polygraph-construct/1", "model": self.model, "documents": self.documents,
                "assertions": self.assertions, "merges": self.merges, "summaries": self.summaries,
                "sentences": self.sentences, "usage": self.usage, "failures": self.failures,
                "files": self.files}

    def lines(self) -> list[str]:
        """Returns the report as text lines (counts, then the cost, then each failure)."""
        u = self.usage
        out: list[str] = [f"{self.documents} documents -> {self.assertions} assertions, {self.merges} merges, "
               f"{self.summaries} summaries ({self.sentences} sentences)",
               self.cost or f"model {self.model}: {u.get('calls', 0)} calls, {u.get('cached', 0)} answered from "
                            f"the cache"]
        if self.failures:
            codes = Counter(f["code"] for f in self.failures)
            counts = ", ".join(f"{n} {c}" for c, n in sorted(codes.items()))
            out.append(f"{len(self.failures)} item(s) lost: {counts}")
            out.extend(f"  {f['step']} {f['item']}: {f['code']}: {f['message']}" for f in self.failures)
        return out


class Constructor:
    """Runs the construction steps with one ModelClient; failures of single items are
    recorded in ``failures`` and the item is left out."""

    def __init__(self, client: ModelClient, *, relations: Mapping[str, str] | None = None,
                 summary_formats: Iterable[str] = ("sentences",), merge_batch: int = 40,
                 evidence_per_name: int = 4, community_size: int = 40, min_community: int = 2):
        self.client = client
        self.relations = dict(relations or DEFAULT_RELATIONS)
        self.summary_formats = tuple(dict.fromkeys(summary_formats))
        unknown = [f for f in self.summary_formats if f not in SUMMARY_TEMPLATES]
        if unknown or not self.summary_formats:
            raise PolygraphError("bad_option", f"summary format(s) {', '.join(unknown) or '(none)'}: "
                                 f"choose from {', '.join(SUMMARY_TEMPLATES)}")
        self.merge_batch, self.evidence_per_name = merge_batch, evidence_per_name
        self.community_size, self.min_community = community_size, min_community
        self.failures: list[dict] = []

    def _ask_all(self, step: str, title: str, items: list[tuple[str, Question]]) -> list[Completion | None]:
        """Returns the answer to each (item, question), None for an item lost (recorded in ``failures``,
        as is every item of an answer that was left out); another ModelError stops the run."""
        progress = Progress(title, len(items), unit="calls")

        def tick(done: int, total: int) -> None:
            progress.total = total
            progress.step(amount=done - progress.count)

        results = self.client.answer_all([question for _, question in items], progress=tick)
        progress.done()
        found: list[Completion | None] = []
        for (item, _), result in zip(items, results):
            if isinstance(result, Completion):
                self.failures.extend({"step": step, "item": f"{item} {r['item']}", "code": r["code"],
                                      "message": r["reason"]} for r in result.rejected)
                found.append(result)
            elif isinstance(result, SKIPPABLE) or result.code.startswith("batch_"):
                self.failures.append({"step": step, "item": item, "code": result.code, "message": result.message})
                found.append(None)
            else:
                raise result
        return found

    def extract(self, documents: list[Document]) -> list[Assertion]:
        """Returns the assertions the model extracts from each document."""
        relations = "\n".join(f"{curie} {label}" for curie, label in self.relations.items())
        slugs: dict[str, int] = Counter()
        asked: list[tuple[str, list[str], tuple[str, Question]]] = []
        for document in documents:
            base = slug(document.source)
            slugs[base] += 1
            prefix = base if slugs[base] == 1 else f"{base}-{slugs[base]}"
            sentences = split_sentences(document.text)
            if not sentences:
                continue
            asked.append((prefix, sentences, (document.source, Question("extract-claims", {
                "relations": relations, "source": document.source,
                "document": "\n".join(f"[s{i}] {s}" for i, s in enumerate(sentences, 1))}, 0, "claims",
                Shown(frozenset(f"s{i}" for i in range(1, len(sentences) + 1)),
                      predicates=frozenset(self.relations))))))
        answers = self._ask_all("extract", "extracting claims", [item for _, _, item in asked])
        assertions: list[Assertion] = []
        for (prefix, sentences, (source, _)), answer in zip(asked, answers):
            seen: set[tuple[str, str, str]] = set()
            evidence = call_evidence(answer, source) if answer is not None else None
            for claim in (answer.data if answer is not None else {}).get("claims", ()):
                triple = (claim["subject"], claim["predicate"], claim["object"])
                if triple in seen:  # one document stating a triple twice is one assertion
                    continue
                seen.add(triple)
                cited = sorted(int(c[1:]) for c in claim["cites"])
                assertions.append(Assertion(f"{prefix}#{len(seen)}", source, *triple,
                                            text=" ".join(sentences[i - 1] for i in cited), evidence=evidence))
        return assertions

    def merge_batches(self, assertions: list[Assertion]) -> list[list[str]]:
        """Returns batches of entity names: names sharing a word stay together where they fit."""
        names = sorted({a.subject for a in assertions} | {a.object for a in assertions})
        parent = {name: name for name in names}

        def root(name: str) -> str:
            while parent[name] != name:
                parent[name] = parent[parent[name]]
                name = parent[name]
            return name

        by_word: dict[str, str] = {}
        for name in names:
            for word in {w.rstrip("0123456789") for w in _WORD.findall(name.lower())}:
                if len(word) >= 3:
                    if word in by_word:
                        parent[root(name)] = root(by_word[word])
                    else:
                        by_word[word] = name
        groups: dict[str, list[str]] = defaultdict(list)
        for name in names:
            groups[root(name)].append(name)
        batches: list[list[str]] = []
        for group in sorted(groups.values(), key=lambda g: (-len(g), g[0])):
            for start in range(0, len(group), self.merge_batch):
                piece = group[start:start + self.merge_batch]
                fitting = next((b for b in batches if len(b) + len(piece) <= self.merge_batch), None)
                if fitting is None:
                    batches.append(list(piece))
                else:
                    fitting.extend(piece)
        return [sorted(b) for b in batches]

    def merge(self, assertions: list[Assertion]) -> list[dict]:
        """Returns merge receipts over the entity names of the assertions."""
        mentions: dict[str, list[Assertion]] = defaultdict(list)
        for a in assertions:
            mentions[a.subject].append(a)
            if a.object != a.subject:
                mentions[a.object].append(a)
        receipts, used = [], Counter()
        asked = []
        for number, batch in enumerate(self.merge_batches(assertions), 1):
            if len(batch) < 2:  # one name has nothing to be merged with
                continue
            evidence = list({a.id: a for name in batch for a in mentions[name][:self.evidence_per_name]}.values())
            asked.append((f"batch {number}", Question(
                "merge-with-receipts", {"entities": "\n".join(batch), "evidence": render_evidence(evidence)}, 0,
                "merges", Shown(frozenset(a.id for a in evidence), names=frozenset(batch)))))
        for answer in self._ask_all("merge", "merging entities", asked):
            for merge in (answer.data if answer is not None else {}).get("merges", ()):
                base = f"merge:{slug(merge['canonical'])}"
                used[base] += 1
                receipts.append({"artifact": base if used[base] == 1 else f"{base}-{used[base]}", "layer": "merge",
                                 "content": {"canonical": merge["canonical"], "members": merge["members"]},
                                 "support": merge["support"]})
        return receipts

    def communities(self, assertions: list[Assertion],
                    merges: list[dict]) -> list[tuple[str, list[str], list[Assertion]]]:
        """Returns ``(hub entity, entities, assertions)`` per community: connected components of
        the entity graph after merging, cut into pieces of at most ``community_size`` assertions."""
        canonical = {m: r["content"]["canonical"] for r in merges for m in r["content"]["members"]}
        name = lambda entity: canonical.get(entity, entity)  # noqa: E731
        neighbours: dict[str, set[str]] = defaultdict(set)
        about: dict[str, list[Assertion]] = defaultdict(list)
        for a in assertions:
            s, o = name(a.subject), name(a.object)
            neighbours[s].add(o)
            neighbours[o].add(s)
            about[s].append(a)
        communities, placed = [], set()
        for start in sorted(neighbours, key=lambda e: (-len(neighbours[e]), e)):
            if start in placed:
                continue
            order, queue = [], [start]  # breadth first from the best-connected entity
            placed.add(start)
            while queue:
                entity = queue.pop(0)
                order.append(entity)
                for other in sorted(neighbours[entity] - placed):
                    placed.add(other)
                    queue.append(other)
            members = [a for entity in order for a in about[entity]]
            for cut in range(0, len(members), self.community_size):
                piece = members[cut:cut + self.community_size]
                if len(piece) < self.min_community:
                    continue
                entities = list(dict.fromkeys(e for a in piece for e in (name(a.subject), name(a.object))))
                hub = max(entities, key=lambda e: (sum(e in (name(a.subject), name(a.object)) for a in piece),
                                                   -entities.index(e)))
                communities.append((hub, entities, piece))
        return communities

    def summarize(self, assertions: list[Assertion], merges: list[dict]) -> list[dict]:
        """Returns summary receipts, one per community and summary format."""
        aliases: dict[str, list[str]] = {r["content"]["canonical"]: [m for m in r["content"]["members"]
                                         if m != r["content"]["canonical"]] for r in merges}
        communities = self.communities(assertions, merges)
        receipts, used, asked = [], Counter(), []
        for hub, entities, piece in communities:
            base = slug(hub)
            used[base] += 1
            community = base if used[base] == 1 else f"{base}-{used[base]}"
            described = "; ".join(e + (f" (also: {', '.join(aliases[e])})" if aliases.get(e) else "")
                                  for e in entities)
            variables = {"community": described, "evidence": render_evidence(piece)}
            shown = Shown(frozenset(a.id for a in piece))
            for fmt in self.summary_formats:
                artifact = f"summary:{community}" + ("" if fmt == "sentences" else f"-{fmt}")
                schema = "sentences" if fmt == "sentences" else "summary"
                content = {"community": community, "format": fmt, "entities": entities}
                asked.append((content, (artifact, Question(SUMMARY_TEMPLATES[fmt], variables, 0, schema, shown))))
        answers = self._ask_all("summary", "writing summaries", [item for _, item in asked])
        for (content, (artifact, _)), answer in zip(asked, answers):
            if answer is None:
                continue
            data = answer.data
            if content["format"] != "sentences":
                receipts.append({"artifact": artifact, "layer": "summary",
                                 "content": {**content, "text": data["summary"]}, "support": data["support"]})
            elif data["sentences"]:
                receipts.append({"artifact": artifact, "layer": "summary", "content": content,
                                 "sentences": data["sentences"]})
            else:  # every sentence was left out (each is listed in failures with its reason)
                self.failures.append({"step": "summary", "item": artifact, "code": "schema_violation",
                                      "message": "no sentence of the answer is valid"})
        return receipts


def call_evidence(answer: Completion, source: str) -> Evidence:
    """The agent and acquisition of the assertions one model call extracted from ``source``: the model
    (as the API reported it) with the template's name, version and sha256, and the call (the rendered
    prompt's sha256, the message and request ids, when it was answered, the document it used)."""
    model = answer.response_model or answer.model
    agent = Agent(f"model:{model}/{answer.template}@{answer.version}", "model", model=model, prompt=answer.template,
                  prompt_version=answer.version, prompt_sha256=answer.template_sha256 or None)
    when = datetime.fromtimestamp(answer.created, timezone.utc).replace(microsecond=0) if answer.created else None
    call = Acquisition(f"call:{answer.template}@{answer.version}/{answer.prompt_sha256[:16]}", "model_call", when,
                       used=(source,), prompt_sha256=answer.prompt_sha256 or None, message_id=answer.message_id,
                       request_id=answer.request_id)
    return Evidence(agent=agent, acquisition=call)


def _jsonl(records: Iterable[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def construct(corpus: str | Path | list[Document], out_dir: str | Path, client: ModelClient, *,
              limit: int | None = None, **options) -> ConstructReport:
    """Builds ``OUT_DIR/assertions.jsonl``, ``receipts.jsonl`` and ``construct.json`` from a corpus.

    ``options`` go to Constructor (relations, summary_formats, merge_batch, ...). Raises
    PolygraphError(nothing_extracted) without writing anything when a non-empty corpus
    gave no assertion, and lets a quota banner or an unreachable API stop the run (the
    answers so far are cached, so running again resumes).
    """
    documents = corpus if isinstance(corpus, list) else read_corpus(corpus)
    documents = documents[:limit] if limit is not None else documents
    if not documents:
        raise PolygraphError("empty_corpus", f"no documents (.txt, .json, .jsonl) in {corpus}")
    constructor = Constructor(client, **options)
    report = ConstructReport(client.model, documents=len(documents))
    assertions = constructor.extract(documents)
    if not assertions:
        report.failures, report.usage = constructor.failures, client.usage.to_json(client.model, client.prices)
        reasons = Counter(f["code"] for f in constructor.failures)
        why = ", ".join(f"{n} {c}" for c, n in sorted(reasons.items())) or "every answer listed no claim"
        raise PolygraphError("nothing_extracted", f"{len(documents)} document(s) gave no assertion ({why}); "
                             "refusing to write a graph that extracted nothing from a non-empty corpus")
    merges = constructor.merge(assertions)
    summaries = constructor.summarize(assertions, merges)
    out = Path(out_dir)
    try:
        out.mkdir(exist_ok=True)  # the output folder itself, never its parents
    except OSError as error:
        raise PolygraphError("io_error", f"cannot create the folder {out}: {error.strerror or error}") from None
    write_text_atomically(out / "assertions.jsonl", _jsonl(a.to_json() for a in assertions))
    write_text_atomically(out / "receipts.jsonl", _jsonl([*merges, *summaries]))
    report.assertions, report.merges, report.summaries = len(assertions), len(merges), len(summaries)
    report.sentences = sum(len(r.get("sentences", ())) for r in summaries)
    report.failures, report.usage = constructor.failures, client.usage.to_json(client.model, client.prices)
    report.cost = client.usage.line(client.model, client.prices)
    report.files = [str(out / "assertions.jsonl"), str(out / "receipts.jsonl"), str(out / "construct.json")]
    write_text_atomically(out / "construct.json",
                          json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n")
    return report
