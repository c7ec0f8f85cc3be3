"""The program's rules stored ready to use: syntax trees, not text to re-parse.

A graph keeps its rules twice: as rule-language text (for people, exports and other
engines) and as pickled syntax trees, so that re-derivation and explanations start
without the parser.  Unpickling is restricted to the project's own syntax dataclasses:
a damaged or hostile file can name no other class and run no function.
"""

from __future__ import annotations

import dataclasses
import importlib
import io
import pickle
from typing import Sequence

from ..errors import PolygraphError

_ALLOWED_BUILTINS = {"tuple", "list", "frozenset", "set", "dict", "int", "str", "float", "bool"}


class _SyntaxUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if module == "builtins" and name in _ALLOWED_BUILTINS:
            return getattr(__import__("builtins"), name)
        if module.startswith("polygraph_logic.") and "." not in name:
            found = getattr(importlib.import_module(module), name, None)
            if isinstance(found, type) and dataclasses.is_dataclass(found):
                return found
        raise pickle.UnpicklingError(f"{module}.{name} is not part of a rule's syntax tree")


def dump_rules(rules: Sequence) -> bytes:
    """Returns the rules' syntax trees as bytes for the graph file."""
    return pickle.dumps(list(rules), protocol=pickle.HIGHEST_PROTOCOL)


def load_rules(blob: bytes | None, graph) -> list:
    """Returns the stored syntax trees; a missing or damaged blob is a bad_graph error."""
    if not isinstance(blob, bytes):
        raise PolygraphError("bad_graph", f"{graph.path}: its rules (meta.rules_tree) are missing; rebuild it "
                                          f"with `polygraph build ... -o {graph.path}`")
    try:
        rules = _SyntaxUnpickler(io.BytesIO(blob)).load()
    except Exception as error:  # any failure to unpickle is a damaged file, never a traceback
        raise PolygraphError("bad_graph", f"{graph.path}: its stored rules are damaged ({error}); rebuild it "
                                          f"with `polygraph build ... -o {graph.path}`") from None
    from ..syntax import Rule
    if not isinstance(rules, list) or not all(isinstance(r, Rule) for r in rules):
        raise PolygraphError("bad_graph", f"{graph.path}: its stored rules are not rules")
    return rules
