"""The parser: the lark grammar's tree turned into the dataclasses of ``syntax.py``.

Disjunctions are expanded here (``h :- a, (b ; c).`` becomes two rules), a function
call in term position becomes a Functor, and each aggregate learns which of its
variables are bound outside it.
"""

from __future__ import annotations

import itertools
import re
from functools import lru_cache

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from polygraph_logic.datalog.values import domain
from polygraph_logic.datalog.reading.body_forms import Disjunction, expand, negated
from polygraph_logic.datalog.reading.aggregate_scope import counts_tuples, lift_head_aggregates
from polygraph_logic.datalog.reading.witnesses import resolve_aggregates
from polygraph_logic.datalog.reading.component_syntax import ComponentSyntax
from polygraph_logic.datalog.reading.depth import check_depth
from polygraph_logic.datalog.reading.include_syntax import IncludeSyntax
from polygraph_logic.datalog.directives import (Attribute, Declaration, IODirective, LazyDeclaration, Pragma,
                                                TypeDeclaration)
from polygraph_logic.errors import ParseError, Position
from polygraph_logic.datalog.values.functions import FUNCTIONS
from polygraph_logic.datalog.checks.record_patterns import destructure
from polygraph_logic.datalog.reading.record_syntax import RecordSyntax
from polygraph_logic.datalog.values.record_values import NIL
from polygraph_logic.datalog.reading.souffle_syntax import SouffleSyntax, check_choice, refuse_functor
from polygraph_logic.resources import resource_path
from polygraph_logic.datalog.syntax import (
    Aggregate,
    Arithmetic,
    Atom,
    Comparison,
    Constant,
    Fact,
    Functor,
    Negation,
    Rule,
    Variable,
    Wildcard,
)

_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r", "/": "/", "'": "'"}
_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)")


def unescape(quoted: str, file: str, line: int, column: int) -> str:
    """Returns the value of a double-quoted string literal; raises ParseError on a bad escape."""
    def replace_escape(match: re.Match) -> str:
        code = match.group(1)
        if code[0] == "u" and len(code) == 5:
            return chr(int(code[1:], 16))
        if code in _ESCAPES:
            return _ESCAPES[code]
        raise ParseError(
            "syntax_error",
            f"unknown escape '\\{code}' in string (use \\\", \\\\, \\n, \\t, \\r or \\uXXXX)",
            Position(file, line, column + match.start()),
        )

    body = quoted[1:-1]
    return _ESCAPE.sub(replace_escape, body) if "\\" in body else body


def parse_int(text: str) -> int:
    """Reads a decimal, ``0x`` hexadecimal or ``0b`` binary integer, as Souffle does."""
    if text[:2] in ("0x", "0X"):
        return int(text, 16)
    if text[:2] in ("0b", "0B"):
        return int(text, 2)
    return int(text)


