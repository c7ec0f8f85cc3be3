"""``polygraph serve``: a local, read-only web explorer of a graph file.

``app`` is the HTTP server (the standard library's), ``api`` the JSON functions over
the same Python API as the command line, ``lookup`` the index look-ups they add,
``params`` the checked request parameters; ``static/`` holds the page, its script and
its style (no library, nothing fetched from the network).
"""

from __future__ import annotations

from polygraph_logic.lazy_exports import lazy_exports

# name -> the module of this package that defines it, imported on first use (PEP 562)
_EXPORTS = {
    "ApiError": "params", "ExplorerServer": "app", "GraphApi": "api", "serve": "app",
}

__all__ = [*_EXPORTS]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
