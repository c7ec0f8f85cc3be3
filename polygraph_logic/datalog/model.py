"""A model, the result of evaluating a program: its facts with their labels, and what a deletion does to them."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Sequence, TextIO

from polygraph_logic.datalog.joins.join_plan import Store
from polygraph_logic.datalog.program import Program
from polygraph_logic.datalog.syntax import Value, format_value
from polygraph_logic.datalog.values.record_values import STRUCTURED, sort_key
from polygraph_logic.errors import NotFound, PolygraphError
from polygraph_logic.provenance import Semiring


@dataclass
class StratumStats:
    """What one stratum cost: its relations, rounds of the fixpoint and seconds."""

    relations: tuple[str, ...]
    rounds: int
    seconds: float
    facts: int


@dataclass
class Model:
    """The result of evaluating a program: every relation's facts with their labels."""

    program: Program
    semiring: Semiring
    store: Store = field(repr=False)
    stats: list[StratumStats] = field(default_factory=list, repr=False)

    def relations(self) -> list[str]:
        """Returns the names of every relation of the program, sorted (not those the magic-set
        rewriting made: ``facts`` reads them by name)."""
        made = self.program.magic.generated if self.program.magic is not None else ()
        return sorted(name for name in self.store.relations if name not in made)

    def facts(self, relation: str) -> Mapping[tuple, Any]:
        """Returns the facts of a relation as a read-only ``tuple -> label`` mapping."""
        self._require(relation)
        return self._rows(relation)

    def label(self, relation: str, args: Iterable[Value]) -> Any | None:
        """Returns the label of ``relation(args)``, or None if the fact does not hold."""
        self._require(relation)
        return self._rows(relation).get(tuple(args))

    def _rows(self, relation: str) -> Mapping[tuple, Any]:
        """The ``tuple -> label`` mapping of a relation (read-only)."""
        return MappingProxyType(self.store.relations[relation])

    def _what_if(self, deleted: frozenset[str]) -> "WhatIf":
        """What a checked deletion does: every label restricted (see ``what_if``)."""
        alive, dead = {}, {}
        for name, rows in self.store.relations.items():
            kept, lost = {}, []
            for tup, label in rows.items():
                restricted = label.restrict(deleted)
                if restricted.is_zero():
                    lost.append(tup)
                else:
                    kept[tup] = restricted
            alive[name], dead[name] = kept, lost
        return WhatIf(deleted, alive, dead)

    def __contains__(self, item: tuple[str, tuple]) -> bool:
        relation, args = item
        return tuple(args) in self.store.relations.get(relation, {})

    def boolean(self) -> dict[str, set[tuple]]:
        """Returns every relation as a set of tuples (labels dropped)."""
        return {name: set(rows) for name, rows in self.store.relations.items()}

    def restrict(self, deleted: Iterable[str]) -> dict[str, dict[tuple, Any]]:
        """Returns the facts still supported once the ``deleted`` assertions are false.

        Nothing is mutated; facts whose label becomes zero are left out.
        """
        return what_if(self, deleted).alive

    def to_json(self) -> dict[str, list]:
        """Returns the model in the CLI's ``--json`` shape (tuples sorted)."""
        out: dict[str, list] = {}
        for name in self.relations():
            rows = self._rows(name)
            if self.semiring.tracks_provenance:
                out[name] = [
                    {
                        "tuple": json_row(tup),
                        "provenance": self.semiring.to_json(rows[tup]),
                        "exact": rows[tup].exact,
                    }
                    for tup in sorted_tuples(rows)
                ]
            else:
                out[name] = [json_row(tup) for tup in sorted_tuples(rows)]
        return out

    def write_json(self, out: TextIO, names: Sequence[str] | None = None, chunk: int = 2000) -> None:
        """Writes ``{name: to_json()[name]}`` for ``names`` (default: every relation) to ``out``,
        the same text as ``json.dump(..., indent=2, ensure_ascii=False)``, a few thousand
        rows at a time: memory follows the facts, not the output's text."""
        names = self.relations() if names is None else list(names)
        tracks = self.semiring.tracks_provenance
        if not names:
            out.write("{}")
            return
        out.write("{\n")
        for n, name in enumerate(names):
            rows = self._rows(name)
            out.write(f'  {_json_string(name)}: ')
            if not rows:
                out.write("[]")
            else:
                out.write("[\n")
                ordered = sorted_tuples(rows)
                for start in range(0, len(ordered), chunk):
                    part = ordered[start:start + chunk]
                    if tracks:
                        texts = [_json_block({"tuple": json_row(tup), "provenance": self.semiring.to_json(rows[tup]),
                                              "exact": rows[tup].exact}) for tup in part]
                    else:
                        texts = [_json_row(tup) for tup in part]
                    out.write(",\n".join(texts))
                    out.write(",\n" if start + chunk < len(ordered) else "\n")
                out.write("  ]")
            out.write(",\n" if n + 1 < len(names) else "\n")
        out.write("}")

    def format_fact(self, relation: str, tup: tuple) -> str:
        """Returns ``relation("a", 3)`` as the rule language writes it."""
        return f"{relation}({', '.join(format_value(v) for v in tup)})"

    def _require(self, relation: str) -> None:
        if relation not in self.store.relations:
            known = ", ".join(self.relations()) or "none"
            raise NotFound("unknown_relation", f"no relation named {relation!r}; the program has: {known}")


