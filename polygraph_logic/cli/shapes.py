"""The shape of each command's ``--json`` document: its top-level keys, always present.

One place for the help text of every ``--json`` flag, docs/command-line.md's "JSON output" section and
tests/test_cli_json.py. A command may add keys (``whatif --list`` adds the listing, ``import rdf``
what an RDF import reads); it never drops or renames one of these. Numbers are JSON numbers;
files are named as they were given on the command line (or, for shipped rule files, by their
shipped name), never resolved to an absolute path.
"""

from __future__ import annotations

# command -> (kind, keys): "object": a JSON object with these keys; "list": a JSON array of
# objects each with these keys; "relations": an object with one key per relation printed
SHAPES: dict[str, tuple[str, tuple[str, ...]]] = {
    "eval": ("relations", ("RELATION",)),
    "build": ("object", ("output", "engine", "cap", "artifacts", "layers", "truncated", "receipts_over_cap",
                         "seconds")),
    "info": ("object", ("file", "file_bytes", "assertions", "sources", "artifacts", "layers",
                        "label_bytes_per_artifact", "meta")),
    "check": ("object", ("file", "ok", "rows", "problems")),
    "show": ("object", ("counts", "artifacts")),
    "import": ("object", ("file", "format", "output", "unit", "read", "imported", "malformed")),
    "compile-ontology": ("object", ("source", "output", "profile", "compiled", "rules", "skipped", "notes")),
    "generate": ("object", ("output", "seed", "copies", "counts")),
    "add": ("object", ("version", "mode", "reason", "assertions", "receipts", "changed", "artifacts", "retired")),
    "log": ("list", ("version", "time", "command", "action", "parent", "record", "stats")),
    "replay": ("object", ("output", "versions", "changed", "identical", "differences")),
    "diff": ("object", ("first", "second", "identical", "symmetric_difference", "assertions", "layers", "examples")),
    "verify": ("object", ("graph", "ok", "first_mismatch", "versions")),
    "purge": ("object", ("version", "purged", "facts", "artifacts", "rewritten")),
    "whatif": ("object", ("deletion", "deleted_assertions", "policy", "exact", "touched", "dead", "kept",
                          "uncertain", "by_layer", "elapsed_ms")),
    "why": ("object", ("artifact", "layer", "label", "exact", "support_sets", "derivations")),
    "ask": ("object", ("question", "answers")),
    "whynot": ("object", ("artifact", "layer", "status", "policy", "deletion", "exact", "support_sets")),
    "robustness": ("object", ("artifact", "support_sets", "sources", "fewest_sources_to_kill",
                              "independent_sources", "paths", "paths_counted", "origins", "independent_supports",
                              "origin_clusters", "fewest_origins_to_kill", "echo", "exact", "lower_bounds")),
    "top-sources": ("list", ("dead", "by_layer")),
    "rests-on": ("object", ("kinds", "assertions", "artifacts", "uncertain", "exact")),
    "contradictions": ("object", ("contradictions", "listed")),
    "export": ("object", ("output", "format", "rdf12", "artifacts", "assertions", "quads", "bytes", "seconds",
                          "deletion", "policy", "dead")),
    "construct": ("object", ("format", "model", "documents", "assertions", "merges", "summaries", "sentences",
                             "usage", "failures", "files")),
    "audit": ("object", ("format", "graph", "draws", "tau", "oracle", "prompt", "edge_oracle", "deletions",
                         "pooled", "findings")),
    "regenerate": ("object", ("format", "graph", "deletion", "mode", "policy", "deleted_assertions", "rewrites",
                              "not_asked", "requests", "prompt_characters", "input_tokens_estimate")),
    "evaluate": ("object", ("format", "graph", "k", "queries", "documents", "policies_exact", "deletions",
                            "rows", "verdicts")),
    "export-tables": ("object", ("output", "rows")),
    "import-tables": ("object", ("tables", "output", "assertions", "artifacts")),
    "sql-whatif": ("object", ("deletion", "engine", "policy", "label_level", "deleted_assertions", "touched",
                              "dead", "kept", "uncertain", "by_layer", "elapsed_ms")),
}

# the commands without --json, and why (each prints no report, or its output is JSON already)
WITHOUT_JSON = {
    "compile": "prints the compiled program, the command's output",
    "queries": "writes the queries as JSON Lines, one object a query",
    "repl": "interactive",
    "serve": "a web server; its /api/ endpoints answer JSON",
    "mcp": "an MCP server; its tools answer JSON",
    "completion": "prints a shell script, the command's output",
}


def describe(command: str) -> str:
    """Returns the shape of ``command``'s JSON as the help of its --json flag shows it."""
    kind, keys = SHAPES[command]
    if kind == "relations":
        return "{RELATION: [{tuple, provenance, exact}], ...}; with --delete {deleted, alive, dead}"
    inner = "{" + ", ".join(keys) + "}"
    return f"[{inner}, ...]" if kind == "list" else inner
