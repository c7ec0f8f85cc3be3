"""The argument vocabulary every subcommand shares: one meaning per flag, everywhere.

- a deletion: ``--retract-source S`` (repeatable), ``--retract-source-file F`` (one source a
  line, ``#`` lines are comments), ``--revoke-relation P`` (repeatable), ``--assertion ID`` (repeatable):
  ``--distrust-kind KIND`` (repeatable): together they name ONE deletion; a command that
  evaluates several deletions says so with its own explicit flag (``audit --separately``,
  ``evaluate --by-kind``);
- ``--policy POLICY`` (an unknown name is ``unknown_policy``, as in the API), ``--limit N`` (a
  positive integer: at most N of what the command lists), ``--cap K|none`` (0 is refused);
- ``--json``: the command's report as one JSON document (its shape is documented in the
  command's help and in docs/command-line.md ("JSON output"); numbers are numbers, no absolute paths).

This module imports nothing heavy: ``polygraph --help`` loads it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path

from polygraph_logic.errors import PolygraphError


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


def cap_value(stored):
    """A cap as stored in a graph ("8", "none", 8) as JSON shows it: a number, or None for no cap."""
    if stored is None or stored == "none":
        return None
    return int(stored)


def shipped_name(path: str) -> str:
    """A rule file's path as shown: its file name (``ro.dl``) when it is a rule file shipped with
    polygraph_logic, else the path as given (never the installation's absolute path)."""
    from polygraph_logic.resources import resource_dir  # noqa: PLC0415

    try:
        shipped = resource_dir("rules").resolve()
    except FileNotFoundError:
        return path
    resolved = Path(path).resolve()
    return resolved.name if resolved.parent == shipped else path


def positive_int(text: str) -> int:
    """A count such as ``--limit N``: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, not {text!r}")
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, not {text!r}")
    return value


def natural(text: str) -> int:
    """A count that may be zero, such as ``why --trees 0`` (no trees) or ``--max-retries 0``."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected 0 or a positive integer, not {text!r}")
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or a positive integer, not {text!r}")
    return value


def add_limit(command: argparse.ArgumentParser, default: int | None, what: str) -> None:
    """``--limit N``: at most N of ``what`` (a positive integer)."""
    shown = "all" if default is None else str(default)
    command.add_argument("--limit", type=positive_int, default=default, metavar="N",
                         help=f"at most N {what} (default {shown})")


def add_model_options(command: argparse.ArgumentParser) -> None:
    """Adds how the model is asked: --batch, --concurrency, --poll-interval, --prices."""
    command.add_argument("--batch", action="store_true",
                         help="ask what the cache lacks as one Message Batch (half price, results within 24 h); "
                              "the batch id is kept in the cache file, so an interrupted run resumes polling it")
    command.add_argument("--concurrency", type=positive_int, default=4, metavar="N",
                         help="without --batch: at most N calls to the API at once (default 4)")
    command.add_argument("--poll-interval", type=float, default=30.0, metavar="SECONDS",
                         help="with --batch: seconds between two polls of the batch (default 30)")
    command.add_argument("--prices", default=None, metavar="FILE",
                         help="a JSON price table (dollars per million tokens by model: input, output, cache_write, "
                              "cache_read) over the built-in one; default $POLYGRAPH_PRICES")


def add_json(command: argparse.ArgumentParser, shape: str) -> None:
    """``--json``: print the report as one JSON document; ``shape`` is a command of shapes.SHAPES
    (its documented top-level keys) or the shape itself."""
    from polygraph_logic.cli.shapes import SHAPES, describe  # noqa: PLC0415

    shown = describe(shape) if shape in SHAPES else shape
    command.add_argument("--json", action="store_true", help=f"print the report as JSON: {shown}")


def print_json(data, out=None) -> None:
    """Prints one JSON document (UTF-8 as is, indented) on standard output; a value of a dict that
    is an iterator is written as a list, each item as it comes (a listing never held whole)."""
    out = out or sys.stdout
    if isinstance(data, dict):
        data = {key: _Streamed(value) if isinstance(value, Iterator) else value for key, value in data.items()}
    json.dump(data, out, indent=2, ensure_ascii=False)
    out.write("\n")


