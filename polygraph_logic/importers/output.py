"""Writing what importers produce: assertion files (JSON Lines) and background facts, atomically."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

from polygraph_logic.files import write_text_atomically
from polygraph_logic.graph.assertions import Assertion


def write_assertions(path: str | Path, assertions: Iterable[Assertion]) -> int:
    """Writes one JSON object a line in DESIGN.md's assertion format; returns how many.

    The file is replaced atomically: a reader sees the old file or the complete new one.
    """
    lines = [json.dumps(assertion.to_json(), ensure_ascii=False) + "\n" for assertion in assertions]
    write_text_atomically(path, "".join(lines))
    return len(lines)
