"""Retrieval consequences of cleanup: how often BM25 still serves dead content, and at what
cost in recall, per cleanup policy (the shape of the PolyGraph study's Table 4).

Documents.  Every artifact is one document: a claim or entailed edge is rendered as
``subject <relation label> object`` (labels from the comments of the shipped
``rules/ro.dl``, see relation_labels), a merge as its canonical name and members, a flat
summary as its text, a sentence as its text, and a sentence-level summary as its
sentences.  Tokens are lowercased runs of letters and digits; a CURIE such as
``GO:0005634`` stays one token.  One BM25 index (rank-bm25's Okapi, k1=1.5, b=0.75,
epsilon=0.25) covers every artifact of the graph; idf and average length are those of
the whole graph in every view, so a policy only masks documents.  A sentence-level
summary that a view trims to some of its sentences is scored as the text of those
sentences under the same statistics.  A query retrieves the documents sharing a token
with it, best first by score, ties by artifact id; the top k are kept.

Views.  *before cleanup*: the raw graph.  A policy (whatif.what_if): every artifact not
in ``outcome.dead``, sentence-level summaries trimmed to their kept sentences.  The
*perfect maintainer*: every artifact alive by ground truth, trimmed the same way.

Ground truth, per deletion.  A claim is dead iff every assertion stating it is deleted.
An entailed edge is dead iff symbolic re-derivation cannot derive it (what_if with
``exact=True``: exact labels are complete by the design's semantics, capped ones are
settled by rederive.Rederiver).  A merge, summary or sentence follows the audit verdict
for this deletion (AuditVerdicts) when one is decided, else its label (an "undecided"
verdict falls back to the label and is counted).  A sentence-level summary is dead when
its own verdict says so or every sentence is dead.

Metrics.  A retrieved document is dead content when its artifact is dead by ground truth
or, for a summary, when its text holds a sentence dead by ground truth.  tainted@k: the
fraction of queries whose top k holds dead content.  recall@k: the mean over queries of
|top_k(view) ∩ top_k(perfect)| / |top_k(perfect)|, artifacts compared by id; queries
whose perfect top k is empty are skipped and counted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
from rank_bm25 import BM25Okapi

from polygraph_logic.audit.deletions import deletion_key
from polygraph_logic.audit.report import load_audit
from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.index import GraphIndex
from polygraph_logic.progress import Progress
from polygraph_logic.query.rederive import Rederiver
from polygraph_logic.resources import resource_path
from polygraph_logic.query.whatif import Deletion, check_policy, what_if

POLICIES = ("deployed", "trust-all", "distrust:summary", "flat")
MODEL_LAYERS = ("merge", "summary", "sentence")
# relations of graphs built from ontologies that are not RO properties
EXTRA_LABELS = {"rdfs:subClassOf": "is a", "owl:sameAs": "same as"}
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9_]*:[A-Za-z0-9_]+(?:[.\-][A-Za-z0-9_]+)*|[^\W_]+")
_CURIE = re.compile(r'"([A-Za-z][\w.-]*:[\w.-]+)"')


def tokenize(text: str) -> list[str]:
    """Returns the lowercased tokens of a text: CURIEs whole, else runs of letters and digits."""
    return [token.lower() for token in _TOKEN.findall(text)]


@lru_cache(maxsize=1)
def relation_labels() -> dict[str, str]:
    """Returns CURIE -> rdfs:label for the relations named in the comments of rules/ro.dl.

    Each compiled rule ends with ``// [kind: ]body labels -> head label`` (``o`` between
    chain steps) or ``// transitive: label``; labels are paired with the rule's CURIEs in order.
    """
    labels: dict[str, str] = {}
    for line in resource_path("rules", "ro.dl").read_text("utf-8").splitlines():
        rule, _, comment = line.partition("//")
        if ":-" not in rule or not comment.strip() or not rule.startswith("edge("):
            continue
        if comment.lstrip().startswith(("SWRL", "hasSelf")):  # atoms with arguments, not bare labels
            continue
        head, body = rule.split(":-", 1)
        comment = re.sub(r"^\s*(transitive|symmetric|inverse|equivalent):", "", comment).strip()
        names = comment.split(" -> ")
        pairs = list(zip(_CURIE.findall(head), names[-1:]))
        if len(names) == 2:
            pairs += zip(_CURIE.findall(body), names[0].split(" o "))
        elif not names[0].startswith("inverse("):
            pairs += [(c, names[0]) for c in _CURIE.findall(body)]
        for curie, name in pairs:
            if not name.startswith("inverse("):
                labels.setdefault(curie, name.strip())
    return {**EXTRA_LABELS, **labels}


def artifact_text(layer: str, content: dict, labels: dict[str, str] | None = None) -> str:
    """Returns the retrievable text of an artifact (a sentence-level summary: see Retriever)."""
    if layer in ("claim", "edge"):
        labels = relation_labels() if labels is None else labels
        predicate = content["predicate"]
        return f"{content['subject']} {labels.get(predicate, predicate)} {content['object']}"
    if layer == "merge":
        names = dict.fromkeys([content["canonical"], *content.get("members", ())])
        return "; ".join(names)
    if isinstance(content.get("text"), str):
        return content["text"]
    return " ".join(str(v) for v in content.values() if isinstance(v, str))


class Retriever:
    """One BM25 index over every artifact of a graph; views select and trim its documents.

    Document i < len(index.ranked) is the artifact of rank i with its full text; trimmed
    sentence-level summaries are added by ``document`` (scored with the same statistics).
    """

    def __init__(self, index: GraphIndex, labels: dict[str, str] | None = None):
        self.index = index
        labels = relation_labels() if labels is None else labels
        contents = {a.id: a for a in index.graph.artifacts()}
        # a sentence-level summary is the text of its sentences, in their order
        self.sentences: dict[str, list[str]] = {
            summary: sorted(ids, key=lambda s: contents[s].content.get("index", 0))
            for summary, ids in index.sentences.items()}
        self.texts = [artifact_text(a.layer, contents[a.id].content, labels) for a in index.ranked]
        for summary, ids in self.sentences.items():
            self.texts[index.artifacts[summary].rank] = " ".join(self.texts[index.artifacts[s].rank] for s in ids)
        if not self.texts:
            raise PolygraphError("empty_graph", f"{index.graph.path} holds no artifact to retrieve")
        tokens = [tokenize(t) for t in self.texts]
        self.bm25 = BM25Okapi(tokens)
        self.artifact_of: list[str] = list(index.ids)  # document -> artifact id
        self.variants: dict[tuple[str, tuple[str, ...]], int] = {}
        self.extra: list[dict[str, int]] = []  # term counts of the trimmed documents
        self.postings: dict[str, list[int]] = {}
        for doc, words in enumerate(tokens):
            for word in dict.fromkeys(words):
                self.postings.setdefault(word, []).append(doc)

    @property
    def size(self) -> int:
        """Returns the number of documents: one per artifact plus the trimmed summaries."""
        return len(self.artifact_of)

    def document(self, artifact: str, sentences: Iterable[str] | None = None) -> int | None:
        """Returns the document of an artifact, or of a sentence-level summary trimmed to the
        given sentences (added on first use); None when no sentence is left."""
        rank = self.index.artifacts[artifact].rank
        if sentences is None or artifact not in self.sentences:
            return rank
        kept = set(sentences)
        chosen = tuple(s for s in self.sentences[artifact] if s in kept)
        if len(chosen) == len(self.sentences[artifact]):
            return rank
        if not chosen:
            return None
        key = (artifact, chosen)
        if key not in self.variants:
            doc = self.variants[key] = len(self.artifact_of)
            self.artifact_of.append(artifact)
            words = tokenize(" ".join(self.texts[self.index.artifacts[s].rank] for s in chosen))
            counts: dict[str, int] = {}
            for word in words:
                counts[word] = counts.get(word, 0) + 1
            counts[""] = len(words)  # the document length, under a key no token can have
            self.extra.append(counts)
            for word in counts:
                if word:
                    self.postings.setdefault(word, []).append(doc)
        return self.variants[key]

    def scores(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """Returns the documents sharing a token with the query and their BM25 scores."""
        words = tokenize(query)
        docs = sorted({d for w in dict.fromkeys(words) for d in self.postings.get(w, ())})
        base = [d for d in docs if d < len(self.texts)]
        scores = list(self.bm25.get_batch_scores(words, base)) if base else []
        bm25 = self.bm25
        for doc in docs[len(base):]:
            counts = self.extra[doc - len(self.texts)]
            norm = bm25.k1 * (1 - bm25.b + bm25.b * counts[""] / bm25.avgdl)
            scores.append(sum((bm25.idf.get(w) or 0) * counts.get(w, 0) * (bm25.k1 + 1) / (counts.get(w, 0) + norm)
                              for w in words))
        return np.array(docs, dtype=np.int64), np.array(scores, dtype=float)

    def order(self) -> np.ndarray:
        """Returns each document's position in artifact-id order (the tie-break)."""
        ids = self.artifact_of
        position = {artifact: i for i, artifact in enumerate(sorted(set(ids)))}
        return np.array([position[a] for a in ids], dtype=np.int64)

    def documents(self, dead: Iterable[str] = ()) -> set[int]:
        """Returns the documents a graph cleaned of the ``dead`` artifacts serves: every other
        artifact, sentence-level summaries trimmed to their sentences not in ``dead``."""
        dead = set(dead)
        docs = set()
        for artifact in self.index.ids:
            if artifact not in dead:
                sentences = self.sentences.get(artifact)
                doc = self.document(artifact, None if sentences is None else [s for s in sentences if s not in dead])
                if doc is not None:
                    docs.add(doc)
        return docs

    def visible(self, dead: Iterable[str] = ()) -> np.ndarray:
        """Returns ``documents(dead)`` as a mask for ``search``."""
        docs = list(self.documents(dead))  # first: it may add trimmed summaries
        mask = np.zeros(self.size, dtype=bool)
        mask[docs] = True
        return mask

    def search(self, query: str, k: int = 10, visible: np.ndarray | None = None) -> list[tuple[str, float]]:
        """Returns the top k (artifact id, score) pairs among the visible documents (a mask,
        e.g. ``visible(what_if(...).dead)``; None: every artifact with its full text)."""
        if visible is None:
            visible = np.arange(self.size) < len(self.texts)
        docs, scores = self.scores(query)
        top = top_k(docs, scores, self.order(), k, visible)
        return [(self.artifact_of[d], float(s)) for d, s in top]