class _ToAst(RecordSyntax, ComponentSyntax, IncludeSyntax, SouffleSyntax, Transformer):
    """Turns the lark tree into facts, rules and directives."""

    def __init__(self, file: str):
        super().__init__()
        self.file = file
        self._wildcards = itertools.count(1)

    def _at(self, item) -> Position:
        return Position(self.file, item.line, item.column)

    def _meta(self, meta) -> Position:
        return Position(self.file, meta.line, meta.column)

    def _term(self, term):
        """A call in term position is a function; a bare atom is only a literal."""
        if isinstance(term, Atom):
            expected = FUNCTIONS.get(term.relation)
            if expected is None:
                raise ParseError(
                    "syntax_error",
                    f"'{term.relation}(...)' is used as a value, but it is no function "
                    f"(functions: {', '.join(sorted(FUNCTIONS))})",
                    term.position,
                )
            low, high = expected
            if not low <= term.arity <= (high if high is not None else term.arity):
                want = str(low) if low == high else f"at least {low}"
                raise ParseError("arity_mismatch", f"{term.relation} takes {want} argument(s), "
                                 f"not {term.arity}", term.position)
            return Functor(term.relation, term.args, term.position)
        return term

    def start(self, statements):
        out = []
        for item in statements:
            out.extend(item) if isinstance(item, list) else out.append(item)
        return out

    def fact(self, children):
        if len(children) == 2:
            name, atom = children
            variable = unescape(name.value, self.file, name.line, name.column) if name.type == "STRING" else str(name)
            return Fact(atom, variable, self._at(name))
        head, equations = lift_head_aggregates(children[0])
        if equations:  # r(count : { e(_) }). is a rule: Soufflé computes the aggregate
            return [resolve_aggregates(destructure(Rule(head, equations, head.position)))]
        return Fact(children[0], None, children[0].position)

    def rule(self, children):
        *heads, body = children
        lifted = [lift_head_aggregates(head) for head in heads]
        return [
            resolve_aggregates(destructure(Rule(head, tuple(alternative) + equations, head.position)))
            for alternative in expand([body])
            for head, equations in lifted
        ]

    def disjunction(self, conjunctions):
        return Disjunction(conjunctions)

    def conjunction(self, literals):
        for literal in literals:
            if not isinstance(literal, (Atom, Negation, Comparison, Disjunction)):
                raise ParseError("syntax_error", f"'{literal}' is not a condition: expected an atom, "
                                 "a negation or a comparison", getattr(literal, "position", None))
        return list(literals)

    @v_args(meta=True)
    def negation(self, meta, children):
        (atom,) = children
        if isinstance(atom, (Disjunction, Negation)):
            return negated(atom)
        if not isinstance(atom, Atom):
            raise ParseError("syntax_error", f"only an atom can be negated, not '{atom}'", self._meta(meta))
        return Negation(atom, self._meta(meta))

    def comparison(self, children):
        left, op, right = children
        return Comparison(str(op), self._term(left), self._term(right), self._at(op))

    def atom(self, children):
        name, *args = children
        args = tuple(self._term(a) for a in args if a is not None)
        return Atom(str(name), args, self._at(name))

    def variable(self, children):
        (token,) = children
        if token == "nil":  # the empty record, a keyword as in Souffle
            return Constant(NIL)
        if "." in token:
            raise ParseError("syntax_error", f"'{token}' is no variable: a name with dots names a relation "
                             "of a component instance and is followed by '('", self._at(token))
        return Variable(str(token), self._at(token))

    @v_args(meta=True)
    def wildcard(self, meta, children):
        return Wildcard(self._meta(meta))

    def string(self, children):
        (token,) = children
        return Constant(unescape(token.value, self.file, token.line, token.column))

    def integer(self, children):
        return Constant(parse_int(children[0]))

    def float(self, children):
        return Constant(domain.float_constant(children[0], self._at(children[0])))

    @v_args(meta=True)
    def negative(self, meta, children):
        inner = self._term(children[0])
        if isinstance(inner, Constant) and isinstance(inner.value, (int, float)):
            return Constant(-inner.value)
        return Arithmetic("-", Constant(0), inner, self._meta(meta))

    def _binary(op):
        @v_args(meta=True)
        def build(self, meta, children):
            left, right = children
            return Arithmetic(op, self._term(left), self._term(right), self._meta(meta))

        return build

    add, sub, mul, div = _binary("+"), _binary("-"), _binary("*"), _binary("/")
    mod, pow = _binary("%"), _binary("^")

    def aggregate(self, children):
        op, target, body = children
        target = self._term(target) if target is not None else None
        body = [body] if isinstance(body, Atom) else body
        if counts_tuples(body):
            # one atom: each of its tuples counts, so its wildcards become (distinct) variables
            body = [Atom(lit.relation, tuple(Variable(f"_#{next(self._wildcards)}")
                                             if isinstance(a, Wildcard) else a for a in lit.args),
                         lit.position) if isinstance(lit, Atom) else lit for lit in body]
        if any(isinstance(lit, Disjunction) for lit in body):
            raise ParseError("syntax_error", "a disjunction inside an aggregate is not supported; "
                             "define a relation for it", self._at(op))
        if op == "count" and target is not None:
            raise ParseError("syntax_error", "count takes no target: write count : { ... }", self._at(op))
        if op != "count" and target is None:
            raise ParseError("syntax_error", f"{op} needs a target: write {op} x : {{ ... }}", self._at(op))
        return Aggregate(str(op), target, tuple(body), (), self._at(op))

    # --- directives -------------------------------------------------------------------
    def decl(self, children):
        names = [c for c in children if isinstance(c, Token) and c.type == "NAME"]
        attributes = tuple(c for c in children if isinstance(c, Attribute))
        qualifiers = tuple(str(c) for c in children if isinstance(c, Token) and c.type == "QUALIFIER")
        keys = next((c for c in children if isinstance(c, tuple)), ())
        return [Declaration(str(n), attributes, qualifiers, self._at(n),
                            check_choice(str(n), attributes, keys, self._at(n))) for n in names]

    def attribute(self, children):
        name, type_name = children
        return Attribute(str(name), str(type_name), self._at(type_name))

    def subtype(self, children):
        name, base = children
        return TypeDeclaration(str(name), "subtype", (str(base),), self._at(name))

    def union_type(self, children):
        name, *parts = children
        return TypeDeclaration(str(name), "union", tuple(map(str, parts)), self._at(name))

    def base_type(self, children):
        kind, name = children
        base = "number" if kind == ".number_type" else "symbol"
        return TypeDeclaration(str(name), "subtype", (base,), self._at(name))

    def io(self, children):
        kind, *targets = children
        return [IODirective(str(kind)[1:], str(name), params, self._at(name)) for name, params in targets]

    def io_target(self, children):
        name, *params = children
        return name, tuple(p for p in params if p is not None)

    def io_param(self, children):
        key, value = children
        text = unescape(value.value, self.file, value.line, value.column) if value.type == "STRING" else str(value)
        return str(key), text

    def plan(self, children):
        return []  # a Souffle query plan: a hint this engine's planner does not need

    def pragma(self, children):
        key, value = children
        text = unescape(value.value, self.file, value.line, value.column) if value is not None else ""
        return Pragma(unescape(key.value, self.file, key.line, key.column), text, self._at(key))

    def lazy(self, children):
        """``.lazy rel`` (a bare name: the whole relation) or ``.lazy rel("c", _, ...)``."""
        found = []
        for item in children:
            if isinstance(item, Variable):
                found.append(LazyDeclaration(item.name, None, item.position))
            elif isinstance(item, Atom) and all(isinstance(a, (Constant, Wildcard)) for a in item.args):
                pattern = tuple(a.value if isinstance(a, Constant) else None for a in item.args)
                found.append(LazyDeclaration(item.relation, pattern, item.position))
            else:
                position = getattr(item, "position", None)
                raise ParseError("syntax_error", f"'.lazy {item}': name a relation (.lazy rel) or a pattern "
                                 "of constants and _ (.lazy edge(_, \"RO:0002131\", _))", position)
        return found


