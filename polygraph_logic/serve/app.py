"""The explorer's HTTP server: routes to the JSON functions of api.py and the static files.

The standard library's ``ThreadingHTTPServer``: no framework, nothing to install. Every
answer is JSON, a download or a file shipped in ``static/``; a bad request gets a 4xx
with ``{"error": {"code", "message"}}`` and an internal error a 500 in the same shape,
never a traceback page. The server only reads: it has no route that writes.
"""

from __future__ import annotations

import json
import socket
import sys
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from urllib.parse import quote, urlsplit

from polygraph_logic.serve.api import GraphApi
from polygraph_logic.serve.params import ApiError, Params, parse_body, parse_query

MAX_BODY = 16 * 1024 * 1024
STATIC_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml", ".txt": "text/plain; charset=utf-8"}

# path -> (method name on GraphApi, what it answers); docs/explorer.md lists them
JSON_ROUTES = {
    "/api/info": "info",
    "/api/search": "search",
    "/api/names": "names",
    "/api/resolve": "resolve",
    "/api/artifact": "artifact",
    "/api/entity": "entity",
    "/api/whatif": "whatif",
    "/api/describe": "describe",
    "/api/top-sources": "top_sources",
}
DOWNLOAD_ROUTES = {"/api/whatif.json", "/api/export"}


def static_files() -> dict[str, tuple[bytes, str]]:
    """Returns the shipped static files by URL path (read once: the set is fixed, so no path
    from a request ever reaches the file system)."""
    folder = resources.files(__package__) / "static"
    files = {}
    for entry in folder.iterdir():
        suffix = Path(entry.name).suffix
        if entry.is_file() and suffix in STATIC_TYPES:
            files[f"/static/{entry.name}"] = (entry.read_bytes(), STATIC_TYPES[suffix])
    files["/"] = files["/static/index.html"]
    return files


class Handler(BaseHTTPRequestHandler):
    """One request: GET (and POST for the JSON routes, whose parameters may be a JSON body)."""

    server: "ExplorerServer"
    protocol_version = "HTTP/1.1"
    server_version = "polygraph-serve"

    def do_GET(self) -> None:  # noqa: N802 (the name http.server dispatches to)
        self._answer(None)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(None, head=True)

    def do_POST(self) -> None:  # noqa: N802
        length = self.headers.get("Content-Length")
        try:
            size = int(length or 0)
        except ValueError:
            size = -1
        if not 0 <= size <= MAX_BODY:
            self._error(ApiError(413 if size > MAX_BODY else 400, "bad_request",
                                 f"the body must have a Content-Length of at most {MAX_BODY} bytes"))
            return
        self._answer(self.rfile.read(size))

    def _answer(self, body: bytes | None, head: bool = False) -> None:
        started = time.perf_counter()
        url = urlsplit(self.path)
        try:
            if url.path in self.server.static and body is None:
                content, content_type = self.server.static[url.path]
                self._send(200, content, content_type, head=head)
                return
            params = parse_query(url.query)
            if body is not None:
                if url.path not in JSON_ROUTES:
                    raise ApiError(405, "method_not_allowed", f"{url.path} answers GET only")
                params.update(parse_body(body, self.headers.get("Content-Type", "")))
            self._route(url.path, params, head)
        except ApiError as error:
            self._error(error)
        except Exception as error:  # the last line of defence: a JSON 500, never a traceback page
            self.log_message("internal error on %s: %s: %s", url.path, type(error).__name__, error)
            self._error(ApiError(500, "internal_error", f"{type(error).__name__}: {error} (a bug: please report it)"))
        if self.server.verbose:
            self.log_message("%s answered in %.1f ms", url.path, (time.perf_counter() - started) * 1000)

    def _route(self, path: str, params: Params, head: bool) -> None:
        api = self.server.api
        if path in JSON_ROUTES:
            self._json(200, getattr(api, JSON_ROUTES[path])(params), head)
        elif path == "/api/whatif.json":
            data = json.dumps(api.whatif_download(params), indent=2, ensure_ascii=False).encode("utf-8")
            self._send(200, data, "application/json; charset=utf-8", f"{Path(api.graph.path).stem}-whatif.json", head)
        elif path == "/api/export":
            data, content_type, name = api.export(params)
            self._send(200, data, content_type, name, head)
        else:
            raise ApiError(404, "not_found", f"no page or endpoint at {path[:200]!r}; the endpoints are "
                                             f"{', '.join(sorted([*JSON_ROUTES, *DOWNLOAD_ROUTES]))}")

    def _json(self, status: int, data: dict, head: bool = False) -> None:
        self._send(status, json.dumps(data, ensure_ascii=False).encode("utf-8"), "application/json; charset=utf-8",
                   head=head)

    def _error(self, error: ApiError) -> None:
        self._json(error.status, error.to_json())

    def _send(self, status: int, data: bytes, content_type: str, filename: str | None = None,
              head: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        if filename:
            self.send_header("Content-Disposition", f"attachment; filename*=UTF-8''{quote(filename)}")
        self.end_headers()
        if not head:
            self.wfile.write(data)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Answers the server's own refusals (a request line too long, a bad method) in JSON too."""
        self.close_connection = True
        if code == HTTPStatus.NOT_IMPLEMENTED:  # a method this read-only server has no use for
            code, message = HTTPStatus.METHOD_NOT_ALLOWED, f"{self.command} is not allowed; the server only reads"
        try:
            self._json(code, ApiError(code, HTTPStatus(code).phrase.lower().replace(" ", "_"),
                                      message or HTTPStatus(code).description).to_json())
        except (OSError, ValueError):
            pass

    def log_message(self, format: str, *args) -> None:
        if self.server.verbose:
            super().log_message(format, *args)


class ExplorerServer(ThreadingHTTPServer):
    """The explorer over one graph file; ``url`` is where it listens."""

    daemon_threads = True
    #: connections the kernel holds while the server is busy (the standard library's 5 made
    #: the 17th of 16 concurrent clients wait a second for its connection to be retried)
    request_queue_size = 128

    def __init__(self, graph: str | Path, host: str = "127.0.0.1", port: int = 8000, verbose: bool = False,
                 at: int | None = None, authorization=None):
        self.api = GraphApi(graph, at=at, authorization=authorization)
        self.static = static_files()
        self.verbose = verbose
        if ":" in host:
            self.address_family = socket.AF_INET6
        try:
            super().__init__((host, port), Handler)
        except OSError:
            self.api.close()
            raise

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{port}/"

    def server_close(self) -> None:
        super().server_close()
        self.api.close()


def serve(graph: str | Path, host: str = "127.0.0.1", port: int = 8000, verbose: bool = False,
          at: int | None = None, authorization=None) -> None:
    """Serves the explorer until Ctrl-C (the graph as it was at version ``at``, if given;
    ``authorization``: the policy every ``require`` counts by)."""
    with ExplorerServer(graph, host, port, verbose, at=at, authorization=authorization) as server:
        print(f"serving {graph} at {server.url} (read-only; Ctrl-C stops)", file=sys.stderr, flush=True)
        server.serve_forever()