def top_k(docs: np.ndarray, scores: np.ndarray, order: np.ndarray, k: int,
          visible: np.ndarray | None = None) -> list[tuple[int, float]]:
    """Returns the best k (document, score) pairs: score descending, then artifact id."""
    if visible is not None:  # documents added after the mask was made are not visible
        keep = np.zeros(len(docs), dtype=bool)
        inside = docs < len(visible)
        keep[inside] = visible[docs[inside]]
        docs, scores = docs[keep], scores[keep]
    best = np.lexsort((order[docs], -scores))[:k]
    return [(int(docs[i]), float(scores[i])) for i in best]


class AuditVerdicts:
    """The per-artifact verdicts of an audit file (contract polygraph-audit/1), by deletion."""

    def __init__(self, deletions: dict[tuple[frozenset, ...], tuple[str, dict[str, str]]], path: str = ""):
        self.deletions, self.path = deletions, path

    @classmethod
    def load(cls, path: str | Path) -> "AuditVerdicts":
        """Reads the "deletions" -> "artifacts" verdicts; a malformed file is an error naming it."""
        data = load_audit(path)
        deletions = {}
        try:
            for entry in data["deletions"]:
                key = deletion_key(entry["deletion"])
                verdicts = {}
                for row in entry["artifacts"]:
                    if row["verdict"] not in ("alive", "dead", "undecided"):
                        raise ValueError(f"verdict {row['verdict']!r} of {row['artifact']}")
                    verdicts[row["artifact"]] = row["verdict"]
                deletions[key] = (entry.get("name", ""), verdicts)
        except (AttributeError, KeyError, TypeError, ValueError) as error:
            raise PolygraphError("verdicts_error", f"{path}: malformed deletions entry ({error})") from None
        return cls(deletions, str(path))

    def for_deletion(self, deletion: Deletion) -> tuple[str, dict[str, str]] | None:
        """Returns (audited name, {artifact: verdict}) of the audited deletion equal as sets."""
        return self.deletions.get(deletion_key(deletion))


