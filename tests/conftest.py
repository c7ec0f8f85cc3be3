"""Makes the checkout's benchmarks/ importable as ``polygraph_logic.benchmarks``.

pyproject.toml maps benchmarks/ into the package (``polygraph_logic.benchmarks``) for the
wheel; `python -m pytest` from a checkout imports ``polygraph_logic`` from the checkout
itself (the current folder comes first on sys.path), where that mapping does not exist.
"""

import sys
import types
from pathlib import Path

import polygraph_logic

try:
    import polygraph_logic.benchmarks  # noqa: F401  (installed wheel or editable install)
except ModuleNotFoundError:
    package = types.ModuleType("polygraph_logic.benchmarks")
    package.__path__ = [str(Path(__file__).resolve().parent.parent / "benchmarks")]
    sys.modules["polygraph_logic.benchmarks"] = package
    polygraph_logic.benchmarks = package

