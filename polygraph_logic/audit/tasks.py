"""Re-derivation tasks: one model-authored artifact, its rendered text and the evidence that
survives a deletion, for one draw.

Surviving evidence, the only evidence an oracle is shown, is the union of

- the artifact's cited assertions (every assertion of every support set) that the
  deletion spares, and
- the spared assertions that mention one of the artifact's entities as subject or
  object: for a merge its members and canonical name, for a summary or a sentence
  the subjects and objects of the assertions it cites (deleted ones included, since
  they name what the text is about).

The second part matters: a constructor that rebuilt the graph without the deleted
source would still see every other statement about these entities, and the receipt
may not have cited all of them. Evidence is listed in the graph's assertion order.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass

from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.assertions import Assertion
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.graph.store.rows import Artifact
from polygraph_logic.audit.deletions import NamedDeletion

PROMPTS = ("rederive", "blind")

#: the template of each (layer, prompt family); a blind summary is a statement to check,
#: as in the study's claim-blind prompts (a merge becomes an open identity question)
TEMPLATES = {
    ("merge", "rederive"): "rederive-merge",
    ("summary", "rederive"): "rederive-summary",
    ("sentence", "rederive"): "rederive-sentence",
    ("merge", "blind"): "blind-merge",
    ("summary", "blind"): "blind-sentence",
    ("sentence", "blind"): "blind-sentence",
}


@dataclass(frozen=True)
class Task:
    """One draw of one re-derivation: what the oracle is asked, and what it may see."""

    deletion: NamedDeletion
    artifact: str
    layer: str  # merge, summary (flat, as a whole) or sentence
    text: str  # the artifact rendered for the prompt family
    evidence: tuple[Assertion, ...]
    draw: int
    prompt: str  # rederive or blind

    @property
    def template(self) -> str:
        """Returns the name of the prompt template this task is put to a model with."""
        return TEMPLATES[self.layer, self.prompt]

    @property
    def evidence_ids(self) -> frozenset[str]:
        return frozenset(a.id for a in self.evidence)


def check_prompt(prompt: str) -> str:
    """Returns the prompt family if known; raises PolygraphError naming the choices otherwise."""
    if prompt not in PROMPTS:
        raise PolygraphError("unknown_prompt", f"unknown prompt family {prompt!r}; choose one of: {', '.join(PROMPTS)}")
    return prompt


def render(artifact: Artifact, prompt: str) -> str:
    """Returns the artifact as the ``{artifact}`` placeholder of its template shows it.

    Merges: ``canonical: X; members: A, B, C`` (rederive) or ``A, B, C`` (blind: the
    mentions only, canonical name included, so that the conclusion is not shown).
    Summaries and sentences: their text.
    """
    content = artifact.content
    if artifact.layer == "merge":
        members = list(dict.fromkeys(content["members"]))
        if prompt == "blind":
            return ", ".join(dict.fromkeys([*members, content["canonical"]]))
        return f"canonical: {content['canonical']}; members: {', '.join(members)}"
    text = content.get("text")
    if artifact.layer == "summary" and not text:
        # a flat summary stored without its prose: the content is all there is to show
        return json.dumps(content, ensure_ascii=False, sort_keys=True)
    return text


class SurvivingEvidence:
    """Finds an artifact's surviving evidence (see the module docstring) in one graph."""

    def __init__(self, graph: Graph):
        self.assertions = graph.assertions
        self.order = {a: i for i, a in enumerate(graph.assertions)}
        self.about: dict[str, list[str]] = defaultdict(list)
        for assertion in graph.assertions.values():
            self.about[assertion.subject].append(assertion.id)
            if assertion.object != assertion.subject:
                self.about[assertion.object].append(assertion.id)

    def entities(self, artifact: Artifact) -> set[str]:
        """Returns the entities an artifact is about (see the module docstring)."""
        if artifact.layer == "merge":
            return {*artifact.content["members"], artifact.content["canonical"]}
        cited = {a for group in artifact.support for a in group}
        return {name for a in cited for name in (self.assertions[a].subject, self.assertions[a].object)}

    def of(self, artifact: Artifact, deleted: frozenset[str]) -> tuple[Assertion, ...]:
        """Returns the assertions an oracle may see for ``artifact`` once ``deleted`` are gone."""
        shown = {a for group in artifact.support for a in group}
        for entity in self.entities(artifact):
            shown.update(self.about.get(entity, ()))
        return tuple(self.assertions[a] for a in sorted(shown - deleted, key=self.order.__getitem__))
