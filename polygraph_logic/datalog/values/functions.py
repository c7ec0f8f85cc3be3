"""Built-in functions and constraints of the rule language, with Souffle's meaning.

Arithmetic on numbers (``+ - * / % ^``, ``+`` also joins strings; ``/`` and ``%`` on
integers truncate toward zero, as C does), the bitwise and logical operators on
integers (``band bor bxor bshl bshr bshru bnot``, ``land lor lxor lnot``, in two's
complement of the width in force, datalog/values/domain.py), the string functions ``cat strlen
substr ord to_number to_string``, ``min``/``max``, the conversions ``to_float
to_unsigned``, and the constraints ``contains(sub, s)`` and ``match(regex, s)`` (the
regex must match all of ``s``). ``autoinc()`` is compiled by the evaluator (a counter).
"""

from __future__ import annotations

import math
import re
import sys
from functools import lru_cache
from typing import Callable

from polygraph_logic.datalog.values import domain
from polygraph_logic.datalog.values.conversions import ordinal, to_float, to_number, to_unsigned
from polygraph_logic.datalog.values.regex import PatternError, compile_pattern
from polygraph_logic.errors import EvaluationError, Position

# name -> (fewest arguments, most arguments or None for any number)
FUNCTIONS: dict[str, tuple[int, int | None]] = {
    "cat": (1, None),
    "strlen": (1, 1),
    "substr": (3, 3),
    "to_number": (1, 1),
    "to_string": (1, 1),
    "to_float": (1, 1),
    "to_unsigned": (1, 1),
    "min": (1, None),
    "max": (1, None),
    "ord": (1, 1),
    "autoinc": (0, 0),
    "range": (2, 3),
}
CONSTRAINTS = {"contains": 2, "match": 2}


def _number(value, op: str, position) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise EvaluationError("type_error", f"'{op}' needs numbers, got {value!r}", position)
    return value


def arithmetic(op: str, left, right, position: Position | None, width: str | None = None):
    """Applies an arithmetic, bitwise or logical operator; on integers ``/`` and ``%`` truncate toward zero.

    With ``width`` ``"number"`` or ``"unsigned"`` an integer result wraps to the domain's
    width (32 or 64 bits), signed or not, as Souffle computes; without it integers are unbounded."""
    if op == "+" and isinstance(left, str) and isinstance(right, str):
        return left + right
    if op in _WORDS:
        result = _word_operator(op, left, right, position)
        return wrap(result, width) if width is not None else result
    if not isinstance(left, (int, float)) or not isinstance(right, (int, float)):
        raise EvaluationError(
            "type_error", f"arithmetic '{op}' needs numbers, got {left!r} and {right!r}", position
        )
    if width is not None and isinstance(left, int) and isinstance(right, int):
        if op == "^":
            return wrap(_c_power(left, right), width)
        return wrap(_compute(op, left, right, position), width)
    if op == "^" and isinstance(left, int) and isinstance(right, int) and right > 0 and abs(left) > 1 \
            and right * (abs(left).bit_length() - 1) > _MAX_BITS:
        _too_large(op, left, right, position)  # refused before it is computed (2 ^ 10^9 would take hours)
    result = _float_result(_compute(op, left, right, position))
    if isinstance(result, int) and result.bit_length() >= _MAX_BITS - 4 and abs(result) >= _TOO_LARGE:
        _too_large(op, left, right, position)
    return result


# the integers every width holds as they are (a 32-bit number, a 32-bit unsigned): a result of
# two of them within this range needs no wrapping, no check, whatever the width in force
_SAFE = {None: (-(1 << 31), (1 << 31) - 1), "number": (-(1 << 31), (1 << 31) - 1), "unsigned": (0, (1 << 31) - 1)}
_PLAIN = {"+": int.__add__, "-": int.__sub__, "*": int.__mul__}


def operator_of(op: str, position: Position | None, width: str | None = None) -> Callable:
    """Returns ``(left, right) -> value``, ``arithmetic`` for one operator: integers whose result is
    small (within 32 bits, where no width wraps and nothing is too large) are computed at once,
    anything else by ``arithmetic``. A rule's ``x + 1`` runs once per tuple it joins."""
    low, high = _SAFE[width]
    plain = _PLAIN.get(op)
    if plain is not None:
        def small(left, right):
            if type(left) is int and type(right) is int:
                value = plain(left, right)
                if low <= value <= high:
                    return value
            return arithmetic(op, left, right, position, width)

        return small
    if op in ("/", "%"):
        quotient = op == "/"

        def divide(left, right):  # non-negative integers: C's truncation is Python's floor
            if type(left) is int and type(right) is int and left >= 0 and right > 0:
                value = left // right if quotient else left % right
                if value <= high:
                    return value
            return arithmetic(op, left, right, position, width)

        return divide
    return lambda left, right: arithmetic(op, left, right, position, width)


