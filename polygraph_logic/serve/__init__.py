"""``polygraph serve``: a local, read-only web explorer of a graph file.

``app`` is the HTTP server (the standard library's), ``api`` the JSON functions over
the same Python API as the command line, ``lookup`` the index look-ups they add,
``params`` the checked request parameters; ``static/`` holds the page, its script and
its style (no library, nothing fetched from the network).
"""

from polygraph_logic.serve.api import GraphApi
from polygraph_logic.serve.app import ExplorerServer, serve
from polygraph_logic.serve.params import ApiError

__all__ = ["ApiError", "ExplorerServer", "GraphApi", "serve"]
