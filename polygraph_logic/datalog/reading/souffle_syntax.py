"""The parser's methods for Souffle's operators, unsigned constants, ``choice-domain`` and subsumption.

A mixin of the parser's transformer (``parser.py``): the bitwise and logical operators
become ``Arithmetic`` terms (``bnot x`` is ``x bxor -1``) or the ``Functor`` ``lnot``,
evaluated by ``functions.py``; ``12u`` is the integer 12; ``choice-domain`` keys are checked against
the declaration's attributes; a subsumptive rule ``r(x) <= r(y) :- ...`` becomes a
``Subsumption`` (evaluated by ``subsumption.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lark import v_args

from polygraph_logic.datalog.syntax import Arithmetic, Atom, Constant, Functor, Rule, Variable, Wildcard
from polygraph_logic.errors import ParseError, Position, ProgramError

#: Souffle's binary operators written as words, weakest first (see grammar/polygraph.lark)
WORD_OPERATORS = ("lor", "lxor", "land", "bor", "bxor", "band", "bshl", "bshr", "bshru")
#: its prefix operators written as words: bitwise and logical not
PREFIX_OPERATORS = ("bnot", "lnot")


@dataclass(frozen=True)
class Subsumption:
    """``dominated <= dominating :- body.``: both atoms name one relation."""

    dominated: Atom
    dominating: Atom
    body: tuple
    position: Position | None = field(default=None, compare=False, repr=False)

    @property
    def relation(self) -> str:
        return self.dominated.relation

    def rule(self) -> Rule:
        """Returns the deletion rule ``dominated :- dominated, dominating, body`` (checked and typed as any rule)."""
        return Rule(self.dominated, (self.dominated, self.dominating, *self.body), self.position)

    @classmethod
    def from_rule(cls, rule: Rule) -> "Subsumption":
        """Returns the subsumption a deletion rule (``rule()``, perhaps rewritten) stands for."""
        dominated, dominating, *body = rule.body
        return cls(dominated, dominating, tuple(body), rule.position)

    def __str__(self) -> str:
        return f"{self.dominated} <= {self.dominating} :- {', '.join(map(str, self.body))}."


def _binary(op):
    @v_args(meta=True)
    def build(self, meta, children):
        left, right = children
        return Arithmetic(op, self._term(left), self._term(right), Position(self.file, meta.line, meta.column))

    return build


def _prefix(op):
    @v_args(meta=True)
    def build(self, meta, children):
        operand, position = self._term(children[0]), Position(self.file, meta.line, meta.column)
        if op == "bnot":  # every bit flipped: x bxor -1 (whose width, once typed, wraps an unsigned)
            return Arithmetic("bxor", operand, Constant(-1), position)
        return Functor(op, (operand,), position)

    return build


class SouffleSyntax:
    """Transformer methods; the class that mixes them in provides ``file`` and ``_term``."""

    lor, lxor, land = _binary("lor"), _binary("lxor"), _binary("land")
    bor, bxor, band = _binary("bor"), _binary("bxor"), _binary("band")
    bshl, bshr, bshru = _binary("bshl"), _binary("bshr"), _binary("bshru")
    bnot, lnot = _prefix("bnot"), _prefix("lnot")

    def unsigned(self, children):
        text = str(children[0])[:-1]
        base = 16 if text[:2] in ("0x", "0X") else 2 if text[:2] in ("0b", "0B") else 10
        return Constant(int(text, base), unsigned=True)

    def choice_domain(self, children):
        return tuple(children[1:])

    def choice_key(self, names):
        return tuple(str(n) for n in names)

    def subsumption(self, children):
        less, op, greater, body = children
        position = Position(self.file, op.line, op.column)
        if str(op) != "<=":
            raise ParseError("syntax_error", f"unexpected '{op}' after the head {less}; expected ',', ':-' "
                             "or '.'", position)
        # the dominated atom is also the deletion rule's head: its wildcards get names
        less = Atom(less.relation, tuple(Variable(f"_#{next(self._wildcards)}") if isinstance(a, Wildcard) else a
                                         for a in less.args), less.position)
        return [Subsumption(rule.head, greater, rule.body, position) for rule in self.rule([less, body])]


def check_subsumptions(subsumptions: list[Subsumption]) -> None:
    """Raises ProgramError when the two sides of a subsumption name different relations."""
    for item in subsumptions:
        if item.dominated.relation != item.dominating.relation or item.dominated.arity != item.dominating.arity:
            raise ProgramError("subsumption_relations", f"'{item.dominated} <= {item.dominating}': both sides of a "
                               "subsumption are tuples of one relation", item.position)


def check_choice(relation: str, attributes, keys, position) -> tuple[tuple[str, ...], ...]:
    """Returns the ``choice-domain`` keys of a declaration; raises ParseError on a key that is no attribute."""
    names = [a.name for a in attributes]
    for key in keys:
        for name in key:
            if name not in names:
                raise ParseError("syntax_error", f"choice-domain of {relation} names {name}, which is not one of "
                                 f"its attributes ({', '.join(names)})", position)
    return tuple(keys)


FUNCTOR_ADVICE = ("user-defined functors are C++ code linked into Souffle, and polygraph runs no "
                  "foreign code: compute their values into a relation read with .input, or use the "
                  "built-in functions (cat, substr, strlen, ord, to_number, to_string, min, max, ...)")


def refuse_functor(position) -> None:
    """Raises the ParseError for a ``.functor`` declaration or an ``@name(...)`` call."""
    raise ParseError("unsupported_functor", f"'.functor' and '@name(...)': {FUNCTOR_ADVICE}", position)
