"""``add``, ``log``, ``replay``: a graph's history of versions (graph/ledger.py, query/replay.py)."""

from __future__ import annotations

import argparse
import os
import sys

from polygraph_logic.errors import PolygraphError
from polygraph_logic.cli.arguments import add_graph, add_json, cap_value, print_json, shipped_name


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


def add_at(parser: argparse.ArgumentParser) -> None:
    """Adds ``--at VERSION`` to a command that reads a graph."""
    parser.add_argument("--at", type=_version, metavar="VERSION",
                        help="read the graph as it was at this version (see `polygraph log`)")


def _version(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--at takes a version number, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"versions are numbered from 1, not {value}")
    return value


def _run_add(args: argparse.Namespace) -> int:
    from polygraph_logic.graph.ledger import add  # start-up time: loaded when run
    if args.assertions is None and args.receipts is None:
        raise PolygraphError("bad_argument", "add needs --assertions NEW.jsonl, --receipts NEW.jsonl or both")
    from polygraph_logic.progress import Progress  # start-up time: loaded when run
    with Progress(f"adding to {args.graph}", stream=sys.stderr) as progress:
        progress.phase("checking the new inputs")
        report = add(args.graph, args.assertions, args.receipts, full=args.full, progress=progress.phase)
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