class _Streamed(list):
    """An iterator that json.dump writes as a list as it reads it: json's encoder (with an indent,
    its Python one) asks a list whether it is empty, then iterates it."""

    def __init__(self, items: Iterator):
        super().__init__()
        self._items = items
        self._first = next(items, _NOTHING)

    def __bool__(self) -> bool:
        return self._first is not _NOTHING

    def __iter__(self):
        if self._first is not _NOTHING:
            yield self._first
            yield from self._items


_NOTHING = object()


def add_cap(command: argparse.ArgumentParser, what: str = "label", default: int | None = 8) -> None:
    """``--cap K|none``: keep at most K support sets per ``what``, the smallest."""
    shown = "none" if default is None else str(default)
    command.add_argument("--cap", type=parse_cap, default=default, metavar="K|none",
                         help=f"keep at most K support sets per {what}, the smallest ('none': no cap; "
                              f"default {shown})")


def add_graph(command: argparse.ArgumentParser) -> None:
    """The positional ``GRAPH``: a graph file or folder written by ``polygraph build``."""
    command.add_argument("graph", metavar="GRAPH",
                         help="a graph file or folder (written by `polygraph build -o FILE` or `--tables DIR`)")


def policy_name(text: str) -> str:
    """``--policy POLICY``: a cleanup policy of policies.POLICIES or one composed per layer
    (``LAYER=RULE,...``); anything else is ``unknown_policy``, the code the Python API and the REPL give."""
    from polygraph_logic.query.policies import check_policy  # noqa: PLC0415

    return check_policy(text)


def add_policy(command, *, repeatable: bool = False, default: str | None = "trust-all",
               policies=None) -> None:
    """``--policy POLICY``: the cleanup policy (``repeatable``: several, each evaluated)."""
    from polygraph_logic.query.whatif import POLICIES  # noqa: PLC0415  (only commands with a policy pay for it)

    names = tuple(policies or POLICIES)
    if repeatable:
        command.add_argument("--policy", action="append", type=policy_name, metavar="POLICY",
                             help=f"a cleanup policy to evaluate (repeatable): {', '.join(names)}, or one "
                                  f"composed per layer, LAYER=RULE[,...] (default {default})")
    else:
        command.add_argument("--policy", default=default, type=policy_name, metavar="POLICY",
                             help=f"cleanup policy: {', '.join(names)}, or one composed per layer, "
                                  f"LAYER=RULE[,...] with RULE trust, distrust or (summaries) distrust-flat "
                                  f"(default {default})")


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
    add_distrust(group)
    group.add_argument("--as-of", metavar="TIME",
                       help="read the evidence as known at TIME (ISO 8601, or 'now'): leave out what was acquired "
                            "later, superseded or retracted by then, or expired (assertions' time, status, "
                            "invalidated_at, expires)")
    group.add_argument("--stale-after", metavar="DURATION",
                       help="leave out evidence acquired longer than DURATION (90d, 12h, 2w, P30D) before the "
                            "--as-of time (default: now), and expired evidence")
    group.add_argument("--scope", metavar="S",
                       help="only evidence authorized for scope S (an assertion without 'scope' serves every scope); "
                            "alone, it also leaves out what is superseded, retracted or expired now")
    group.add_argument("--raw", action="store_true",
                       help="count every stored assertion, superseded, retracted and expired ones too (the history "
                            "view); by default a question leaves out what is invalidated or expired now")
    if policy:
        add_policy(group, policies=policies)


