"""Prompt templates: ``prompts/<name>.md`` with a versioned header, rendered strictly.

A template file reads::

    name: merge-with-receipts
    version: 3
    schema: merges
    ---
    (the fixed instructions: the system prompt, cached as the request's stable prefix)
    --- user ---
    (the per-item part: the user turn, with {placeholders})

The part above ``--- user ---`` is sent as the system prompt and marked for prompt
caching, so it should hold everything that is the same for every item of a run (it may
have placeholders too, such as a run's list of relations); a template without that line
is all user turn. The version is part of every cache key, so an edited template that keeps its version
would be served stale answers: bump it. A placeholder is a lower-case identifier in
braces (``{evidence}``); other braces, such as the JSON examples a prompt shows, are
text. Rendering with a missing or an unknown variable is an error, never a blank.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from polygraph_logic.errors import PolygraphError, Position
from polygraph_logic.resources import resource_dir

_PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)\}")
_VERSION = re.compile(r"[0-9]+(?:\.[0-9]+)*")
_HEADER_KEYS = ("name", "version", "schema")
#: the line that ends the system part of a template's body
USER_MARK = "--- user ---"


@dataclass(frozen=True)
class Prompt:
    """One rendered template: the system part (the cached prefix) and the user turn."""

    system: str
    user: str

    @property
    def text(self) -> str:
        """Returns the whole prompt as one text (what the cache key hashes)."""
        return f"{self.system}\n{USER_MARK}\n{self.user}" if self.system else self.user


@dataclass(frozen=True)
class Template:
    """One prompt template: its header fields, its body and where it was read."""

    name: str
    version: str
    schema: str
    body: str
    path: str
    system: str = ""

    @property
    def placeholders(self) -> tuple[str, ...]:
        """Returns the placeholder names in order of first appearance (system part first)."""
        return tuple(dict.fromkeys(_PLACEHOLDER.findall(self.system + self.body)))

    @property
    def digest(self) -> str:
        """Returns the sha256 of the body (what a version bump should accompany)."""
        return hashlib.sha256((self.system + self.body).encode("utf-8")).hexdigest()

    def render(self, variables: Mapping[str, str]) -> str:
        """Returns the whole prompt as one text (``render_parts(variables).text``)."""
        return self.render_parts(variables).text

    def render_parts(self, variables: Mapping[str, str]) -> Prompt:
        """Returns the system part and the user turn with every placeholder replaced.

        Raises PolygraphError(template_error) naming every missing, unknown or
        non-string variable; values are inserted verbatim (never re-expanded).
        """
        wanted = set(self.placeholders)
        missing = sorted(wanted - set(variables))
        unknown = sorted(set(variables) - wanted)
        not_text = sorted(k for k, v in variables.items() if k in wanted and not isinstance(v, str))
        problems = []
        if missing:
            problems.append(f"missing variable(s) {', '.join(missing)}")
        if unknown:
            problems.append(f"unknown variable(s) {', '.join(unknown)} (the template has "
                            f"{', '.join(self.placeholders) or 'no placeholders'})")
        if not_text:
            problems.append(f"variable(s) {', '.join(not_text)} must be strings")
        if problems:
            raise PolygraphError("template_error", f"template {self.name!r}: {'; '.join(problems)}",
                                 Position(self.path, 1, 1))
        fill = lambda text: _PLACEHOLDER.sub(lambda m: variables[m.group(1)], text)  # noqa: E731
        return Prompt(fill(self.system), fill(self.body))


def parse_template(text: str, path: str = "<template>") -> Template:
    """Returns the template a file's text defines; raises PolygraphError(template_error)."""
    lines = text.splitlines(keepends=True)
    header: dict[str, str] = {}
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped == "---":
            body = "".join(lines[number:])
            break
        if not stripped:
            continue
        key, colon, value = stripped.partition(":")
        where = Position(path, number, 1)
        if not colon or key.strip() not in _HEADER_KEYS:
            raise PolygraphError("template_error", f"header line {stripped!r} is not one of "
                                 f"{', '.join(k + ':' for k in _HEADER_KEYS)}", where)
        if key.strip() in header:
            raise PolygraphError("template_error", f"header field {key.strip()!r} appears twice", where)
        header[key.strip()] = value.strip()
    else:
        raise PolygraphError("template_error", "no '---' line ends the header", Position(path, 1, 1))
    for key in _HEADER_KEYS:
        if not header.get(key):
            raise PolygraphError("template_error", f"the header needs '{key}:'", Position(path, 1, 1))
    if not _VERSION.fullmatch(header["version"]):
        raise PolygraphError("template_error", f"version {header['version']!r} is not a number such as 3 "
                             "or 1.2", Position(path, 1, 1))
    if not body.strip():
        raise PolygraphError("template_error", "the template body is empty", Position(path, 1, 1))
    system, mark, user = body.partition("\n" + USER_MARK + "\n")
    if not mark:
        system, user = "", body
    elif not user.strip():
        raise PolygraphError("template_error", f"the user part after {USER_MARK!r} is empty", Position(path, 1, 1))
    return Template(header["name"], header["version"], header["schema"], user, path, system.rstrip("\n") if mark
                    else "")


def template_names() -> list[str]:
    """Returns the names of the shipped templates."""
    return sorted(p.stem for p in resource_dir("prompts").glob("*.md") if p.stem != "README")


def load_template(name_or_path: str | Path) -> Template:
    """Returns a template: a ``.md`` file if that path exists, else the shipped ``prompts/NAME.md``.

    The header's ``name:`` must equal the file's stem, so a copied file cannot answer
    under another template's cache entries by accident.
    """
    path = Path(name_or_path)
    if not (path.suffix == ".md" and path.is_file()):
        path = resource_dir("prompts") / f"{path.name if path.suffix == '.md' else path.name + '.md'}"
        if not path.is_file() or path.stem == "README":
            raise PolygraphError("unknown_template", f"no prompt template {str(name_or_path)!r}; "
                                 f"shipped templates: {', '.join(template_names())}")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise PolygraphError("file_error", f"cannot read {path}: {error.strerror}") from None
    template = parse_template(text, str(path))
    if template.name != path.stem:
        raise PolygraphError("template_error", f"header says name {template.name!r} but the file is "
                             f"{path.name}", Position(str(path), 1, 1))
    return template