@lru_cache(maxsize=1)
def grammar_parser() -> Lark:
    """Returns the LALR parser built from ``grammar/polygraph.lark`` (built once a process).

    Building the LALR tables costs about 0.3 s, a quarter of a small program's whole
    process; lark keeps them in a cache file in the temporary folder (named by the user,
    the grammar's and options' hash and the Python version, checked when read) and
    rebuilds them when the file is missing, stale or unwritable.
    """
    text = resource_path("grammar", "polygraph.lark").read_text("utf-8")
    return Lark(text, parser="lalr", propagate_positions=True, maybe_placeholders=True, cache=True)


_READABLE = {
    "NAME": "a name", "STRING": "a string", "INT": "an integer", "FLOAT": "a float",
    "COMPARE": "a comparison", "LPAR": "'('", "RPAR": "')'", "COMMA": "','", "DOT": "'.'",
    "SEMICOLON": "';'", "IF": "':-'", "_": "'_'", "$END": "end of input",
    "AGGREGATOR": "an aggregate", "QUALIFIER": "a qualifier", "IO_KIND": "a directive",
    "BASE_TYPE": "a directive", "CONSTRUCTOR": "a constructor ($Name)", "LSQB": "'['", "RSQB": "']'",
    "UNSIGNED": "an unsigned integer",
}