def separate(one) -> list:
    """``--separately``: each source, relation, assertion and kind of ``one`` deletion as its own
    deletion, in the order named (``audit``), each under ``one``'s view of the evidence."""
    from polygraph_logic.query.whatif import Deletion  # noqa: PLC0415

    view, raw = one.evidence, one.raw  # each read under the one view of the evidence the flags name
    return ([Deletion(sources=(s,), evidence=view, raw=raw) for s in one.sources]
            + [Deletion(relations=(p,), evidence=view, raw=raw) for p in one.relations]
            + [Deletion(assertions=(a,), evidence=view, raw=raw) for a in one.assertions]
            + [Deletion(kinds=(k,), evidence=view, raw=raw) for k in one.kinds])


def add_distrust(command) -> None:
    """``--distrust-kind KIND`` (repeatable): assertions of KIND cannot support."""
    from polygraph_logic.graph.kinds import KINDS  # noqa: PLC0415  (a dict of names: light)

    command.add_argument("--distrust-kind", action="append", default=[], metavar="KIND",
                         help=f"assertions of KIND cannot support (repeatable): {', '.join(KINDS)}")


def deletion_sources(args: argparse.Namespace) -> tuple[str, ...]:
    """The sources of ``--retract-source`` and ``--retract-source-file``, in order, once each."""
    sources = list(args.retract_source)
    for name in args.retract_source_file:
        sources += read_names(name)
    return tuple(dict.fromkeys(sources))


def has_deletion(args: argparse.Namespace) -> bool:
    return bool(args.retract_source or args.retract_source_file or args.revoke_relation or args.assertion
                or getattr(args, "distrust_kind", None) or getattr(args, "as_of", None) is not None
                or getattr(args, "stale_after", None) is not None or getattr(args, "scope", None) is not None)


def deletion(args: argparse.Namespace):
    """The one deletion the flags of ``add_deletion`` name (a ``whatif.Deletion``)."""
    from polygraph_logic.graph.kinds import check_kinds  # noqa: PLC0415
    from polygraph_logic.query.evidence import EvidenceView  # noqa: PLC0415
    from polygraph_logic.query.whatif import Deletion  # noqa: PLC0415

    raw = getattr(args, "raw", False)
    view = EvidenceView.parse(getattr(args, "as_of", None), getattr(args, "stale_after", None),
                              getattr(args, "scope", None), raw)
    return Deletion(deletion_sources(args), tuple(dict.fromkeys(args.revoke_relation)),
                    tuple(dict.fromkeys(args.assertion)), check_kinds(getattr(args, "distrust_kind", ())), view, raw)


def add_require(command) -> None:
    """``--require KIND[,KIND]`` (repeatable): mark what has no support set of only those kinds."""
    from polygraph_logic.graph.kinds import KINDS  # noqa: PLC0415  (a dict of names: light)

    command.add_argument("--require", action="append", default=[], metavar="KIND[,KIND]",
                         help="mark the artifacts with no support set made only of these kinds (repeatable; "
                              "an assertion a verification names in 'verifies' counts as one): "
                              f"{', '.join(KINDS)}")
    add_authorization(command, "with --require: count only the assertions this policy authorizes "
                               "(an unauthorized verification promotes nothing)")


def add_authorization(command, help_text: str) -> None:
    """``--authorization POLICY.jsonl``: which agents may assert which kinds (docs/ledger.md)."""
    command.add_argument("--authorization", metavar="POLICY.jsonl",
                         help=f"an authorization policy, one rule a line: which agents may assert which kinds "
                              f"(docs/ledger.md#authorization); {help_text}")


def requirement(args: argparse.Namespace):
    """The ``query.evidence.Requirement`` of ``--require`` and ``--authorization`` (None when not given)."""
    from polygraph_logic.query.evidence import Requirement  # noqa: PLC0415

    return Requirement.parse(getattr(args, "require", None), getattr(args, "authorization", None))


def read_names(path: str) -> list[str]:
    """The names listed in a file, one a line; blank lines and lines starting with ``#`` are skipped."""
    try:
        text = Path(path).read_text("utf-8")
    except UnicodeDecodeError as error:
        raise PolygraphError("encoding_error", f"{path} is not UTF-8 text ({error.reason})")
    except OSError as error:
        raise PolygraphError("file_error", f"cannot read {path}: {error.strerror or error}")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
