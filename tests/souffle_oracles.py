"""Plain-Python computations of the records and adts programs' outputs (no polygraph code).

Each function reads the program's fact files with a reader of its own and computes
every output relation rule by rule (recursive rules to their fixpoint), then writes
them as Souffle writes them: records ``[1, [2, nil]]``, ADT values ``$Add($Num(1), $B)``,
symbols raw, rows sorted (numbers, then symbols, then nil, records field by field, ADT
values by constructor then arguments). tests/test_souffle_records.py compares them with
the programs' expected files.
"""

from __future__ import annotations

import re
from pathlib import Path

NIL = None  # nil; a record is a Python tuple; an ADT value is ("$", name, args)


def adt(name, *args):
    return ("$", name, tuple(args))


def is_adt(value) -> bool:
    return isinstance(value, tuple) and len(value) == 3 and value[0] == "$"


# --- reading --------------------------------------------------------------------------
_TOKEN = re.compile(r'\s*(?:(?P<open>[\[(])|(?P<close>[\])])|(?P<comma>,)|(?P<ctor>\$\w+)|(?P<quoted>"(?:[^"\\]|\\.)*")'
                    r'|(?P<int>-?\d+)(?=\s*[,\])]|\s*$)|(?P<raw>[^,\])]+))')


def parse(text: str):
    """Reads ``[1, [2, nil]]``, ``$Add($Num(1), $Num(2))``, quoted and raw symbols."""
    tokens = []
    pos = 0
    while pos < len(text.rstrip()):
        found = _TOKEN.match(text, pos)
        kind = found.lastgroup
        tokens.append((kind, found.group(kind)))
        pos = found.end()
    value, rest = _value(tokens)
    assert not rest, rest
    return value


def _value(tokens):
    kind, token = tokens[0]
    rest = tokens[1:]
    if kind == "open":
        items = []
        while rest[0][0] != "close":
            item, rest = _value(rest)
            items.append(item)
            if rest[0][0] == "comma":
                rest = rest[1:]
        return tuple(items), rest[1:]
    if kind == "ctor":
        if rest and rest[0] == ("open", "("):
            inner, rest = _value([("open", "[")] + rest[1:])
            return adt(token[1:], *inner), rest
        return adt(token[1:]), rest
    if kind == "int":
        return int(token), rest
    if kind == "quoted":
        return re.sub(r"\\(.)", r"\1", token[1:-1]), rest
    raw = token.lstrip()
    return (NIL if raw == "nil" else raw), rest


def facts(folder: Path, name: str, columns: int = 1) -> list:
    rows = []
    for line in (folder / f"{name}.facts").read_text().splitlines():
        fields = line.split("\t")
        assert len(fields) == columns
        rows.append(tuple(parse(f) if f.strip()[:1] in "[$\"" or f.strip() == "nil" else
                          int(f) if re.fullmatch(r"-?\d+", f) else f for f in fields))
    return rows


# --- writing --------------------------------------------------------------------------
def show(value) -> str:
    if value is NIL:
        return "nil"
    if is_adt(value):
        _, name, args = value
        return f"${name}({', '.join(map(show, args))})" if args else f"${name}"
    if isinstance(value, tuple):
        return "[" + ", ".join(map(show, value)) + "]"
    return str(value)


def order(value):
    if isinstance(value, int):
        return (0, value, "")
    if isinstance(value, str):
        return (1, 0, value)
    if value is NIL:
        return (2, 0, ())
    if is_adt(value):
        return (4, value[1], tuple(map(order, value[2])))
    return (3, 0, tuple(map(order, value)))


def table(rows) -> str:
    rows = [r if isinstance(r, tuple) and not is_adt(r) and _is_row(r) else (r,) for r in rows]
    return "".join("\t".join(map(show, r)) + "\n" for r in sorted(set(rows), key=lambda r: tuple(map(order, r))))


def _is_row(r) -> bool:
    return getattr(r, "_row", False)


class Row(tuple):
    _row = True


def fixpoint(start: set, step) -> set:
    found = set(start)
    while True:
        new = step(found) - found
        if not new:
            return found
        found |= new


