"""The program's rules stored ready to use: syntax trees, not text to re-parse.

A graph keeps its rules twice: as rule-language text (for people, exports and other
engines) and in the ``rules`` table, one pickled syntax tree per row beside its head
relation and the constants of its first three head arguments, so that a proof of
``edge(x, "RO:0002211", y)`` loads and plans only the rules whose head can produce it
(a handful among thousands).  A *ground* rule (constants only, a body of positive atoms: what
receipts compile to, tens of thousands in a large graph) also carries its atoms as text
(``ground``), from which each store derives a look-up by atom (``rule_atoms``): an ``add``
reads the few ground rules its new facts reach and the non-ground ones, never every rule.  Unpickling is restricted to the project's own syntax
dataclasses: a damaged or hostile file can name no other class and run no function.
"""

from __future__ import annotations

import dataclasses
import importlib
import io
import json
import pickle
from typing import Sequence

from polygraph_logic.datalog.syntax import Atom, Constant, Rule
from polygraph_logic.graph.store.rows import bad_graph, fact_key, key_value


_ALLOWED_BUILTINS = {"tuple", "list", "frozenset", "set", "dict", "int", "str", "float", "bool"}
# where the syntax classes lived when older graph files were written (before datalog/)
_MOVED = {"polygraph_logic.syntax": "polygraph_logic.datalog.syntax"}


#: the classes a stored tree named, as find_class resolved them (a rule names a few, each many times)
_FOUND: dict[tuple[str, str], type] = {}


class _SyntaxUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        found = _FOUND.get((module, name))
        if found is not None:
            return found
        if module == "builtins" and name in _ALLOWED_BUILTINS:
            return getattr(__import__("builtins"), name)
        moved = _MOVED.get(module, module)
        if moved.startswith("polygraph_logic.") and "." not in name:
            found = getattr(importlib.import_module(moved), name, None)
            if isinstance(found, type) and dataclasses.is_dataclass(found):
                _FOUND[(module, name)] = found
                return found
        raise pickle.UnpicklingError(f"{moved}.{name} is not part of a rule's syntax tree")


def head_constants(rule) -> tuple:
    """``(relation, c0, c1, c2)``: a rule's head relation and the stored values of the constants
    among its first three head arguments (None for a variable or a missing argument)."""
    heads = [key_value(a.value) if isinstance(a, Constant) else None for a in rule.head.args[:3]]
    return (rule.head.relation, *heads, *[None] * (3 - len(heads)))


def _ground_value(arg) -> bool:
    return isinstance(arg, Constant) and type(arg.value) in (str, int)


def ground_atoms(rule) -> str | None:
    """A ground rule's atoms as text, ``[[relation, args key], ...]`` (the head first, each key as
    the facts table keys the fact: rows.fact_key); None for any other rule (a variable, a
    negation, a comparison, an aggregate, an empty body, a constant other than a text or an integer)."""
    atoms = (rule.head, *rule.body)
    if len(atoms) < 2 or not all(isinstance(atom, Atom) and all(map(_ground_value, atom.args)) for atom in atoms):
        return None
    return json.dumps([[atom.relation, fact_key(arg.value for arg in atom.args)] for atom in atoms],
                      ensure_ascii=False)


def rule_rows(rules: Sequence):
    """Yields ``(relation, c0, c1, c2, tree, ground)`` rows for the ``rules`` table."""
    for rule in rules:
        yield (*head_constants(rule), pickle.dumps(rule, protocol=pickle.HIGHEST_PROTOCOL), ground_atoms(rule))


#: a graph file's look-up of its ground rules by atom (a folder derives its own: folder_layout.INDEXES)
FILE_RULE_ATOMS = ("CREATE TABLE rule_atoms(relation TEXT NOT NULL, args TEXT NOT NULL, num INTEGER NOT NULL, "
                   "head TEXT NOT NULL, body INTEGER NOT NULL);"
                   "CREATE INDEX rule_atoms_by_atom ON rule_atoms(relation, args, body);")


def fill_rule_atoms(db, after: int = 0) -> None:
    """Adds to a graph file's ``rule_atoms`` the atoms of its ground rules numbered above ``after``."""
    db.execute("INSERT INTO rule_atoms SELECT json_extract(a.value, '$[0]'), json_extract(a.value, '$[1]'), r.num, "
               "r.relation, a.key > 0 FROM rules r, json_each(r.ground) a WHERE r.ground IS NOT NULL AND r.num > ?",
               (after,))


def load_rule(blob, graph):
    """Returns one stored syntax tree; a damaged one is a bad_graph error."""
    try:
        rule = _SyntaxUnpickler(io.BytesIO(blob)).load()
    except Exception as error:  # any failure to unpickle is a damaged file, never a traceback
        raise bad_graph(graph.path, f"its stored rules are damaged ({error})") from None
    if not isinstance(rule, Rule):
        raise bad_graph(graph.path, f"a stored rule is a {type(rule).__name__}, not a rule")
    return rule
