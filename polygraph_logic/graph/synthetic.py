"""Seedable synthetic inputs shaped like the PolyGraph study's biomedical graph.

    graph = generate(seed=0)            # ~2,800 assertions, 165 merges, 59 summaries
    graph.write("synthetic/")           # assertions.jsonl, receipts.jsonl, retracted.txt, generator.json

Like the study (300 oncology abstracts, 61 retracted): documents of skewed length, each
dwelling on a focus entity; Zipf-popular entities of five kinds with spelling variants;
triples over Relations Ontology properties with axioms in ``rules/ro.dl``, a few stated
by several documents. Merges group an entity's spellings seen in claims, with 1-4
support sets citing assertions that use them (a few more than eight, to exercise the
cap); summaries cover communities around hubs, one receipt per sentence. Sources are
``synthetic:docNNNN``, which no real retraction list holds. Each stage draws from its
own ``random.Random`` seeded by ``seed``: the same arguments give the same files.
"""

from __future__ import annotations

import json
import random
from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path

from polygraph_logic.files import write_text_atomically
from polygraph_logic.graph.assertions import Assertion
from polygraph_logic.graph.records import Receipt, Sentence
from polygraph_logic.graph.synthetic_names import FAMILIES, NAMES, PARTS

FORMAT = "polygraph-synthetic/1"
# the focus of a document is drawn key by key from this many gene and process entities (all
# of them at paper scale: 938), from the rest by the distribution of their largest keys
FOCUS_HEAD = 1000
KINDS = {"gene": 0.45, "process": 0.22, "component": 0.10, "disease": 0.12, "drug": 0.11}  # share of entities

# (CURIE, its rdfs:label in rules/ro.dl as a verb phrase, subject kind, object kind, weight,
# draw). A claim entails from 2 (contributes to condition) to 26 (directly regulates) edges
# under RO, and same-kind causal and part-whole triples compose with every triple about
# their ends, so those are rare and draw both ends uniformly ("up": subject before object
# in the hidden order, "down": after; no cycles); "flat" draws the object uniformly. At
# these weights the defaults entail about 23,000 edges from 2,600 claims (the study:
# 21,373 from 2,784).
RELATIONS = (
    ("RO:0002213", "positively regulates", "gene", "process", 3.5, None),
    ("RO:0002212", "negatively regulates", "gene", "process", 3, None),
    ("RO:0002211", "regulates", "gene", "process", 2, None),
    ("RO:0002629", "directly positively regulates", "gene", "gene", 0.5, "up"),
    ("RO:0002630", "directly negatively regulates", "gene", "gene", 0.5, "up"),
    ("RO:0002436", "molecularly interacts with", "gene", "gene", 12, None),
    ("RO:0002447", "phosphorylates", "gene", "gene", 3, None),
    ("RO:0002331", "is involved in", "gene", "process", 2.5, None),
    ("RO:0001025", "is located in", "gene", "component", 4, "flat"),
    ("BFO:0000050", "is part of", "component", "component", 0.5, "down"),
    ("BFO:0000050", "is part of", "process", "process", 0.6, "down"),
    ("BFO:0000051", "has part", "process", "process", 0.3, "up"),
    ("RO:0002411", "is causally upstream of", "process", "process", 0.6, "up"),
    ("RO:0003304", "contributes to", "gene", "disease", 12, None),  # contributes to condition
    ("RO:0002607", "is a marker for", "gene", "disease", 10, None),  # is marker for
    ("RO:0002449", "directly negatively regulates activity of", "drug", "gene", 4, None),
    ("RO:0002606", "treats", "drug", "disease", 4, None),  # is substance that treats
    ("RO:0004019", "has a basis in", "disease", "process", 2, None),  # disease has basis in
    ("RO:0002212", "negatively regulates", "drug", "process", 1, None),
)


@dataclass(frozen=True)
class Entity:
    name: str  # the canonical spelling
    kind: str
    variants: tuple[str, ...]  # other spellings a document may use
    weight: float  # popularity
    level: float  # position in the hidden order of causal and part-whole triples


def _variants(name: str, aliases: list[str], kind: str) -> tuple[str, ...]:
    templates = {"gene": ("{} protein", "{} gene"), "process": ("{} process", "{} pathway"),
                 "component": ("{} compartment", "the {}"), "disease": ("{} (human)", "{} tumour"),
                 "drug": ("{} treatment", "{} therapy")}[kind]
    spellings = [name.replace("signalling", "signaling"), *aliases, *(t.format(name) for t in templates)]
    return tuple(dict.fromkeys(s for s in spellings if s != name))[:3]


