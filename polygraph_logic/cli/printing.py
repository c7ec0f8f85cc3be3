"""Text output shared by the what-if commands and the repl: outcomes and explanations."""

from __future__ import annotations

import sys


def print_outcome(outcome, listing: bool = False, out=None, graph=None) -> None:
    """Prints a what-if outcome as text: counts per layer, summaries, demotions, uncertain verdicts,
    contradictions resolved and remaining (listed with ``graph``, if the graph has any)."""
    out = out or sys.stdout
    print(f"{outcome.deletion.summary()}: {len(outcome.deleted)} assertions deleted; policy {outcome.policy}"
          f"{'; exact' if outcome.exact else ''}; {outcome.elapsed_ms:.2f} ms", file=out)
    width = max([10, *map(len, outcome.by_layer())])  # 'contradiction' is the one longer name
    print(f"{'layer':{width}} {'touched':>8} {'dead':>6} {'kept':>6}", file=out)
    for layer, counts in outcome.by_layer().items():
        print(f"{layer:{width}} {counts['touched']:>8} {counts['dead']:>6} {counts['kept']:>6}", file=out)
    for summary, entry in sorted(outcome.summaries.items()):
        print(f"  {summary}: {entry['status']} ({entry['dead_sentences']} of {entry['sentences']} sentences dead)",
              file=out)
    if outcome.demoted:
        print(f"{len(outcome.demoted)} claims demoted: every stating assertion is deleted, but the rules still "
              "entail the triple (it stands as an edge)", file=out)
    if outcome.deletion.kinds:
        print(f"{len(outcome.distrusted)} assertions of {', '.join(outcome.deletion.kinds)} distrusted (none "
              f"retracted); {len(outcome.resting)} of the dead rest only on them: no other evidence supports them",
              file=out)
    if outcome.deletion.evidence:
        left = ", ".join(f"{len(ids)} {reason.replace('_', ' ')}" for reason, ids in outcome.evidence_excluded.items()
                         if ids) or "none"
        print(f"evidence read {outcome.deletion.evidence}: assertions left out: {left}", file=out)
    if outcome.require:
        promoted = f"; {len(outcome.promoted)} promoted by a verification" if outcome.promoted else ""
        print(f"required kinds {', '.join(outcome.require.kinds)}: {len(outcome.unqualified)} standing artifacts "
              f"have no support set of only those kinds{promoted}", file=out)
    if outcome.uncertain:
        print(f"{len(outcome.uncertain)} dead verdicts rest on capped labels; --exact settles them", file=out)
    if outcome.settled:
        how = "the circuit" if outcome.settled_by == "circuit" else "re-derivation"
        print(f"{how} settled {outcome.settled} capped dead verdicts and revived {outcome.revived}", file=out)
    if outcome.contradictions_total:
        found = outcome.contradictions()
        print(f"contradictions: resolved {found['resolved']}, remaining {found['remaining']}", file=out)
    if listing:
        resting = set(outcome.resting)
        for entry in outcome.listing(n for n in outcome._ordered if n in outcome.dead_ranks):
            triple = f"  {' '.join(map(str, entry['triple']))}" if "triple" in entry else ""
            mark = f"  (rests only on {', '.join(outcome.deletion.kinds)})" if entry["id"] in resting else ""
            print(f"  - {entry['id']}{triple}{mark}", file=out)
        for entry in outcome.unqualified:
            print(f"  ? {entry['id']}  (stands, but not on {', '.join(outcome.require.kinds)} alone)", file=out)
        for entry in outcome.demoted:
            print(f"  ~ {entry['artifact']}  {' '.join(map(str, entry['triple']))}  (demoted to an edge)", file=out)
        if graph is not None and outcome.contradictions_total:
            for remaining in outcome.contradictions(graph)["remaining_ids"]:
                print(f"  = {remaining}  (contradiction remains)", file=out)


