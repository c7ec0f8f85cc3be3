"""Computes floats.dl's expected files at both widths with C floats and doubles (ctypes), not polygraph.

``python tests/souffle/floats/compute_expected.py`` writes ``expected/`` (Soufflé's default
build: C ``float``, read by ``strtof`` from libc, written ``%.9g`` by libc's printf) and
``expected64/`` (``double``, ``strtod``, ``%.17g``). Every operation is C's: ctypes' c_float
or c_double arithmetic on the values, libc's ``strtof``/``strtod``/``snprintf`` for text.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
from pathlib import Path

HERE = Path(__file__).parent
LIBC = ctypes.CDLL(ctypes.util.find_library("c"))
LIBC.strtof.restype, LIBC.strtof.argtypes = ctypes.c_float, [ctypes.c_char_p, ctypes.c_void_p]
LIBC.strtod.restype, LIBC.strtod.argtypes = ctypes.c_double, [ctypes.c_char_p, ctypes.c_void_p]
LIBM = ctypes.CDLL(ctypes.util.find_library("m"))


class C:
    """One width's C arithmetic: ``real`` holds a value in the C type, ``text`` writes it."""

    def __init__(self, ctype, digits: int, read):
        self.ctype, self.digits, self.read_c = ctype, digits, read

    def real(self, value: float) -> float:
        return self.ctype(value).value  # C's conversion to the type (one rounding)

    def read(self, text: str) -> float:
        return self.read_c(text.encode(), None)

    def op(self, a: float, op: str, b: float) -> float:
        # on two values of the type, +, -, *, / of C's float equal the double result rounded once
        a, b = self.real(a), self.real(b)
        if op == "/" and b == 0:
            return self.real(math.copysign(math.inf, a) * math.copysign(1.0, b)) if a else math.nan
        result = {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b else 0.0}[op]
        return self.real(result)

    def pow(self, a: float, b: float) -> float:
        libm = LIBM.powf if self.ctype is ctypes.c_float else LIBM.pow
        libm.restype, libm.argtypes = self.ctype, [self.ctype, self.ctype]
        return libm(a, b)

    def text(self, value: float) -> str:
        buffer = ctypes.create_string_buffer(64)
        LIBC.snprintf(buffer, 64, f"%.{self.digits}g".encode(), ctypes.c_double(value))
        return buffer.value.decode()


def fixed(value: float) -> str:
    buffer = ctypes.create_string_buffer(400)
    LIBC.snprintf(buffer, 400, b"%f", ctypes.c_double(value))  # std::to_string
    return buffer.value.decode()


def compute(c: C) -> dict[str, list[str]]:
    readings = [line.split("\t") for line in (HERE / "facts" / "reading.facts").read_text().splitlines()]
    values = [(s, c.read(t)) for s, t in readings]
    three, four, two = c.real(3), c.real(4), c.real(2)
    out = {}
    out["scaled"] = sorted(f"{s}\t{c.text(c.op(v, '*', two))}\t{c.text(c.op(v, '/', three))}" for s, v in values)
    ratios = {c.op(c.real(7), "/", two), c.op(c.real(1), "/", four)}
    ratios |= {c.op(c.op(v, "/", four), "+", c.real(1)) for _, v in values if v > 2}
    out["ratio"] = [c.text(x) for x in sorted(ratios)]
    out["text"] = sorted(f"{s}\t{fixed(v)}" for s, v in values)
    total = c.real(0)
    for _, v in values:  # in the relation's order (by sensor)
        total = c.op(total, "+", v)
    mean = c.op(total, "/", c.real(len(values)))
    numbers = [v for _, v in values]
    columns = [str(len(values)), c.text(total), c.text(min(numbers)), c.text(max(numbers)), c.text(mean)]
    out["stats"] = ["\t".join(columns)]
    edges = {
        "big": c.read("100000000000000000000.0"), "exact": c.read("10000000000000000.0"),
        "tiny": c.read("0.0009765625"), "small": c.read("0.00001"), "negzero": -c.read("0.0"),
        "inf": c.op(c.read("1.0"), "/", c.real(0)), "neginf": c.op(-c.read("1.0"), "/", c.real(0)),
        "overflow": c.pow(c.read("10.0"), c.read("400.0")), "root": c.pow(c.read("2.0"), c.read("0.5")),
        "sum": c.op(c.read("0.1"), "+", c.read("0.2")),
    }
    out["edge"] = [f"{k}\t{c.text(v)}" for k, v in sorted(edges.items())]
    return out


def main() -> None:
    widths = (("expected", C(ctypes.c_float, 9, LIBC.strtof)), ("expected64", C(ctypes.c_double, 17, LIBC.strtod)))
    for folder, c in widths:
        (HERE / folder).mkdir(exist_ok=True)
        for relation, rows in compute(c).items():
            (HERE / folder / f"{relation}.csv").write_text("".join(row + "\n" for row in rows))


if __name__ == "__main__":
    main()
