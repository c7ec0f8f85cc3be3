"""The width of Soufflé's values (32 or 64 bits, its build option SOUFFLE_DOMAIN_64BIT) and all that follows from it.

Soufflé stores every value in a RamDomain of its build's width. The default build (32) has
``number`` int32, ``unsigned`` uint32 and ``float`` a C float (single precision), written
with ``max_digits10`` = 9 significant digits; the 64-bit build has int64, uint64 and doubles
written with 17 digits. Its preprocessor predefines ``RAM_DOMAIN_SIZE`` as the width. Here
one setting, ``size()``, decides all of them: integer wrapping and ranges, the shift count
modulo, float rounding (every float computed, read or aggregated is rounded to single
precision at 32), float reading (``strtof`` or ``strtod``), float text and the macro.

How the width reaches the code that needs it: a program carries it (``Program.domain_size``,
set when it is loaded), and ``using(size)`` sets a ``ContextVar`` for the duration of a load,
a run (``evaluate``) or a write, from that field. A context variable, not an argument,
because the width is needed deep inside arithmetic, conversions, aggregates, constants and
the fact reader, which are called from many places that know nothing about widths; and not
a module global, because a context variable is restored when ``using`` ends and is private
to its thread or task, so two programs of different widths evaluated in one process (one
after the other, or side by side in threads) do not see each other's width. Outside any
``using`` the width is Soufflé's default build's, 32.
"""

from __future__ import annotations

import math
import struct
from contextlib import contextmanager
from contextvars import ContextVar
from fractions import Fraction
from typing import Iterator

from polygraph_logic.errors import Position, ProgramError

SIZES = (32, 64)
DEFAULT = 32

_SIZE: ContextVar[int] = ContextVar("polygraph_domain_size", default=DEFAULT)


def check(size) -> int:
    """Returns ``size`` if it is a width Soufflé builds (32 or 64); raises ValueError otherwise."""
    if size not in SIZES or isinstance(size, bool):
        raise ValueError(f"the domain size is 32 or 64 (Soufflé's builds), not {size!r}")
    return size


def size() -> int:
    """Returns the width in force: 32 or 64."""
    return _SIZE.get()


@contextmanager
def using(width: int) -> Iterator[int]:
    """Sets the width for the duration of a ``with`` block (a load, a run, a write)."""
    token = _SIZE.set(check(width))
    try:
        yield width
    finally:
        _SIZE.reset(token)


# integers

def mask() -> int:
    """Returns the all-ones word of the width (0xFFFFFFFF at 32)."""
    return (1 << _SIZE.get()) - 1


def signed(value: int) -> int:
    """Returns ``value`` wrapped to a signed integer of the width, as C's two's complement wraps."""
    bits = _SIZE.get()
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def unsigned(value: int) -> int:
    """Returns ``value`` wrapped to an unsigned integer of the width."""
    return value & ((1 << _SIZE.get()) - 1)


def wrap(value, kind: str):
    """Returns an integer wrapped to a ``number`` (signed) or an ``unsigned`` of the width; any other value as it is."""
    if not isinstance(value, int):
        return value
    return signed(value) if kind == "number" else unsigned(value)


def shift_count(count: int) -> int:
    """Returns a shift count as the width's C shift takes it (modulo 32 or 64)."""
    return count & (_SIZE.get() - 1)


def ranges() -> dict[str, tuple[int, int]]:
    """Returns the lowest and highest ``number`` and ``unsigned`` of the width."""
    bits = _SIZE.get()
    return {"number": (-(1 << (bits - 1)), (1 << (bits - 1)) - 1), "unsigned": (0, (1 << bits) - 1)}


def macro() -> str:
    """Returns ``RAM_DOMAIN_SIZE`` as Soufflé's preprocessor defines it: "32" or "64"."""
    return str(_SIZE.get())


# floats

_PACK = struct.Struct("f")


def single(value: float) -> float:
    """Returns a double rounded to the nearest single-precision float (C's cast to float:
    beyond the largest float, an infinity of its sign)."""
    try:
        return _PACK.unpack(_PACK.pack(value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


def real(value: float) -> float:
    """Returns a float result as the width holds it: rounded to single precision at 32, as it is at 64."""
    if _SIZE.get() == 64 or value != value or value in (math.inf, -math.inf):
        return value
    return single(value)


def float_text(value: float) -> str:
    """Returns a float as Soufflé's writers write it: printf ``%.9g`` of the single at 32
    (``0.100000001``), ``%.17g`` of the double at 64 (``0.10000000000000001``); a NaN keeps
    its sign (glibc writes ``-nan``), which Python's format drops."""
    if value != value:
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    return format(value, ".9g" if _SIZE.get() == 32 else ".17g")


def fixed_text(value: float) -> str:
    """Returns ``std::to_string`` of a float: printf ``%f`` (six decimals) at either width."""
    if value != value:
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    return format(value, "f")


def read_single(text: str, double: float) -> float | None:
    """Returns what C's ``strtof`` reads from ``text``, given the double ``strtod`` reads from
    it (finite): correctly rounded, not rounded twice; None where ``strtof`` overflows (ERANGE)."""
    result = single(double)
    if result in (math.inf, -math.inf):
        return None
    if result != double:
        # a double exactly between two singles may stand for a decimal just off the midpoint
        below, above = sorted((result, _neighbour(result, double)))
        if double * 2 == below + above:
            try:
                exact = Fraction(text.strip())
            except ValueError:
                return result  # hexadecimal text: its double is exact here
            middle = Fraction(below) + Fraction(above)
            if exact * 2 != middle:
                return below if exact * 2 < middle else above
    return result


def _neighbour(result: float, toward: float) -> float:
    as_int = struct.unpack("<i", struct.pack("<f", result))[0]
    step = 1 if (toward > result) == (result >= 0) else -1
    if result == 0:
        return math.copysign(struct.unpack("<f", struct.pack("<i", 1))[0], toward)
    return struct.unpack("<f", struct.pack("<i", as_int + step))[0]


def read_float(text: str, double: float) -> float | None:
    """Returns the float a fact file's or a constant's text holds at the width, given the
    double read from it: ``strtof`` at 32, ``strtod`` (the double itself) at 64; None where
    the text is a finite number beyond the width's floats (their ERANGE)."""
    if double in (math.inf, -math.inf):
        return double if "inf" in text.lower() else None
    if _SIZE.get() == 64 or double != double:
        return double
    return read_single(text, double)


def float_constant(text: str, position: Position | None) -> float:
    """Returns a float constant of a program's text as Soufflé's parser reads it at the width;
    one beyond a single's range at 32 is a type_error at its position."""
    value = read_float(text, float(text))
    if value is None:
        raise ProgramError("type_error", f"{text} is out of a float's {_SIZE.get()}-bit range", position)
    return value


def integer_float(value: int) -> float:
    """Returns C's cast of an integer to the width's float, rounded once (``to_float``, an
    integer constant in a float place)."""
    double = float(value)
    if _SIZE.get() == 64:
        return double
    return single(double) if abs(value) <= 1 << 53 else read_single(str(value), double) or single(double)
