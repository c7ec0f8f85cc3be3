"""Strict parsing of model answers: one JSON object of a named schema, citations checked.

An answer is exactly one JSON object, optionally inside a single ```json fence, and
nothing else. Every object has exactly the fields its schema names (a missing or an
extra field is a SchemaViolation), and every id a receipt cites must be one of the ids
the prompt showed (otherwise UnknownCitation, counted apart because it is the failure
that would put a dangling receipt into the graph).

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


def _claims(data: dict, shown: Shown, cited: list[str]) -> dict:
    claims = []
    for i, item in enumerate(_list(_fields(data, ("claims",), "answer")["claims"], "claims", True)):
        where = f"claims[{i}]"
        _fields(item, ("subject", "predicate", "object", "cites"), where)
        predicate = _text(item["predicate"], f"{where}.predicate")
        if shown.predicates is not None and predicate not in shown.predicates:
            raise _Violation(f"{where}.predicate {predicate!r} is not one of the relations listed")
        claims.append({"subject": _text(item["subject"], f"{where}.subject"), "predicate": predicate,
                       "object": _text(item["object"], f"{where}.object"),
                       "cites": _ids(item["cites"], f"{where}.cites", cited)})
    return {"claims": claims}


def _merges(data: dict, shown: Shown, cited: list[str]) -> dict:
    merges, taken = [], {}
    for i, item in enumerate(_list(_fields(data, ("merges",), "answer")["merges"], "merges", True)):
        where = f"merges[{i}]"
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
                raise _Violation(f"{name!r} is a member of both merges[{taken[name]}] and {where}")
            taken[name] = i
        merges.append({"canonical": canonical, "members": members,
                       "support": _support(item["support"], f"{where}.support", cited)})
    return {"merges": merges}


def _sentences(data: dict, shown: Shown, cited: list[str]) -> dict:
    sentences = []
    for i, item in enumerate(_list(_fields(data, ("sentences",), "answer")["sentences"], "sentences", False)):
        where = f"sentences[{i}]"
        _fields(item, ("text", "support"), where)
        sentences.append({"text": _text(item["text"], f"{where}.text"),
                          "support": _support(item["support"], f"{where}.support", cited)})
    return {"sentences": sentences}


def _summary(data: dict, shown: Shown, cited: list[str]) -> dict:
    _fields(data, ("summary", "support"), "answer")
    return {"summary": _text(data["summary"], "summary"), "support": _support(data["support"], "support", cited)}


def _rederivation(data: dict, shown: Shown, cited: list[str]) -> dict:
    _fields(data, ("verdict", "reason"), "answer")
    if not isinstance(data["verdict"], bool):
        raise _Violation(f"verdict must be true or false, got {data['verdict']!r}")
    if not isinstance(data["reason"], str):
        raise _Violation("reason must be a string")
    return {"verdict": data["verdict"], "reason": data["reason"].strip()}


SCHEMAS: dict[str, Callable[[dict, Shown, list[str]], dict]] = {
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


def parse_answer(schema: str, text: str, shown: Shown, *, template: str | None = None,
                 draw: int | None = None) -> dict:
    """Returns the normalized object of ``schema`` the answer holds.

    Raises SchemaViolation for anything but exactly that object, and UnknownCitation
    when a receipt cites an id outside ``shown.ids``.
    """
    check_schema_name(schema)
    cited: list[str] = []
    try:
        data = SCHEMAS[schema](json_object(text), shown, cited)
    except _Violation as problem:
        raise SchemaViolation(f"answer does not match schema {schema!r}: {problem}",
                              template=template, draw=draw) from None
    unknown = sorted(set(cited) - shown.ids)
    if unknown:
        raise UnknownCitation(f"the answer cites id(s) {', '.join(unknown)} that the prompt did not show",
                              unknown=unknown, template=template, draw=draw)
    return data

