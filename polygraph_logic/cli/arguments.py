"""The argument vocabulary every subcommand shares: one meaning per flag, everywhere.

- a deletion: ``--retract-source S`` (repeatable), ``--retract-source-file F`` (one source a
  line, ``#`` lines are comments), ``--revoke-relation P`` (repeatable), ``--assertion ID`` (repeatable):
  together they name ONE deletion; a command that evaluates several deletions says so with
  its own explicit flag (``audit --separately``);
- ``--policy POLICY``, ``--limit N`` (a positive integer), ``--cap K|none``;
- ``--json``: the command's report as one JSON document (its shape is documented in the
  command's help and in README's "JSON output" section; numbers are numbers, no absolute paths).

This module imports nothing heavy: ``polygraph --help`` loads it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import PolygraphError


def parse_cap(text: str) -> int | None:
    """``--cap K|none``: a positive integer, or ``none`` for no cap (``0`` is refused, not a synonym)."""
    if text.lower() == "none":
        return None
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--cap takes a positive integer or 'none', not {text!r}")
    if value < 1:
        raise argparse.ArgumentTypeError(f"--cap takes a positive integer or 'none', not {text!r} "
                                         "(for no cap say 'none')")
    return value


def positive_int(text: str) -> int:
    """A count such as ``--limit N``: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, not {text!r}")
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, not {text!r}")
    return value


def add_limit(command: argparse.ArgumentParser, default: int | None, what: str) -> None:
    """``--limit N``: at most N of ``what`` (a positive integer)."""
    shown = "all" if default is None else str(default)
    command.add_argument("--limit", type=positive_int, default=default, metavar="N",
                         help=f"at most N {what} (default {shown})")


def add_json(command: argparse.ArgumentParser, shape: str) -> None:
    """``--json``: print the report as one JSON document of the given ``shape``."""
    command.add_argument("--json", action="store_true", help=f"print JSON: {shape}")


def add_deletion(command: argparse.ArgumentParser, *, policy: bool = True, policies=None) -> None:
    """The flags that name one deletion (and, with ``policy``, the cleanup policy)."""
    group = command.add_argument_group("deletion (together, one deletion)")
    group.add_argument("--retract-source", action="append", default=[], metavar="S",
                       help="delete every assertion of source S (repeatable)")
    group.add_argument("--retract-source-file", action="append", default=[], metavar="FILE",
                       help="delete every assertion of each source listed in FILE, one a line "
                            "(lines starting with '#' are comments; repeatable)")
    group.add_argument("--revoke-relation", action="append", default=[], metavar="P",
                       help="delete every assertion with predicate P (repeatable)")
    group.add_argument("--assertion", action="append", default=[], metavar="ID",
                       help="delete one assertion by id (repeatable)")
    group.add_argument("--distrust-kind", action="append", default=[], metavar="KIND",
                       help="assertions of KIND cannot support (repeatable; see polygraph_logic/kinds.py)")
    if policy:
        from ..whatif import POLICIES  # noqa: PLC0415  (only commands with a policy pay for it)

        names = tuple(policies or POLICIES)
        group.add_argument("--policy", default="trust-all", choices=names, metavar="POLICY",
                           help=f"cleanup policy: {', '.join(names)} (default trust-all)")


def deletion_sources(args: argparse.Namespace) -> tuple[str, ...]:
    """The sources of ``--retract-source`` and ``--retract-source-file``, in order, once each."""
    sources = list(args.retract_source)
    for name in args.retract_source_file:
        sources += read_names(name)
    return tuple(dict.fromkeys(sources))


def has_deletion(args: argparse.Namespace) -> bool:
    return bool(args.retract_source or args.retract_source_file or args.revoke_relation or args.assertion
                or getattr(args, "distrust_kind", None))


def deletion(args: argparse.Namespace):
    """The one deletion the flags of ``add_deletion`` name (a ``whatif.Deletion``)."""
    from ..kinds import check_kinds  # noqa: PLC0415
    from ..whatif import Deletion  # noqa: PLC0415

    return Deletion(deletion_sources(args), tuple(dict.fromkeys(args.revoke_relation)),
                    tuple(dict.fromkeys(args.assertion)), check_kinds(getattr(args, "distrust_kind", ())))


def read_names(path: str) -> list[str]:
    """The names listed in a file, one a line; blank lines and lines starting with ``#`` are skipped."""
    try:
        text = Path(path).read_text("utf-8")
    except UnicodeDecodeError as error:
        raise PolygraphError("encoding_error", f"{path} is not UTF-8 text ({error.reason})")
    except OSError as error:
        raise PolygraphError("file_error", f"cannot read {path}: {error.strerror or error}")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