# Python refuses to print or parse integers of more than 4,300 digits; one is refused
# where arithmetic makes it, with the rule's position, not later when it is written
_TOO_LARGE = 10 ** 4300
_MAX_BITS = _TOO_LARGE.bit_length()


def _too_large(op: str, left, right, position) -> None:
    def short(value):
        return str(value) if value.bit_length() < 200 else f"an integer of {value.bit_length()} bits"

    raise EvaluationError("too_large", f"'{op}' on {short(left)} and {short(right)} makes an integer of more "
                          "than 4,300 digits", position)


def _compute(op: str, left, right, position):
    floats = isinstance(left, float) or isinstance(right, float)
    try:
        if op == "+":
            return left + right
        if op == "-":
            return left - right
        if op == "*":
            return left * right
        if op == "^":
            if floats:
                return _float_power(float(left), float(right))
            if left == 0 and right < 0:
                raise EvaluationError("division_by_zero", f"0 ^ {right} divides by zero", position)
            result = left ** right
            return int(result)
    except OverflowError:
        raise EvaluationError("too_large", f"'{op}' on {_shown(left)} and {_shown(right)} makes a number "
                              "too large for a float", position) from None
    if right == 0 and floats and op == "/":
        return _float_quotient_by_zero(float(left), float(right))
    if right == 0:
        raise EvaluationError("division_by_zero", f"division by zero ({_shown(left)} {op} 0)", position)
    if isinstance(left, int) and isinstance(right, int):
        quotient = abs(left) // abs(right)  # C's integer division: toward zero
        quotient = quotient if (left < 0) == (right < 0) else -quotient
        return quotient if op == "/" else left - right * quotient
    if op == "%":
        return math.fmod(left, right)  # C's fmod: the sign of the dividend
    return left / right


def _float_result(result):
    """A float result as the domain holds it (single precision at 32), an integer as it is."""
    return domain.real(result) if type(result) is float else result


# Souffle's bitwise and logical operators, on integers of the domain's width: a shift
# counts modulo the width (32 or 64), bshl shifts the bits as unsigned and bshru fills with zeros. band, bor,
# bxor and bshr of two numbers (or of two unsigneds) in range stay in range; a bshl result
# is read as a signed number unless its width says unsigned. The logical ones give 1 or 0.
_WORDS = {"band", "bor", "bxor", "bshl", "bshr", "bshru", "land", "lor", "lxor"}
def _c_power(left: int, right: int) -> int:
    """Returns Souffle's integer ``^``: C's pow on doubles, cast to a 64-bit integer (a result out
    of its range is the x86 cast's INT64_MIN), before the cast to the domain's width."""
    try:
        power = math.pow(left, right)
    except (OverflowError, ValueError):
        return -(1 << 63)
    return int(power) if math.isfinite(power) and abs(power) < 2.0 ** 63 else -(1 << 63)


wrap = domain.wrap  # an integer wrapped to a number or an unsigned of the domain's width


def _integer(value, op: str, position) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise EvaluationError("type_error", f"'{op}' needs integers, got {value!r}", position)
    return value


def _word_operator(op: str, left, right, position):
    left, right = _integer(left, op, position), _integer(right, op, position)
    if op == "land":
        return int(left != 0 and right != 0)
    if op == "lor":
        return int(left != 0 or right != 0)
    if op == "lxor":
        return int((left != 0) != (right != 0))
    if op == "band":
        return left & right
    if op == "bor":
        return left | right
    if op == "bxor":
        return left ^ right
    shift = domain.shift_count(right)
    if op == "bshl":
        return domain.signed(domain.unsigned(left) << shift)
    if op == "bshr" or left >= 0:
        return left >> shift  # Python's >> extends the sign, as C's on a signed int
    return domain.signed(domain.unsigned(left) >> shift)  # bshru of a negative number: zeros come in


# Floats follow C's double arithmetic, as Souffle computes them: a quotient by zero is an
# infinity (or NaN for 0 / 0), pow overflows to an infinity and has no real value (NaN) for
# a negative base and a fractional exponent. A NaN is made by the hardware (inf - inf), so
# its sign is the one C's would have on this machine.

def _float_quotient_by_zero(left: float, zero: float) -> float:
    if left != left or left == 0:
        return left if left != left else math.inf - math.inf
    return math.copysign(math.inf, math.copysign(1.0, left) * math.copysign(1.0, zero))


def _float_power(base: float, exponent: float) -> float:
    odd = exponent.is_integer() and abs(exponent) < 2 ** 53 and int(exponent) % 2 == 1
    try:
        return math.pow(base, exponent)
    except OverflowError:
        return -math.inf if base < 0 and odd else math.inf
    except ValueError:
        if base == 0:  # a pole: 0 ^ negative
            return -math.inf if math.copysign(1.0, base) < 0 and odd else math.inf
        return math.inf - math.inf