def _expected(error: UnexpectedInput) -> str:
    names = getattr(error, "expected", None) or getattr(error, "allowed", None) or set()
    parser = grammar_parser()
    readable = set()
    for name in names:
        if name in _READABLE:
            readable.add(_READABLE[name])
            continue
        try:
            pattern = parser.get_terminal(name).pattern
            readable.add(f"'{pattern.value}'" if pattern.type == "str" else name.lower())
        except KeyError:
            readable.add(name.lower())
    operators = {"'+'", "'-'", "'*'", "'/'", "'%'", "'^'"}
    if len(readable & operators) > 1:
        readable = (readable - operators) | {"an operator"}
    directives = {t for t in readable if t.startswith("'.") and len(t) > 3}
    if directives:
        readable = (readable - directives) | {"a directive"}
    first = ["','", "'.'", "';'", "':-'", "')'", "'}'", "a name"]
    ordered = [t for t in first if t in readable] + sorted(readable - set(first))
    return ", ".join(ordered) or "something else"


_DIRECTIVE = re.compile(r"\.([A-Za-z_]+)")
_SUPPORTED = (".decl, .type, .input, .output, .printsize, .limitsize, .plan, .pragma, .lazy, .comp, .init, "
              ".override, .include, .once")


def parse_clauses(text: str, file: str = "<string>") -> list:
    """Parses program text into facts, rules and directives; raises ParseError with file, line and column.

    The clauses of the last texts parsed are kept (they are frozen values): a process that
    builds again from the same rule files (a notebook, the ledger, the tests) parses them once.
    """
    return list(_parsed(text, file, domain.size()))


@lru_cache(maxsize=16)
def _parsed(text: str, file: str, size: int) -> tuple:  # float constants are read at the width ``size``
    try:
        tree = grammar_parser().parse(text)
    except UnexpectedToken as error:
        position = Position(file, error.line if error.line != -1 else _last_line(text), max(error.column, 1))
        directive = _DIRECTIVE.match(text, error.token.start_pos or 0) if error.token.type == "DOT" else None
        if directive and not text[: error.token.start_pos].rstrip().endswith(("(", ",")):
            if directive.group(1) == "functor":
                refuse_functor(position)
            raise ParseError("unsupported_directive", f"'.{directive.group(1)}' is not supported "
                             f"(directives: {_SUPPORTED})", position) from None
        if error.token.type == "$END":
            found = "end of input"
        elif len(error.token) == 1 and not error.token.isalnum() and error.token.type not in _READABLE:
            found = f"character {str(error.token)!r}"
        else:
            found = repr(str(error.token))
        raise ParseError("syntax_error", f"unexpected {found}; expected {_expected(error)}", position) from None
    except UnexpectedCharacters as error:
        char = text[error.pos_in_stream]
        if char == "@":
            refuse_functor(Position(file, error.line, error.column))
        what = "unterminated string" if char == '"' else f"unexpected character {char!r}"
        raise ParseError("syntax_error", f"{what}; expected {_expected(error)}",
                         Position(file, error.line, error.column)) from None
    except UnexpectedEOF as error:
        raise ParseError("syntax_error", f"unexpected end of input; expected {_expected(error)}",
                         Position(file, _last_line(text), 1)) from None
    check_depth(tree, file)
    try:
        return tuple(_ToAst(file).transform(tree))
    except VisitError as error:
        raise error.orig_exc from None


def _last_line(text: str) -> int:
    return text.count("\n") + 1