# --- the records program --------------------------------------------------------------
def records(folder: Path) -> dict[str, str]:
    point = {p for (p,) in facts(folder, "point")}
    segment = {s for (s,) in facts(folder, "segment")}
    place = set(facts(folder, "place", 2))
    team = {t for (t,) in facts(folder, "team")}
    out = {}
    out["shifted"] = table({(p[0] + 10, p[1]) for p in point})
    out["diagonal"] = out["diagonal_too"] = table({p for p in point if p[0] == p[1]})
    endpoint = {e for s in segment if s is not NIL for e in s}
    out["endpoint"] = table(endpoint)
    out["horizontal"] = table({Row((s, s[0][1])) for s in segment if s is not NIL and s[0] is not NIL
                               and s[1] is not NIL and s[0][1] == s[1][1]})
    out["lonely"] = table(point - endpoint)
    out["shared"] = table(point & endpoint)
    out["starts_none"] = table({p for p in point if not any(s is not NIL and s[0] == p for s in segment)})
    out["apart"] = table({Row((a, b)) for s in segment if s is not NIL for a, b in [s] if a != b and a != (0, 0)})
    out["on_axis"] = table({n for n, p in place if p is not NIL and (p[0] == 0 or p[1] == 0)})
    out["at"] = table({Row((n, p[0], p[1])) for n, p in place if p is not NIL})
    countdown = fixpoint({(5, NIL)}, lambda found: {(l[0] - 1, l) for l in found if l[0] > 1})
    full = {l for l in countdown if l[0] == 1}
    out["full"] = table(full)
    suffix = fixpoint(full, lambda found: {l[1] for l in found if l is not NIL})
    out["element"] = table({l[0] for l in suffix if l is not NIL})
    length = fixpoint({Row((NIL, 0))}, lambda found: {Row((l, n + 1)) for l in suffix if l is not NIL
                                                      for t, n in found if t == l[1]})
    out["length"] = table(length)
    rest = fixpoint(team, lambda found: {t[1] for t in found if t is not NIL})
    member = {t[0] for t in rest if t is not NIL}
    out["member"] = table(member)
    out["first"] = table({(n, NIL) for n in member})
    out["suffix size"] = str(len(suffix))
    return out


# --- the adts program -----------------------------------------------------------------
def adts(folder: Path) -> dict[str, str]:
    exprs = {e for (e,) in facts(folder, "expr")}
    env = dict(facts(folder, "env", 2))
    sub = fixpoint(exprs, lambda found: {a for e in found if e[1] in ("Add", "Mul", "Neg") for a in e[2]})

    def value(e):
        name, args = e[1], e[2]
        if name == "Num":
            return args[0]
        if name == "Var":
            return env.get(args[0])
        parts = [value(a) for a in args]
        if None in parts:
            return None
        return {"Add": lambda: parts[0] + parts[1], "Mul": lambda: parts[0] * parts[1],
                "Neg": lambda: -parts[0]}[name]()

    out = {}
    out["result"] = table({Row((e, value(e))) for e in exprs if value(e) is not None})
    out["stuck"] = table({e for e in exprs if value(e) is None})
    num = lambda n: adt("Num", n)  # noqa: E731
    simpler = set()
    for e in sub:
        name, args = e[1], e[2]
        if name == "Add" and args[1] == num(0):
            simpler.add(Row((e, args[0])))
        if name == "Mul" and args[1] == num(1):
            simpler.add(Row((e, args[0])))
        if name == "Mul" and args[1] == num(0):
            simpler.add(Row((e, num(0))))
        if name == "Neg" and args[0][1] == "Neg":
            simpler.add(Row((e, args[0][2][0])))
    out["simpler"] = table(simpler)
    out["leaf"] = table({e for e in sub if e[1] in ("Num", "Var")})
    out["zero"] = table({e for e in sub if e == num(0)})
    red, amber, green = adt("Red"), adt("Amber"), adt("Green")
    nxt = {Row((red, green)), Row((green, amber)), Row((amber, red))}
    out["next"] = table(nxt)
    after = fixpoint(nxt, lambda found: {Row((a, c)) for a, b in found for b2, c in nxt if b == b2})
    out["not_red"] = table({a for a, _ in nxt if a != red})
    signal = {adt("Show", a, 30) for a, b in nxt if b == red} | {adt("Show", b, 10) for a, b in nxt if a == red}
    signal.add(adt("Off"))
    out["signal"] = table(signal)
    out["shown"] = table({Row(s[2]) for s in signal if s[1] == "Show"})
    out["after size"] = str(len(after))
    return out
