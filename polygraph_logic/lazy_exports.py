"""Package faces read on first use (PEP 562): a package's names without importing its modules.

A package's ``__init__`` lists which module defines each name it exports and installs the
two module-level functions this returns::

    _EXPORTS = {"Model": "evaluate", "evaluate": "evaluate", "Program": "program"}
    __all__ = [*_EXPORTS]
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

``import polygraph_logic.datalog`` then loads nothing but the face: a graph opened for a
what-if does not pay for the parser (lark) or the evaluator until something asks for them.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any, Callable


def lazy_exports(package: str, exports: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Returns ``(__getattr__, __dir__)`` for ``package``: each name in ``exports`` is read from
    the module ``package.exports[name]`` on first use and kept in the package's namespace."""
    face = sys.modules[package]

    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{exports[name]}"), name)
        face.__dict__[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(face.__dict__) | set(exports))

    if any(name == module for name, module in exports.items()):
        _SHADOWED[package] = {name for name, module in exports.items() if name == module}
        face.__class__ = _ExportsWin
    return __getattr__, __dir__


# package -> its exported names that are also the names of the submodules defining them
_SHADOWED: dict[str, set[str]] = {}


class _ExportsWin(types.ModuleType):
    """A package that exports a name its own submodule also bears (``datalog.evaluate`` is the
    module and the function). Importing the submodule binds it on the package, which would hide
    the exported name from then on; the name is kept instead. (An eager face got this by
    importing the submodule first and rebinding the name after.)"""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and value.__name__ == f"{self.__name__}.{name}":
            if name in _SHADOWED.get(self.__name__, ()) and hasattr(value, name):
                value = getattr(value, name)
        super().__setattr__(name, value)
