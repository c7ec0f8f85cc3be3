"""``add``, ``log``, ``replay``, ``diff``: a graph's history of versions and graphs compared
(graph/ledger.py, query/replay.py, query/diff.py)."""

from __future__ import annotations

import argparse
import os
import sys

from polygraph_logic.errors import PolygraphError
from polygraph_logic.cli.arguments import add_authorization, add_graph, add_json, cap_value, print_json, shipped_name


def register(commands) -> None:
    """Adds the ``add``, ``log`` and ``replay`` subcommands."""
    add = commands.add_parser(
        "add", help="append new assertions and receipts to a graph as a new version (evaluated incrementally)",
        description="Check new assertions and receipts against the graph (the errors of build, every problem "
                    "of both files at once, each at its file and line; nothing is written if there is one), "
                    "update the closure from the new facts only, and append the changed labels and new "
                    "artifacts as a new version: nothing is overwritten. The result equals a full build from "
                    "the union of the inputs, label for label; where the cap makes labels depend on the order "
                    "derivations arrive, or a rule negates or aggregates over assertions, the union is "
                    "re-evaluated in full from the recorded inputs, and the command says so.")
    add_graph(add)
    add.add_argument("--assertions", metavar="NEW.jsonl", help="new assertions (JSON Lines)")
    add.add_argument("--receipts", metavar="NEW.jsonl", help="new receipts, citing old or new assertions")
    add.add_argument("--full", action="store_true", help="re-evaluate the union in full (as build would)")
    add_authorization(add, "every new assertion it does not authorize is refused at its file and line "
                           "(unauthorized) and nothing is written; without one nothing is refused")
    add_json(add, "add")
    add.set_defaults(run=_run_add)

    log = commands.add_parser(
        "log", help="list a graph's versions: what each added or deleted, when, how",
        description="List the versions of a graph (a file or a folder), oldest first: the command that made each, its "
                    "input files with their sha256, an applied deletion and its policy, whether an add was "
                    "evaluated incrementally or in full, and the counts per layer after it.")
    add_graph(log)
    add_json(log, "log")
    log.set_defaults(run=_run_log)

    replay = commands.add_parser(
        "replay", help="rebuild a graph from its recorded inputs and compare the labels",
        description="Rebuild the graph from what its versions recorded (the build's files and rule files, each "
                    "add's files, each applied deletion), in order, into COPY, and compare the label tables row "
                    "by row. Says whether the result is identical, or which input changed (a file missing or "
                    "with another sha256, another release).")
    add_graph(replay)
    replay.add_argument("-o", "--output", required=True, metavar="COPY", help="the graph to rebuild into (a file for a graph file; for a graph folder, a folder built by DuckDB)")
    replay.add_argument("--force", action="store_true", help="replay even when an input's hash changed")
    add_json(replay, "replay")
    replay.set_defaults(run=_run_replay)

    diff = commands.add_parser(
        "diff", help="compare two graphs by content: artifacts only in one, labels that differ, by layer",
        description="Compare two graphs (files or folders, at any version) by what they say, not how they number "
                    "it: artifacts matched by id, assertions by id, a label as its support sets by assertion id "
                    "and its exact flag. Prints, per layer, the artifacts only in the first, only in the second, "
                    "in both with another content or another label, and the same; the size of the symmetric "
                    "difference |G1 Δ G2| (the study's replay floor); and the first differences with both "
                    "sides. Exit 0 when the graphs say the same, 1 when they differ.")
    diff.add_argument("first", metavar="GRAPH1", help="a graph file or folder")
    diff.add_argument("second", metavar="GRAPH2", help="a graph file or folder")
    diff.add_argument("--at1", type=_version, metavar="VERSION", help="read GRAPH1 as it was at this version")
    diff.add_argument("--at2", type=_version, metavar="VERSION", help="read GRAPH2 as it was at this version")
    diff.add_argument("--layer", metavar="LAYER", help="compare the artifacts of one layer only (claim, edge, ...)")
    diff.add_argument("--limit", type=_count, default=10, metavar="N",
                      help="list at most N differences (default 10; 0: counts only)")
    add_json(diff, "diff")
    diff.set_defaults(run=_run_diff)

    verify = commands.add_parser(
        "verify", help="recompute a graph's hash chain and name the first version that does not match",
        description="Every version of a graph records a digest of its content and of its parent's digest (a "
                    "hash chain, written as the version commits). Recompute each from the stored rows (a file) "
                    "or files (a folder) and compare: a row changed, added or removed afterwards, a record "
                    "rewritten or a version dropped shows as the first version that does not match. Exit 0 when "
                    "every chained version matches, 1 when one does not; versions written before chains are "
                    "listed as unchained.")
    add_graph(verify)
    add_json(verify, "verify")
    verify.set_defaults(run=_run_verify)

    purge = commands.add_parser(
        "purge", help="erase assertions' content from every version, keeping their ids and hashes (a takedown)",
        description="Erase the subject, predicate, object and text of the named assertions from every version of "
                    "a graph (file or folder), and the content of every fact and artifact that rested only on "
                    "them, as one new version that also applies their deletion (trust-all). Ids, labels and "
                    "sources stay, each purged record is kept as its sha256, the hash chain still verifies (the "
                    "purge records the rewritten versions' digests), and replay names what was purged. A file is "
                    "compacted so the text is in none of its pages; a folder's Parquet files that held it are "
                    "replaced by files written without it. All or nothing.")
    add_graph(purge)
    purge.add_argument("--assertion", action="append", default=[], metavar="ID", help="purge one assertion (repeatable)")
    purge.add_argument("--source", action="append", default=[], metavar="S",
                       help="purge every assertion of source S (repeatable)")
    add_json(purge, "purge")
    purge.set_defaults(run=_run_purge)


