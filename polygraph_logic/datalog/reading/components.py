"""Soufflé's components expanded away: each ``.init`` becomes its component's clauses, renamed.

A macro expansion over the parsed clauses, before a program is built, done as Soufflé
instantiates components: an instance ``a`` of a component gets the component's types,
relations, directives and clauses (those of its base components first, minus the
clauses of relations a derived component overrides, and those of the instances it
makes itself), every relation and type declared there renamed ``a.rel`` / ``a.T``.
Type parameters are replaced by the type arguments in attribute and type declarations;
a component name can itself be a type parameter (``.comp D<Base> : Base { }``). A clause
whose head is no relation of the component (an "orphan") moves out to the enclosing
instance, or to the program, with its body's names renamed at each level.

Nothing here touches provenance: after the expansion the program holds plain
relations, facts and rules (a fact inside a component is a fact like any other).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from polygraph_logic.datalog.reading.component_syntax import Component, ComponentInit, ComponentItem, ComponentType, Override
from polygraph_logic.datalog.reading.souffle_syntax import Subsumption
from polygraph_logic.datalog.directives import Attribute, Declaration, IODirective, LazyDeclaration, TypeDeclaration
from polygraph_logic.datalog.rewrite import rewrite
from polygraph_logic.datalog.syntax import Atom, Fact, Rule
from polygraph_logic.errors import ProgramError

MAX_DEPTH = 100  # instances within instances, as Soufflé limits them


def expand_components(clauses: list) -> list:
    """Returns the clauses with every component instantiated and every ``.comp`` removed;
    raises ProgramError (unknown component, wrong number of type arguments, override of a
    relation not inherited, a cycle of inheritance)."""
    if not any(isinstance(c, ComponentItem) for c in clauses):
        return clauses
    scopes = _Scopes([c for c in clauses if isinstance(c, Component)])
    scopes.check()
    _check_instances([c for c in clauses if isinstance(c, ComponentInit)])
    _check_names(clauses)
    out = []
    for clause in clauses:
        if isinstance(clause, Override):
            raise ProgramError("syntax_error", f"'{clause}' belongs inside a .comp (it drops the rules a base "
                               "component gives the relation)", clause.position)
        if isinstance(clause, ComponentInit):
            orphans: list = []
            content = _Expansion(scopes, orphans).instantiate(clause, None, {}, frozenset(), MAX_DEPTH)
            out.extend(content.items())
            out.extend(orphans)
        elif not isinstance(clause, Component):
            out.append(clause)
    return out


@dataclass
class _Content:
    """An instance's types, relations, directives and clauses, in the order they were met."""

    types: list[TypeDeclaration] = field(default_factory=list)
    relations: list[Declaration] = field(default_factory=list)
    directives: list = field(default_factory=list)
    clauses: list = field(default_factory=list)

    def add(self, other: "_Content") -> None:
        self.types += other.types
        self.relations += other.relations
        self.directives += other.directives
        self.clauses += other.clauses

    def items(self) -> list:
        return [*self.types, *self.relations, *self.directives, *self.clauses]


class _Scopes:
    """Where each component is declared: at the top or inside another (its enclosing component)."""

    def __init__(self, top: list[Component]):
        self.top = _declared(top)
        self.enclosing: dict[int, Component | None] = {}
        self.nested: dict[int, dict[str, Component]] = {}
        self.every: list[Component] = []
        stack = [(c, None) for c in reversed(top)]
        while stack:
            component, outer = stack.pop()
            self.every.append(component)
            self.enclosing[id(component)] = outer
            inner = [c for c in component.body if isinstance(c, Component)]
            self.nested[id(component)] = _declared(inner)
            stack.extend((c, component) for c in reversed(inner))

    def check(self) -> None:
        """Checks every component, instantiated or not, as Soufflé's component checker does: the
        components its bases and instances name exist and take that many type arguments, and
        none inherits from itself (a name that is one of its type parameters is not checked)."""
        for component in self.every:
            parameters = set(component.type.parameters)
            for wanted in component.bases:
                if wanted.name not in parameters:
                    self.lookup(self.enclosing[id(component)], wanted, {})
            for init in component.body:
                if isinstance(init, ComponentInit) and init.type.name not in parameters:
                    self.lookup(component, init.type, {})
            self._check_cycle(component)

    def _check_cycle(self, start: Component) -> None:
        stack, visited = [(start, (start,))], set()
        while stack:
            current, path = stack.pop()
            parameters = set(current.type.parameters)
            for wanted in current.bases:
                base = None if wanted.name in parameters else self._find(self.enclosing[id(current)], wanted.name)
                if base is start:
                    cycle = " : ".join(c.name for c in (*path, base))
                    raise ProgramError("inheritance_cycle", f"component {start.name} inherits from itself "
                                       f"({cycle})", wanted.position)
                if base is not None and id(base) not in visited:
                    visited.add(id(base))
                    stack.append((base, (*path, base)))

    def lookup(self, scope: Component | None, wanted: ComponentType, binding: dict[str, str]) -> Component:
        """The component ``wanted`` names, seen from inside ``scope`` (None: the top); raises ProgramError."""
        name = binding.get(wanted.name, wanted.name)
        search, seen = scope, set()
        while search is not None and id(search) not in seen:
            seen.add(id(search))
            found = self.nested[id(search)].get(name)
            if found is not None:
                return found
            for base in search.bases:  # components declared in a base component are seen too
                outer = self.enclosing[id(search)]
                base_component = self._find(outer, binding.get(base.name, base.name))
                if base_component is not None and base_component is not search:
                    found = self.nested[id(base_component)].get(name)
                    if found is not None:
                        return found
            search = self.enclosing[id(search)]
        found = self.top.get(name)
        if found is None:
            known = sorted({*self.top, *(n for names in self.nested.values() for n in names)})
            raise ProgramError("unknown_component", f"component {name} is not declared (components: "
                               f"{', '.join(known) or 'none'})", wanted.position)
        if len(wanted.parameters) != len(found.type.parameters):
            expected = f"<{', '.join(found.type.parameters)}>" if found.type.parameters else "none"
            raise ProgramError("arity_mismatch", f"component {found.name} takes {len(found.type.parameters)} "
                               f"type argument(s) ({expected}), not {len(wanted.parameters)}", wanted.position)
        return found

    def _find(self, scope: Component | None, name: str) -> Component | None:
        while scope is not None:
            if name in self.nested[id(scope)]:
                return self.nested[id(scope)][name]
            scope = self.enclosing[id(scope)]
        return self.top.get(name)


