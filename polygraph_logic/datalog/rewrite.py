"""Rebuilding frozen syntax trees: one function applied to every node, children first.

The parser's dataclasses are frozen and shared (parsed texts are cached), so a change
(a relation renamed by a component instance, a position mapped back through the
preprocessor's line markers) makes new nodes and keeps every unchanged one as it is.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass, replace
from typing import Callable


def rewrite(node, change: Callable):
    """Returns ``node`` with ``change`` applied to every dataclass in it, its children first
    (tuples and lists are walked; other values are left alone)."""
    # loops, not comprehensions: a clause may nest 2,000 levels (depth.MAX_DEPTH), and each
    # comprehension would add a frame a level
    if isinstance(node, (tuple, list)):
        items, changed = [], False
        for item in node:
            new = rewrite(item, change)
            changed = changed or new is not item
            items.append(new)
        if isinstance(node, list):
            return items
        return tuple(items) if changed else node
    if not is_dataclass(node) or isinstance(node, type):
        return node
    updates = {}
    for part in fields(node):
        if not part.init:
            continue
        value = getattr(node, part.name)
        new = rewrite(value, change)
        if new is not value:
            updates[part.name] = new
    return change(replace(node, **updates) if updates else node)
