"""The program's rules stored ready to use: syntax trees, not text to re-parse.

A graph keeps its rules twice: as rule-language text (for people, exports and other
engines) and in the ``rules`` table, one pickled syntax tree per row beside its head
relation and the constants of its first three head arguments, so that a proof of
``edge(x, "RO:0002211", y)`` loads and plans only the rules whose head can produce it
(a handful among thousands).  Unpickling is restricted to the project's own syntax
dataclasses: a damaged or hostile file can name no other class and run no function.
"""

from __future__ import annotations

import dataclasses
import importlib
import io
import pickle
from typing import Sequence

from polygraph_logic.datalog.syntax import Constant, Rule
from polygraph_logic.graph.store.rows import bad_graph, key_value


_ALLOWED_BUILTINS = {"tuple", "list", "frozenset", "set", "dict", "int", "str", "float", "bool"}
# where the syntax classes lived when older graph files were written (before datalog/)
_MOVED = {"polygraph_logic.syntax": "polygraph_logic.datalog.syntax"}


class _SyntaxUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if module == "builtins" and name in _ALLOWED_BUILTINS:
            return getattr(__import__("builtins"), name)
        module = _MOVED.get(module, module)
        if module.startswith("polygraph_logic.") and "." not in name:
            found = getattr(importlib.import_module(module), name, None)
            if isinstance(found, type) and dataclasses.is_dataclass(found):
                return found
        raise pickle.UnpicklingError(f"{module}.{name} is not part of a rule's syntax tree")


def head_constants(rule) -> tuple:
    """``(relation, c0, c1, c2)``: a rule's head relation and the stored values of the constants
    among its first three head arguments (None for a variable or a missing argument)."""
    heads = [key_value(a.value) if isinstance(a, Constant) else None for a in rule.head.args[:3]]
    return (rule.head.relation, *heads, *[None] * (3 - len(heads)))


def rule_rows(rules: Sequence):
    """Yields ``(relation, c0, c1, c2, tree)`` rows for the ``rules`` table."""
    for rule in rules:
        yield (*head_constants(rule), pickle.dumps(rule, protocol=pickle.HIGHEST_PROTOCOL))


def load_rule(blob, graph):
    """Returns one stored syntax tree; a damaged one is a bad_graph error."""
    try:
        rule = _SyntaxUnpickler(io.BytesIO(blob)).load()
    except Exception as error:  # any failure to unpickle is a damaged file, never a traceback
        raise bad_graph(graph.path, f"its stored rules are damaged ({error})") from None
    if not isinstance(rule, Rule):
        raise bad_graph(graph.path, f"a stored rule is a {type(rule).__name__}, not a rule")
    return rule
