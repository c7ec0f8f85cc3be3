"""Long join plans (more than ``join_steps.LONG`` steps) run as a loop over stages, not as
nested calls, so the stack depth does not grow with the body: a receipt with a large
support set compiles to a rule of a thousand atoms."""

from __future__ import annotations

from typing import Any, Callable, Sequence

Stage = Callable[[list, Any], Any]  # (binding, label) -> iterable of labels, writing the binding's slots


def run_stages(stages: Sequence[Stage], final: Callable[[list, Any], None]) -> Callable[[list, Any], None]:
    """Returns ``run(b, label)``: every combination the stages yield, depth first over an
    explicit stack of iterators, each complete one passed to ``final``."""
    last = len(stages)

    def run(b, label):
        stack = [iter(stages[0](b, label))]
        push, pop = stack.append, stack.pop
        while stack:
            for label in stack[-1]:
                break
            else:
                pop()
                continue
            depth = len(stack)
            if depth == last:
                final(b, label)
            else:
                push(iter(stages[depth](b, label)))

    return run


def filter_stage(filters: list[Callable[[list, Any], None]], out: list) -> Stage:
    """One stage running steps that each pass a binding on at most once, in turn:
    returns ``(label,)`` when all pass, ``()`` otherwise."""

    def stage(b, label):
        for step in filters:
            out.clear()
            step(b, label)
            if not out:
                return ()
            label = out[0]
        out.clear()
        return (label,)

    return stage