@dataclass
class Truth:
    """Ground truth for one deletion: dead artifacts and where each layer's answer came from."""

    dead: set[str]
    sources: dict[str, dict] = field(default_factory=dict)
    audited: str | None = None


def ground_truth(index: GraphIndex, deletion: Deletion, verdicts: AuditVerdicts | None = None,
                 rederiver: Rederiver | None = None) -> Truth:
    """Returns the artifacts a perfect maintainer deletes (see the module docstring)."""
    exact = what_if(index, deletion, "trust-all", exact=True, rederiver=rederiver)
    label_dead = set(exact.dead)
    demoted = {entry["artifact"] for entry in exact.demoted}  # the rules still entail the triple
    stating: dict[tuple, list[str]] = {}
    for assertion in index.graph.assertions.values():
        if not assertion.negated:  # a NOT annotation denies its triple, it does not state it
            stating.setdefault(assertion.triple, []).append(assertion.id)
    found = verdicts.for_deletion(deletion) if verdicts else None
    given = found[1] if found else {}
    unknown = sorted(a for a in given if a not in index.artifacts)
    if unknown:
        raise PolygraphError("verdicts_error", f"{verdicts.path} judges artifacts this graph does not hold: "
                             f"{', '.join(unknown[:5])}; was it audited on another graph?")
    dead: set[str] = set()
    counts = {layer: {"artifacts": 0} for layer in ("claim", "edge")}
    counts.update({layer: {"artifacts": 0, "verdicts": 0, "undecided": 0} for layer in MODEL_LAYERS})
    for entry in index.ranked:
        layer, artifact = entry.layer, entry.id
        row = counts.setdefault(layer, {"artifacts": 0})  # contradiction: only when the graph has some
        row["artifacts"] += 1
        verdict = given.get(artifact) if layer in MODEL_LAYERS else None
        if layer == "claim":
            is_dead = artifact not in demoted and all(a in exact.deleted for a in stating.get(entry.fact[1], ()))
        elif layer in ("edge", "contradiction"):  # rule-derived: their exact labels decide
            is_dead = artifact in label_dead
        elif verdict in ("alive", "dead"):
            row["verdicts"] += 1
            is_dead = verdict == "dead"
        else:
            row["undecided"] += verdict == "undecided"
            is_dead = artifact in label_dead
        if is_dead:
            dead.add(artifact)
    for summary, sentences in index.sentences.items():  # dead by its own verdict, or with every sentence
        if given.get(summary) == "dead" or all(s in dead for s in sentences):
            dead.add(summary)
        else:
            dead.discard(summary)
    for layer, row in counts.items():
        row["dead"] = sum(1 for a in dead if index.artifacts[a].layer == layer)
        if layer == "claim":
            row["truth"] = ("assertions: dead iff every stating assertion is deleted and the rules no longer "
                            "entail the triple")
        elif layer in ("edge", "contradiction"):  # a contradiction falls (is resolved) as an edge does
            row.update(truth="symbolic re-derivation", settled=exact.settled, revived=exact.revived)
        else:
            row["labels"] = row["artifacts"] - row["verdicts"]
            row["truth"] = "audit verdicts where decided, labels otherwise" if found else "labels"
    return Truth(dead, counts, found[0] if found else None)


