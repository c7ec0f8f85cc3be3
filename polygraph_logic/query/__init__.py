"""Questions asked of a built graph: what-if deletions and their verdicts, re-derivation,
explanations, contradictions, origins, kinds, the interactive session and replay.

``whatif`` decides which artifacts a deletion touches and which stand (``verdicts`` on
the touched rows, ``rederive`` for what a capped label cannot settle); ``explain``
says why (``why``, ``whynot``, ``robustness``, ``top_sources``); ``rests_on`` lists what
rests on kinds of evidence, in bounded memory; ``contradictions`` finds the smallest
retractions that resolve each contradiction; ``origins`` groups sources by evidential origin; ``session`` builds a deletion step by
step with undo; ``replay`` rebuilds a graph's history and applies a deletion as a version.
"""

from __future__ import annotations

from polygraph_logic.lazy_exports import lazy_exports

# name -> the module of this package that defines it, imported on first use (PEP 562)
_EXPORTS = {
    "Deletion": "whatif", "Outcome": "whatif", "Session": "session", "what_if": "whatif",
}

__all__ = [*_EXPORTS]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
