"""Argument types shared by the subcommands."""

from __future__ import annotations

import argparse


def parse_cap(text: str) -> int | None:
    if text.lower() in ("none", "0", "inf"):
        return None
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--cap takes a positive integer or 'none', not {text!r}")
    if value < 0:
        raise argparse.ArgumentTypeError("--cap must be positive")
    return value


