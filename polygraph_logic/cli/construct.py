"""``construct``: documents to assertions and receipts through a Claude model."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from polygraph_logic.llm.construct import SUMMARY_TEMPLATES, construct, read_relations
from polygraph_logic.cli.arguments import add_json, add_limit, add_model_options, natural, print_json
from polygraph_logic.llm import (
    DEFAULT_MODEL,
    KEY_ENV,
    MODEL_ENV,
    MissingApiKey,
    ModelClient,
    ModelError,
    RecordedAnswers,
    load_prices,
)


def register(commands) -> None:
    """Adds the construct subcommand."""
    command = commands.add_parser(
        "construct", help="build assertions and receipts from a folder of documents with a Claude model",
        description="Extract claims, merge entities and summarize communities, each with its receipt, "
                    "and write OUT_DIR/assertions.jsonl and receipts.jsonl for 'polygraph build'. Every "
                    "answer is cached (a re-run resumes and costs nothing); banners, refusals, empty or "
                    "malformed answers are reported, never cached, and so is every item of an answer that "
                    "breaks its schema. Answers come through a tool with a JSON schema; the fixed instructions "
                    "are a cached system prompt. --batch asks each step's questions as one Message Batch (half "
                    "price; an interrupted run resumes polling it). The report gives tokens (input, output, cache "
                    f"write, cache read) and dollars. The API key is read from {KEY_ENV}.")
    command.add_argument("corpus", metavar="CORPUS_DIR", help="*.txt (first line 'source: ID'), *.json "
                         "or *.jsonl ({\"source\", \"text\"}) documents")
    command.add_argument("-o", "--output", required=True, metavar="OUT_DIR",
                         help="the folder to write assertions.jsonl and receipts.jsonl to")
    command.add_argument("--model", default=None,
                         help=f"model id (default ${MODEL_ENV}, else {DEFAULT_MODEL})")
    command.add_argument("--cache", default=None, metavar="FILE",
                         help="the answer cache, SQLite (default OUT_DIR/cache.sqlite)")
    add_limit(command, None, "documents, the first ones")
    command.add_argument("--summaries", default="sentences", metavar="FORMATS",
                         help=f"comma-separated summary formats: {', '.join(SUMMARY_TEMPLATES)} "
                              "(default sentences)")
    command.add_argument("--relations", default=None, metavar="FILE",
                         help="the predicates a claim may use, one 'CURIE label' a line "
                              "(default: a set of RO relations)")
    command.add_argument("--replay", default=None, metavar="FILE",
                         help="answer from recorded answers (a polygraph-recorded-answers/1 file, such as "
                              "examples/corpus/recorded/answers.jsonl) and never call the API: no key needed")
    command.add_argument("--max-retries", type=natural, default=4, metavar="N",
                         help="retries on rate limits, server errors and lost connections; with --batch also "
                              "the rounds that resubmit expired requests (default 4)")
    add_model_options(command)
    add_json(command, "construct")
    command.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    options = {"summary_formats": [f.strip() for f in args.summaries.split(",") if f.strip()]}
    if args.relations:
        options["relations"] = read_relations(args.relations)
    if args.replay:
        recorded = RecordedAnswers(args.replay)
        client = ModelClient(args.model or recorded.model, cache=recorded, max_retries=args.max_retries,
                             prices=load_prices(args.prices))
        cache = args.replay
    else:
        cache = Path(args.cache) if args.cache else Path(args.output) / "cache.sqlite"
        if not os.environ.get(KEY_ENV) and not cache.exists():  # fail before anything is read or created
            raise MissingApiKey(f"set {KEY_ENV} to call the API, or answer from recorded answers with --replay FILE "
                                f"(nothing was written; answers already in a --cache file need no key)")
        client = ModelClient(args.model, cache=cache, max_retries=args.max_retries, prices=load_prices(args.prices),
                             mode="batch" if args.batch else "interactive", concurrency=args.concurrency,
                             poll_interval=args.poll_interval)
    with client:
        try:
            report = construct(args.corpus, args.output, client, limit=args.limit, **options)
        except ModelError as error:
            usage = client.usage
            print(f"note: construct stopped after {usage.calls} calls ({usage.cached} cached answers "
                  f"reused); the answers so far are in {cache}: run the same command again to resume",
                  file=sys.stderr)
            raise
    if args.json:
        print_json(report.to_json())
    else:
        print("\n".join(report.lines()))
        print(f"wrote {', '.join(report.files)}")
    return 0
