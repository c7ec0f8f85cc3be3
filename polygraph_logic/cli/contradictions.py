"""``contradictions``: each contradiction with the smallest retractions that resolve it and its
balance of origins (before and after a deletion, with the deletion flags)."""

from __future__ import annotations

import argparse
import sys

from polygraph_logic.cli.arguments import (add_deletion, add_graph, add_json, add_limit, deletion, has_deletion,
                                           positive_int, print_json)
from polygraph_logic.cli.ledger import add_at


def register(commands) -> None:
    """Adds the contradictions subcommand."""
    command = commands.add_parser(
        "contradictions", help="contradictions and the fewest sources whose retraction resolves each",
        description="List the graph's contradictions (rules deriving contradiction(x, y, reason): "
                    "rules/contradictions.dl, the owl:propertyDisjointWith rules of rules/ro.dl, your own), "
                    "each with its two sides, its label (the product of both sides) and the minimal sets "
                    "of sources, and of assertions, whose retraction resolves it (minimal hitting sets of "
                    "its support sets), smallest first. A capped label says so: its sets are necessary, "
                    "and `whatif --exact` settles whether one suffices. Each also has its balance of origins: "
                    "the distinct evidential origins supporting its first side and refuting it (the second), "
                    "and the verdict by balance (support, refute or undecided); with a deletion, the balance "
                    "after it beside the one before. Listed sorted by subject, object and reason.")
    add_graph(command)
    add_at(command)
    add_limit(command, None, "contradictions")
    command.add_argument("--hitting", type=positive_int, default=3, metavar="K",
                         help="at most K resolving sets per contradiction, of sources and of assertions "
                              "(default 3)")
    from polygraph_logic.graph.kinds import KINDS  # noqa: PLC0415  (a dict of names: light)

    command.add_argument("--prefer", metavar="KIND",
                         help="opt-in precedence policy prefer:KIND: also list the smallest sets of assertions "
                              f"less authoritative than KIND (kinds: {', '.join(KINDS)}) whose deletion resolves "
                              "each")
    command.add_argument("--origins", metavar="F.jsonl", help="derived_from records to use instead of the graph's")
    add_deletion(command, policy=False)
    add_json(command, "contradictions")
    command.set_defaults(run=_run)


def _side(side: dict) -> str:
    negated = "NOT " if side["negated"] else ""
    return f"{side['subject']} {negated}{side['predicate']} {side['object']}"


def print_contradiction(found, out=None) -> None:
    """Prints one contradiction (contradictions.Contradiction) as text."""
    out = out or sys.stdout
    if found.sides:
        what = f"{_side(found.sides[0])}  vs  {_side(found.sides[1])}"
        why = found.reason.split(": ", 1)[1] if ": " in found.reason else ""
        why = why or ("stated and negated" if found.sides[1]["negated"] else "")
        what += f"  ({why})" if why else ""
    else:
        what = f"{found.subject}, {found.object}: {found.reason}"
    print(f"{found.id}  {what}", file=out)
    count = len(found.support)
    print(f"  label: {found.label}  ({count} support set{'s' * (count != 1)}{'' if found.exact else ', capped'})",
          file=out)
    more = " ..." if found.truncated else ""
    print(f"  resolved by retracting sources: {' | '.join('{' + ', '.join(s) + '}' for s in found.by_sources)}"
          f"{more}", file=out)
    print(f"  resolved by deleting assertions: "
          f"{' | '.join('{' + ', '.join(s) + '}' for s in found.by_assertions)}{more}", file=out)
    if found.prefer is not None:
        chosen = " | ".join("{" + ", ".join(s) + "}" for s in found.preferred) or "none: every support set holds " \
            f"only evidence of {found.prefer} or above (the policy does not decide it)"
        print(f"  prefer:{found.prefer}: delete {chosen}", file=out)
    if found.balance is not None:
        print(f"  origins: {_balance(found.balance)}", file=out)
    if found.deletion is not None:
        after = "no balance" if found.balance_after is None else _balance(found.balance_after)
        print(f"  after {found.deletion}: {after}", file=out)
    if found.note:
        print(f"  note: {found.note}", file=out)


def _balance(balance) -> str:
    """A balance of origins as text: ``2 supporting (A, B) vs 1 refuting (C): support``."""
    def side(origins, name):
        return f"{len(origins)} {name}" + (f" ({', '.join(origins)})" if origins else "")
    text = f"{side(balance.supporting, 'supporting')} vs {side(balance.refuting, 'refuting')}: {balance.verdict}"
    if balance.resolved:
        text += " (resolved)"
    if not balance.exact:
        text += " (capped: counts are lower bounds)"
    return text


def _run(args: argparse.Namespace) -> int:
    from polygraph_logic.query.contradictions import contradictions, count  # start-up time: loaded when run
    from polygraph_logic.graph.store.graph_file import Graph  # start-up time: loaded when run

    asked = deletion(args) if has_deletion(args) else None
    with Graph(args.graph, at=args.at) as graph:
        total = count(graph)
        listed = list(contradictions(graph, args.limit, args.hitting, prefer=args.prefer, origins=args.origins,
                                     deletion=asked))
    if args.json:
        extra = {} if asked is None else {"deletion": str(asked)}
        print_json({"contradictions": total, **extra, "listed": [c.to_json() for c in listed]})
        return 0
    shown = f" (showing {len(listed)})" if len(listed) < total else ""
    changed = "" if asked is None else (
        f"; after {asked}: {sum(c.balance_after.resolved for c in listed if c.balance_after)} resolved, "
        f"{sum(c.balance_after.verdict != c.balance.verdict for c in listed if c.balance_after)} verdicts changed")
    print(f"{total} contradictions{shown}{changed}")
    for found in listed:
        print_contradiction(found)
    return 0
