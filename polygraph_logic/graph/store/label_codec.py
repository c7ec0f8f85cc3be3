"""Support labels on disk: support sets of assertion numbers as varint-coded gaps.

A label of m support sets is m runs of ``size, gap1, gap2, ...`` where the gaps are
the differences between ascending assertion numbers, so that the common small label
(one or two sets of one to three assertions) takes a handful of bytes.
"""

from __future__ import annotations

from typing import Iterable


def encode_label(support: Iterable[Iterable[int]]) -> bytes:
    """Returns support sets of assertion numbers as varints: size, then ascending gaps."""
    out = bytearray()

    def varint(n: int) -> None:
        while n >= 0x80:
            out.append(n & 0x7F | 0x80)
            n >>= 7
        out.append(n)

    for group in support:
        numbers = sorted(group)
        varint(len(numbers))
        previous = 0
        for n in numbers:
            varint(n - previous)
            previous = n
    return bytes(out)


def decode_label(blob: bytes) -> list[list[int]]:
    """Inverts encode_label; raises ValueError on a truncated label."""
    if blob and max(blob) < 0x80:
        values = list(blob)  # every number below 128: one byte each (most labels)
    else:
        values, n, shift = [], 0, 0
        for byte in blob:
            n |= (byte & 0x7F) << shift
            if byte & 0x80:
                shift += 7
            else:
                values.append(n)
                n, shift = 0, 0
        if shift:
            raise ValueError("label ends inside a number")
    groups, i = [], 0
    while i < len(values):
        size, total, group = values[i], 0, []
        if i + 1 + size > len(values):
            raise ValueError("label ends inside a support set")
        for gap in values[i + 1:i + 1 + size]:
            total += gap
            group.append(total)
        groups.append(group)
        i += 1 + size
    return groups


def label_sets(blob: bytes) -> list[frozenset[int]]:
    """Returns a stored label's support sets as frozensets of assertion numbers."""
    return [frozenset(group) for group in decode_label(blob)]


def mentioned(blob: bytes) -> set[int]:
    """Returns every assertion number a stored label mentions."""
    return {n for group in decode_label(blob) for n in group}


#: the label one (background knowledge) as a file stores it and as a folder's view reads it
ONE_LABELS = (encode_label([[]]), "[[]]")