def _declared(components: list[Component]) -> dict[str, Component]:
    found: dict[str, Component] = {}
    for component in components:
        earlier = found.get(component.name)
        if earlier is not None:
            raise ProgramError("duplicate_declaration", f"component {component.name} is declared twice "
                               f"(first at {earlier.position})", component.position)
        found[component.name] = component
    return found


class _Expansion:
    """One top-level ``.init`` expanded: its instances, and the orphan clauses they leave."""

    def __init__(self, scopes: _Scopes, orphans: list):
        self.scopes = scopes
        self.orphans = orphans

    def instantiate(self, init: ComponentInit, scope: Component | None, binding: dict[str, str],
                    overridden: frozenset[str], depth: int) -> _Content:
        """The content of the instance ``init`` makes inside ``scope``, renamed ``instance.name``."""
        if depth == 0:
            raise ProgramError("component_depth", f"components instantiate each other more than {MAX_DEPTH} "
                               "levels deep (does a component instantiate itself?)", init.position)
        component = self.scopes.lookup(scope, init.type, binding)
        active = _bind(binding, component.type.parameters, init.type.parameters)
        _check_instances(_items(component, ComponentInit))
        content = _Content()
        for nested in _items(component, ComponentInit):
            content.add(self.instantiate(nested, component, active, overridden, depth - 1))
        self.collect(component, active, content, overridden, depth, (component,))
        relations = {d.relation: f"{init.instance}.{d.relation}" for d in content.relations}
        types = {t.name: f"{init.instance}.{t.name}" for t in content.types}
        renamed = _Content(*(_renamed(part, relations, types)
                             for part in (content.types, content.relations, content.directives, content.clauses)))
        self.orphans[:] = _renamed(self.orphans, relations, types)
        return renamed

    def collect(self, component: Component, binding: dict[str, str], content: _Content,
                overridden: frozenset[str], depth: int, lineage: tuple[Component, ...]) -> None:
        """Adds what ``component`` holds (its bases' content first) to ``content``, types bound."""
        outer = self.scopes.enclosing[id(component)]
        own_overrides = {o.relation: o for o in _items(component, Override)}
        if own_overrides:
            self._check_overrides(component, own_overrides, binding, lineage)
        for wanted in component.bases:
            base = self.scopes.lookup(outer, wanted, binding)
            if len(lineage) >= MAX_DEPTH:
                raise ProgramError("component_depth", f"component {component.name} inherits through more than "
                                   f"{MAX_DEPTH} levels of base components", wanted.position)
            if any(base is c for c in lineage):
                cycle = " : ".join(c.name for c in (*lineage, base))
                raise ProgramError("inheritance_cycle", f"component {base.name} inherits from itself ({cycle})",
                                   wanted.position)
            active = _bind(binding, base.type.parameters, wanted.parameters)
            for nested in _items(base, ComponentInit):
                content.add(self.instantiate(nested, base, active, frozenset(), depth - 1))
            self.collect(base, active, content, overridden | set(own_overrides), depth, (*lineage, base))
        content.types += [_bound(t, binding) for t in _items(component, TypeDeclaration)]
        content.relations += [_bound(d, binding) for d in _items(component, Declaration)]
        # I/O and .lazy directives, and any other item a component may hold (bound and renamed too)
        content.directives += [_bound(d, binding) for d in component.body if not isinstance(d, _KNOWN)]
        declared = {d.relation for d in content.relations}
        for clause in _items(component, (Rule, Fact, Subsumption)):
            head = _head(clause)
            if head.split(".")[0] in overridden:
                continue
            (content.clauses if head in declared else self.orphans).append(clause)
        keep = []
        for orphan in self.orphans:
            (content.clauses if _head(orphan) in declared else keep).append(orphan)
        self.orphans[:] = keep

    def _check_overrides(self, component: Component, overrides: dict[str, Override],
                         binding: dict[str, str], lineage: tuple[Component, ...]) -> None:
        own = {d.relation for d in _items(component, Declaration)}
        inherited: dict[str, Declaration] = {}
        stack = [(component, binding, lineage)]
        while stack:
            current, current_binding, seen = stack.pop()
            outer = self.scopes.enclosing[id(current)]
            for wanted in current.bases:
                base = self.scopes.lookup(outer, wanted, current_binding)
                if any(base is c for c in seen):
                    continue  # a cycle: collect reports it
                for declaration in _items(base, Declaration):
                    inherited.setdefault(declaration.relation, declaration)
                stack.append((base, _bind(current_binding, base.type.parameters, wanted.parameters), (*seen, base)))
        for name, override in overrides.items():
            if name in own:
                raise ProgramError("override_error", f"component {component.name} overrides {name}, which it "
                                   "declares itself: .override is for a relation of a base component",
                                   override.position)
            declared = inherited.get(name)
            if declared is None:
                bases = ", ".join(map(str, component.bases)) or "none"
                raise ProgramError("override_error", f"component {component.name} overrides {name}, which no "
                                   f"base component declares (bases: {bases})", override.position)
            if "overridable" not in declared.qualifiers:
                raise ProgramError("override_error", f"component {component.name} overrides {name}, which is not "
                                   f"overridable: declare it '{declared} overridable' ({declared.position})",
                                   override.position)


