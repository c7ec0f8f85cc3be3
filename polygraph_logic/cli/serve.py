"""``serve``: the what-if explorer in the browser, over one graph file."""

from __future__ import annotations

import argparse
import ipaddress
import sys

from polygraph_logic.errors import PolygraphError
from polygraph_logic.cli.arguments import add_authorization, add_graph
from polygraph_logic.cli.ledger import add_at


def register(commands) -> None:
    """Adds the ``serve`` subcommand."""
    serve = commands.add_parser(
        "serve", help="explore a graph in the browser: search, artifacts, live what-if, top sources",
        description="Serve a local, read-only web application over a graph file: search with completion, "
                    "an artifact's support sets, derivation and robustness drawn as a graph, live what-if "
                    "with policies side by side, and the sources whose retraction kills the most. The file "
                    "is never changed. JSON endpoints under /api/ (see docs/explorer.md).")
    add_graph(serve)
    add_at(serve)
    serve.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000; 0 picks a free one)")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to bind (default 127.0.0.1: this machine only)")
    serve.add_argument("--verbose", action="store_true", help="log every request on standard error")
    add_authorization(serve, "a question's require= then counts only the assertions it authorizes")
    serve.set_defaults(run=_run_serve)


def _run_serve(args: argparse.Namespace) -> int:
    from polygraph_logic.serve import serve  # start-up time: loaded when run
    if not 0 <= args.port <= 65535:
        raise PolygraphError("bad_argument", f"--port must be between 0 and 65535, not {args.port}")
    if not _loopback(args.host):
        print(f"warning: listening on {args.host}: anyone who can reach it can read the graph "
              "(the server never writes)", file=sys.stderr)
    try:
        serve(args.graph, args.host, args.port, args.verbose, at=args.at, authorization=args.authorization)
    except OSError as error:
        raise PolygraphError("serve_error", f"cannot listen on {args.host}:{args.port} ({error.strerror or error}); "
                                            "choose another --port or --host") from None
    return 0


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
