"""``regenerate``: rewrite the model-written artifacts a retraction kills or trims (llm/regenerate.py)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from polygraph_logic.errors import PolygraphError
from polygraph_logic.cli.arguments import add_graph, add_json, add_model_options, deletion_sources, natural, print_json


def register(commands) -> None:
    """Adds the regenerate subcommand."""
    command = commands.add_parser(
        "regenerate", help="rewrite the summaries and merges a retraction kills or trims, as a new version",
        description="Find the model-written artifacts (merges, summaries, summary sentences) that a deletion kills "
                    "or trims under trust-all, show the model the evidence that still stands for each, and ask it "
                    "to rewrite them with new receipts (a summary one receipt per sentence, a merge its support "
                    "sets, citing only the evidence ids shown). The receipts are checked as `add --receipts` "
                    "checks them and written, with the deletion applied, as ONE new version; the trimmed "
                    "summaries they rewrite are retired. A refused answer, or one the client kept only in part (an "
                    "item citing an id not shown left out), is reported and nothing is written. The rewrites "
                    "are asked together: --concurrency N calls at once, or --batch as one Message Batch. --dry-run "
                    "shows what would be asked, its size and its estimated price, and writes nothing.")
    add_graph(command)
    group = command.add_argument_group("the deletion (together, one deletion), or the one applied last")
    group.add_argument("--retract-source", action="append", default=[], metavar="S",
                       help="delete every assertion of source S (repeatable)")
    group.add_argument("--retract-source-file", action="append", default=[], metavar="FILE",
                       help="delete every assertion of each source listed in FILE, one a line (repeatable)")
    group.add_argument("--revoke-relation", action="append", default=[], metavar="P",
                       help="delete every assertion with predicate P (repeatable)")
    group.add_argument("--assertion", action="append", default=[], metavar="ID",
                       help="delete one assertion by id (repeatable)")
    group.add_argument("--after-deletion", action="store_true",
                       help="the graph's last version is an applied deletion (`apply` in the repl): rewrite what "
                            "it killed or trimmed, adding only the rewrites")
    command.add_argument("--dry-run", action="store_true",
                         help="list each artifact to rewrite, the evidence ids it would be shown, the number of "
                              "requests, the prompt size (characters; input tokens estimated at 4 characters a "
                              "token) and the price of the model (--prices): the estimated input, and at most "
                              "the output of max_tokens a request; ask nothing, write nothing")
    command.add_argument("--replay", metavar="ANSWERS.jsonl",
                         help="answer from recorded answers (a polygraph-recorded-answers/1 file, such as "
                              "examples/figure1/regenerate-answers.jsonl) and never call the API: no key needed")
    command.add_argument("--model", default=None, help="model id (default $POLYGRAPH_MODEL, else the package default)")
    command.add_argument("--cache", default=None, metavar="FILE",
                         help="the answer cache, SQLite (default GRAPH.cache.sqlite beside the graph)")
    command.add_argument("--receipts-out", default=None, metavar="FILE",
                         help="where to write the regenerated receipts, recorded by the version (default "
                              "GRAPH.regenerated-vN.jsonl beside the graph, N the version written); never overwritten")
    command.add_argument("--max-retries", type=natural, default=4, metavar="N",
                         help="retries on rate limits, server errors and lost connections; with --batch also "
                              "the rounds that resubmit expired requests (default 4)")
    add_model_options(command)
    add_json(command, "regenerate")
    command.set_defaults(run=_run)


def _deletion(args: argparse.Namespace):
    from polygraph_logic.query.whatif import Deletion  # start-up time: loaded when run

    named = Deletion(deletion_sources(args), tuple(dict.fromkeys(args.revoke_relation)),
                     tuple(dict.fromkeys(args.assertion)))
    if bool(named) == args.after_deletion:
        raise PolygraphError("bad_argument", "name one deletion (--retract-source S, --revoke-relation P, "
                                             "--assertion ID) or --after-deletion, not both and not neither")
    return named or None


def _run(args: argparse.Namespace) -> int:
    from polygraph_logic.llm.regenerate import plan_regeneration  # start-up time: loaded when run

    deletion = _deletion(args)
    if args.dry_run:
        from polygraph_logic.llm.regenerate import estimate_cost  # start-up time: loaded when run

        plan = plan_regeneration(args.graph, deletion, after_deletion=args.after_deletion)
        with _asking(args, None, None) as client:  # asks nothing: its model, max_tokens and prices
            cost = estimate_cost(plan, client.model, client.prices, client.max_tokens, batch=args.batch)
        if args.json:
            print_json({"format": "polygraph-regenerate/1", **plan.to_json(), "cost": cost})
        else:
            _print_plan(plan, dry=True)
            print(_cost_line(cost))
        return 0
    client, cache = _client(args)
    from polygraph_logic.llm.regenerate import regenerate  # start-up time: loaded when run
    from polygraph_logic.progress import Progress  # start-up time: loaded when run

    with client, Progress(f"regenerating {args.graph}", stream=sys.stderr) as progress:
        report = regenerate(args.graph, client, deletion, after_deletion=args.after_deletion,
                            receipts_out=args.receipts_out, progress=progress.phase)
    if args.json:
        print_json(report.to_json())
        return 0
    _print_plan(report.plan, dry=False)
    for receipt in report.receipts:
        cited = sorted({a for part in receipt.get("sentences", [receipt]) for group in part["support"] for a in group})
        what = (f"{len(receipt['sentences'])} sentence(s)" if "sentences" in receipt
                else f"{receipt['content']['canonical']} == {', '.join(receipt['content']['members'])}")
        print(f"  {receipt['content']['regenerated_from']} -> {receipt['artifact']}: {what}, citing {', '.join(cited)}")
    for entry in report.not_rebuilt:
        print(f"  {entry['artifact']}: not rebuilt: {entry['reason']}")
    u = report.usage
    dollars = f"${u['dollars']:.4f}" if u.get("dollars") is not None else f"no price for {report.model}"
    print(f"model {report.model}: {u.get('calls', 0)} calls, {u.get('cached', 0)} answered from {cache}; tokens "
          f"{u.get('input_tokens', 0)} input, {u.get('output_tokens', 0)} output, {u.get('cache_write_tokens', 0)} "
          f"cache write, {u.get('cache_read_tokens', 0)} cache read; {dollars}; {u.get('retries', 0)} retries")
    if report.written is None:
        print("no rewrite was made: nothing written (nor the deletion applied: `polygraph repl` applies it)")
        return 0
    w = report.written
    print(f"version {w.version}: {w.deleted_assertions} assertions deleted, {len(w.dropped)} artifacts dropped, "
          f"{len(w.replaced)} replaced ({', '.join(w.replaced) or 'none'}), {w.artifacts} artifacts added; "
          f"receipts in {report.receipts_file}")
    return 0


def _client(args: argparse.Namespace):
    """The ModelClient: over recorded answers (--replay), else over the answer cache (a key needed for a miss)."""
    from polygraph_logic.llm import KEY_ENV, MissingApiKey, RecordedAnswers  # the model layer: when run

    if args.replay:
        recorded = RecordedAnswers(args.replay)
        return _asking(args, recorded, recorded.model), args.replay
    cache = Path(args.cache) if args.cache else Path(args.graph).with_name(Path(args.graph).name + ".cache.sqlite")
    if not os.environ.get(KEY_ENV) and not cache.exists():  # fail before anything is asked or written
        raise MissingApiKey(f"set {KEY_ENV} to call the API, or answer from recorded answers with --replay FILE "
                            "(nothing was written; --dry-run shows what would be asked)")
    return _asking(args, cache, None), str(cache)


def _asking(args: argparse.Namespace, cache, recorded_model: str | None):
    """The ModelClient the options describe (model, prices, batch or concurrency, retries) over ``cache``."""
    from polygraph_logic.llm import ModelClient, RecordedAnswers, load_prices  # the model layer: when run

    if cache is None and args.replay:  # a dry run over recorded answers: priced as their model
        recorded_model = RecordedAnswers(args.replay).model
    return ModelClient(args.model or recorded_model, cache=cache, max_retries=args.max_retries,
                       prices=load_prices(args.prices), mode="batch" if args.batch else "interactive",
                       concurrency=args.concurrency, poll_interval=args.poll_interval)


def _cost_line(cost: dict) -> str:
    """The dry run's price: the estimated input dollars and the bound on the output's."""
    if cost["input_dollars"] is None:
        return f"cost: {cost['price_note']}"
    batch = ", at the batch discount" if cost["batch"] else ""
    return (f"cost on {cost['model']}{batch}: ~${cost['input_dollars']:.4f} for the ~{cost['input_tokens_estimate']:,} "
            f"input tokens estimated (the prompt's text; the answer's JSON schema each request carries is not "
            f"counted), plus at most ${cost['output_dollars_at_most']:.4f} for output (not estimated: "
            f"bounded by max_tokens, {cost['output_tokens_at_most']:,} tokens in all); prices from {cost['prices']}")


def _print_plan(plan, dry: bool) -> None:
    """Prints what is (or would be) asked: each rewrite with its evidence, then the totals."""
    deleted = len(plan.outcome.deleted)
    head = "dry run: " if dry else ""
    tail = "; nothing asked, nothing written" if dry else ""
    applied = " (applied by the version before)" if plan.mode == "after-deletion" else ""
    print(f"{head}{plan.deletion}{applied} under trust-all: {deleted} assertions deleted, "
          f"{len(plan.rewrites)} artifacts to rewrite{tail}")
    for rewrite in plan.rewrites:
        covers = f"; with its dead sentences {', '.join(rewrite.covers)}" if rewrite.covers else ""
        print(f"  {rewrite.artifact} ({rewrite.layer}, {rewrite.status}{covers}) -> {rewrite.new_id}")
        print(f"    evidence shown: {', '.join(a.id for a in rewrite.evidence)}")
        if rewrite.context:
            print(f"    standing artifacts shown as context: {', '.join(rewrite.context)}")
        summary = rewrite.to_json()
        print(f"    prompt: {rewrite.template}, {summary['prompt_characters']:,} characters, "
              f"~{summary['input_tokens_estimate']:,} input tokens")
    for entry in plan.unsupported:
        print(f"  {entry['artifact']} ({entry['layer']}, {entry['status']}): not asked: {entry['reason']}")
    totals = plan.to_json()
    print(f"{totals['requests']} requests, {totals['prompt_characters']:,} prompt characters, "
          f"~{totals['input_tokens_estimate']:,} input tokens (estimated at {totals['token_estimate']})")
