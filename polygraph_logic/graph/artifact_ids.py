"""Artifact ids of claims, entailed edges and contradictions: stable digests of their arguments."""

from __future__ import annotations

import hashlib
from typing import Sequence

from polygraph_logic.graph.store.writer import json_text


def triple_id(layer: str, triple: Sequence[str]) -> str:
    """Returns a stable artifact id for a claim or edge: ``claim:`` plus a short digest."""
    return digest_id(layer, json_text(triple))


def digest_id(layer: str, args_text: str) -> str:
    """``triple_id`` of arguments already written as a fact's JSON key (``json_text``)."""
    return f"{layer}:{hashlib.blake2b(args_text.encode(), digest_size=6).hexdigest()}"
