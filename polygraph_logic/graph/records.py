"""Reading assertions and receipts from JSON Lines, validated line by line.

Every problem is reported with its file and line, and all of them at once: a
file with three bad lines gives three messages, and nothing is silently dropped.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from polygraph_logic.errors import PolygraphError, Position
from polygraph_logic.graph.kinds import DEFAULT_KIND, KINDS
from polygraph_logic.graph.assertions import Assertion
from polygraph_logic.graph.evidence import EVIDENCE_FIELDS, evidence_of
from polygraph_logic.graph.json_lines import Given, read_records, source_of

#: layers a receipt may declare; claims and edges come from assertions and rules
RECEIPT_LAYERS = ("merge", "summary")
_ASSERTION_FIELDS = ("id", "source", "subject", "predicate", "object")


@dataclass(frozen=True)
class Sentence:
    """One sentence of a summary with its own receipt."""

    text: str
    support: tuple[frozenset[str], ...]


@dataclass(frozen=True)
class Receipt:
    """A model-authored artifact with its support label.

    A flat receipt has ``support``; a sentence-level summary has ``sentences`` and
    its label is the product of theirs.  ``line`` is where it was read.
    """

    artifact: str
    layer: str
    content: dict
    support: tuple[frozenset[str], ...] = ()
    sentences: tuple[Sentence, ...] = ()
    position: Position | None = field(default=None, compare=False)

    def sentence_id(self, index: int) -> str:
        """Returns the artifact id of sentence ``index`` (counted from 1)."""
        return f"{self.artifact}#s{index}"

    def to_json(self) -> dict:
        """Returns the JSON Lines record of the receipt (DESIGN.md's format), ids in natural order."""
        def ids(support):
            return [sorted(group, key=lambda a: (len(a), a)) for group in support]  # a2 before a10

        record = {"artifact": self.artifact, "layer": self.layer, "content": self.content}
        if self.sentences:
            record["sentences"] = [{"text": s.text, "support": ids(s.support)} for s in self.sentences]
        else:
            record["support"] = ids(self.support)
        return record


class LoadError(PolygraphError):
    """Every problem found in an input file; ``problems`` holds each as a PolygraphError."""

    def __init__(self, problems: list[PolygraphError]):
        first = problems[0]
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        super().__init__(first.code, first.message + more, first.position)
        self.problems = problems

    def __str__(self) -> str:
        return "\n".join(str(p) for p in self.problems)


#: every predicate is a CURIE (``RO:0002211``) or an IRI: a prefix, a colon, no whitespace
_CURIE = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*:\S+\Z")
#: ids the build generates for claims and entailed edges (see build.triple_id)
_GENERATED = re.compile(r"(claim|edge):[0-9a-f]{12}\Z")


def _text_field(record: dict, name: str, where: Position, problems: list, optional=False) -> Any:
    value = record.get(name)
    if value is None and optional:
        return None
    if value is None:
        problems.append(PolygraphError("missing_field", f"missing field {name!r}", where))
    elif not isinstance(value, str) or not value.strip():
        problems.append(PolygraphError(
            "bad_field", f"field {name!r} must be a non-empty string, got {value!r}", where))
    else:
        return value
    return None


def load_assertions(path: str | Path | Given, known_ids=None) -> list[Assertion]:
    """Reads assertions; raises LoadError listing every bad line.  A verification's ``verifies``
    may name the file's assertions and those in ``known_ids`` (a container: a graph's assertions,
    when the file is added to it).  ``path`` may be records given in memory (``Given``)."""
    path = source_of(path)
    problems: list[PolygraphError] = []
    assertions: list[Assertion] = []
    verifying: list[tuple[tuple[str, ...], Position]] = []
    seen: dict[str, int] = {}
    described: dict[str, tuple[Any, int]] = {}  # agent id -> its first description and line
    for number, record in read_records(path, problems):
        where = Position(str(path), number, 1)
        values = [_text_field(record, name, where, problems) for name in _ASSERTION_FIELDS]
        text = _text_field(record, "text", where, problems, optional=True)
        kind = record.get("kind", DEFAULT_KIND)
        if not isinstance(kind, str) or kind not in KINDS:
            problems.append(PolygraphError(
                "unknown_kind", f"kind {kind!r} is not one of {', '.join(KINDS)}", where))
            continue
        negated = record.get("negated", False)
        if not isinstance(negated, bool):
            problems.append(PolygraphError(
                "bad_field", f"field 'negated' must be true or false, got {negated!r}", where))
            continue
        evidence = evidence_of(record, kind, where, problems)
        if evidence is None and any(record.get(name) is not None for name in EVIDENCE_FIELDS):
            continue  # its problems are reported
        if any(v is None for v in values):
            continue
        if not _CURIE.match(values[3]):
            problems.append(PolygraphError(
                "bad_predicate", f"predicate {values[3]!r} is not a CURIE such as RO:0002211 (or an IRI); "
                                 "every predicate names a relation of an ontology", where))
            continue
        if values[0] in seen:
            problems.append(PolygraphError(
                "duplicate_assertion", f"assertion id {values[0]!r} was already defined on line {seen[values[0]]}",
                where))
            continue
        agent = evidence.agent if evidence is not None else None
        if agent is not None and isinstance(agent.to_json(), dict):  # described, not only named
            first = described.setdefault(agent.id, (agent, number))
            if first[0] != agent:
                problems.append(PolygraphError(
                    "conflicting_agent", f"agent {agent.id!r} is described otherwise on line {first[1]} "
                                         "(an agent's id names one description; give another id, or the id alone)",
                    where))
                continue
        seen[values[0]] = number
        if evidence is not None and evidence.verifies:
            verifying.append((evidence.verifies, where))
        assertions.append(Assertion(*values, text=text, kind=kind, negated=negated, evidence=evidence))
    for named, where in verifying:
        unknown = [i for i in named if i not in seen and (known_ids is None or i not in known_ids)]
        if unknown:
            problems.append(PolygraphError(
                "unknown_assertion", f"field 'verifies' names unknown assertion id(s) {', '.join(map(repr, unknown))}",
                where))
    if problems:
        raise LoadError(problems)
    return assertions


def _support(value: Any, known: set[str] | None, where: Position, what: str, problems: list):
    """Validates a support label: a non-empty list of non-empty lists of known ids."""
    if not isinstance(value, list) or not value:
        problems.append(PolygraphError(
            "bad_support", f"{what} must be a non-empty list of support sets, got {value!r}", where))
        return None
    sets = []
    for i, group in enumerate(value, 1):
        if not isinstance(group, list) or not all(isinstance(x, str) for x in group):
            problems.append(PolygraphError(
                "bad_support", f"support set {i} of {what} must be a list of assertion ids", where))
            return None
        if not group:
            problems.append(PolygraphError(
                "empty_support", f"support set {i} of {what} is empty (it would make the artifact "
                "unconditionally true); cite at least one assertion", where))
            return None
        unknown = [x for x in group if x not in known] if known is not None else []
        if unknown:
            problems.append(PolygraphError(
                "unknown_assertion", f"support set {i} of {what} cites unknown assertion id(s) "
                f"{', '.join(map(repr, unknown))}", where))
            return None
        sets.append(frozenset(group))
    return tuple(sets)


def load_receipts(path: str | Path | Given, assertion_ids: set[str]) -> list[Receipt]:
    """Reads receipts, checking every cited id against ``assertion_ids``; raises LoadError."""
    problems: list[PolygraphError] = []
    receipts = list(receipt_records(path, problems, assertion_ids, {}))
    problems.extend(_sentence_id_clashes(receipts))
    if problems:
        raise LoadError(sorted(problems, key=lambda p: p.position.line if p.position else 0))
    return receipts


def receipt_records(path: str | Path | Given, problems: list, known: set[str] | None = None,
                    seen: dict[str, int] | None = None) -> Iterator[Receipt]:
    """Yields the receipts of ``path`` one at a time, each checked alone; a bad line adds its
    problems to ``problems`` and yields nothing.  ``known``: the assertion ids a support set may
    cite (None: not checked here); ``seen``: artifact id -> line of the receipts read so far, for
    the duplicate check (None: not checked here).  Sentence ids clashing with artifact ids are
    the caller's to check (load_receipts)."""
    path = source_of(path)
    for number, record in read_records(path, problems):
        where = Position(str(path), number, 1)
        count = len(problems)
        artifact = _text_field(record, "artifact", where, problems)
        layer = _text_field(record, "layer", where, problems)
        if layer is not None and layer not in RECEIPT_LAYERS:
            problems.append(PolygraphError(
                "bad_field", f"layer {layer!r} is not one of {', '.join(RECEIPT_LAYERS)}", where))
        content = record.get("content", {})
        if not isinstance(content, dict):
            problems.append(PolygraphError("bad_field", "field 'content' must be a JSON object", where))
        if seen is not None and artifact in seen:
            problems.append(PolygraphError(
                "duplicate_artifact", f"artifact {artifact!r} was already defined on line {seen[artifact]}",
                where))
        elif artifact is not None and _GENERATED.match(artifact):
            problems.append(PolygraphError(
                "reserved_id", f"artifact id {artifact!r} has the form of the ids the build gives claims and "
                               "entailed edges; choose another", where))
        if len(problems) > count:
            continue
        if layer == "merge":
            _check_merge(content, where, problems)
        support, sentences = (), ()
        if "sentences" in record:
            if layer != "summary":
                problems.append(PolygraphError(
                    "bad_field", "only summaries may have sentence-level receipts", where))
                continue
            sentences = _sentences(record["sentences"], known, where, problems)
            if "support" in record:
                problems.append(PolygraphError(
                    "bad_field", "a receipt has either 'support' or 'sentences', not both", where))
        elif "support" in record:
            support = _support(record["support"], known, where, f"artifact {artifact!r}", problems)
        else:
            problems.append(PolygraphError("missing_field", "missing field 'support' (or 'sentences')", where))
        if len(problems) > count:
            continue
        if seen is not None:
            seen[artifact] = number
        yield Receipt(artifact, layer, content, support, sentences, where)


def _sentence_id_clashes(receipts: list[Receipt]) -> list[PolygraphError]:
    """Returns an error for each receipt whose id is the generated id of another's sentence."""
    sentence_of = {r.sentence_id(i): r for r in receipts for i in range(1, len(r.sentences) + 1)}
    return [PolygraphError("duplicate_artifact", f"artifact id {r.artifact!r} is the id of sentence "
                                                 f"{r.artifact.rsplit('#s', 1)[1]} of the summary "
                                                 f"{sentence_of[r.artifact].artifact!r} on line "
                                                 f"{sentence_of[r.artifact].position.line}; choose another",
                           r.position)
            for r in receipts if r.artifact in sentence_of]


def _check_merge(content: dict, where: Position, problems: list) -> None:
    canonical, members = content.get("canonical"), content.get("members")
    if not isinstance(canonical, str) or not canonical:
        problems.append(PolygraphError(
            "missing_field", "a merge's content needs 'canonical': the entity the group is merged into", where))
    if not isinstance(members, list) or not members or not all(isinstance(m, str) and m for m in members):
        problems.append(PolygraphError(
            "missing_field", "a merge's content needs 'members': a non-empty list of entity names", where))


def _sentences(value: Any, known: set[str] | None, where: Position, problems: list) -> tuple[Sentence, ...]:
    if not isinstance(value, list) or not value:
        problems.append(PolygraphError("bad_field", "'sentences' must be a non-empty list", where))
        return ()
    sentences = []
    for i, item in enumerate(value, 1):
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            problems.append(PolygraphError(
                "bad_field", f"sentence {i} must be an object with 'text' and 'support'", where))
            return ()
        support = _support(item.get("support"), known, where, f"sentence {i}", problems)
        if support is None:
            return ()
        sentences.append(Sentence(item["text"], support))
    return tuple(sentences)


def load_inputs(assertions: str | Path, receipts: str | Path | None = None) -> tuple[list[Assertion], list[Receipt]]:
    """Reads an assertions file and a receipts file, reporting the problems of both together.

    Raises one LoadError listing every bad line of either file (assertions first). Receipts
    are checked against every id the assertions file states, on good lines or bad ones, so
    that a bad assertion line is reported once, not again by each receipt citing it.
    """
    problems: list[PolygraphError] = []
    try:
        loaded = load_assertions(assertions)
        known = {a.id for a in loaded}
    except LoadError as error:
        problems.extend(error.problems)
        loaded, known = [], _stated_ids(Path(assertions))
    found: list[Receipt] = []
    if receipts is not None:
        try:
            found = load_receipts(receipts, known)
        except LoadError as error:
            problems.extend(error.problems)
    if problems:
        raise LoadError(problems)
    return loaded, found


def _stated_ids(path: Path) -> set[str]:
    """Returns every string ``id`` on a line of a JSON Lines file, well-formed or not."""
    ids: set[str] = set()
    with path.open("rb") as handle:
        for raw in handle:
            try:
                record = json.loads(raw)
            except (ValueError, RecursionError):
                continue
            if isinstance(record, dict) and isinstance(record.get("id"), str):
                ids.add(record["id"])
    return ids


def given_assertions(value) -> list[Assertion]:
    """The assertions of ``value``: a JSON Lines path, or records (``Assertion`` objects, or dicts
    of the file's form, checked as its lines are: every problem at once, item i as line i)."""
    if isinstance(value, (str, Path)):
        return load_assertions(value)
    items = _items(value, "assertions")
    if all(isinstance(item, Assertion) for item in items):
        return list(items)
    return load_assertions(Given("<assertions>", tuple(i.to_json() if isinstance(i, Assertion) else i for i in items)))


def given_receipts(value, assertion_ids: set[str]) -> list[Receipt]:
    """The receipts of ``value`` (None: none), as ``given_assertions`` reads assertions; a dict's
    support sets may cite only ``assertion_ids``."""
    if value is None:
        return []
    if isinstance(value, (str, Path)):
        return load_receipts(value, assertion_ids)
    items = _items(value, "receipts")
    if all(isinstance(item, Receipt) for item in items):
        return list(items)
    return load_receipts(Given("<receipts>", tuple(i.to_json() if isinstance(i, Receipt) else i for i in items)),
                         assertion_ids)


def _items(value, role: str) -> tuple:
    if isinstance(value, (dict, bytes)) or not hasattr(value, "__iter__"):
        raise PolygraphError("bad_argument", f"{role} must be a JSON Lines path or a list of records "
                                             f"(dicts or objects), got {type(value).__name__}")
    return tuple(value)