def _check_instances(inits: list[ComponentInit]) -> None:
    """Two instances of one name in one place would declare every relation twice."""
    seen: dict[str, ComponentInit] = {}
    for init in inits:
        earlier = seen.setdefault(init.instance, init)
        if earlier is not init:
            raise ProgramError("duplicate_declaration", f"instance {init.instance} is made twice (first at "
                               f"{earlier.position}): name the second one otherwise", init.position)


def _check_names(clauses: list) -> None:
    """A component or an instance at the top may not share its name with a type, a relation or
    each other (Soufflé's name clash)."""
    taken: dict[str, object] = {}
    for clause in clauses:
        if isinstance(clause, (TypeDeclaration, Declaration)):
            taken.setdefault(clause.name if isinstance(clause, TypeDeclaration) else clause.relation, clause)
    named = [c for c in clauses if isinstance(c, Component)] + [c for c in clauses if isinstance(c, ComponentInit)]
    for clause in named:
        name = clause.name if isinstance(clause, Component) else clause.instance
        earlier = taken.setdefault(name, clause)
        if earlier is not clause and not isinstance(earlier, ComponentInit):
            what = "component" if isinstance(clause, Component) else "instance"
            raise ProgramError("duplicate_declaration", f"{what} {name} has the name of '{earlier}' "
                               f"({earlier.position}); rename one of them", clause.position)


def _items(component: Component, kind) -> list:
    return [item for item in component.body if isinstance(item, kind)]


def _head(clause) -> str:
    if isinstance(clause, Subsumption):
        return clause.relation
    return clause.head.relation if isinstance(clause, Rule) else clause.atom.relation


def _bind(binding: dict[str, str], formal: tuple[str, ...], actual: tuple[str, ...]) -> dict[str, str]:
    """The type parameters ``formal`` bound to ``actual`` (each looked up in the enclosing binding
    first); the enclosing binding itself does not carry over, as in Soufflé."""
    return {f: binding.get(a, a) for f, a in zip(formal, actual)}


_KNOWN = (Component, ComponentInit, Override, TypeDeclaration, Declaration, Rule, Fact, Subsumption)


def _bound(item, binding: dict[str, str]):
    """The item with each type parameter in it (an attribute's type, a part of a type) bound."""
    if not binding:
        return item

    def change(node):
        if isinstance(node, Attribute) and node.type in binding:
            return replace(node, type=binding[node.type])
        if isinstance(node, TypeDeclaration) and any(p in binding for p in node.parts):
            return replace(node, parts=tuple(binding.get(p, p) for p in node.parts))
        return node

    return rewrite(item, change)


def _renamed(items: list, relations: dict[str, str], types: dict[str, str]) -> list:
    """The items with the relations and types an instance declares named ``instance.name``."""
    if not relations and not types:
        return list(items)

    def change(node):
        if isinstance(node, (Atom, Declaration, IODirective, LazyDeclaration)) and node.relation in relations:
            return replace(node, relation=relations[node.relation])
        if isinstance(node, Attribute) and node.type in types:
            return replace(node, type=types[node.type])
        if isinstance(node, TypeDeclaration):
            parts = tuple(types.get(p, p) for p in node.parts)
            return replace(node, name=types.get(node.name, node.name), parts=parts)
        return node

    return [rewrite(item, change) for item in items]

