"""Paths to the files that ship with the package: grammar, rules and prompts."""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent
KINDS = ("grammar", "rules", "prompts")


def resource_dir(kind: str) -> Path:
    """Returns the directory of shipped ``kind`` files (in a wheel or a source checkout)."""
    if kind not in KINDS:
        raise ValueError(f"unknown resource kind {kind!r}; expected one of {', '.join(KINDS)}")
    # In a built wheel the top-level folders are mapped inside the package;
    # in a source checkout (editable install, tests) they sit beside it.
    for candidate in (_HERE / kind, _HERE.parent / kind):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"the {kind}/ folder is missing from this installation of polygraph_logic")


def resource_path(kind: str, name: str) -> Path:
    """Returns the path of one shipped file, e.g. ``resource_path("rules", "go_closure.dl")``."""
    path = resource_dir(kind) / name
    if not path.is_file():
        available = ", ".join(sorted(p.name for p in resource_dir(kind).iterdir() if p.is_file()))
        raise FileNotFoundError(f"no {kind} file named {name!r}; available: {available}")
    return path


def rule_file(name_or_path: str | Path) -> Path:
    """Returns a rule file: the path itself if it exists, else the shipped ``rules/NAME.dl``.

    So ``--rules ro`` means the compiled Relations Ontology that ships with the package.
    """
    path = Path(name_or_path)
    if path.exists():
        return path
    shipped = resource_dir("rules") / (path.name if path.suffix == ".dl" else f"{path.name}.dl")
    if shipped.is_file():
        return shipped
    available = ", ".join(sorted(p.stem for p in resource_dir("rules").glob("*.dl")))
    raise FileNotFoundError(f"no rule file {str(name_or_path)!r}; shipped rule files: {available}")