def _run_purge(args: argparse.Namespace) -> int:
    from polygraph_logic.progress import Progress  # start-up time: loaded when run
    from polygraph_logic.query.purge import purge  # start-up time: loaded when run
    with Progress(f"purging {args.graph}", stream=sys.stderr) as progress:
        progress.phase("erasing every version and compacting")
        report = purge(args.graph, assertions=args.assertion, sources=args.source)
    if args.json:
        print_json(report.to_json())
        return 0
    print(f"version {report.version}: purged {len(report.purged)} assertions "
          f"({', '.join(report.purged)}); erased {report.facts} facts and {report.artifacts} artifact rows "
          f"that rested only on them; versions rewritten: {', '.join(map(str, report.rewritten)) or 'none'}")
    return 0


def add_at(parser: argparse.ArgumentParser) -> None:
    """Adds ``--at VERSION`` to a command that reads a graph."""
    parser.add_argument("--at", type=_version, metavar="VERSION",
                        help="read the graph as it was at this version (see `polygraph log`)")


def _whole(text: str, what: str, least: int, below: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{what}, not {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(below.format(value))
    return value


def _version(text: str) -> int:
    return _whole(text, "--at takes a version number", 1, "versions are numbered from 1, not {}")


def _count(text: str) -> int:
    return _whole(text, "--limit takes a number", 0, "--limit cannot be negative ({})")


def _run_diff(args: argparse.Namespace) -> int:
    from polygraph_logic.query.diff import diff_graphs  # start-up time: loaded when run
    from polygraph_logic.progress import Progress  # start-up time: loaded when run
    with Progress(f"comparing {args.first} and {args.second}", stream=sys.stderr) as progress:
        found = diff_graphs(args.first, args.second, args.at1, args.at2, layer=args.layer, limit=args.limit,
                            progress=lambda n: progress.phase(f"{n:,} artifacts read"))
    if args.json:
        print_json(found.to_json())
        return 0 if found.identical else 1
    names = [name + (f" (version {at})" if at else "") for name, at in ((args.first, args.at1), (args.second, args.at2))]
    print(f"{names[0]} against {names[1]}: " + ("the same" if found.identical else
                                                      f"|G1 Δ G2| = {found.symmetric:,} artifacts in one graph only"))
    header = f"{'':<14} {'only 1st':>10} {'only 2nd':>10} {'content':>10} {'label':>10} {'same':>10}"
    print(header)
    rows = [("assertions", found.assertions), *sorted(found.layers.items())]
    for name, c in rows:
        print(f"{name:<14} {c.only_first:>10,} {c.only_second:>10,} {c.content:>10,} {c.label:>10,} {c.same:>10,}")
    for example in found.examples:
        first, second = example["first"], example["second"]
        sides = " -> ".join(side["label"] + ("" if side["exact"] else " [capped]") if side else "absent"
                            for side in (first, second))
        print(f"  {example['change']}: {example['artifact']} ({example['layer']}): {sides}")
    return 0 if found.identical else 1


def _run_verify(args: argparse.Namespace) -> int:
    from polygraph_logic.graph.store.chain import verify  # start-up time: loaded when run
    rows = verify(args.graph)
    bad = next((row["version"] for row in rows if row["status"] == "mismatch"), None)
    if args.json:
        print_json({"graph": args.graph, "ok": bad is None, "first_mismatch": bad, "versions": rows})
        return 0 if bad is None else 1
    for row in rows:
        shown = (f"ok {row['digest'][:16]}" if row["status"] == "ok" else "does not match its recorded digest"
                 if row["status"] == "mismatch" else "unchained (written before chains, or its digest is missing)")
        print(f"version {row['version']}: {shown}")
    if bad is not None:
        print(f"{args.graph}: version {bad} is not what was committed (or a version before it changed)")
    else:
        chained = [row for row in rows if row["status"] == "ok"]
        print(f"{args.graph}: {len(chained)} of {len(rows)} versions verified")
    return 0 if bad is None else 1


def _run_add(args: argparse.Namespace) -> int:
    from polygraph_logic.graph.ledger import add  # start-up time: loaded when run
    if args.assertions is None and args.receipts is None:
        raise PolygraphError("bad_argument", "add needs --assertions NEW.jsonl, --receipts NEW.jsonl or both")
    from polygraph_logic.progress import Progress  # start-up time: loaded when run
    with Progress(f"adding to {args.graph}", stream=sys.stderr) as progress:
        progress.phase("checking the new inputs")
        report = add(args.graph, args.assertions, args.receipts, full=args.full, progress=progress.phase,
                     authorization=args.authorization)
    if args.json:
        print_json(report.to_json())
        return 0
    changed = ", ".join(f"{relation} {count:,}" for relation, count in sorted(report.changed.items()))
    how = "incrementally" if report.mode == "incremental" else f"in full ({report.reason})"
    print(f"version {report.version}: added {report.assertions} assertions and {report.receipts} receipts, "
          f"evaluated {how}")
    print(f"  facts new or with a changed label: {changed or 'none'}")
    print(f"  artifacts added: {report.artifacts}" + (f", removed: {report.retired} (entailed edges now "
                                                        "stated as claims)" if report.retired else ""))
    return 0


def _run_log(args: argparse.Namespace) -> int:
    from polygraph_logic.graph.store.graph_file import Graph  # start-up time: loaded when run
    with Graph(args.graph) as graph:
        rows = [_shown(row) for row in graph.version_rows()]
    if args.json:
        print_json(rows)
        return 0
    for row in rows:
        record = row["record"]
        print(f"version {row['version']}  {row['time'] or '(time not recorded)'}  {row['action']}"
              + (f"  (parent {row['parent']})" if row["parent"] else ""))
        print(f"  command: {row['command']}")
        for entry in record.get("inputs", []):
            print(f"  {entry['role']}: {entry['file']} ({entry['records']} records, sha256 {entry['sha256'][:12]})")
        for entry in record.get("rules", []):
            print(f"  rules: {entry['file']} (sha256 {(entry['sha256'] or 'missing')[:12]})")
        if row["action"] == "apply":
            print(f"  deletion: {record.get('deletion')} under {record.get('policy')}: "
                  f"{record.get('deleted_assertions')} assertions deleted, "
                  f"{record.get('dropped_artifacts')} artifacts dropped")
        if row["action"] == "purge":
            print(f"  purged: {', '.join(record.get('purged', {}))} (content erased from every version, "
                  f"sha256 kept); versions rewritten: {', '.join(record.get('rewritten', {})) or 'none'}")
        if row["action"] == "regenerate":
            deletion = f"deletion: {record['deletion']} under {record['policy']}: " if "deletion" in record else \
                "after the deletion applied by the version before: "
            print(f"  {deletion}{record.get('deleted_assertions')} assertions deleted, "
                  f"{record.get('dropped_artifacts')} artifacts dropped; rewritten by {record.get('model')}, replacing "
                  f"{', '.join(record.get('replaced', ())) or 'no standing artifact'}")
        if record.get("mode"):
            print(f"  evaluated: {record['mode']}" + (f" ({record['reason']})" if record.get("reason") else ""))
        if row["stats"]:
            layers = row["stats"].get("layers", {})
            print(f"  {row['stats'].get('assertions', 0):,} assertions; "
                  + ", ".join(f"{layer} {entry['artifacts']:,}" for layer, entry in layers.items()))
    return 0


def _shown(row: dict) -> dict:
    """A version row as log shows it: the cap a number (or null), shipped rule files by name, other
    recorded files (stored resolved, for replay) relative to the current folder."""
    record = dict(row["record"])
    if "cap" in record:
        record["cap"] = cap_value(record["cap"])
    if "rules" in record:
        record["rules"] = [{**entry, "file": _relative(shipped_name(str(entry["file"])))} for entry in record["rules"]]
    if "inputs" in record:
        record["inputs"] = [{**entry, "file": _relative(str(entry["file"]))} for entry in record["inputs"]]
    return {**row, "record": record}


def _relative(path: str) -> str:
    if not os.path.isabs(path):
        return path
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive
        return path


def _run_replay(args: argparse.Namespace) -> int:
    from polygraph_logic.query.replay import replay  # start-up time: loaded when run
    report = replay(args.graph, args.output, force=args.force)
    if args.json:
        print_json({"output": args.output, **report.to_json()})
    else:
        for line in report.changed:
            print(f"input changed: {line}")
        for version, ids in report.purged.items():
            print(f"purged at version {version}: {', '.join(ids)} (their content is in no version; an input that "
                  "held them may have been changed or removed for it)")
        if report.identical is None:
            print("not replayed: an input is missing or changed (--force replays with the current files)")
        elif report.identical:
            print(f"identical: {report.versions} versions replayed into {args.output}; the label tables match "
                  "row for row")
        else:
            print(f"different: {report.versions} versions replayed into {args.output}; the label tables differ:")
            for line in report.differences:
                print(f"  {line}")
    return 0 if report.identical else 1
