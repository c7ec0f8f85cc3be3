"""Hostile inputs through the real ``polygraph`` command: tracebacks, hangs and changed files.

Generates (seeded) at least ``--runs`` hostile inputs of the classes of issue 13 and
more: rule files (bytes that are not UTF-8, huge integers written and derived, lone
surrogates, long expressions, deep parentheses, random byte damage), JSON Lines
assertions and receipts (the same, plus deep nesting, non-CURIE predicates, receipt ids
equal to generated ids, wrong types, cut lines), damaged graph files (dropped tables and
columns, bad metadata, labels, content and layers, cut short, flipped bytes, URI
characters in the name), importer files (GPAD, GAF, obographs, RDF), argument lists and
REPL sessions.  Each runs as its own ``polygraph`` process with a time limit.

A run passes when it exits 0, or exits 2 with its last line of standard error in the
shape ``FILE:LINE:COL: code: message`` or ``code: message`` (code not internal_error),
prints no traceback, finishes within the limit and changes none of its input files.
Every graph file made for the runs is hashed before and after.

    python -m benchmarks.hostile [--runs 1200] [--seed 0] [--jobs 2] [--timeout 60]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import shutil
import sqlite3
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.harness import CHECKOUT, Stopwatch, run as run_child

ROOT = CHECKOUT  # the inputs are the checkout's examples
FIGURE1 = ROOT / "examples" / "figure1"
SHAPE = re.compile(r"^(.+:\d+:\d+: )?[a-z][a-z_]*: \S")
COMMAND = [sys.executable, "-m", "polygraph_logic.cli"]


@dataclass
class Case:
    """One hostile run: its class, argument list, files it reads, and standard input."""

    kind: str
    argv: list[str]
    inputs: list[Path] = field(default_factory=list)
    stdin: str = ""


@dataclass
class Result:
    case: Case
    status: int | None
    stderr: str
    seconds: float
    changed: list[str]

    @property
    def verdict(self) -> str:
        if self.status is None:
            return "hang"
        if "Traceback (most recent call last)" in self.stderr:
            return "traceback"
        if self.changed:
            return "changed_input"
        last = [line for line in self.stderr.replace("\r", "\n").splitlines() if line.strip()]
        if self.status == 0:
            return "ok"
        if self.status not in (2, 130):
            return "bad_status"
        if not last or not SHAPE.match(last[-1]):
            return "bad_shape"
        if "internal_error" in last[-1]:
            return "internal_error"
        return "ok"


def digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def run(case: Case, timeout: float) -> Result:
    before = {p: digest(p) for p in case.inputs}
    done = run_child(COMMAND + case.argv, input=case.stdin, timeout=timeout, cwd=ROOT, peak=False)
    changed = [str(p) for p, d in before.items() if digest(p) != d]
    return Result(case, done.code, done.stderr if not done.timed_out else "", done.seconds, changed)


# --- generators ------------------------------------------------------------------------
def mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    """Returns ``data`` with a few random byte-level edits (flip, insert, delete, cut)."""
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        if not data:
            break
        at = rng.randrange(len(data))
        what = rng.randrange(4)
        if what == 0:
            data[at] = rng.randrange(256)
        elif what == 1:
            data[at:at] = rng.choice([b"\xff", b"\xc3", b"\x00", b"\\ud800", b"{", b"[" * 50, b'"', b"\n", b"9" * 40])
        elif what == 2:
            del data[at:at + rng.randint(1, 8)]
        else:
            del data[at:]
    return bytes(data)


def rule_texts(rng: random.Random) -> list[tuple[str, bytes]]:
    figure = (ROOT / "examples" / "figure1.dl").read_bytes()
    classroom = (ROOT / "examples" / "classroom.dl").read_bytes()
    fixed = [
        ("latin1", "p(\"café\").\n".encode("latin-1")),
        ("utf16", "p(1).\n".encode("utf-16")),
        ("stray_ff", b"p(1).\xff\n"),
        ("huge_literal", b"p(" + b"9" * 5000 + b").\n"),
        ("huge_derived", b"n(2, 0). n(y, k) :- n(x, j), j < 16, k = j + 1, y = x * x.\n"),
        ("surrogate", b'p("\\ud800").\n'),
        ("long_sum", b"q(1). p(y) :- q(x), y = x" + b" + 1" * 400 + b".\n"),
        ("unary_minus", b"q(1). p(y) :- q(x), y = " + b"-" * 30000 + b"x.\n"),
        ("deep_parens", b"q(1). p(y) :- q(x), y = " + b"(" * 3000 + b"x" + b")" * 3000 + b".\n"),
        ("long_body", b"q(1). p(x) :- " + b", ".join(b"q(x)" for _ in range(300)) + b".\n"),
        ("nul", b"p(\"a\x00b\").\n"),
        ("empty", b""),
    ]
    out = list(fixed)
    for i in range(60):
        out.append((f"mutated_{i}", mutate_bytes(rng, rng.choice([figure, classroom]))))
    return out


def jsonl_lines(rng: random.Random) -> list[tuple[str, str, bytes]]:
    """Returns (name, 'assertions'|'receipts', file bytes) hostile input files."""
    assertions = (FIGURE1 / "assertions.jsonl").read_bytes()
    receipts = (FIGURE1 / "receipts.jsonl").read_bytes()
    good = assertions.splitlines(keepends=True)

    def assertion(**changes) -> bytes:
        record = {"id": "x1", "source": "s:1", "subject": "a", "predicate": "RO:0002211", "object": "b", **changes}
        return json.dumps(record).encode() + b"\n"

    def receipt(**changes) -> bytes:
        record = {"artifact": "merge:x", "layer": "merge", "content": {"canonical": "a", "members": ["a", "b"]},
                  "support": [["a12"]], **changes}
        return json.dumps(record).encode() + b"\n"

    out = [
        ("a_latin1", "assertions", assertion(subject="x").replace(b'"x"', b'"caf\xe9"')),
        ("a_utf16", "assertions", assertions.decode().encode("utf-16")),
        ("a_huge_int", "assertions", assertion(extra=1).replace(b"1}", b"1" + b"0" * 5000 + b"}")),
        ("a_deep", "assertions", b'{"id": "x", "deep": ' + b"[" * 1000 + b"]" * 1000 + b"}\n"),
        ("a_surrogate_id", "assertions", assertion(id="\ud800")),
        ("a_surrogate_subject", "assertions", assertion(subject="x\udfff")),
        ("a_not_curie", "assertions", assertion(predicate="regulates")),
        ("a_curie_newline", "assertions", assertion(predicate="RO:0002211\n")),
        ("a_nul", "assertions", assertion(subject="a\x00b")),
        ("r_sentence_id", "receipts", receipt(artifact="summary:aim2#s1") + receipts),
        ("r_claim_id", "receipts", receipt(artifact="claim:0123456789ab")),
        ("r_edge_id", "receipts", receipt(artifact="edge:abcdefabcdef")),
        ("r_deep", "receipts", receipt(content={}).replace(b"{}", b"[" * 990 + b"]" * 990)),
        ("r_surrogate", "receipts", receipt(artifact="merge:\ud800")),
        ("r_huge_support", "receipts", receipt(support=[["a12"] * 3])),
    ]
    for i in range(40):
        out.append((f"a_mutated_{i}", "assertions", mutate_bytes(rng, assertions)))
        out.append((f"r_mutated_{i}", "receipts", mutate_bytes(rng, receipts)))
    for i in range(20):
        line = bytearray(rng.choice(good))
        record = json.loads(line)
        key = rng.choice(sorted(record))
        record[key] = rng.choice([None, 7, [], {}, "", " ", "x" * 10000, 1e308, True, ["a"], "\u202e"])
        out.append((f"a_field_{i}", "assertions", b"".join(good) + json.dumps(record).encode() + b"\n"))
    return out


GRAPH_DAMAGE = [
    ("drop_mentions", "DROP TABLE mentions"), ("drop_artifacts", "DROP TABLE artifacts"),
    ("drop_facts", "DROP TABLE facts"), ("drop_meta", "DROP TABLE meta"),
    ("drop_column", "ALTER TABLE assertions DROP COLUMN text"),
    ("cap_eight", "UPDATE meta SET value = 'eight' WHERE key = 'cap'"),
    ("cap_null", "UPDATE meta SET value = x'00' WHERE key = 'cap'"),
    ("format_blob", "UPDATE meta SET value = x'ff' WHERE key = 'format'"),
    ("stats_bad", "UPDATE meta SET value = '[]' WHERE key = 'stats'"),
    ("content_nonjson", "UPDATE artifacts SET content = '{not json'"),
    ("content_deep", "UPDATE artifacts SET content = '" + "[" * 5000 + "]" * 5000 + "'"),
    ("layer_unknown", "UPDATE artifacts SET layer = 'bogus'"),
    ("label_garbage", "UPDATE facts SET label = x'ffffffff'"),
    ("label_missing", "UPDATE facts SET label = x'01e08d06'"),
    ("label_text", "UPDATE facts SET label = 'text'"),
    ("args_bad", "UPDATE facts SET args = 'x' || num"),
    ("rules_bad", "UPDATE rules SET tree = x'80049500'"),
    ("artifact_nofact", "UPDATE artifacts SET fact = fact + 100000"),
    ("no_assertions", "DELETE FROM assertions"),
    ("id_blob", "UPDATE assertions SET id = x'ff00' WHERE num = 1"),
]


def graph_commands(path: Path, out: Path) -> list[list[str]]:
    g = str(path)
    return [["info", g], ["info", g, "--json"], ["show", g], ["check", g], ["whatif", g, "--assertion", "a12"],
            ["whatif", g, "--retract-source", "PMID:39973430", "--exact", "--list"], ["why", g, "merge:mapk-erk"],
            ["whynot", g, "merge:mapk-erk", "--assertion", "a12"], ["robustness", g, "summary:aim2"],
            ["top-sources", g], ["export", g, "-o", str(out)]]


ARG_POOL = ["info", "show", "whatif", "why", "whynot", "robustness", "top-sources", "export", "check", "build",
            "eval", "compile", "import", "repl", "--assertion", "--retract-source", "--revoke-relation", "--policy",
            "--exact", "--json", "--list", "--limit", "--trees", "--layer", "--format", "-o", "--cap", "--rules",
            "--assertions", "--receipts", "--semiring", "--delete", "--max-facts", "--timeout", "distrust:bogus",
            "bogus", "-1", "0", "9" * 5000, "1e9", "nan", "", " ", "-", "--", "\udcff", "a12", "a\x01b",
            "merge:mapk-erk", "claim:", "%s", "{}", "x" * 3000, "PMID:39973430", "RO:0002211", "trig", "nq"]


def argument_lists(rng: random.Random, graph: Path, count: int) -> list[list[str]]:
    out = []
    for _ in range(count):
        argv = [rng.choice(ARG_POOL) for _ in range(rng.randint(0, 6))]
        if argv and rng.random() < 0.6:
            argv.insert(1, str(graph))
        out.append(argv)
    return out


REPL_POOL = ["retract PMID:39973430", "revoke RO:0002211", "delete a12", "delete \udcff", "undo", "why merge:mapk-erk",
             "why nope", "whynot summary:aim2", "policy bogus", "policy distrust:edge", "exact on", "list", "show",
             "help", "reset", "retract", "why " + "x" * 5000, "\x00", "é", "9" * 5000, "status"]


# --- the run -----------------------------------------------------------------------------
def make_cases(work: Path, rng: random.Random, runs: int) -> tuple[list[Case], list[Path]]:
    cases: list[Case] = []
    graph = work / "g.graph"
    run_child(COMMAND + ["build", "--assertions", FIGURE1 / "assertions.jsonl", "--receipts",
                         FIGURE1 / "receipts.jsonl", "--rules", "ro", "-o", graph], peak=False).check("polygraph build")
    graphs = [graph]
    for name, data in rule_texts(rng):
        path = work / f"rules_{name}.dl"
        path.write_bytes(data)
        cases.append(Case("rule file", ["eval", str(path)], [path]))
        if rng.random() < 0.3:
            cases.append(Case("rule file", ["eval", str(path), "--semiring", "boolean", "--json"], [path]))
    assertions = FIGURE1 / "assertions.jsonl"
    for name, which, data in jsonl_lines(rng):
        path = work / f"{name}.jsonl"
        path.write_bytes(data)
        out = work / f"built_{name}.graph"
        if which == "assertions":
            cases.append(Case("jsonl", ["build", "--assertions", str(path), "-o", str(out)], [path]))
        else:
            cases.append(Case("jsonl", ["build", "--assertions", str(assertions), "--receipts", str(path),
                                        "-o", str(out)], [path]))
    for name, sql in GRAPH_DAMAGE:
        path = work / f"damaged_{name}.graph"
        shutil.copy(graph, path)
        db = sqlite3.connect(path)
        db.execute(sql)
        db.commit()
        db.close()
        graphs.append(path)
    data = graph.read_bytes()
    for i in range(25):
        path = work / f"bytes_{i}.graph"
        cut = rng.choice([len(data) - 1, rng.randrange(len(data))])
        path.write_bytes(data[:cut] if i % 3 == 0 else mutate_bytes(rng, data[:4096]) + data[4096:])
        graphs.append(path)
    for name in ("g%41.graph", "g#1.graph", "g?x.graph", "g x.graph", "g:1.graph"):
        path = work / name
        shutil.copy(graph, path)
        graphs.append(path)
    for path in graphs:
        for argv in graph_commands(path, work / "out.trig"):
            cases.append(Case("graph file", argv, [path]))
    for kind, lines in (("gpad", ["!gpa-version: 1.2", "PomBase\tSPAC1\tenables\tGO:0003674\tPMID:1\tECO:0000314"
                                  "\t\t\t20200101\tPomBase\t\t"]),
                        ("gaf", ["!gaf-version: 2.2", "PomBase\tSPAC1\tx\tenables\tGO:0003674\tPMID:1\tIDA\t\tF"
                                 "\tn\t\tprotein\ttaxon:4896\t20200101\tPomBase\t\t"])):
        base = ("\n".join(lines) + "\n").encode()
        for i in range(15):
            path = work / f"import_{kind}_{i}.{kind}"
            path.write_bytes(mutate_bytes(rng, base) if i else base.replace(b"SPAC1", b"SPAC\xff"))
            cases.append(Case("importer", ["import", kind, str(path)], [path]))
    obo = json.dumps({"graphs": [{"nodes": [{"id": "http://purl.obolibrary.org/obo/GO_1"}],
                                  "edges": [{"sub": "http://purl.obolibrary.org/obo/GO_1", "pred": "is_a",
                                             "obj": "http://purl.obolibrary.org/obo/GO_2"}]}]}).encode()
    for i in range(15):
        path = work / f"import_obo_{i}.json"
        path.write_bytes(mutate_bytes(rng, obo) if i else b'{"graphs": ' + b"[" * 5000 + b"]" * 5000 + b"}")
        cases.append(Case("importer", ["import", "obographs", str(path)], [path]))
    for i in range(10):
        path = work / f"import_rdf_{i}.ttl"
        path.write_bytes(mutate_bytes(rng, b"@prefix ex: <http://e/> .\nex:a ex:b ex:c .\n"))
        cases.append(Case("importer", ["import", "rdf", str(path), "-o", str(work / f"rdf_{i}.graph")], [path]))
    for _ in range(30):
        lines = [rng.choice(REPL_POOL) for _ in range(rng.randint(1, 8))]
        cases.append(Case("repl", ["repl", str(graph)], [graph], "\n".join(lines) + "\n"))
    missing = max(0, runs - len(cases))
    for argv in argument_lists(rng, graph, max(missing, 150)):
        cases.append(Case("arguments", argv, [graph]))
    return cases, graphs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args(argv)
    if not (FIGURE1 / "assertions.jsonl").is_file():
        print(f"hostile inputs need a checkout's examples/ ({FIGURE1} not found)", file=sys.stderr)
        return 2
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="polygraph-hostile-") as folder:
        work = Path(folder)
        cases, graphs = make_cases(work, rng, args.runs)
        hashes = {p: digest(p) for p in graphs}
        clock = Stopwatch()
        with ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(lambda c: run(c, args.timeout), cases))
        elapsed = clock()
        changed_graphs = [p.name for p, d in hashes.items() if digest(p) != d]
        leftovers = sorted(p.name for p in work.iterdir() if p.name.endswith(".partial"))
    by_kind: dict[str, Counter] = {}
    for result in results:
        by_kind.setdefault(result.case.kind, Counter())[result.verdict] += 1
        by_kind[result.case.kind]["runs"] += 1
    print(f"hostile inputs: {len(results)} runs of `polygraph` in {elapsed:.0f} s ({args.jobs} at a time, "
          f"limit {args.timeout:.0f} s each, seed {args.seed})")
    verdicts = ("ok", "traceback", "hang", "internal_error", "bad_shape", "bad_status", "changed_input")
    print(f"{'class':12} {'runs':>5} " + " ".join(f"{v:>14}" for v in verdicts))
    for kind, counts in by_kind.items():
        print(f"{kind:12} {counts['runs']:>5} " + " ".join(f"{counts[v]:>14}" for v in verdicts))
    totals = Counter(r.verdict for r in results)
    statuses = Counter(r.status for r in results)
    print("exit statuses: " + ", ".join(f"{s}: {n}" for s, n in sorted(statuses.items(), key=str)))
    print(f"tracebacks: {totals['traceback']}, hangs: {totals['hang']}, internal errors: {totals['internal_error']}, "
          f"bad error lines: {totals['bad_shape'] + totals['bad_status']}, changed inputs: {totals['changed_input']}")
    slowest = max(results, key=lambda r: r.seconds)
    print(f"slowest run: {slowest.seconds:.1f} s ({slowest.case.kind}: {' '.join(slowest.case.argv)[:100]})")
    print(f"graph files byte-identical afterwards: {len(graphs) - len(changed_graphs)} of {len(graphs)}"
          + (f" (changed: {', '.join(changed_graphs)})" if changed_graphs else ""))
    print(f".partial leftovers: {len(leftovers)}")
    failures = [r for r in results if r.verdict != "ok"]
    for result in failures[:15]:
        tail = [line for line in result.stderr.splitlines() if line.strip()][-1:] or [""]
        print(f"  {result.verdict}: {result.case.kind}: {' '.join(result.case.argv)[:120]!r}: {tail[0][:200]}")
    return 1 if failures or changed_graphs or leftovers else 0


if __name__ == "__main__":
    sys.exit(main())
