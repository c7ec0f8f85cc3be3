"""The ``polygraph`` command: a thin layer of argument parsing over the Python API.

Each module of this package registers the subcommands of one concept and calls the
API a notebook user would call; nothing in the library imports this package.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

from .. import __version__
from ..errors import PolygraphError

# one module per concept, each with register(commands), in the order of `polygraph --help`
COMMAND_MODULES = ("program", "graph", "whatif", "export", "construct", "audit", "retrieval", "bench")
# the module that registers each command: a command imports its own module only, so that
# `polygraph whatif` does not pay for rdflib, numpy or the model SDK (test_cli checks this map)
COMMANDS = {
    "eval": "program",
    "compile": "graph", "build": "graph", "info": "graph", "show": "graph", "import": "graph",
    "compile-ontology": "graph", "generate": "graph",
    "whatif": "whatif", "why": "whatif", "whynot": "whatif", "robustness": "whatif", "top-sources": "whatif",
    "repl": "whatif", "export": "export", "construct": "construct",
    "audit": "audit", "queries": "retrieval", "evaluate": "retrieval", "bench": "bench",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Returns the argument parser of the ``polygraph`` command: every subcommand, or only
    those of the module that registers ``command`` when it is known."""
    parser = argparse.ArgumentParser(
        prog="polygraph",
        description="Datalog with why-provenance for knowledge graphs built by language models.",
    )
    parser.add_argument("--version", action="version", version=f"polygraph_logic {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    if command == "--version":
        names = ()  # nothing to register: argparse prints the version and exits
    else:
        names = (COMMANDS[command],) if command in COMMANDS else COMMAND_MODULES
    for name in names:
        importlib.import_module(f"{__name__}.{name}").register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit status (2 on a user error)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[0] if argv else None)
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
