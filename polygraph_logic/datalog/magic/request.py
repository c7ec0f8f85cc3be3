"""Which relations a program asks the magic-set rewriting for, read as Soufflé reads it.

Two settings, each a comma-separated list of relation names (``*``: every relation), given by
``.pragma "magic-transform" "..."`` and ``.pragma "magic-transform-exclude" "..."`` in the text
or by the command line (``polygraph eval --magic-transform``), which overrides the text's value
of the same key, as Soufflé's options override its pragmas. A later pragma of a key overrides
an earlier one. ``.decl r(...) magic`` adds ``r`` to the relations asked for, ``no_magic``
to those excluded; an excluded relation is never rewritten, whatever else asks for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

from polygraph_logic.datalog.directives import Declaration, Pragma

TRANSFORM = "magic-transform"
EXCLUDE = "magic-transform-exclude"


@dataclass(frozen=True)
class MagicRequest:
    """The relations the rewriting may specialise: ``relations`` (None: every relation) less ``excluded``."""

    relations: frozenset[str] | None
    excluded: frozenset[str] = frozenset()

    def allows(self, relation: str) -> bool:
        """True when the request lets ``relation`` be specialised."""
        if relation in self.excluded:
            return False
        return self.relations is None or relation in self.relations


def settings(pragmas: Iterable[Pragma], overrides: Mapping[str, str] | None = None) -> dict[str, str]:
    """Returns the program's settings: its pragmas (a later one of a key wins), then ``overrides``."""
    found = {pragma.key: pragma.value for pragma in pragmas}
    found.update({key: value for key, value in (overrides or {}).items() if value is not None})
    return found


def excluded(values: Mapping[str, str], declarations: Iterable[Declaration]) -> frozenset[str]:
    """The relations kept from the rewriting: ``magic-transform-exclude`` and ``no_magic``
    (neither is inlined either, as in Soufflé)."""
    names = _names(values.get(EXCLUDE, ""))
    return frozenset(names | {d.relation for d in declarations if "no_magic" in d.qualifiers})


def magic_request(values: Mapping[str, str], declarations: Iterable[Declaration]) -> MagicRequest | None:
    """Returns what the settings and qualifiers ask for; None when nothing asks for the rewriting."""
    declarations = list(declarations)
    marked = {d.relation for d in declarations if "magic" in d.qualifiers}
    if TRANSFORM not in values and not marked:
        return None
    asked = _names(values.get(TRANSFORM, "")) | marked
    left_out = excluded(values, declarations)
    return MagicRequest(None if "*" in asked - left_out else frozenset(asked - left_out), left_out)


def _names(value: str) -> set[str]:
    return {name.strip() for name in value.split(",") if name.strip()}


__all__ = ["EXCLUDE", "TRANSFORM", "MagicRequest", "excluded", "magic_request", "settings"]