def _tainted(retriever: Retriever, dead: set[str]) -> np.ndarray:
    """Returns, per document, whether it holds content dead by ground truth."""
    flags = np.zeros(retriever.size, dtype=bool)
    variants = {doc: sentences for (_, sentences), doc in retriever.variants.items()}
    for doc, artifact in enumerate(retriever.artifact_of):
        sentences = variants.get(doc, retriever.sentences.get(artifact, ()))
        flags[doc] = artifact in dead or any(s in dead for s in sentences)
    return flags


@dataclass
class Report:
    """tainted@k and recall@k per view and deletion, with the ground truth's sources."""

    k: int
    queries: int
    documents: int
    exact: bool
    deletions: dict[str, dict] = field(default_factory=dict)  # kind -> description and truth
    rows: dict[str, dict[str, dict]] = field(default_factory=dict)  # view -> kind -> metrics
    per_query: dict[str, dict[str, list]] = field(default_factory=dict)  # view -> kind -> flags

    def to_json(self) -> dict:
        return {"format": "polygraph-retrieval/1", "k": self.k, "queries": self.queries,
                "documents": self.documents, "policies_exact": self.exact,
                "bm25": "rank-bm25 BM25Okapi k1=1.5 b=0.75 epsilon=0.25, statistics of the whole graph",
                "tainted": "fraction of queries whose top k holds content dead by ground truth",
                "recall": "mean |top_k(view) & top_k(perfect)| / |top_k(perfect)|, empty perfect top k skipped",
                "deletions": self.deletions,
                "rows": [{"view": view, "results": results} for view, results in self.rows.items()]}