def _tail_name(kind: str, i: int) -> str:
    """Returns the i-th made-up name of a kind: a gene family, a complex, or parts combined."""
    if kind in ("gene", "component"):
        return f"{FAMILIES[i % len(FAMILIES)]}{10 + i}" + (" complex" if kind == "component" else "")
    if kind == "drug":
        i = i * 389 % 1568 + i - i % 1568  # a permutation of the 14 * 14 * 8 names, less monotonous
    picked = []
    for options in PARTS[kind]:
        picked.append(options[i % len(options)])
        i //= len(options)
    name = f"{picked[2]}{picked[0]}{picked[1]}" if kind != "drug" else "".join(picked)
    return f"{name} type {i + 1}" if i else name


def _entities(count: int, rng: random.Random) -> dict[str, list[Entity]]:
    """Returns entities per kind, most popular first: real names (shuffled), then made-up ones."""
    out: dict[str, list[Entity]] = {}
    for kind in KINDS:
        wanted = max(2, round(count * KINDS[kind]))
        named = [item.split("|") for item in NAMES[kind].split(";")]
        rng.shuffle(named)
        names = {parts[0]: parts[1:] for parts in named[:wanted]}
        i = 0
        while len(names) < wanted:  # made-up names are unique across kinds by construction
            names.setdefault(_tail_name(kind, i), [])
            i += 1
        out[kind] = [Entity(name, kind, _variants(name, aliases, kind), 1.0 / (rank + 1) ** 0.9, rng.random())
                     for rank, (name, aliases) in enumerate(names.items())]
    return out


def _weighted_sample(rng: random.Random, items: list, weights: list[float], k: int) -> list:
    """Returns k distinct items drawn with probability proportional to weight (Efraimidis-Spirakis)."""
    keys = [(rng.random() ** (1.0 / w), i) for i, w in enumerate(weights) if w > 0]
    return [items[i] for _, i in sorted(keys, reverse=True)[:k]]


class _HeadTailSampler:
    """Draws like ``_weighted_sample`` over fixed items, in time that does not grow with them.

    The first ``head`` items get a key each from ``rng`` exactly as ``_weighted_sample`` gives
    them (so with no more items than that, the draws and ``rng``'s stream are the same); the
    largest keys of the rest are drawn from ``tail_rng`` by their distribution instead of one
    by one: the largest of independent keys u ** (1 / w) is u ** (1 / W), W the sum of the
    weights, and it belongs to an item chosen with probability proportional to its weight;
    below it, the next largest of the others is drawn the same way, scaled by the one above.
    """

    def __init__(self, items: list, weights: list[float], head: int, tail_rng: random.Random):
        self.items, self.head, self.tail_rng = items, weights[:head], tail_rng
        self.tail = list(accumulate(weights[head:]))  # cumulative weights of the rest
        self.offset = len(self.head)

    def sample(self, rng: random.Random, k: int) -> list:
        keys = [(rng.random() ** (1.0 / w), i) for i, w in enumerate(self.head) if w > 0]
        above, taken, total = 1.0, set(), self.tail[-1] if self.tail else 0.0
        while len(taken) < k and total - sum(map(self._weight, taken)) > 0:
            above *= self.tail_rng.random() ** (1.0 / (total - sum(map(self._weight, taken))))
            j = None
            while j is None or j in taken or j == len(self.tail):  # redraw a taken one: proportional to the rest
                j = bisect_right(self.tail, self.tail_rng.random() * total)
            taken.add(j)
            keys.append((above, self.offset + j))
        return [self.items[i] for _, i in sorted(keys, reverse=True)[:k]]

    def _weight(self, j: int) -> float:
        return self.tail[j] - (self.tail[j - 1] if j else 0.0)


