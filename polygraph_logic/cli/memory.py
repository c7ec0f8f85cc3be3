"""``mcp``: the graph as an agent's memory, served over the Model Context Protocol (stdio)."""

from __future__ import annotations

import argparse

from polygraph_logic.errors import PolygraphError
from polygraph_logic.cli.arguments import add_authorization, add_graph, add_policy
from polygraph_logic.cli.ledger import add_at


def register(commands) -> None:
    """Adds the ``mcp`` subcommand."""
    command = commands.add_parser(
        "mcp", help="serve a graph to agents as memory: an MCP server over stdio",
        description="Serve the graph over the Model Context Protocol on standard input and output, for an "
                    "agent that keeps the graph as its memory: tools search (among the artifacts that stand), "
                    "show, whatif, why, whynot, robustness, contradictions and ask, each with a JSON schema and "
                    "the answer of the command's --json, errors as tool errors with their code. add (a new "
                    "version from JSON Lines files) is offered only with --allow-add. Needs the mcp extra: "
                    "pip install \"polygraph_logic[mcp]\" (see docs/agents.md).")
    add_graph(command)
    add_at(command)
    add_policy(command)
    command.add_argument("--allow-add", action="store_true",
                         help="offer the add tool: the agent may append assertions and receipts as new versions "
                              "(off by default: the graph is then read only)")
    add_authorization(command, "the add tool refuses the assertions it does not authorize, and a require "
                               "counts only those it authorizes")
    command.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    from polygraph_logic.memory.tools import MemoryTools  # start-up time: loaded when run
    tools = MemoryTools(args.graph, at=args.at, policy=args.policy, allow_add=args.allow_add,
                        authorization=args.authorization)
    try:
        from polygraph_logic.memory.server import run  # start-up time: the mcp package, loaded when run
    except ImportError as error:
        raise PolygraphError("missing_extra", f"polygraph mcp needs the mcp package ({error}): "
                                              "pip install \"polygraph_logic[mcp]\"") from None
    run(tools)
    return 0
