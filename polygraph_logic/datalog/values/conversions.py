"""Souffle's conversions between its types: ``to_number``, ``to_unsigned``, ``to_float``, ``to_string``, ``ord``.

A symbol is read as Souffle reads it (``to_number(" 42")`` is 42, ``to_float("2.5")``
2.5; a symbol that is no number is a type error, where Souffle stops with an error). A
float becomes an integer by truncation toward zero, as C's cast; a negative number
becomes an unsigned by keeping its bits (``to_unsigned(-1)`` is 4294967295 at the default
width, 32) and an unsigned of 2^31 (2^63 at 64) or more a number the same way, as Souffle's
build of that width does (datalog/values/domain.py).
"""

from __future__ import annotations

import math

from polygraph_logic.datalog.values import domain
from polygraph_logic.errors import EvaluationError


def _value(value, name: str, position):
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise EvaluationError("type_error", f"{name} needs a symbol or a number, got {value!r}", position)
    return value


def _parse_integer(text: str, name: str, position) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise EvaluationError("type_error", f"{name}: {text!r} is not a number", position) from None


def _truncate(value: float, name: str, position) -> int:
    if not math.isfinite(value):
        raise EvaluationError("type_error", f"{name}: {value} has no integer value", position)
    return int(value)  # toward zero, as C's cast


def to_number(value, position):
    """Returns a number: a symbol parsed, a float truncated, an unsigned of 2^31 or more wrapped."""
    value = _value(value, "to_number", position)
    if isinstance(value, str):
        return _parse_integer(value, "to_number", position)
    if isinstance(value, float):
        return _truncate(value, "to_number", position)
    return domain.signed(value) if 0 <= value <= domain.mask() else value


def to_unsigned(value, position):
    """Returns an unsigned: a symbol parsed, a float truncated, a negative number's bits."""
    value = _value(value, "to_unsigned", position)
    if isinstance(value, str):
        value = _parse_integer(value, "to_unsigned", position)
    elif isinstance(value, float):
        value = _truncate(value, "to_unsigned", position)
    return domain.unsigned(value) if value < 0 else value


def to_float(value, position) -> float:
    """Returns a float: a symbol parsed (``"2.5"``, ``"1e3"``, ``"7"``), an integer converted."""
    value = _value(value, "to_float", position)
    if isinstance(value, str):
        try:
            number = domain.read_float(value.strip(), float(value.strip()))
        except ValueError:
            raise EvaluationError("type_error", f"to_float: {value!r} is not a number", position) from None
        if number is None:
            raise EvaluationError("type_error", f"to_float: {value!r} is out of a float's {domain.size()}-bit "
                                  "range", position)
        return number
    return domain.integer_float(value) if isinstance(value, int) else value


def ordinal(value, position) -> int:
    """Returns ``ord``: a number's own value; for a symbol, its UTF-8 bytes read as one big-endian
    number after a 1 byte, so that equal symbols have equal ordinals and different ones different
    ordinals. Souffle returns the symbol's index in its symbol table, which depends on the order
    it first met its symbols; the two agree on equality, not on values or their order."""
    value = _value(value, "ord", position)
    if isinstance(value, (int, float)):
        return value
    data = value.encode("utf-8", "surrogateescape")
    if len(data) > 1700:
        raise EvaluationError("too_large", f"ord of a symbol of {len(data)} bytes makes an integer of more "
                              "than 4,300 digits", position)
    return int.from_bytes(b"\x01" + data, "big")
