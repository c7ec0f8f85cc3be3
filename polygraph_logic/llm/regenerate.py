"""Regenerating after a retraction: the model rewrites each dead or trimmed model-written
artifact from the evidence that still stands, and the rewrites become a new version.

    plan = plan_regeneration("figure1.graph", Deletion(sources=("PMID:40057077",)))
    plan.to_json()          # what would be asked: artifacts, evidence ids, requests, prompt size
    report = regenerate("figure1.graph", client, Deletion(sources=("PMID:40057077",)))

What is rewritten: under ``trust-all`` (every receipt trusted, as cleanup does), each merge
and each summary the deletion kills, and each sentence-level summary it trims (its dead
sentences are rewritten with it: a summary is rewritten whole, never sentence by sentence).
Each is shown the evidence that still stands (the audit's surviving evidence,
audit/tasks.py: the assertions it cited that the deletion spares and every spared assertion
about its entities) and, as context it may not cite, the standing artifacts about the same
entities (a trimmed summary's surviving sentences, merges naming its entities). An artifact
with no surviving evidence is not asked about: nothing stands to rebuild it from.

The rewrites are asked together through ``ModelClient.answer_all`` (cache or recorded
answers, guards, the answer forced through the schema's tool, citations restricted to the
evidence ids shown; interactively with bounded concurrency or as one Message Batch, as the
client is set). A summary comes back with one receipt per sentence, a merge with its support
sets. The rewrites get new ids (``<old id>-regenerated``) and are written to a receipts
file, then checked and written as ONE version of the graph by query/regenerated.py: the
deletion applied (unless the graph's last version applied it, ``after_deletion``), the
receipts added as ``add --receipts`` adds them, the trimmed summaries they rewrite retired.
Any refused answer (a receipt citing an id not shown, a schema violation, a refusal) is
reported and nothing is written. That includes an answer of which the client left out an
item (a sentence or a merge citing an id not shown, or naming a name not listed:
``Completion.rejected``): where construction keeps the other items, a rewritten summary
silently missing a sentence is not a rewrite, so here the whole answer is refused, with each
item's reason.

``estimate_cost`` prices a plan before anything is asked: input tokens estimated from the
prompt's characters, output tokens bounded by the request's ``max_tokens`` (never estimated).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from polygraph_logic.audit.tasks import SurvivingEvidence, render
from polygraph_logic.errors import PolygraphError
from polygraph_logic.files import write_text_atomically
from polygraph_logic.graph.assertions import Assertion
from polygraph_logic.graph.records import LoadError
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.store.rows import Artifact
from polygraph_logic.llm.client import ModelClient, Question
from polygraph_logic.llm.errors import EmptyAnswer, ModelError, Refusal, SchemaViolation, UnknownCitation
from polygraph_logic.llm.evidence_lines import render_evidence
from polygraph_logic.llm.pricing import PriceTable, Tokens
from polygraph_logic.llm.schemas import Shown
from polygraph_logic.llm.templates import load_template
from polygraph_logic.query.regenerated import RegeneratedVersion, regenerate_version
from polygraph_logic.query.whatif import Deletion, Outcome, what_if

#: the template that rewrites each layer, and the schema its answer has
TEMPLATES = {"summary": ("regenerate-summary", "sentences"), "merge": ("regenerate-merge", "merges")}
#: the policy a retraction is applied under: every receipt trusted, trimmed summaries kept
POLICY = "trust-all"
#: characters per input token for the estimate (no tokenizer is asked: an estimate, said so)
CHARS_PER_TOKEN = 4
#: answers that lose one rewrite (reported; then nothing is written)
REFUSED = (Refusal, EmptyAnswer, SchemaViolation, UnknownCitation)


def estimate_tokens(characters: int) -> int:
    """Returns an estimate of the input tokens of a prompt of ``characters`` (4 characters a token)."""
    return -(-characters // CHARS_PER_TOKEN)


def estimate_cost(plan: "Plan", model: str, prices: PriceTable, max_tokens: int, batch: bool = False) -> dict:
    """Returns what asking ``plan`` would cost on ``model``: the input dollars of the estimated input
    tokens, and at most what ``max_tokens`` output tokens a request would cost (output is bounded,
    not estimated); ``input_dollars`` and ``output_dollars_at_most`` are None, with ``price_note``,
    when the table has no price for the model. ``batch``: at the batch discount."""
    tokens = sum(estimate_tokens(len(r.prompt)) for r in plan.rewrites)
    bound = max_tokens * len(plan.rewrites)
    found = {"model": model, "batch": batch, "input_tokens_estimate": tokens, "output_tokens_at_most": bound,
             "input_dollars": prices.cost(model, Tokens(input=tokens), batch),
             "output_dollars_at_most": prices.cost(model, Tokens(output=bound), batch),
             "prices": prices.source}
    if found["input_dollars"] is None:
        found["price_note"] = prices.no_price(model)
    return found


@dataclass
class Rewrite:
    """One artifact to rewrite: why (dead or trimmed), what the model is shown, the prompt."""

    artifact: str
    layer: str  # merge or summary
    status: str  # dead or trimmed
    covers: tuple[str, ...]  # the dead sentences of a summary, rewritten with it
    new_id: str
    content: dict  # the old content, the rewrite's starts from it
    evidence: tuple[Assertion, ...]
    context: tuple[str, ...]  # the standing artifacts shown (ids)
    names: frozenset[str] | None  # the entity names a merge may use
    template: str
    variables: dict
    prompt: str

    @property
    def shown(self) -> Shown:
        return Shown(frozenset(a.id for a in self.evidence), names=self.names)

    def to_json(self) -> dict:
        return {"artifact": self.artifact, "layer": self.layer, "status": self.status, "covers": list(self.covers),
                "new_id": self.new_id, "evidence": [a.id for a in self.evidence], "context": list(self.context),
                "template": self.template, "prompt_characters": len(self.prompt),
                "input_tokens_estimate": estimate_tokens(len(self.prompt))}


@dataclass
class Plan:
    """What a regeneration would ask: the deletion, the rewrites, the artifacts nothing can rebuild."""

    graph: Path
    deletion: Deletion
    mode: str  # "retract" (the deletion applied with the rewrites) or "after-deletion"
    outcome: Outcome
    rewrites: list[Rewrite] = field(default_factory=list)
    unsupported: list[dict] = field(default_factory=list)

    @property
    def prompt_characters(self) -> int:
        return sum(len(r.prompt) for r in self.rewrites)

    def to_json(self) -> dict:
        return {"graph": str(self.graph), "deletion": str(self.deletion), "mode": self.mode, "policy": POLICY,
                "deleted_assertions": sorted(self.outcome.deleted), "rewrites": [r.to_json() for r in self.rewrites],
                "not_asked": self.unsupported, "requests": len(self.rewrites),
                "prompt_characters": self.prompt_characters,
                "input_tokens_estimate": sum(estimate_tokens(len(r.prompt)) for r in self.rewrites),
                "token_estimate": f"{CHARS_PER_TOKEN} characters a token, not a tokenizer's count"}


def plan_regeneration(graph_path: str | Path, deletion: Deletion | None = None, *,
                      after_deletion: bool = False) -> Plan:
    """Returns what regenerating after ``deletion`` would ask (nothing is asked or written).

    ``after_deletion``: the graph's last version is an applied deletion (``apply``), whose
    deletion and policy are read from its record; the artifacts it killed or trimmed are
    found in the version before it."""
    path = Path(graph_path)
    with Graph(path) as latest:
        taken = latest.has_artifact
        if after_deletion:
            if deletion:
                raise PolygraphError("bad_argument", "name a deletion or use the applied one (--after-deletion), "
                                                     "not both")
            last = latest.version_rows()[-1]
            if last["action"] != "apply":
                raise PolygraphError("not_after_deletion", f"the last version of {path} (version {last['version']}, "
                                     f"{last['action']}) is not an applied deletion; name the deletion instead")
            record = last["record"]
            deletion = Deletion(**{k: tuple(v) for k, v in record["deletion"].items()})
            if record.get("policy") != POLICY:
                raise PolygraphError("bad_argument", f"version {last['version']} applied its deletion under "
                                     f"{record.get('policy')}; regenerate follows {POLICY}")
            before = last["version"] - 1
        elif not deletion:
            raise PolygraphError("bad_argument", "regenerate needs a deletion (--retract-source S, ...) or "
                                                 "--after-deletion")
        else:
            before = None
        ids: set[str] = set()  # the new ids chosen so far: two rewrites never share one
        with Graph(path, at=before) as graph:
            outcome = what_if(graph, deletion, POLICY)
            plan = Plan(path, deletion, "after-deletion" if after_deletion else "retract", outcome)
            _fill(plan, graph, lambda name: name in ids or taken(name), ids)
    return plan


def _fill(plan: Plan, graph: Graph, taken: Callable[[str], bool], chosen: set[str]) -> None:
    """Adds a Rewrite for each dead merge and each dead or trimmed summary of the plan's outcome."""
    outcome = plan.outcome
    layers = {ident: layer for ident, layer in outcome.rows.values()}
    dead = set(outcome.dead)
    covers: dict[str, list[str]] = {}
    for ident in outcome.dead:
        if layers.get(ident) == "sentence":
            covers.setdefault(ident.rsplit("#s", 1)[0], []).append(ident)
    units = [(i, "dead") for i in outcome.dead if layers.get(i) in ("merge", "summary")]
    units += [(s, "trimmed") for s, entry in sorted(outcome.summaries.items()) if entry["status"] == "trimmed"]
    surviving = SurvivingEvidence(graph)
    for ident, status in units:
        artifact = graph.artifact(ident)
        evidence = surviving.of(artifact, outcome.deleted)
        if not evidence:
            plan.unsupported.append({"artifact": ident, "layer": artifact.layer, "status": status,
                                     "reason": "no evidence about it still stands"})
            continue
        new_id = _new_id(ident, taken)
        chosen.add(new_id)
        if artifact.layer == "merge":
            plan.rewrites.append(_merge(artifact, evidence, new_id))
        else:
            plan.rewrites.append(_summary(artifact, status, tuple(covers.get(ident, ())), evidence, new_id, graph,
                                          dead, surviving))