@dataclass
class SyntheticGraph:
    """Generated inputs: assertions, receipts, the sources flagged as retracted, the parameters."""

    parameters: dict
    assertions: list[Assertion]
    receipts: list[Receipt]
    retracted: list[str]

    def counts(self) -> dict[str, int]:
        """Returns how many documents, assertions, merges, summaries, sentences and retractions."""
        layers = [r.layer for r in self.receipts]
        return {"documents": len({a.source for a in self.assertions}), "assertions": len(self.assertions),
                "claims": len({a.triple for a in self.assertions}), "merges": layers.count("merge"),
                "summaries": layers.count("summary"), "sentences": sum(len(r.sentences) for r in self.receipts),
                "retracted": len(self.retracted)}

    def write(self, directory: str | Path) -> Path:
        """Writes the four files into ``directory`` (created if needed), each atomically."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        for name, records in (("assertions", [a.to_json() for a in self.assertions]),
                              ("receipts", [r.to_json() for r in self.receipts])):
            lines = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
            write_text_atomically(directory / f"{name}.jsonl", lines)
        write_text_atomically(directory / "retracted.txt", "".join(f"{s}\n" for s in self.retracted))
        function = "synthetic_copies.generate_copies" if "copies" in self.parameters else "synthetic.generate"
        meta = {"format": FORMAT, "generator": f"polygraph_logic.graph.{function}",
                "parameters": self.parameters, "counts": self.counts()}
        write_text_atomically(directory / "generator.json", json.dumps(meta, indent=2) + "\n")
        return directory


def generate(seed: int = 0, documents: int = 300, assertions: int = 2800, merges: int = 165,
             summaries: int = 59, retracted_fraction: float = 61 / 300, entities: int | None = None,
             repeat_fraction: float = 0.03, overcap_merges: int | None = None,
             hub_skew: float = 0.0) -> SyntheticGraph:
    """Returns a synthetic graph's inputs, identical for identical arguments.

    ``hub_skew`` > 0 draws the places genes are located in with weight ``1 / rank ** hub_skew``
    (a heavy-tailed degree: a few places hold most genes, as a cell's nucleus and cytoplasm do
    in GO annotations); 0 (the default) draws them uniformly.

    ``entities`` defaults to half the ``assertions``; ``repeat_fraction`` of the assertions
    restate a triple another document stated; ``overcap_merges`` (default 3% of the
    merges, at least one) get 9-12 support sets. Fewer merges or summaries than asked
    come out only when too few entities are mentioned twice (counts() says how many).
    """
    if documents < 1 or assertions < documents:
        raise ValueError(f"need 1 <= documents <= assertions, got documents={documents}, assertions={assertions}")
    if min(merges, summaries) < 0 or not 0 <= retracted_fraction <= 1 or not 0 <= repeat_fraction < 1:
        raise ValueError("merges and summaries must be >= 0, retracted_fraction and repeat_fraction in [0, 1)")
    if not 0 <= hub_skew <= 10:
        raise ValueError(f"hub_skew must be between 0 and 10, got {hub_skew}")
    entities = max(40, round(assertions / 2)) if entities is None else entities
    overcap_merges = max(1, round(merges * 0.03)) if overcap_merges is None else overcap_merges
    parameters = {"seed": seed, "documents": documents, "assertions": assertions, "merges": merges,
                  "summaries": summaries, "retracted_fraction": retracted_fraction, "entities": entities,
                  "repeat_fraction": repeat_fraction, "overcap_merges": min(overcap_merges, merges),
                  **({"hub_skew": hub_skew} if hub_skew else {})}
    stream = lambda stage: random.Random(f"{seed}:{stage}")  # noqa: E731 - one stream per stage
    pool = _entities(entities, stream("entities"))
    sources = [f"synthetic:doc{d:0{max(4, len(str(documents)))}d}" for d in range(1, documents + 1)]
    triples = _triples(pool, documents, assertions, repeat_fraction, stream("claims"), stream("focus-tail"), hub_skew)
    chosen = _choose_merges(triples, merges, stream("merges"))
    spellings = _spell(triples, chosen, stream("spellings"))
    records = [Assertion(f"a{i}", sources[d], s, p, o, text=f"{s} {label} {o}")
               for i, ((d, _, p, _, label), (s, o)) in enumerate(zip(triples, spellings), 1)]
    receipts = _merge_receipts(records, triples, chosen, parameters["overcap_merges"], stream("merge-receipts"))
    receipts += _summary_receipts(records, triples, summaries, stream("summaries"))
    retracted = sorted(stream("retracted").sample(sources, round(documents * retracted_fraction)))
    return SyntheticGraph(parameters, records, receipts, retracted)


def _triples(pool, documents, total, repeat_fraction, rng: random.Random,
             tail_rng: random.Random, hub_skew: float = 0.0) -> list[tuple]:
    """Returns (document, subject, predicate, object, label) per assertion, entities not yet spelled."""
    lengths = [1] * documents
    weights = [rng.lognormvariate(0, 0.7) for _ in range(documents)]
    for d in rng.choices(range(documents), weights, k=total - documents):
        lengths[d] += 1
    relation_weights = [r[4] for r in RELATIONS]
    # cumulative weights, computed once: choices() given plain weights sums them on every call
    kind_weights = {k: list(accumulate(e.weight for e in pool[k])) for k in KINDS}
    # the places of "flat" draws: uniform, or heavy-tailed with hub_skew (None: uniform)
    flat_weights = {k: list(accumulate(1.0 / (rank + 1) ** hub_skew for rank in range(len(pool[k]))))
                    for k in KINDS} if hub_skew else None
    central = [e for k in ("gene", "process") for e in pool[k]]
    focuses = _HeadTailSampler(central, [e.weight for e in central], FOCUS_HEAD, tail_rng)
    out, stated, in_order = [], set(), []  # every triple stated so far, and in order
    for d, length in enumerate(lengths):
        focus = focuses.sample(rng, rng.choice((1, 1, 2)))
        mine: set = set()
        for _ in range(200 * length + 1):
            if len(mine) == length:
                break
            key = rng.choice(in_order) if stated and rng.random() < repeat_fraction else \
                _fresh(pool, focus, relation_weights, kind_weights, rng, flat_weights)
            if key is not None and key not in mine:
                mine.add(key)
                if key not in stated:
                    stated.add(key)
                    in_order.append(key)
                out.append((d, *key))
        if len(mine) < length:
            raise ValueError(f"cannot draw {length} distinct triples for one document; raise entities")
    return out


def _fresh(pool, focus, relation_weights, kind_weights, rng: random.Random, flat_weights=None):
    """Returns a new (subject, predicate, object, label) of entities, or None for a self-loop."""
    curie, label, s_kind, o_kind, _, draw = rng.choices(RELATIONS, relation_weights)[0]
    if draw in ("up", "down"):  # both ends uniform; the hidden order decides the direction
        subject, object_ = sorted(rng.sample(pool[s_kind], 2), key=lambda e: e.level, reverse=draw == "down")
        return (subject, curie, object_, label)
    subject = rng.choices(pool[s_kind], cum_weights=kind_weights[s_kind])[0]
    # genes located in one place are pairwise "spatially coextensive": "flat" spreads the places out
    if draw == "flat":
        object_ = rng.choice(pool[o_kind]) if flat_weights is None else \
            rng.choices(pool[o_kind], cum_weights=flat_weights[o_kind])[0]
    else:
        object_ = rng.choices(pool[o_kind], cum_weights=kind_weights[o_kind])[0]
    hits = [e for e in focus if e.kind in (s_kind, o_kind)]
    if draw is None and hits and rng.random() < 0.6:  # documents dwell on their focus
        if hits[0].kind == s_kind and (s_kind != o_kind or rng.random() < 0.5):
            subject = hits[0]
        else:
            object_ = hits[0]
    return None if subject is object_ else (subject, curie, object_, label)


def _mentions(triples) -> dict[Entity, list[int]]:
    """Returns, per entity in order of first mention, the indexes of the triples that mention it."""
    out: dict[Entity, list[int]] = {}
    for i, (_, subject, _, object_, _) in enumerate(triples):
        for entity in (subject, object_):
            out.setdefault(entity, []).append(i)
    return out


def _choose_merges(triples, merges: int, rng: random.Random) -> list[Entity]:
    """Returns the entities to merge: mentioned at least twice, drawn by how often they are."""
    candidates = [(e, len(m)) for e, m in _mentions(triples).items() if len(m) >= 2 and e.variants]
    return _weighted_sample(rng, [e for e, _ in candidates], [n ** 0.5 for _, n in candidates], merges)


def _spell(triples, chosen: list[Entity], rng: random.Random) -> list[tuple[str, str]]:
    """Returns (subject, object) spellings: a merged entity's first document (or mention) uses
    its canonical name, the second a variant, later ones either; others keep the canonical name."""
    spelling: dict[tuple, str] = {}  # (entity, document or mention) -> spelling
    mentions = _mentions(triples)
    for entity in chosen:
        documents = list(dict.fromkeys(triples[i][0] for i in mentions[entity]))
        groups = documents if len(documents) >= 2 else [(None, i) for i in mentions[entity]]
        for n, group in enumerate(groups):
            name = entity.name if n == 0 or (n > 1 and rng.random() < 0.9) else rng.choice(entity.variants)
            spelling[(entity, group)] = name
    return [tuple(spelling.get((e, d)) or spelling.get((e, (None, i))) or e.name for e in (subject, object_))
            for i, (d, subject, _, object_, _) in enumerate(triples)]


def _merge_receipts(records, triples, chosen, overcap: int, rng: random.Random) -> list[Receipt]:
    """Returns one merge per chosen entity over the spellings in claims; the busiest get 9-12 sets."""
    mentions = _mentions(triples)
    busiest = sorted(chosen, key=lambda e: (-len(mentions[e]), e.name))[:overcap]
    receipts = []  # in order of first mention
    for n, entity in enumerate(sorted(chosen, key=lambda e: mentions[e][0]), 1):
        spelled = {}  # spelling -> assertion ids using it
        for i in mentions[entity]:
            a = records[i]
            name = a.subject if triples[i][1] is entity else a.object
            spelled.setdefault(name, []).append(a.id)
        members = [s for s in (entity.name, *entity.variants) if s in spelled]
        variant_ids = [a for s in members[1:] for a in spelled[s]]
        every = [a for s in members for a in spelled[s]]
        count = rng.randint(9, 12) if entity in busiest else rng.choices((1, 2, 3, 4), (4, 3, 2, 1))[0]
        # each support set: an assertion using a variant spelling, plus 0-2 about any spelling
        sizes = rng.choices((1, 2, 3), (3, 5, 2), k=50 * count)
        groups = [frozenset([rng.choice(variant_ids), *rng.sample(every, min(k - 1, len(every)))]) for k in sizes]
        support = _distinct(groups, count)
        content = {"canonical": entity.name, "members": members}
        receipts.append(Receipt(f"merge:m{n:03d}", "merge", content, tuple(support)))
    return receipts


def _distinct(groups: list[frozenset[str]], count: int) -> list[frozenset[str]]:
    """Returns the first ``count`` of ``groups`` of which none is inside another (a label in minimal DNF)."""
    kept: list[frozenset[str]] = []
    for group in groups:
        if len(kept) < count and not any(group <= s or s <= group for s in kept):
            kept.append(group)
    return kept


def _summary_receipts(records, triples, summaries: int, rng: random.Random) -> list[Receipt]:
    """Returns sentence-level summaries of the communities around hub entities."""
    stating: dict[tuple, list[int]] = {}  # canonical triple -> indexes of the assertions stating it
    around: dict[Entity, list[tuple]] = {}  # entity -> canonical triples mentioning it
    documents: dict[int, list[int]] = {}  # document -> indexes of its assertions
    for i, (d, subject, curie, object_, label) in enumerate(triples):
        documents.setdefault(d, []).append(i)
        key = (subject, curie, object_, label)
        if key not in stating:
            around.setdefault(subject, []).append(key)
            around.setdefault(object_, []).append(key)
        stating.setdefault(key, []).append(i)
    hubs = [e for e, keys in around.items() if len(keys) >= 2]
    hubs = _weighted_sample(rng, hubs, [len(around[e]) ** 1.5 for e in hubs], summaries)
    receipts = []
    for n, hub in enumerate(hubs, 1):
        keys = around[hub]
        chosen = _weighted_sample(rng, keys, [len(stating[k]) for k in keys], rng.randint(2, 6))
        sentences = []
        for key in chosen:
            # a bundle: one assertion stating the claim, alone or with a same-document assertion about the hub
            bundles = []
            for i in stating[key]:
                bundles.append(frozenset([records[i].id]))
                bundles += [frozenset([records[i].id, records[j].id]) for j in documents[triples[i][0]]
                            if j != i and hub in (triples[j][1], triples[j][3])]
            support = _distinct(rng.sample(bundles, len(bundles)), rng.randint(1, 3))
            subject, _, object_, label = key
            text = f"{subject.name} {label} {object_.name}."
            sentences.append(Sentence(text[0].upper() + text[1:], tuple(support)))
        entities = list(dict.fromkeys(e.name for k in chosen for e in (k[0], k[2])))
        content = {"community": f"c{n:02d}", "hub": hub.name, "entities": entities,
                   "text": " ".join(s.text for s in sentences)}
        receipts.append(Receipt(f"summary:c{n:02d}", "summary", content, (), tuple(sentences)))
    return receipts
