"""The MCP server over a graph (``polygraph mcp GRAPH``): the tools of tools.py on the low-level
server of the ``mcp`` package, over standard input and output.

A tool's answer is its JSON twice: as ``structured_content`` (what a client that reads
structured results reads) and as one text block (what every client shows the model).  A bad
question is a tool error, never a crash: ``is_error`` set, the text ``code: message`` and the
structured content ``{"error": {"code", "message"}}`` with the project's error code
(``unknown_artifact``, ``unknown_policy``, ...).  The calls are answered one at a time (the
graph is read synchronously; an agent asks its memory one question at a time).
"""

from __future__ import annotations

import asyncio
import json

import mcp.types as types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

from polygraph_logic import __version__
from polygraph_logic.errors import PolygraphError, visible
from polygraph_logic.memory.tools import MemoryTools

INSTRUCTIONS = ("A knowledge graph with why-provenance, kept as memory: every artifact (claim, merge, entailed "
                "edge, summary) carries the sets of source assertions it rests on. Use search to recall what "
                "stands (never what a deletion or the evidence view kills), why and robustness to see what an "
                "artifact rests on, whatif and whynot to ask what a retraction would take with it, "
                "contradictions for what cannot both hold. Nothing changes the graph except add, offered only "
                "when the server allows it.")


def build_server(tools: MemoryTools) -> Server:
    """Returns the MCP server answering ``tools``' questions (tools/list and tools/call)."""

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name=spec["name"], description=spec["description"],
                                                       input_schema=spec["input_schema"]) for spec in tools.specs()])

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        return answer(tools, params.name, params.arguments)

    return Server("polygraph", version=__version__, instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool)


def answer(tools: MemoryTools, name: str, arguments: dict | None) -> types.CallToolResult:
    """Returns one call's result: the tool's JSON, or a tool error with its code and message."""
    try:
        data = tools.call(name, arguments)
        text = json.dumps(data, ensure_ascii=False)
    except PolygraphError as problem:
        return _failed(problem)
    except KeyError as problem:  # a name looked up and not found, as the command line says it
        return _failed(PolygraphError("not_found", str(problem.args[0] if problem.args else problem)))
    except Exception as problem:  # the server outlives any one question; a bug is said, not fatal
        return _failed(PolygraphError("internal_error", f"{type(problem).__name__}: {problem} (a bug: please "
                                                        "report it)"))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                structured_content=data)


def _failed(problem: PolygraphError) -> types.CallToolResult:
    """A tool error: the text as the command line prints it (``FILE:LINE:COL: code: message``, a
    line a problem), the structured content ``{"error": {code, message, position?, problems?}}``."""
    error = _described(problem)
    problems = getattr(problem, "problems", None)  # a LoadError: every problem of the input files
    if problems and len(problems) > 1:
        error["problems"] = [_described(p) for p in problems]
    return types.CallToolResult(content=[types.TextContent(type="text", text=str(problem))],
                                structured_content={"error": error}, is_error=True)


def _described(problem: PolygraphError) -> dict:
    where = problem.position
    return {"code": problem.code, "message": visible(problem.message),
            **({"file": where.file, "line": where.line, "column": where.column} if where else {})}


def run(tools: MemoryTools) -> None:
    """Serves ``tools`` over standard input and output until the client closes them."""
    server = build_server(tools)

    async def serve() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    asyncio.run(serve())  # the mcp package's anyio runs on asyncio
