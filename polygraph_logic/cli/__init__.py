"""The ``polygraph`` command: a thin layer of argument parsing over the Python API.

Each module of this package registers the subcommands of one concept and calls the
API a notebook user would call; nothing in the library imports this package.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from .. import __version__
from ..errors import PolygraphError
from . import audit, bench, construct, export, graph, program, retrieval, whatif

# one module per concept, each with register(commands), in the order of `polygraph --help`
COMMAND_MODULES = (program, graph, whatif, export, construct, audit, retrieval, bench)


def build_parser() -> argparse.ArgumentParser:
    """Returns the argument parser of the ``polygraph`` command."""
    parser = argparse.ArgumentParser(
        prog="polygraph",
        description="Datalog with why-provenance for knowledge graphs built by language models.",
    )
    parser.add_argument("--version", action="version", version=f"polygraph_logic {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit status (2 on a user error)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except PolygraphError as error:
        print(str(error), file=sys.stderr)
        return 2
    except KeyError as error:
        print(f"polygraph: {error.args[0]}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
