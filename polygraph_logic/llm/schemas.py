"""Strict parsing of model answers: one JSON object of a named schema, citations checked.

An answer is exactly one JSON object, optionally inside a single ```json fence, and
nothing else (a fresh structured-output answer must be the bare object: client.py checks
that before this parse; the fence is for recorded answers and older caches). Every object has exactly the
fields its schema names (a missing or an extra field is a SchemaViolation), and every id a
receipt cites must be one of the ids the prompt showed (otherwise UnknownCitation, counted
apart because it is the failure that would put a dangling receipt into the graph).

Answers that are lists of items (claims, merges, sentences) are checked item by item: an
item that breaks the schema or cites an unseen id is left out and reported with its index,
code and reason (``Parsed.rejected``), so every item is either valid or reported. The
answer as a whole is rejected only when its outer shape is wrong.

Schemas (``SCHEMAS``):

- ``claims``: ``{"claims": [{"subject", "predicate", "object", "cites": [id, ...]}]}``
- ``merges``: ``{"merges": [{"canonical", "members": [name, ...], "support": [[id, ...], ...]}]}``
- ``sentences``: ``{"sentences": [{"text", "support": [[id, ...], ...]}, ...]}``
- ``summary``: ``{"summary": text, "support": [[id, ...], ...]}`` (flat and whole-summary)
- ``rederivation``: ``{"verdict": true|false, "reason": text}``
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from polygraph_logic.llm.errors import SchemaViolation, UnknownCitation

_FENCE = re.compile(r"```(?:json)?[ \t]*\n(.*?)\n?```", re.DOTALL)
_SHOWN_ID = re.compile(r"^\[([^\]\s]+)\] ", re.MULTILINE)


@dataclass(frozen=True)
class Shown:
    """What the prompt showed: the ids a receipt may cite, and where it matters the entity
    names a merge may use and the predicates a claim may have (None: not restricted)."""

    ids: frozenset[str] = frozenset()
    names: frozenset[str] | None = None
    predicates: frozenset[str] | None = None

    @classmethod
    def from_variables(cls, variables: Mapping[str, str]) -> "Shown":
        """Returns the ids of every ``[id] ...`` line in the variables (render_evidence's form)."""
        ids = {m.group(1) for value in variables.values() if isinstance(value, str)
               for m in _SHOWN_ID.finditer(value)}
        return cls(frozenset(ids))


class _Violation(Exception):
    """A structural problem found while walking an answer (becomes SchemaViolation)."""


@dataclass(frozen=True)
class Parsed:
    """A parsed answer: the normalized object and the items left out, each with its reason."""

    data: dict
    rejected: tuple[dict, ...] = ()


class _Items:
    """Walks the items of a list answer, keeping the valid ones and reporting the others."""

    def __init__(self, field: str, shown: Shown):
        self.field, self.shown = field, shown
        self.rejected: list[dict] = []

    def check(self, index: int, walk: Callable[[list[str]], dict]) -> dict | None:
        """Returns the item ``walk`` makes, or None when it breaks the schema or cites an unseen id."""
        cited: list[str] = []
        try:
            item = walk(cited)
        except _Violation as problem:
            self.rejected.append({"item": f"{self.field}[{index}]", "code": "schema_violation",
                                  "reason": str(problem)})
            return None
        unknown = sorted(set(cited) - self.shown.ids)
        if unknown:
            self.rejected.append({"item": f"{self.field}[{index}]", "code": "unknown_citation",
                                  "reason": f"cites id(s) {', '.join(unknown)} that the prompt did not show"})
            return None
        return item


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    keys = [k for k, _ in pairs]
    duplicated = sorted({k for k in keys if keys.count(k) > 1})
    if duplicated:
        raise _Violation(f"field(s) {', '.join(duplicated)} appear twice")
    return dict(pairs)


def _reject_constant(name: str):
    raise _Violation(f"{name} is not JSON")


def json_object(text: str) -> dict:
    """Returns the one JSON object the answer holds (bare or in one fence); raises _Violation."""
    stripped = text.strip()
    if stripped.startswith("```"):
        fenced = _FENCE.fullmatch(stripped)
        if not fenced:
            raise _Violation("the answer has text outside its one ```json block")
        stripped = fenced.group(1).strip()
    try:
        value = json.loads(stripped, object_pairs_hook=_reject_duplicates, parse_constant=_reject_constant)
    except json.JSONDecodeError as error:
        raise _Violation(f"not one JSON object ({error.msg} at line {error.lineno} column {error.colno})") \
            from None
    if not isinstance(value, dict):
        raise _Violation(f"expected a JSON object, got {type(value).__name__}")
    return value


def _fields(value: Any, names: tuple[str, ...], where: str) -> dict:
    if not isinstance(value, dict):
        raise _Violation(f"{where} must be an object with {', '.join(names)}")
    missing = [n for n in names if n not in value]
    extra = sorted(set(value) - set(names))
    if missing or extra:
        parts = ([f"missing {', '.join(missing)}"] if missing else []) + \
                ([f"unexpected {', '.join(extra)}"] if extra else [])
        raise _Violation(f"{where}: {'; '.join(parts)}")
    return value


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _Violation(f"{where} must be a non-empty string")
    return value.strip()


def _list(value: Any, where: str, empty_ok: bool) -> list:
    if not isinstance(value, list):
        raise _Violation(f"{where} must be a list")
    if not value and not empty_ok:
        raise _Violation(f"{where} must not be empty")
    return value


def _ids(value: Any, where: str, cited: list[str]) -> list[str]:
    items = _list(value, where, empty_ok=False)
    ids = [_text(item, f"{where}[{i}]") for i, item in enumerate(items)]
    cited.extend(ids)
    return sorted(set(ids))


def _support(value: Any, where: str, cited: list[str]) -> list[list[str]]:
    sets = [_ids(group, f"{where}[{i}]", cited) for i, group in enumerate(_list(value, where, False))]
    unique = []
    for group in sets:  # the same bundle twice is one alternative, not two
        if group not in unique:
            unique.append(group)
    return unique


def _claim(item: Any, where: str, shown: Shown, cited: list[str]) -> dict:
    _fields(item, ("subject", "predicate", "object", "cites"), where)
    predicate = _text(item["predicate"], f"{where}.predicate")
    if shown.predicates is not None and predicate not in shown.predicates:
        raise _Violation(f"{where}.predicate {predicate!r} is not one of the relations listed")
    return {"subject": _text(item["subject"], f"{where}.subject"), "predicate": predicate,
            "object": _text(item["object"], f"{where}.object"), "cites": _ids(item["cites"], f"{where}.cites", cited)}


def _claims(data: dict, shown: Shown, items: _Items) -> dict:
    claims = []
    for i, item in enumerate(_list(_fields(data, ("claims",), "answer")["claims"], "claims", True)):
        checked = items.check(i, lambda cited: _claim(item, f"claims[{i}]", shown, cited))
        if checked is not None:
            claims.append(checked)
    return {"claims": claims}


def _merge(item: Any, where: str, shown: Shown, taken: dict, cited: list[str]) -> dict:
    _fields(item, ("canonical", "members", "support"), where)
    canonical = _text(item["canonical"], f"{where}.canonical")
    members = list(dict.fromkeys(_text(m, f"{where}.members[{j}]")
                                 for j, m in enumerate(_list(item["members"], f"{where}.members", False))))
    if len(members) < 2:
        raise _Violation(f"{where} merges fewer than two distinct names")
    if canonical not in members:
        raise _Violation(f"{where}.canonical {canonical!r} is not one of its members")
    for name in members:
        if shown.names is not None and name not in shown.names:
            raise _Violation(f"{where} names {name!r}, which is not one of the entity names listed")
        if name in taken:
            raise _Violation(f"{name!r} is a member of both {taken[name]} and {where}")
    return {"canonical": canonical, "members": members,
            "support": _support(item["support"], f"{where}.support", cited)}


def _merges(data: dict, shown: Shown, items: _Items) -> dict:
    merges, taken = [], {}
    for i, item in enumerate(_list(_fields(data, ("merges",), "answer")["merges"], "merges", True)):
        where = f"merges[{i}]"
        checked = items.check(i, lambda cited: _merge(item, where, shown, taken, cited))
        if checked is not None:  # a name is taken only by a merge that was kept
            taken.update((name, where) for name in checked["members"])
            merges.append(checked)
    return {"merges": merges}


def _sentence(item: Any, where: str, cited: list[str]) -> dict:
    _fields(item, ("text", "support"), where)
    return {"text": _text(item["text"], f"{where}.text"), "support": _support(item["support"], f"{where}.support",
                                                                               cited)}


def _sentences(data: dict, shown: Shown, items: _Items) -> dict:
    sentences = []
    for i, item in enumerate(_list(_fields(data, ("sentences",), "answer")["sentences"], "sentences", False)):
        checked = items.check(i, lambda cited: _sentence(item, f"sentences[{i}]", cited))
        if checked is not None:
            sentences.append(checked)
    return {"sentences": sentences}


def _summary(data: dict, shown: Shown, items: _Items) -> dict:
    _fields(data, ("summary", "support"), "answer")
    cited: list[str] = []
    found = {"summary": _text(data["summary"], "summary"), "support": _support(data["support"], "support", cited)}
    unknown = sorted(set(cited) - shown.ids)
    if unknown:  # one object: the whole answer is the item
        raise UnknownCitation(f"the answer cites id(s) {', '.join(unknown)} that the prompt did not show",
                              unknown=unknown)
    return found


def _rederivation(data: dict, shown: Shown, items: _Items) -> dict:
    _fields(data, ("verdict", "reason"), "answer")
    if not isinstance(data["verdict"], bool):
        raise _Violation(f"verdict must be true or false, got {data['verdict']!r}")
    if not isinstance(data["reason"], str):
        raise _Violation("reason must be a string")
    return {"verdict": data["verdict"], "reason": data["reason"].strip()}


SCHEMAS: dict[str, Callable[[dict, Shown, _Items], dict]] = {
    "claims": _claims,
    "merges": _merges,
    "sentences": _sentences,
    "summary": _summary,
    "rederivation": _rederivation,
}


def check_schema_name(schema: str) -> None:
    """Raises SchemaViolation(unknown schema) unless ``schema`` is one of SCHEMAS."""
    if schema not in SCHEMAS:
        raise SchemaViolation(f"unknown schema {schema!r}; expected one of {', '.join(SCHEMAS)}",
                              code="unknown_schema")


def parse_items(schema: str, text: str, shown: Shown, *, template: str | None = None,
                draw: int | None = None) -> Parsed:
    """Returns the normalized object of ``schema`` the answer holds and the items it left out.

    Raises SchemaViolation when the answer's outer shape is not that object, and
    UnknownCitation when a one-object answer (a summary) cites an id outside ``shown.ids``;
    an item of a list that does either is left out and listed in ``rejected``.
    """
    check_schema_name(schema)
    items = _Items(_LIST_FIELDS.get(schema, "answer"), shown)
    try:
        data = SCHEMAS[schema](json_object(text), shown, items)
    except _Violation as problem:
        raise SchemaViolation(f"answer does not match schema {schema!r}: {problem}",
                              template=template, draw=draw) from None
    except UnknownCitation as unseen:
        raise UnknownCitation(unseen.message, unknown=unseen.unknown, template=template, draw=draw) from None
    return Parsed(data, tuple(items.rejected))


def parse_answer(schema: str, text: str, shown: Shown, *, template: str | None = None,
                 draw: int | None = None) -> dict:
    """Returns the normalized object of ``schema`` the answer holds (``parse_items(...).data``)."""
    return parse_items(schema, text, shown, template=template, draw=draw).data


#: the list field of each schema whose items are checked one by one
_LIST_FIELDS = {"claims": "claims", "merges": "merges", "sentences": "sentences"}

