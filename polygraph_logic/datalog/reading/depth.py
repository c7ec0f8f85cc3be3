"""Clauses nested too deep for the recursive passes over a syntax tree, refused before them
with ``too_deep`` at the outermost expression that is too deep."""

from __future__ import annotations

from lark import Tree

from polygraph_logic.errors import ParseError, Position

MAX_DEPTH = 2000  # levels of a clause's syntax tree (a sum of n terms nests n levels)


def check_depth(tree: Tree, file: str) -> None:
    """Refuses a clause nested deeper than ``MAX_DEPTH`` levels (thousands of unary
    minuses, a sum of thousands of terms) with ``too_deep`` at the outermost expression
    that is too deep, before the recursive transformation and the recursive walks over
    terms after it could exhaust the stack. Measured without recursion."""
    # every level but a few at the top spends a character ('+', '-', '(', ...): a statement
    # shorter than half the limit is never too deep, and only long ones are measured
    long = [c for c in tree.children if isinstance(c, Tree) and _span(c) >= MAX_DEPTH // 2]
    if not long:
        return
    tree = Tree("start", long)
    heights: dict[int, int] = {}
    stack: list[tuple[Tree, bool]] = [(tree, False)]
    while stack:
        node, expanded = stack.pop()
        children = [c for c in node.children if isinstance(c, Tree)]
        if expanded:
            heights[id(node)] = 1 + max((heights[id(c)] for c in children), default=0)
        else:
            stack.append((node, True))
            stack.extend((c, False) for c in children)
    if heights[id(tree)] <= MAX_DEPTH:
        return
    node = tree
    while True:  # down the deepest path to the first expression, which has a position
        if node.data in _EXPRESSIONS or not any(isinstance(c, Tree) for c in node.children):
            break
        node = max((c for c in node.children if isinstance(c, Tree)), key=lambda c: heights[id(c)])
    meta = node.meta
    position = Position(file, getattr(meta, "line", 1), getattr(meta, "column", 1))
    raise ParseError("too_deep", f"this expression nests {heights[id(node)]} levels deep, more than "
                     f"{MAX_DEPTH}: split it into several rules or assignments", position)


def _span(node: Tree) -> int:
    meta = node.meta
    if getattr(meta, "empty", True):
        return MAX_DEPTH  # no positions: measure it
    return meta.end_pos - meta.start_pos


_EXPRESSIONS = {"add", "sub", "mul", "div", "mod", "pow", "negative", "comparison", "aggregate", "atom"}
