"""Query sets for retrieval evaluation: generated from a graph's own vocabulary, or read
from a file.

The study queried with 300 MeSH descriptors, the corpus's own indexing terms. A graph
without such metadata still has its own topic terms: the entity names it mentions
(subjects and objects of assertions, merge canonicals and members) and the labels of its
relations (the edge types). ``generate_queries`` draws entity names without replacement,
weighted by how often the graph mentions them (popular topics are queried more, as
descriptors of a corpus are), and pairs about half of them with the label of a relation
the entity takes part in ("TP53 negatively regulates"). When the graph has fewer names
than queries asked for, every other name alone and (name, relation) pair fills in. Every draw comes
from one ``random.Random(seed)`` over sorted inputs: the same graph and seed give the same
queries.

File format (``polygraph queries -o FILE``, read by ``polygraph evaluate --queries``):
JSON Lines, one object a line, ``{"id": "q0001", "text": "TP53 negatively regulates",
"entity": "TP53", "relation": "RO:0002212"}`` (only ``text`` is required; ``id`` defaults
to ``q<line>``). A file whose first non-blank line does not start with ``{`` is read as
plain text instead: one query a line, blank lines and lines starting with ``#`` skipped.
"""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from polygraph_logic.errors import PolygraphError, Position
from polygraph_logic.files import write_text_atomically
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.retrieval.consequences import relation_labels, tokenize


@dataclass(frozen=True)
class Query:
    """One query: an id, its text, and (for generated ones) the entity and relation it names."""

    id: str
    text: str
    entity: str | None = None
    relation: str | None = None

    def to_json(self) -> dict:
        return {"id": self.id, "text": self.text, "entity": self.entity, "relation": self.relation}


def vocabulary(graph: Graph) -> tuple[Counter, dict[str, set[str]]]:
    """Returns how often the graph mentions each entity name, and the relations each takes part in."""
    mentions: Counter = Counter()
    relations: dict[str, set[str]] = defaultdict(set)
    for assertion in graph.assertions.values():
        for name in (assertion.subject, assertion.object):
            mentions[name] += 1
            relations[name].add(assertion.predicate)
    for merge in graph.artifacts("merge"):
        for name in dict.fromkeys([merge.content["canonical"], *merge.content.get("members", ())]):
            mentions[name] += 1
    return mentions, relations


def generate_queries(graph: Graph, n: int = 300, seed: int = 0) -> list[Query]:
    """Returns up to ``n`` distinct queries from the graph's entity names and relation labels
    (see the module docstring); fewer only when the graph has too few names and pairs."""
    if n < 1:
        raise PolygraphError("bad_argument", f"the number of queries must be at least 1, not {n}")
    mentions, relations = vocabulary(graph)
    labels = relation_labels()
    rng = random.Random(seed)
    names = sorted(name for name in mentions if tokenize(name))
    # weighted sampling without replacement (Efraimidis-Spirakis): key u ** (1 / weight)
    keys = {name: rng.random() ** (1 / mentions[name]) for name in names}
    drawn = sorted(names, key=lambda name: (-keys[name], name))[:n]
    queries: list[Query] = []
    seen: set[tuple[str, ...]] = set()
    used: set[tuple[str, str | None]] = set()

    def add(name: str, relation: str | None) -> None:
        text = name if relation is None else f"{name} {labels.get(relation, relation)}"
        words = tuple(tokenize(text))
        used.add((name, relation))
        if words not in seen:
            seen.add(words)
            queries.append(Query(f"q{len(queries) + 1:04d}", text, name, relation))

    for name in drawn:
        paired = sorted(relations.get(name, ()))
        add(name, rng.choice(paired) if paired and rng.random() < 0.5 else None)
    if len(queries) < n:
        pairs = [(name, relation) for name in names for relation in [None, *sorted(relations.get(name, ()))]
                 if (name, relation) not in used]
        rng.shuffle(pairs)
        for name, relation in pairs:
            if len(queries) >= n:
                break
            add(name, relation)
    return queries


def write_queries(queries: list[Query], path: str | Path) -> None:
    """Writes queries as JSON Lines, atomically."""
    write_text_atomically(path, "".join(json.dumps(q.to_json(), ensure_ascii=False) + "\n" for q in queries))


def load_queries(path: str | Path) -> list[Query]:
    """Reads a query file (JSON Lines or plain text, see the module docstring).

    A malformed line, a duplicate id or an empty file is an error naming file and line.
    """
    path = Path(path)
    try:
        lines = path.read_text("utf-8").splitlines()
    except OSError as error:
        raise PolygraphError("file_error", f"cannot read {path}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise PolygraphError("file_error", f"{path} is not UTF-8 text") from None
    first = next((line.strip() for line in lines if line.strip()), "")
    jsonl = first.startswith("{")
    queries: list[Query] = []
    ids: set[str] = set()
    for number, line in enumerate(lines, 1):
        where = Position(str(path), number, 1)
        line = line.strip()
        if not line or (not jsonl and line.startswith("#")):
            continue
        if jsonl:
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise PolygraphError("query_error", f"not JSON: {error.msg}", where) from None
            if not isinstance(record, dict) or not isinstance(record.get("text"), str):
                raise PolygraphError("query_error", 'a query line is an object with a string "text"', where)
            query = Query(str(record.get("id", f"q{number}")), record["text"],
                          record.get("entity"), record.get("relation"))
        else:
            query = Query(f"q{number}", line)
        if query.id in ids:
            raise PolygraphError("query_error", f"duplicate query id {query.id!r}", where)
        ids.add(query.id)
        queries.append(query)
    if not queries:
        raise PolygraphError("query_error", f"{path} holds no query")
    return queries