def _new_id(ident: str, taken: Callable[[str], bool]) -> str:
    base = f"{ident}-regenerated"
    candidate, n = base, 1
    while taken(candidate):
        n += 1
        candidate = f"{base}-{n}"
    return candidate


def _merge(artifact: Artifact, evidence: tuple[Assertion, ...], new_id: str) -> Rewrite:
    names = tuple(dict.fromkeys([*artifact.content["members"], artifact.content["canonical"]]))
    template, _ = TEMPLATES["merge"]
    variables = {"artifact": render(artifact, "rederive"), "entities": "\n".join(names),
                 "evidence": render_evidence(evidence)}
    return Rewrite(artifact.id, "merge", "dead", (), new_id, dict(artifact.content), evidence, (),
                   frozenset(names), template, variables, load_template(template).render(variables))


def _summary(artifact: Artifact, status: str, covers: tuple[str, ...], evidence: tuple[Assertion, ...], new_id: str,
             graph: Graph, dead: set[str], surviving: SurvivingEvidence) -> Rewrite:
    sentences = [graph.artifact(s) for s in graph.sentence_ids(artifact.id)]
    text = " ".join(s.content["text"] for s in sentences) if sentences else render(artifact, "rederive")
    context = [(s.id, "sentence", s.content["text"]) for s in sentences if s.id not in dead]
    entities = surviving.entities(artifact)
    for merge in graph.artifacts("merge"):
        names = {*merge.content["members"], merge.content["canonical"]}
        if merge.id not in dead and names & entities:
            context.append((merge.id, "merge", render(merge, "rederive")))
    template, _ = TEMPLATES["summary"]
    variables = {"community": str(artifact.content.get("community", artifact.id)), "artifact": text,
                 "context": "\n".join(f"- {i} ({layer}): {shown}" for i, layer, shown in context) or "(none)",
                 "evidence": render_evidence(evidence)}
    return Rewrite(artifact.id, "summary", status, covers, new_id, dict(artifact.content), evidence,
                   tuple(i for i, _, _ in context), None, template, variables,
                   load_template(template).render(variables))


