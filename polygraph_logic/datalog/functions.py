"""Built-in functions and constraints of the rule language, with Souffle's meaning.

Arithmetic on numbers (``+ - * / % ^``, ``+`` also joins strings), the string
functions ``cat strlen substr to_number to_string``, ``min``/``max`` of numbers, the
conversions ``to_float to_unsigned``, and the constraints ``contains(sub, s)`` and
``match(regex, s)`` (the regex must match all of ``s``).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable

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
}
CONSTRAINTS = {"contains": 2, "match": 2}


def _number(value, op: str, position) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise EvaluationError("type_error", f"'{op}' needs numbers, got {value!r}", position)
    return value


def arithmetic(op: str, left, right, position: Position | None):
    """Applies an arithmetic operator; on integers ``/`` is floor division, as in Python."""
    if op == "+" and isinstance(left, str) and isinstance(right, str):
        return left + right
    if not isinstance(left, (int, float)) or not isinstance(right, (int, float)):
        raise EvaluationError(
            "type_error", f"arithmetic '{op}' needs numbers, got {left!r} and {right!r}", position
        )
    if op == "^" and isinstance(left, int) and isinstance(right, int) and right > 0 and abs(left) > 1 \
            and right * (abs(left).bit_length() - 1) > _MAX_BITS:
        _too_large(op, left, right, position)  # refused before it is computed (2 ^ 10^9 would take hours)
    result = _compute(op, left, right, position)
    if isinstance(result, int) and result.bit_length() >= _MAX_BITS - 4 and abs(result) >= _TOO_LARGE:
        _too_large(op, left, right, position)
    return result


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
    if op == "+":
        return left + right
    if op == "-":
        return left - right
    if op == "*":
        return left * right
    if op == "^":
        result = left ** right
        return int(result) if isinstance(left, int) and isinstance(right, int) else result
    if right == 0:
        raise EvaluationError("division_by_zero", f"division by zero ({_shown(left)} {op} 0)", position)
    if op == "%":
        return left % right
    if isinstance(left, int) and isinstance(right, int):
        return left // right
    return left / right


def _shown(value) -> str:
    return str(value) if not isinstance(value, int) or value.bit_length() < 200 else "a large integer"


def _string(value, name: str, position) -> str:
    if not isinstance(value, str):
        raise EvaluationError("type_error", f"{name} needs a string (symbol), got {value!r}", position)
    return value


def _to_number(text, position):
    text = _string(text, "to_number", position)
    try:
        return int(text.strip())
    except ValueError:
        raise EvaluationError("type_error", f"to_number: {text!r} is not a number", position) from None


def _to_string(value, position):
    if isinstance(value, float):
        return f"{value:f}"  # as Souffle's std::to_string
    return str(value)


def _substr(text, start, length, position):
    text = _string(text, "substr", position)
    if not isinstance(start, int) or not isinstance(length, int) or start < 0 or start > len(text) or length < 0:
        return ""  # Souffle warns and yields the empty string
    return text[start:start + length]


def call(name: str, args: list, position: Position | None):
    """Applies the built-in function ``name`` to evaluated arguments."""
    if name == "cat":
        return "".join(_string(a, "cat", position) for a in args)
    if name == "strlen":
        return len(_string(args[0], "strlen", position))
    if name == "substr":
        return _substr(*args, position)
    if name == "to_number":
        return _to_number(args[0], position)
    if name == "to_string":
        return _to_string(args[0], position)
    if name == "to_float":
        return float(_to_number(args[0], position) if isinstance(args[0], str) else _number(args[0], name, position))
    if name == "to_unsigned":
        return int(_number(args[0], name, position))
    if name in ("min", "max"):
        numbers = [_number(a, name, position) if not isinstance(a, str) else a for a in args]
        try:
            return min(numbers) if name == "min" else max(numbers)
        except TypeError:
            raise EvaluationError("type_error", f"{name} cannot mix strings and numbers: {args!r}",
                                  position) from None
    raise EvaluationError("internal_error", f"no function {name}", position)


@lru_cache(maxsize=256)
def _regex(pattern: str, position) -> re.Pattern:
    try:
        return re.compile(pattern)
    except re.error as error:
        raise EvaluationError("type_error", f"match: bad regular expression {pattern!r}: {error}",
                              position) from None


def constraint(name: str, position: Position | None) -> Callable[[object, object], bool]:
    """Returns the test of a built-in constraint (``contains`` or ``match``)."""
    if name == "contains":
        def contains(sub, text):
            return _string(sub, "contains", position) in _string(text, "contains", position)

        return contains

    def match(pattern, text):
        return _regex(_string(pattern, "match", position), position).fullmatch(
            _string(text, "match", position)) is not None

    return match
