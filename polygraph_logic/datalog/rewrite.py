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
    if isinstance(node, tuple):
        items = tuple(rewrite(item, change) for item in node)
        return node if all(a is b for a, b in zip(items, node)) else items
    if isinstance(node, list):
        return [rewrite(item, change) for item in node]
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