@dataclass
class WhatIf:
    """What a deletion does to a model: per relation, the facts alive (restricted labels) and dead."""

    deleted: frozenset[str]
    alive: dict[str, dict[tuple, Any]]
    dead: dict[str, list[tuple]]


def what_if(model: Model, deleted: Iterable[str]) -> WhatIf:
    """Restricts every label by a deletion of assertion ids, without touching the model.

    Raises PolygraphError(unknown_assertion) naming ids the program never tracked,
    with close matches, so a misspelled deletion evaluates nothing.
    """
    if not model.semiring.tracks_provenance:
        raise PolygraphError(
            "no_provenance",
            f"the {model.semiring.name} semiring tracks no assertions; use --semiring why or lineage",
        )
    deleted = frozenset(deleted)
    known = model.program.assertion_ids()
    unknown = sorted(deleted - set(known))
    if unknown:
        hints = []
        for name in unknown:
            close = difflib.get_close_matches(name, known, n=3)
            hints.append(f"{name} (did you mean {', '.join(close)}?)" if close else name)
        raise PolygraphError("unknown_assertion", f"no tracked fact is named {'; '.join(hints)}")
    return model._what_if(deleted)


_json_string = json.encoder.encode_basestring  # ensure_ascii=False, as the CLI writes


def _json_value(value) -> str:
    if type(value) is str:
        return _json_string(value)
    if type(value) is int:
        return int.__repr__(value)
    if isinstance(value, STRUCTURED):
        return _json_string(str(value))  # a record or ADT value as Souffle writes it
    return json.dumps(value)


def json_row(tup: tuple) -> list:
    """Returns a tuple as a JSON list: a record or ADT value as the text Souffle writes for it."""
    return [str(v) if isinstance(v, STRUCTURED) else v for v in tup]


def _json_row(tup: tuple) -> str:
    """One tuple as json.dump(indent=2) writes it two levels deep."""
    if not tup:
        return "    []"
    return "    [\n" + ",\n".join("      " + _json_value(v) for v in tup) + "\n    ]"


def _json_block(value) -> str:
    """Any JSON value as json.dump(indent=2) writes it two levels deep."""
    return "    " + json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n    ")


def sorted_tuples(rows) -> list[tuple]:
    """Returns the tuples in ``tuple_key`` order: by the plain order of tuples when every value is
    an integer or a string and no column mixes the two (the same order, several times faster on
    a million tuples), else by ``tuple_key``."""
    rows = list(rows)
    if {type(v) for tup in rows for v in tup} <= {int, str}:
        try:
            return sorted(rows)
        except TypeError:  # a column holds both: tuple_key puts integers first
            pass
    return sorted(rows, key=tuple_key)


def tuple_key(tup: tuple) -> tuple:
    """Sort key for tuples mixing integers and strings: integers first, then strings (then
    nil, records and ADT values, see ``records.sort_key``)."""
    return tuple((0, v, "") if isinstance(v, (int, float)) else (1, 0, v) if isinstance(v, str) else sort_key(v)
                 for v in tup)


__all__ = ["Model", "StratumStats", "WhatIf", "json_row", "sorted_tuples", "tuple_key", "what_if"]