@dataclass
class RegenerateReport:
    """What a regeneration asked, what it rebuilt, what it could not, and the version it wrote."""

    plan: Plan
    model: str
    receipts: list[dict] = field(default_factory=list)
    not_rebuilt: list[dict] = field(default_factory=list)  # asked, and the answer rebuilt nothing
    usage: dict = field(default_factory=dict)
    receipts_file: str | None = None
    written: RegeneratedVersion | None = None

    def to_json(self) -> dict:
        return {"format": "polygraph-regenerate/1", **self.plan.to_json(), "model": self.model,
                "receipts": self.receipts, "not_rebuilt": self.not_rebuilt, "usage": self.usage,
                "receipts_file": self.receipts_file,
                "version": self.written.to_json() if self.written else None}


def _receipts(rewrite: Rewrite, data: dict) -> list[dict]:
    """Returns the receipt records an answer makes (none: the evidence rebuilds nothing)."""
    if rewrite.layer == "summary":
        content = {k: v for k, v in rewrite.content.items() if k not in ("text", "sentences_kept", "format")}
        content.update(format="sentences", regenerated_from=rewrite.artifact)
        return [{"artifact": rewrite.new_id, "layer": "summary", "content": content, "sentences": data["sentences"]}]
    return [{"artifact": rewrite.new_id if i == 0 else f"{rewrite.new_id}-{i + 1}", "layer": "merge",
             "content": {"canonical": m["canonical"], "members": m["members"], "regenerated_from": rewrite.artifact},
             "support": m["support"]} for i, m in enumerate(data["merges"])]


