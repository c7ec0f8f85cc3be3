"""The ``polygraph`` command: a thin layer of argument parsing over the Python API.

Each module of this package registers the subcommands of one concept and calls the
API a notebook user would call; nothing in the library imports this package.
"""

from __future__ import annotations

import argparse
import difflib
import errno
import importlib
import os
import sys
from typing import Sequence

from polygraph_logic import __version__
from polygraph_logic.errors import PolygraphError, visible

# one module per concept, each with register(commands), in the order of `polygraph --help`
COMMAND_MODULES = ("program", "graph", "ledger", "whatif", "contradictions", "export", "serve", "memory", "construct", "audit",
                   "regenerate", "retrieval", "tables", "completion")
# the module that registers each command: a command imports its own module only, so that
# `polygraph whatif` does not pay for rdflib, numpy or the model SDK (test_cli checks this map)
COMMANDS = {
    "eval": "program",
    "compile": "graph", "build": "graph", "info": "graph", "check": "graph", "show": "graph", "import": "graph",
    "compile-ontology": "graph", "generate": "graph",
    "add": "ledger", "log": "ledger", "replay": "ledger", "diff": "ledger", "verify": "ledger", "purge": "ledger",
    "whatif": "whatif", "why": "whatif", "whynot": "whatif", "robustness": "whatif", "top-sources": "whatif",
    "repl": "whatif", "rests-on": "whatif", "ask": "whatif", "contradictions": "contradictions", "export": "export",
    "serve": "serve", "mcp": "memory", "construct": "construct",
    "audit": "audit", "regenerate": "regenerate", "queries": "retrieval", "evaluate": "retrieval",
    "export-tables": "tables", "import-tables": "tables", "sql-whatif": "tables",
    "completion": "completion",
}


class ArgumentParser(argparse.ArgumentParser):
    """argparse with errors in the command's shape: ``bad_argument: message``, exit 2."""

    def error(self, message: str):
        self.exit(2, f"bad_argument: {visible(message)} (see `{self.prog} --help`)\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Returns the argument parser of the ``polygraph`` command: every subcommand, or only
    those of the module that registers ``command`` when it is known."""
    parser = ArgumentParser(
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
    """Runs the command line; returns the exit status (2 on a user error, 130 on Ctrl-C).

    Every failure is one line on standard error, ``FILE:LINE:COL: code: message`` or
    ``code: message``; never a traceback (``POLYGRAPH_TRACEBACK=1`` shows one for an
    internal error, to report it).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    # the parser refuses clauses nested deeper than depth.MAX_DEPTH (2,000) levels; walking
    # a term that deep (printing, checking, compiling) takes a few frames a level
    sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):  # a name from undecodable argv bytes must still print
            stream.reconfigure(errors="backslashreplace")
    try:
        if not argv:  # what the command does, rather than a missing COMMAND
            build_parser().print_help()
            return 0
        if not argv[0].startswith("-") and argv[0] not in COMMANDS:
            return _fail(unknown_command(argv[0]))
        parser = build_parser(argv[0])
        args = parser.parse_args(argv)
        return args.run(args)
    except PolygraphError as error:
        return _fail(str(error))
    except KeyError as error:
        return _fail(f"not_found: {visible(error.args[0] if error.args else error)}")
    except KeyboardInterrupt:
        if getattr(sys.stderr, "isatty", lambda: False)():
            sys.stderr.write("\r" + " " * 120 + "\r")  # a progress line may be showing (progress.Progress)
        return _fail("interrupted: stopped by Ctrl-C; no output file was changed", 130)
    except BrokenPipeError:
        _quiet_stdout()
        return 0
    except OSError as error:
        if error.errno not in DISK_ERRORS:
            return _internal(error)
        _show_if_asked(error)
        where = f"{error.filename}: " if error.filename else ""
        return _fail(f"io_error: {where}{error.strerror or error}: the disk refused a write")
    except RecursionError as error:
        _show_if_asked(error)
        return _fail("too_deep: the input nests too deeply to process (split long expressions or "
                      "nested values)")
    except MemoryError:
        return _fail("out_of_memory: the input needs more memory than is available")
    except UnicodeError as error:
        _show_if_asked(error)
        return _fail(f"encoding_error: {error.reason} ({error.object[error.start:error.end]!r}): text must be "
                     "UTF-8 without lone surrogates")
    except ValueError as error:
        if "limit" not in str(error) or "digits" not in str(error):
            return _internal(error)
        return _fail("too_large: an integer has more than 4,300 digits")
    except Exception as error:  # the last line of defence; every such case is a bug to report
        return _internal(error)


RECURSION_LIMIT = 10_000

#: the errors of a disk that refuses a write: full, over quota, read-only, failing
DISK_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO})


def unknown_command(word: str) -> str:
    """Returns the error line for a command ``polygraph`` does not have, naming the nearest one."""
    near = difflib.get_close_matches(word, COMMANDS, n=1, cutoff=0.6)
    hint = f"did you mean {near[0]}?" if near else "the commands are listed by `polygraph --help`"
    return f"bad_argument: unknown command {visible(word)!r}; {hint}"


def _show_if_asked(error: BaseException) -> None:
    """Re-raises an error the command turns into one line, when POLYGRAPH_TRACEBACK is set."""
    if os.environ.get("POLYGRAPH_TRACEBACK"):
        raise error


def _internal(error: Exception) -> int:
    _show_if_asked(error)
    return _fail(f"internal_error: {type(error).__name__}: {visible(error)} (a bug: please report it; "
                 "POLYGRAPH_TRACEBACK=1 shows the traceback)")


def _fail(line: str, status: int = 2) -> int:
    try:
        print(line, file=sys.stderr)
    except (OSError, ValueError):
        pass
    return status


def _quiet_stdout() -> None:
    """After a closed pipe, points stdout at /dev/null so that the exit flush does not fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