def evaluate_retrieval(index: GraphIndex, queries: Sequence, deletions: dict[str, Deletion], k: int = 10,
                       verdicts: AuditVerdicts | None = None, policies: Sequence[str] = POLICIES,
                       exact: bool = False, retriever: Retriever | None = None,
                       progress: Progress | None = None) -> Report:
    """Returns tainted@k and recall@k of the raw graph and of each policy, per deletion.

    ``queries`` are strings or objects with a ``text``; ``deletions`` maps a column name
    (e.g. "retract-source") to a Deletion; ``exact`` settles the policies' capped dead
    verdicts by re-derivation (ground truth always does).
    """
    if k < 1:
        raise PolygraphError("bad_argument", f"k must be at least 1, not {k}")
    for policy in policies:
        check_policy(policy)
    texts = [q if isinstance(q, str) else q.text for q in queries]
    retriever = retriever or Retriever(index)
    rederiver = Rederiver(index)
    report = Report(k, len(texts), len(index.ranked), exact)
    views: dict[str, dict[str, set[int]]] = {"before cleanup": {}, **{p: {} for p in policies}}
    perfect, truths = {}, {}
    for kind, deletion in deletions.items():
        if progress:
            progress.phase(f"{kind}: ground truth by re-derivation, then each policy's what-if")
        truth = truths[kind] = ground_truth(index, deletion, verdicts, rederiver)
        report.deletions[kind] = {
            "deletion": {"sources": list(deletion.sources), "relations": list(deletion.relations),
                         "assertions": list(deletion.assertions)},
            "deleted_assertions": len(deletion.resolve(index)), "audited_deletion": truth.audited,
            "truth": truth.sources}
        perfect[kind] = retriever.documents(truth.dead)
        views["before cleanup"][kind] = set(range(len(index.ranked)))
        for policy in policies:
            outcome = what_if(index, deletion, policy, exact=exact, rederiver=rederiver)
            views[policy][kind] = retriever.documents(outcome.dead)
    masks = {}
    for view, by_kind in (("perfect", perfect), *views.items()):
        for kind, docs in by_kind.items():
            mask = np.zeros(retriever.size, dtype=bool)
            mask[list(docs)] = True
            masks[view, kind] = mask
    taint = {kind: _tainted(retriever, truths[kind].dead) for kind in deletions}
    order = retriever.order()
    flags = {(view, kind): ([], []) for view in views for kind in deletions}
    for text in texts:
        docs, scores = retriever.scores(text)
        for kind in deletions:
            best = {retriever.artifact_of[d] for d, _ in top_k(docs, scores, order, k, masks["perfect", kind])}
            for view in views:
                top = [d for d, _ in top_k(docs, scores, order, k, masks[view, kind])]
                tainted, recall = flags[view, kind]
                tainted.append(bool(taint[kind][top].any()) if top else False)
                found = {retriever.artifact_of[d] for d in top}
                recall.append(len(found & best) / len(best) if best else None)
        if progress:
            progress.step()
    for (view, kind), (tainted, recall) in flags.items():
        measured = [r for r in recall if r is not None]
        report.rows.setdefault(view, {})[kind] = {
            "tainted": sum(tainted) / len(tainted) if tainted else 0.0, "tainted_queries": sum(tainted),
            "recall": sum(measured) / len(measured) if measured else None,
            "recall_queries": len(measured), "recall_skipped": len(recall) - len(measured)}
        report.per_query.setdefault(view, {})[kind] = list(zip(tainted, recall))
    return report
