"""``contradictions``: each contradiction with the smallest retractions that resolve it."""

from __future__ import annotations

import argparse
import sys

from polygraph_logic.cli.arguments import add_graph, add_json, add_limit, positive_int, print_json
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
                    "and `whatif --exact` settles whether one suffices.")
    add_graph(command)
    add_at(command)
    add_limit(command, None, "contradictions")
    command.add_argument("--hitting", type=positive_int, default=3, metavar="K",
                         help="at most K resolving sets per contradiction, of sources and of assertions "
                              "(default 3)")
    command.add_argument("--prefer", metavar="KIND",
                         help="opt-in precedence policy prefer:KIND: also list the smallest sets of assertions "
                              "less authoritative than KIND (kinds: verification, source_claim, tool_observation, "
                              "user_assertion, graph_derived, model_hypothesis) whose deletion resolves each")
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
    if found.note:
        print(f"  note: {found.note}", file=out)


def _run(args: argparse.Namespace) -> int:
    from polygraph_logic.query.contradictions import contradictions, count  # start-up time: loaded when run
    from polygraph_logic.graph.store.graph_file import Graph  # start-up time: loaded when run

    with Graph(args.graph, at=args.at) as graph:
        total = count(graph)
        listed = list(contradictions(graph, args.limit, args.hitting, prefer=args.prefer))
    if args.json:
        print_json({"contradictions": total, "listed": [c.to_json() for c in listed]})
        return 0
    shown = f" (showing {len(listed)})" if len(listed) < total else ""
    print(f"{total} contradictions{shown}")
    for found in listed:
        print_contradiction(found)
    return 0
