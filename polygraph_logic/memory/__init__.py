"""A graph as an agent's memory: the questions an agent asks of it as tools (``tools``, their
schemas in ``schema``), served over the Model Context Protocol by ``server`` (which imports the
``mcp`` extra, so this face does not name it: import polygraph_logic.memory.server)."""

from __future__ import annotations

from polygraph_logic.lazy_exports import lazy_exports

# name -> the module of this package that defines it, imported on first use (PEP 562)
_EXPORTS = {
    "MemoryTools": "tools", "tool_schemas": "schema",
}

__all__ = [*_EXPORTS]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