def _question(rewrite: Rewrite) -> Question:
    """Returns the question that asks for a rewrite (draw 0, citations restricted to the evidence shown)."""
    template, schema = TEMPLATES[rewrite.layer]
    return Question(template, rewrite.variables, 0, schema, rewrite.shown)


def default_receipts_path(graph_path: str | Path) -> Path:
    """Returns ``GRAPH.regenerated-vN.jsonl`` beside the graph, N the version it would write."""
    path = Path(graph_path)
    with Graph(path) as graph:
        version = graph.version_read() + 1
    return path.with_name(f"{path.name}.regenerated-v{version}.jsonl")


def regenerate(graph_path: str | Path, client: ModelClient, deletion: Deletion | None = None, *,
               after_deletion: bool = False, receipts_out: str | Path | None = None,
               progress: Callable[[str], None] | None = None) -> RegenerateReport:
    """Asks the model to rewrite each dead or trimmed model-written artifact and writes the result
    as one new version (see the module docstring); returns the report.

    Raises PolygraphError(regeneration_refused) listing every refused answer (an item the client
    left out refuses its answer), the ModelError of a question with no answer at all
    (``replay_missing``, a quota banner), and LoadError when a receipt fails the ledger's checks;
    in each case nothing is written. With nothing to rewrite, nothing is asked or written
    (``report.written`` is None)."""
    say = progress or (lambda message: None)
    plan = plan_regeneration(graph_path, deletion, after_deletion=after_deletion)
    report = RegenerateReport(plan, client.model)
    questions = [_question(rewrite) for rewrite in plan.rewrites]
    if questions:
        say(f"rewriting {len(questions)} artifact(s)")
    answers = client.answer_all(questions, lambda done, total: say(f"rewriting: {done} of {total} answered"))
    failures = []
    for rewrite, answer in zip(plan.rewrites, answers):
        if isinstance(answer, REFUSED):
            failures.append(f"{rewrite.artifact}: {answer.code}: {answer.message}")
            continue
        if isinstance(answer, ModelError):  # not an answer to refuse: no answer at all (replay_missing, quota)
            raise answer
        if answer.rejected:  # an item left out: the rewrite would be missing it, so the answer is refused
            failures.append(f"{rewrite.artifact}: " + " | ".join(f"{item['code']}: {item['item']} {item['reason']}"
                                                                  for item in answer.rejected))
            continue
        made = _receipts(rewrite, answer.data)
        if not made:
            why = "the model made no merge of these names from the standing evidence"
            report.not_rebuilt.append({"artifact": rewrite.artifact, "reason": why})
        report.receipts.extend(made)
    report.usage = client.usage.to_json(client.model, client.prices)
    if failures:
        raise PolygraphError("regeneration_refused", f"{len(failures)} answer(s) refused, nothing written: "
                             + "; ".join(failures))
    if not report.receipts:
        return report
    out = Path(receipts_out) if receipts_out is not None else default_receipts_path(graph_path)
    if out.exists():
        raise PolygraphError("file_exists", f"{out} exists; the receipts of a version are never overwritten "
                                            "(choose another with --receipts-out)")
    write_text_atomically(out, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in report.receipts))
    replaced = tuple(r.artifact for r in plan.rewrites if r.status == "trimmed"
                     and any(x["content"].get("regenerated_from") == r.artifact for x in report.receipts))
    say(f"writing the version: {len(report.receipts)} receipts")
    record = {"regeneration": plan.mode, "model": client.model,
              "template_versions": {name: load_template(name).version for name, _ in TEMPLATES.values()}}
    try:
        report.written = regenerate_version(graph_path, out, None if after_deletion else plan.outcome, replaced,
                                            plan.outcome.deleted, record=record)
    except (LoadError, PolygraphError):
        out.unlink(missing_ok=True)  # the version was not written: neither is its receipts file
        raise
    report.receipts_file = str(out)
    return report


__all__ = ["Plan", "RegenerateReport", "Rewrite", "estimate_cost", "estimate_tokens", "plan_regeneration",
           "regenerate"]
