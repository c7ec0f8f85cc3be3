"""Soufflé's ``match`` patterns (C++ ``std::regex``, ECMAScript grammar) as Python ``re`` patterns.

Soufflé hands a pattern to ``std::regex`` and runs ``regex_match`` over the symbol's
bytes. Python's ``re`` reads most of that grammar the same way; where it does not, the
pattern is rewritten before it is compiled:

- POSIX classes inside brackets (``[[:digit:]]``, ``[^[:alpha:]_]``, ``[[:w:]]``) are
  spelled out (Python reads ``[[:digit:]]`` as the set ``[:digt`` followed by ``]``, so a
  pattern with one matched nothing it should); ``[[=a=]]`` and ``[[.a.]]`` are the letter;
- a ``[`` inside brackets is a literal; ``[]`` matches nothing and ``[^]`` anything;
- ``.`` matches any byte but ``\\n`` and ``\\r``; ``$`` is the end of the text only;
  ``\\cX`` is a control character, ``\\uXXXX`` the byte of its low eight bits.

The compiled pattern works on bytes (the text is matched as UTF-8), as ``std::regex`` over
``char`` does: ``.`` is one byte, and ``\\d``, ``\\w``, ``\\s`` are ASCII only.
"""

from __future__ import annotations

import re
import warnings

_POSIX = {
    "alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "blank": " \\t", "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9", "d": "0-9", "graph": "\\x21-\\x7e", "lower": "a-z", "print": "\\x20-\\x7e",
    "punct": "!-/:-@\\[-`{-~", "space": " \\t\\n\\r\\f\\v", "s": " \\t\\n\\r\\f\\v", "upper": "A-Z",
    "w": "a-zA-Z0-9_", "xdigit": "0-9A-Fa-f",
}
_SPECIAL_IN_SET = set("[&~|")  # literal in ECMAScript brackets; Python warns or nests on them


class PatternError(ValueError):
    """A pattern ``std::regex`` would refuse (an unknown POSIX class, an unclosed bracket)."""


def compile_pattern(pattern: str) -> re.Pattern:
    """Returns the compiled bytes pattern for a Soufflé ``match`` regex; raises
    PatternError or ``re.error`` for a bad one."""
    translated = translate(pattern)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return re.compile(translated.encode("utf-8", "surrogateescape"))


def translate(pattern: str) -> str:
    """Returns the Python spelling of an ECMAScript pattern (see the module's docstring)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            escape, i = _escape(pattern, i)
            out.append(escape)
            continue
        if c == "[":
            text, i = _bracket(pattern, i)
            out.append(text)
            continue
        if c == ".":
            out.append("[^\\n\\r]")
        elif c == "$":
            out.append("\\Z")
        else:
            out.append(c)
        i += 1
    return "".join(out)


def _escape(pattern: str, i: int) -> tuple[str, int]:
    """Reads the escape at ``pattern[i]`` (a backslash); returns its Python text and the next index."""
    if i + 1 >= len(pattern):
        raise PatternError("the pattern ends with a lone backslash")
    c = pattern[i + 1]
    if c == "c" and i + 2 < len(pattern) and pattern[i + 2].isascii() and pattern[i + 2].isalpha():
        return f"\\x{ord(pattern[i + 2]) % 32:02x}", i + 3
    if c == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", pattern[i + 2:i + 6]):
        # std::regex over char keeps the low byte of \uXXXX (\u00e9 is the byte e9, not UTF-8 "é")
        return f"\\x{int(pattern[i + 2:i + 6], 16) & 0xFF:02x}", i + 6
    return pattern[i:i + 2], i + 2


def _bracket(pattern: str, start: int) -> tuple[str, int]:
    """Reads the bracket expression at ``pattern[start]``; returns its Python text and the next index."""
    i = start + 1
    negated = i < len(pattern) and pattern[i] == "^"
    if negated:
        i += 1
    if i < len(pattern) and pattern[i] == "]":  # ECMAScript: [] is empty, [^] is everything
        return ("[\\s\\S]" if negated else "(?!)"), i + 1
    parts: list[str] = []
    while i < len(pattern):
        c = pattern[i]
        if c == "]":
            return "[" + ("^" if negated else "") + "".join(parts) + "]", i + 1
        if c == "\\":
            escape, i = _escape(pattern, i)
            parts.append(escape)
            continue
        if c == "[" and i + 1 < len(pattern) and pattern[i + 1] in ":=.":
            kind = pattern[i + 1]
            end = pattern.find(kind + "]", i + 2)
            if end < 0:
                raise PatternError(f"'[{kind}' at {i} is not closed by '{kind}]'")
            name = pattern[i + 2:end]
            if kind == ":":
                if name not in _POSIX:
                    raise PatternError(f"[:{name}:] is not a character class (known: "
                                       f"{', '.join(sorted(_POSIX))})")
                parts.append(_POSIX[name])
            else:
                parts.append("".join("\\" + ch if ch in "\\]^-[" or ch in _SPECIAL_IN_SET else ch
                                     for ch in name))
            i = end + 2
            continue
        parts.append("\\" + c if c in _SPECIAL_IN_SET else c)
        i += 1
    raise PatternError(f"the bracket at {start} is not closed")