def _shown(value) -> str:
    return str(value) if not isinstance(value, int) or value.bit_length() < 200 else "a large integer"


def _string(value, name: str, position) -> str:
    if not isinstance(value, str):
        raise EvaluationError("type_error", f"{name} needs a string (symbol), got {value!r}", position)
    return value


def _to_string(value, position):
    if isinstance(value, float):
        return domain.fixed_text(value)  # as Souffle's std::to_string: six decimals
    return str(value)


# Souffle's strings are bytes (UTF-8): strlen counts bytes and substr cuts bytes (a cut inside
# a character keeps its bytes, carried as surrogate escapes and written back unchanged).

def _strlen(text, position) -> int:
    text = _string(text, "strlen", position)
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogateescape"))


def _substr(text, start, length, position):
    text = _string(text, "substr", position)
    if not isinstance(start, int) or not isinstance(length, int):
        return ""
    data = text if text.isascii() else text.encode("utf-8", "surrogateescape")
    if start < 0 or start > len(data):
        return ""  # std::string::substr throws: Souffle warns and yields the empty string
    # a negative length is a huge size_t to std::string::substr: the rest of the string
    part = data[start:] if length < 0 else data[start:start + length]
    return part if isinstance(part, str) else part.decode("utf-8", "surrogateescape")


def range_values(args: list, position: Position | None):
    """Yields Souffle's ``range(from, to[, step])``: from, from + step, ... while short of ``to``
    (a negative step counts down to it); without a step, 1 or -1 toward ``to``; a step of 0,
    or one pointing away from ``to``, gives nothing."""
    start, end, *rest = (_number(a, "range", position) for a in args)
    step = rest[0] if rest else (1 if start <= end else -1)
    value = start
    while (step > 0 and value < end) or (step < 0 and end < value):
        yield value
        value = _float_result(value + step)


def call(name: str, args: list, position: Position | None):
    """Applies the built-in function ``name`` to evaluated arguments."""
    if name == "range":
        raise EvaluationError("type_error", "range(...) gives several values: bind them in a body with "
                              "x = range(from, to), x unbound", position)
    if name == "lnot":
        return int(_integer(args[0], name, position) == 0)
    if name == "ord":
        return ordinal(args[0], position)
    if name == "cat":
        return "".join(_string(a, "cat", position) for a in args)
    if name == "strlen":
        return _strlen(args[0], position)
    if name == "substr":
        return _substr(*args, position)
    if name == "to_number":
        return to_number(args[0], position)
    if name == "to_string":
        return _to_string(args[0], position)
    if name == "to_float":
        return to_float(args[0], position)
    if name == "to_unsigned":
        return to_unsigned(args[0], position)
    if name in ("min", "max"):
        numbers = [_number(a, name, position) if not isinstance(a, str) else a for a in args]
        try:
            return min(numbers) if name == "min" else max(numbers)
        except TypeError:
            raise EvaluationError("type_error", f"{name} cannot mix strings and numbers: {args!r}",
                                  position) from None
    raise EvaluationError("internal_error", f"no function {name}", position)


def pattern_warning(pattern: str, error: Exception, position) -> str:
    """Returns the warning for a pattern ``std::regex`` cannot read (Soufflé's words first)."""
    where = f"{position}: " if position else ""
    return (f"{where}warning: wrong pattern provided \"{pattern}\" for match: {error}; "
            "match and !match are false (as in Soufflé)")


@lru_cache(maxsize=256)
def _regex(pattern: str, position) -> re.Pattern | None:
    """Returns the compiled pattern, or None for a bad one computed at run time: as Soufflé
    does, match and !match are false and a warning goes to standard error, once per pattern
    (a constant pattern is compiled once, its warning given when the program loads)."""
    try:
        return compile_pattern(pattern)
    except (re.error, PatternError) as error:
        print(pattern_warning(pattern, error, position), file=sys.stderr)
        return None


def _constant_regex(pattern: str) -> re.Pattern | None:
    try:
        return compile_pattern(pattern)
    except (re.error, PatternError):
        return None


def constraint(name: str, position: Position | None, negated: bool = False,
               pattern=None) -> Callable[[object, object], bool]:
    """Returns the test of a built-in constraint (``contains`` or ``match``, or its negation);
    ``pattern`` is ``match``'s constant pattern, when it has one."""
    if name == "contains":
        def contains(sub, text):
            return (_string(sub, "contains", position) in _string(text, "contains", position)) != negated

        return contains

    constant = _constant_regex(pattern) if isinstance(pattern, str) else None

    def match(pattern_value, text):
        text = _string(text, "match", position).encode("utf-8", "surrogateescape")
        compiled = constant if isinstance(pattern, str) else _regex(_string(pattern_value, "match", position), position)
        # a pattern that does not compile makes match and !match false alike (Soufflé's Engine.cpp)
        return compiled is not None and (compiled.fullmatch(text) is not None) != negated

    return match
