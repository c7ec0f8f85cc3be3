"""Computes division.dl's expected files at both widths with C's integers (ctypes), not polygraph.

``python tests/souffle/division/compute_expected.py`` writes ``expected/`` (int32, uint32:
Soufflé's default build) and ``expected64/`` (int64, uint64): ``/`` and ``%`` truncate toward
zero as C's do, and ctypes' c_int32/c_uint32 or c_int64/c_uint64 wrap every result.
"""

from __future__ import annotations

import ctypes
from pathlib import Path

HERE = Path(__file__).parent
TYPES = {32: (ctypes.c_int32, ctypes.c_uint32), 64: (ctypes.c_int64, ctypes.c_uint64)}


def c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def compute(bits: int) -> dict[str, list[tuple]]:
    signed_c, unsigned_c = TYPES[bits]

    def s(v):
        return signed_c(v).value

    def u(v):
        return unsigned_c(v).value

    def read(name):
        return [tuple(int(v) for v in line.split("\t")) for line in (HERE / "facts" / name).read_text().splitlines()]

    pairs, upairs = read("pair.facts"), read("upair.facts")
    divided = [(a, b, s(c_div(a, b)), s(a - b * c_div(a, b))) for a, b in pairs if b != 0]
    return {name: sorted(set(rows)) for name, rows in {
        "quotient": divided,
        "rebuilt": [(a, b) for a, b, q, r in divided if s(s(q * b) + r) == a],
        "wrapped": [(a, b, s(a + b), s(a - b), s(a * b)) for a, b in pairs],
        "uquotient": [(a, b, a // b, a % b, u(a - b), u(a * b)) for a, b in upairs if b != 0],
    }.items()}


def main() -> None:
    for folder, bits in (("expected", 32), ("expected64", 64)):
        (HERE / folder).mkdir(exist_ok=True)
        for relation, rows in compute(bits).items():
            (HERE / folder / f"{relation}.csv").write_text("".join("\t".join(map(str, r)) + "\n" for r in rows))


if __name__ == "__main__":
    main()
