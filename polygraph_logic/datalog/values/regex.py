"""Soufflé's ``match`` patterns (C++ ``std::regex``, ECMAScript grammar) as Python ``re`` patterns.

Soufflé hands a pattern to ``std::regex`` and runs ``regex_match`` over the symbol's
bytes. Python's ``re`` reads most of that grammar the same way; where it does not, the
pattern is rewritten before it is compiled:

- POSIX classes inside brackets (``[[:digit:]]``, ``[^[:alpha:]_]``, ``[[:w:]]``) are
  spelled out (Python reads ``[[:digit:]]`` as the set ``[:digt`` followed by ``]``, so a
  pattern with one matched nothing it should); ``[[=a=]]`` and ``[[.a.]]`` are the letter;
- a ``[`` inside brackets is a literal; ``[]`` matches nothing and ``[^]`` anything;
- ``.`` matches any byte but ``\\n`` and ``\\r``; ``$`` is the end of the text only;
  ``\\cX`` is a control character, ``\\uXXXX`` the byte of its low eight bits, and an escaped
  letter ECMAScript gives no meaning is the letter (``\\A`` is ``A``, not Python's anchor);
- what ``std::regex`` refuses and Python would read is refused (PatternError): groups other
  than ``(?:``, ``(?=``, ``(?!``; a repetition after a repetition (``a++``, possessive in
  Python); a brace that is not ``{n}``, ``{n,}`` or ``{n,m}``.

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
_SPECIAL_IN_SET = set("[&~|")
_ESCAPES = set("bBdDsSwWcxufnrtv")  # the letters an ECMAScript escape gives a meaning  # literal in ECMAScript brackets; Python warns or nests on them


class PatternError(ValueError):
    """A pattern ``std::regex`` would refuse (an unknown POSIX class, an unclosed bracket)."""


def compile_pattern(pattern: str) -> re.Pattern:
    """Returns the compiled bytes pattern for a Soufflé ``match`` regex; raises
    PatternError or ``re.error`` for a bad one."""
    translated = translate(pattern)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return re.compile(translated.encode("utf-8", "surrogateescape"))


_BRACE = re.compile(r"\{[0-9]+(,[0-9]*)?\}")


def translate(pattern: str) -> str:
    """Returns the Python spelling of an ECMAScript pattern (see the module's docstring);
    raises PatternError for what ``std::regex`` refuses and Python would read (a group
    ``(?<=``, ``(?i)``, ``(?P<``, ``(?>``; a quantifier after a quantifier, ``a++``; a brace
    that is not ``{n}``, ``{n,}`` or ``{n,m}``)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    last = None  # what the previous item was: "atom", "quantifier", "lazy" or None
    while i < n:
        c = pattern[i]
        if c == "\\":
            escape, i = _escape(pattern, i)
            out.append(escape)
            last = "atom"
            continue
        if c == "[":
            text, i = _bracket(pattern, i)
            out.append(text)
            last = "atom"
            continue
        if c == "{":
            brace = _BRACE.match(pattern, i)
            if brace is None:
                raise PatternError(f"the brace at {i} is not a repetition {{n}}, {{n,}} or {{n,m}}")
            if last in ("quantifier", "lazy"):
                raise PatternError(f"the repetition at {i} follows another one")
            out.append(brace.group())
            i, last = brace.end(), "quantifier"
            continue
        if c in "*+?":
            if c == "?" and last == "quantifier":
                last = "lazy"
            elif last in ("quantifier", "lazy"):
                raise PatternError(f"the '{c}' at {i} follows a repetition (std::regex has no possessive "
                                   "repetitions)")
            else:
                last = "quantifier"
            out.append(c)
            i += 1
            continue
        if c == "(" and pattern.startswith("?", i + 1):
            if pattern[i + 2:i + 3] not in (":", "=", "!"):
                raise PatternError(f"the group at {i} opens with '(?{pattern[i + 2:i + 3]}': std::regex "
                                   "knows only (?:, (?= and (?!")
            out.append(pattern[i:i + 3])
            i, last = i + 3, None
            continue
        if c == ".":
            out.append("[^\\n\\r]")
        elif c == "$":
            out.append("\\Z")
        else:
            out.append(c)
        last = None if c in "(|^" else "atom"
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
    if c.isascii() and c.isalpha() and c not in _ESCAPES:
        return re.escape(c), i + 2  # std::regex reads an unknown letter escape as the letter (\\A is "A")
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
