"""Soufflé's components as syntax: ``.comp``, ``.init`` and ``.override`` (``components.py`` expands them).

The parser's transformer takes its methods for the grammar rules ``component``,
``component_type``, ``component_init`` and ``override`` from ``ComponentSyntax``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from polygraph_logic.errors import Position


@dataclass(frozen=True)
class ComponentType:
    """``Name`` or ``Name<T1, T2>``: a component named with its type parameters (or arguments)."""

    name: str
    parameters: tuple[str, ...] = ()
    position: Position | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return f"{self.name}<{', '.join(self.parameters)}>" if self.parameters else self.name


@dataclass(frozen=True)
class Component:
    """``.comp Name<T> : Base<T>, Other { ... }``: declarations, clauses and directives to instantiate.

    ``body`` keeps the items in the text's order: declarations, facts, rules, I/O
    directives, nested components, ``.init`` and ``.override``."""

    type: ComponentType
    bases: tuple[ComponentType, ...]
    body: tuple
    position: Position | None = field(default=None, compare=False, repr=False)

    @property
    def name(self) -> str:
        return self.type.name

    def __str__(self) -> str:
        bases = f" : {', '.join(map(str, self.bases))}" if self.bases else ""
        return f".comp {self.type}{bases} {{ ... }}"


@dataclass(frozen=True)
class ComponentInit:
    """``.init instance = Name<number, symbol>``: the component's relations, named ``instance.rel``."""

    instance: str
    type: ComponentType
    position: Position | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return f".init {self.instance} = {self.type}"


@dataclass(frozen=True)
class Override:
    """``.override rel`` in a component: the rules a base component gives ``rel`` are dropped."""

    relation: str
    position: Position | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return f".override {self.relation}"


ComponentItem = Component | ComponentInit | Override


class ComponentSyntax:
    """The transformer methods that build the classes above, mixed into the parser's transformer
    (whose ``_at`` gives a token's position in its file)."""

    def component(self, children):
        own, *rest = children
        bases = tuple(c for c in rest if isinstance(c, ComponentType))
        body = []
        for item in rest:
            if isinstance(item, ComponentType):
                continue
            body.extend(item) if isinstance(item, list) else body.append(item)
        return Component(own, bases, tuple(body), own.position)

    def component_type(self, children):
        name, *parameters = children
        return ComponentType(str(name), tuple(map(str, parameters)), self._at(name))

    def component_init(self, children):
        instance, component_type = children
        return ComponentInit(str(instance), component_type, self._at(instance))

    def override(self, children):
        (name,) = children
        return Override(str(name), self._at(name))
