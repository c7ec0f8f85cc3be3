"""Computes bitwise.dl's expected files at both widths with C's integers (ctypes), not polygraph.

``python tests/souffle/bitwise/compute_expected.py`` writes ``expected/`` (Soufflé's default
build: int32 and uint32) and ``expected64/`` (int64 and uint64). Each operator is C's on the
width's type: ctypes' c_int32/c_uint32 or c_int64/c_uint64 wrap every result; a shift count
is taken modulo the width (Soufflé's RAM_BIT_SHIFT_MASK, RAM_DOMAIN_SIZE - 1).
"""

from __future__ import annotations

import ctypes
from pathlib import Path

HERE = Path(__file__).parent
TYPES = {32: (ctypes.c_int32, ctypes.c_uint32), 64: (ctypes.c_int64, ctypes.c_uint64)}


def compute(bits: int) -> dict[str, list[tuple]]:
    signed_c, unsigned_c = TYPES[bits]

    def s(v):
        return signed_c(v).value

    def u(v):
        return unsigned_c(v).value

    def shl(a, b):
        return s(u(a) << (b & (bits - 1)))

    def shr(a, b):
        return a >> (b & (bits - 1))

    def shru(a, b):
        return s(u(a) >> (b & (bits - 1)))

    def read(name):
        return [tuple(int(v) for v in line.split("\t")) for line in (HERE / "facts" / name).read_text().splitlines()]

    pairs, upairs = read("pair.facts"), read("upair.facts")
    out = {
        "bits": [(a, b, a & b, a | b, a ^ b, shl(a, b), shr(a, b), shru(a, b)) for a, b in pairs],
        "logic": [(a, b, int(a != 0 and b != 0), int(a != 0 or b != 0), int((a != 0) != (b != 0)), int(a == 0), s(~a))
                  for a, b in pairs],
        "layered": [(a, b, int(a != 0 or (b != 0 and (a | (b ^ (a & shl(b, s(1 + s(1 * 2)))))) != 0)))
                    for a, b in pairs],
        "sums": [(a, b, a & s(b + 1), s((a & b) + 1)) for a, b in pairs],
        "ubits": [(a, b, a & b, a ^ b, u(a << (b & (bits - 1))), a >> (b & (bits - 1)), u(~a)) for a, b in upairs],
        "fixed": [("neg_square", -(2 ** 2)), ("right_assoc", 2 ** (3 ** 2)), ("bnot_then_plus", s(~1 + 1)),
                  ("lnot_then_plus", 0 + 1 + 1), ("shift_then_band", shl(1, 4) & 255),
                  ("wrap_shift", shl(1, 31)), ("shift_count_mod_32", shl(1, 33))],
    }
    return {name: sorted(set(rows)) for name, rows in out.items()}


def main() -> None:
    for folder, bits in (("expected", 32), ("expected64", 64)):
        (HERE / folder).mkdir(exist_ok=True)
        for relation, rows in compute(bits).items():
            text = "".join("\t".join(map(str, row)) + "\n" for row in rows)
            (HERE / folder / f"{relation}.csv").write_text(text)


if __name__ == "__main__":
    main()