def print_why(result: dict, out=None) -> None:
    """Prints a why() result as text."""
    out = out or sys.stdout
    triple = f" {' '.join(map(str, result['triple']))}" if result.get("triple") else ""
    print(f"{result['artifact']} ({result['layer']}{triple}): {result['label']}"
          f"{'' if result['exact'] else '  [capped]'}", file=out)
    marks = result.get("distrusted") or [False] * len(result["support_sets"])
    qualifies = result.get("qualifies") or [None] * len(result["support_sets"])
    required = "/".join(result.get("required_kinds", ()))
    if required:
        print(f"  {'meets' if result['meets_requirement'] else 'does not meet'} the requirement {required}: "
              f"{'some' if result['meets_requirement'] else 'no'} support set holds only those kinds "
              "(or assertions a verification names)", file=out)
    for i, (support, distrusted, good) in enumerate(zip(result["support_sets"], marks, qualifies), 1):
        note = f"  [rests on {'/'.join(result['distrusted_kinds'])}: cannot support]" if distrusted else ""
        note += "" if good is None else f"  [{'meets' if good else 'not only'} {required}]"
        print(f"  support set {i}:{note}", file=out)
        for a in support:
            s, p, o = a["triple"]
            print(f"    {a['id']:10} {a['source']:24} {a['kind']:16} {s} {'NOT ' * a.get('negated', False)}{p} {o}",
                  file=out)
    expansion = result.get("expanded")
    if expansion is not None:
        total = f"{expansion['support_sets']}" if expansion["complete"] else f"at least {expansion['support_sets']}"
        print(f"  {len(result['support_sets'])} of {total} support sets, expanded from the circuit", file=out)
    if "stands" in result:
        print(f"  {'stands' if result['stands'] else 'does not stand'} without "
              f"{', '.join(result['distrusted_kinds'])}", file=out)
    for tree in result["derivations"]:
        if tree is not None:
            print("  derivation:", file=out)
            for line in tree.lines("    "):
                print(line, file=out)


def print_whynot(result: dict, out=None) -> None:
    """Prints a whynot() result as text."""
    out = out or sys.stdout
    print(f"{result['artifact']} is {result['status']} under {result['policy']} after {result['deletion']}",
          file=out)
    for entry in result["support_sets"]:
        broken = (f"broken by {', '.join(entry['broken_by'])} ({', '.join(entry['sources'])})"
                  if entry["broken_by"] else "survives")
        print(f"  {{{', '.join(entry['support'])}}}: {broken}", file=out)


def print_robustness(result: dict, out=None) -> None:
    """Prints a robustness() result as text."""
    out = out or sys.stdout
    paths, origins = result["paths"], result["origins"]
    print(f"{result['artifact']}: {result['support_sets']} support sets over {len(result['sources'])} sources",
          file=out)
    print(f"  fewest sources whose retraction kills it: "
          f"{len(result['fewest_sources_to_kill'])} ({', '.join(result['fewest_sources_to_kill'])})", file=out)
    # sources that share an origin are not independent: the echo's count is the one by origin
    print(f"  support sets with no source in common: {result['independent_sources']}; with no origin in common "
          f"(independent supports): {result['independent_supports']}", file=out)
    counted = "support sets" if result["paths_counted"] == "support_sets" else result["paths_counted"]
    print(f"  paths: {paths} ({counted}); origins: {origins} distinct", file=out)
    if result["echo"]:
        print(f"  ECHO: {paths} paths, one origin", file=out)
    print(f"  fewest origins whose retraction kills it: {len(result['fewest_origins_to_kill'])} "
          f"({', '.join(result['fewest_origins_to_kill'])})", file=out)
    for origin, sources in result["origin_clusters"].items():
        if sources != [origin]:
            print(f"  origin {origin}: {', '.join(sources)}", file=out)
    if result.get("distrusted_kinds"):
        print(f"  not counted: {result['distrusted_sets']} support sets resting on "
              f"{', '.join(result['distrusted_kinds'])}", file=out)
    if result["lower_bounds"]:
        print("  capped label: it lists only its smallest support sets, so every count above is a lower bound",
              file=out)
