"""Every code block of README.md, examples/*/README.md and docs/ runs as printed.

docs/ means every Markdown page under it except docs/bench/ (measurements, printed as
measured) and docs/commands.md (generated from the argument parser; tests/test_command_reference.py).
The convention (also in docs/development.md, "Code blocks in the documentation"): a fenced
block's info string is a kind, then optional attributes.

- ``sh``: shell commands, run by ``bash -e`` in a temporary folder holding a copy of
  ``examples/`` and ``rules/`` (blocks of one document run in order in one folder, so a
  graph built by one block is there for the next; a block whose predecessors have not run in
  this process, as under pytest-xdist or ``-k``, runs them first). ``polygraph`` is the checkout's
  command; a leading ``pip install ... &&`` is left out (the test runs the checkout).
- ``console``: lines starting with ``$ `` are commands (a line ending in ``\\`` continues
  on the next), every other line is the output they print, standard output and standard
  error together, compared as below.
- ``python``: run by the test's own interpreter in that folder.
- ``output``: what the run block just above printed (standard output and error).
- ``dl``: a program of the rule language: ``polygraph eval`` must accept it (exit 0).
- anything else (``text``, ``json``, ``jsonl``, ``sparql``, ``trig``): shown, not run
  (synopses, formats, excerpts; the SPARQL queries are run by tests/test_sparql.py).

Attributes: ``needs=data`` runs the block only when the shared data folder
(``../shared/data`` or ``$POLYGRAPH_DATA``) is there, as ``$DATA``, and skips saying so
otherwise (such blocks are marked slow: they build from the real data); ``needs=key``
only when ``ANTHROPIC_API_KEY`` is set (no block of the offline tour needs one); ``needs=duckdb``
(or another module of an extra, ``EXTRAS``) only when that module is installed; ``not-run``
is a block that installs or runs this very suite, waits on a server or benchmarks for
minutes (shown, never run); ``slow`` runs a block of several seconds that the default run
can do without (marked slow, as a ``needs=data`` block is: no later block of its page may
depend on what it writes). Comparing output: the temporary folder's path is left out
(paths read as relative ones), trailing spaces and blank lines at the end are ignored;
``…`` stands for any text within a line (timings, sizes) and a line holding only
``…`` for any number of lines.

Every relative link of README.md and docs/ must name a file that exists.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# docs/bench/ holds measurements as printed; docs/commands.md is generated (test_command_reference.py)
NOT_RUN_DOCS = ("docs/bench/", "docs/commands.md")
DOCS = [path for path in sorted(ROOT.glob("docs/**/*.md"))
        if not path.relative_to(ROOT).as_posix().startswith(NOT_RUN_DOCS)]
DOCUMENTS = [ROOT / "README.md", *sorted(ROOT.glob("examples/*/README.md")), *DOCS]
RUN = {"sh", "console", "python", "dl"}
SHOWN = {"text", "json", "jsonl", "sparql", "trig"}
KINDS = RUN | SHOWN | {"output"}
COPIED = ("examples", "rules")
TIMEOUT = 600


def data_folder() -> Path | None:
    folder = Path(os.environ.get("POLYGRAPH_DATA") or ROOT.parent / "shared" / "data")
    return folder if folder.is_dir() else None


@dataclass
class Block:
    document: Path
    line: int  # of the opening fence, from 1
    kind: str
    attributes: dict[str, str]
    text: str
    expected: str | None = None  # the output block that follows, if any

    @property
    def name(self) -> str:
        return f"{self.document.relative_to(ROOT)}:{self.line}"


def read_blocks(document: Path) -> list[Block]:
    """Returns the fenced blocks of a Markdown file, each output block attached to its command."""
    blocks: list[Block] = []
    lines = document.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        fence = re.match(r"(\s*)(```+)\s*(.*)$", lines[i])
        if not fence:
            i += 1
            continue
        words = fence.group(3).split()
        kind = words[0] if words else ""
        attributes = dict(w.split("=", 1) if "=" in w else (w, "") for w in words[1:])
        start, i = i, i + 1
        body = []
        while i < len(lines) and not lines[i].strip().startswith(fence.group(2)):
            body.append(lines[i][len(fence.group(1)):] if lines[i].startswith(fence.group(1)) else lines[i])
            i += 1
        i += 1
        block = Block(document, start + 1, kind, attributes, "\n".join(body) + "\n")
        if kind == "output":
            if not blocks or blocks[-1].kind not in ("sh", "python", "dl") or blocks[-1].expected is not None:
                raise AssertionError(f"{block.name}: an output block must follow an sh, python or dl block")
            blocks[-1].expected = block.text
            continue
        blocks.append(block)
    return blocks


def matches(expected: str, actual: str) -> bool:
    """Whether ``actual`` is ``expected`` up to trailing spaces, blank lines at the end and ``…``."""
    def lines(text: str) -> list[str]:
        out = [line.rstrip() for line in text.splitlines()]
        while out and not out[-1]:
            out.pop()
        return out

    pattern = ""
    for line in lines(expected):
        if line.strip() == "…":
            pattern += r"(?:[^\n]*\n)*?"
        else:
            pattern += ".*?".join(re.escape(part) for part in line.split("…")) + r"\n"
    return re.fullmatch(pattern, "".join(f"{line}\n" for line in lines(actual))) is not None


def console_parts(text: str) -> tuple[str, str]:
    """Splits a console block into (commands, expected output)."""
    commands, output, continued = [], [], False
    for line in text.splitlines():
        if continued or line.startswith("$ "):
            commands.append(line if continued else line[2:])
            continued = line.endswith("\\")
        else:
            output.append(line)
    return "\n".join(commands) + "\n", "\n".join(output) + "\n"


class Workspace:
    """The temporary folder one document's blocks run in, with the checkout's polygraph on PATH."""

    def __init__(self, folder: Path):
        self.folder = folder
        for name in COPIED:
            shutil.copytree(ROOT / name, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
        bin_dir = folder.parent / f"{folder.name}-bin"
        bin_dir.mkdir()
        shim = bin_dir / "polygraph"
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m polygraph_logic.cli "$@"\n')
        shim.chmod(0o755)
        self.env = dict(os.environ)
        # compiled modules go to one cache beside the workspaces (never next to a source file, in
        # the checkout or the workspace), so that each of the blocks' processes does not compile
        # the package again
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)
        self.env.update(PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
                        PYTHONPATH=str(ROOT), POLYGRAPH_HISTORY=str(folder / ".history"),
                        COLUMNS="200", PYTHONPYCACHEPREFIX=str(folder.parent / "bytecode"))
        data = data_folder()
        if data is not None:
            self.env["DATA"] = str(data)
        self.ran: set[int] = set()  # the lines of the blocks run here, successful or not

    def run(self, argv: list[str], stdin: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(argv, cwd=self.folder, env=self.env, input=stdin, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=TIMEOUT)


def strip_install(script: str) -> str:
    return re.sub(r"^\s*pip install [^\n&]*&&\s*", "", script, flags=re.MULTILINE)


#: the modules of the optional extras a block may need (``needs=duckdb``), with their extra
EXTRAS = {"duckdb": "duckdb", "matplotlib": "bench", "pyspark": "spark", "mcp": "mcp"}
#: what in a block needs DuckDB: its engine, a tables folder written or read, the SQL what-if
NEEDS_DUCKDB = re.compile(r"--engine duckdb|export-tables|import-tables|sql-whatif|--tables\b"
                          r"""|engine=["']duckdb["']|tables=True""")


def runnable(block: Block) -> str | None:
    """Why a block is not run here, or None when it runs."""
    if "not-run" in block.attributes:
        return (f"{block.name} is marked not-run (it installs or runs this suite, waits on a server or "
                "benchmarks for minutes)")
    if block.attributes.get("needs") == "data" and data_folder() is None:
        return f"{block.name} needs the shared data folder (../shared/data or $POLYGRAPH_DATA), absent here"
    if block.attributes.get("needs") == "key" and not os.environ.get("ANTHROPIC_API_KEY"):
        return f"{block.name} calls the model and needs ANTHROPIC_API_KEY, not set here"
    module = block.attributes.get("needs")
    if module in EXTRAS and importlib.util.find_spec(module) is None:
        return f'{block.name} needs {module}, not installed here (pip install ".[{EXTRAS[module]}]")'
    return None


def run_block(block: Block, workspace: Workspace) -> tuple[subprocess.CompletedProcess, str | None]:
    """Runs one block; returns the finished process and the output it should have printed."""
    workspace.ran.add(block.line)
    if block.kind == "sh":
        return workspace.run(["bash", "-e", "-o", "pipefail", "-c", strip_install(block.text)]), block.expected
    if block.kind == "console":
        commands, expected = console_parts(block.text)
        return workspace.run(["bash", "-e", "-o", "pipefail", "-c", commands]), expected
    if block.kind == "python":
        return workspace.run([sys.executable, "-"], stdin=block.text), block.expected
    program = workspace.folder / f".block-{block.line}.dl"
    program.write_text(block.text, encoding="utf-8")
    return workspace.run([sys.executable, "-m", "polygraph_logic.cli", "eval", program.name]), block.expected


ALL_BLOCKS = [block for document in DOCUMENTS for block in read_blocks(document)]
RUN_BLOCKS = [block for block in ALL_BLOCKS if block.kind in RUN]
XDIST = importlib.util.find_spec("xdist") is not None


@pytest.fixture(scope="module")
def workspaces(tmp_path_factory):
    spaces: dict[Path, Workspace] = {}

    def get(document: Path, block: Block | None = None) -> Workspace:
        """The page's workspace; a fresh one when ``block`` ran there already (as an earlier block
        of a later one: a worker that steals tests may run a page's blocks out of order)."""
        if document not in spaces or (block is not None and block.line in spaces[document].ran):
            spaces[document] = Workspace(tmp_path_factory.mktemp(document.parent.name or "readme"))
        return spaces[document]
    return get


def test_every_block_says_what_it_is():
    unknown = [f"{b.name}: {b.kind or '(no info string)'}" for b in ALL_BLOCKS if b.kind not in KINDS]
    assert not unknown, ("give each code block a kind (see tests/test_docs.py): sh, console, python, output, dl, "
                         f"or text/json/jsonl/sparql/trig for one that is shown, not run: {unknown}")
    allowed = {"needs", "not-run", "slow"}
    odd = [b.name for b in ALL_BLOCKS if set(b.attributes) - allowed
           or b.attributes.get("needs", "data") not in ("data", "key", *EXTRAS)]
    assert not odd, f"unknown block attributes at {odd}"


def test_blocks_that_need_duckdb_say_so():
    """A block that runs DuckDB is ``needs=duckdb``: without the extra it is skipped, not failed."""
    unmarked = [b.name for b in RUN_BLOCKS if NEEDS_DUCKDB.search(b.text) and "not-run" not in b.attributes
                and b.attributes.get("needs") != "duckdb"]
    assert not unmarked, f"mark these blocks needs=duckdb: {unmarked}"
    assert any(b.attributes.get("needs") == "duckdb" for b in RUN_BLOCKS)


def test_the_convention_itself():
    assert matches("wrote x: 3 artifacts; … s\n", "wrote x: 3 artifacts; 1.25 s  \n\n")
    assert not matches("wrote x: 3 artifacts\n", "wrote x: 4 artifacts\n")
    assert matches("a\n…\nz\n", "a\nb\nc\nz\n") and matches("a\n…\nz\n", "a\nz\n")
    assert not matches("a\n…\nz\n", "a\nb\n")
    assert console_parts("$ polygraph a \\\n    --b\nout\n$ c\nmore\n") == (
        "polygraph a \\\n    --b\nc\n", "out\nmore\n")
    assert strip_install('pip install ".[test]" && python -m x\n') == "python -m x\n"


def _marks(block: Block) -> list:
    """A block needing data, or marked slow, is slow; under pytest-xdist with ``--dist loadgroup`` a
    page's blocks share a worker."""
    marks = [pytest.mark.slow] if block.attributes.get("needs") == "data" or "slow" in block.attributes else []
    if XDIST:
        marks.append(pytest.mark.xdist_group(str(block.document.relative_to(ROOT))))
    return marks


@pytest.mark.parametrize("block", [pytest.param(b, marks=_marks(b)) for b in RUN_BLOCKS],
                         ids=[b.name for b in RUN_BLOCKS])
def test_block_runs_as_printed(block: Block, workspaces):
    reason = runnable(block)
    if reason is not None:
        pytest.skip(reason)
    workspace = workspaces(block.document, block)
    for before in RUN_BLOCKS:  # the document's earlier blocks this process has not run (not those that
        # need data or a key, or are slow: the default run leaves them out, so no later block may need them;
        # one that needs an extra runs when the extra is installed, as this block needs it too)
        if before.document == block.document and before.line < block.line and before.line not in workspace.ran \
                and before.attributes.get("needs") not in ("data", "key") and "slow" not in before.attributes \
                and runnable(before) is None:
            run_block(before, workspace)
    result, expected = run_block(block, workspace)
    shown = result.stdout.replace(str(workspace.folder) + os.sep, "")
    assert result.returncode == 0, f"{block.name} exited {result.returncode}:\n{block.text}\n---\n{shown}"
    if expected is not None:
        assert matches(expected, shown), f"{block.name} printed\n{shown}\n--- instead of\n{expected}"


LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")


def relative_links(document: Path) -> list[str]:
    """The link targets of a Markdown file outside its code, without web addresses and anchors."""
    text = re.sub(r"^(\s*)(```+).*?^\1\2\s*$", "", document.read_text(encoding="utf-8"), flags=re.M | re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    targets = [a or b for a, b in LINK.findall(text)]
    return [t.split("#", 1)[0] for t in targets
            if not re.match(r"[a-z][a-z0-9+.-]*:", t, re.I) and not t.startswith("#")]


def test_relative_links_name_existing_files():
    pages = [ROOT / "README.md", *sorted(ROOT.glob("docs/**/*.md"))]
    broken = [f"{page.relative_to(ROOT)}: {target}" for page in pages for target in relative_links(page)
              if not (page.parent / target).exists()]
    assert not broken, f"relative links to files that do not exist: {broken}"
    assert relative_links(ROOT / "README.md"), "README.md links to no page of docs/"


def test_the_link_check_itself(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("[a](a.md) and [b](sub/b.md#part), ![img](images/x.png), [web](https://x.org/y),\n"
                    "[anchor](#here), `[code](no.md)`\n```text\n[fenced](no.md)\n```\n")
    assert relative_links(page) == ["a.md", "sub/b.md", "images/x.png"]


def _script(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_recorded_fixtures_are_what_their_scripts_write(tmp_path):
    """The offline tour's recorded answers are written by scripts from the corpus; a changed
    prompt template or pipeline must show up here, not as a replay_missing in the tour."""
    corpus = _script(ROOT / "examples" / "corpus" / "record_fixture.py")
    for written in corpus.record(tmp_path / "corpus"):
        committed = ROOT / "examples" / "corpus" / "recorded" / written.name
        assert written.read_text(encoding="utf-8") == committed.read_text(encoding="utf-8"), (
            f"{committed} is stale: run python examples/corpus/record_fixture.py")
    first = json.loads((ROOT / "examples" / "corpus" / "recorded" / "answers.jsonl").read_text().splitlines()[0])
    assert "fixture" in first and "not answers of a model" in first["fixture"]
    figure1 = _script(ROOT / "examples" / "figure1" / "record_audit.py")
    written = figure1.record(tmp_path / "recorded-audit.jsonl")
    assert written.read_text() == (ROOT / "examples" / "figure1" / "recorded-audit.jsonl").read_text(), (
        "examples/figure1/recorded-audit.jsonl is stale: run python examples/figure1/record_audit.py")


def test_construct_without_a_key_fails_at_once_and_writes_nothing(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["PYTHONPATH"] = str(ROOT)
    result = subprocess.run([sys.executable, "-m", "polygraph_logic.cli", "construct",
                             str(ROOT / "examples" / "corpus"), "-o", str(tmp_path / "out")],
                            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert result.returncode == 2
    assert result.stderr.startswith("missing_api_key: set ANTHROPIC_API_KEY")
    assert list(tmp_path.iterdir()) == []  # no out/, no cache.sqlite
    script = ("import sys, runpy; sys.argv = ['polygraph', 'construct', sys.argv[1], '-o', sys.argv[2]]\n"
              "from polygraph_logic.cli import main\ncode = main()\n"
              "print(sorted(m for m in ('anthropic', 'httpx') if m in sys.modules)); sys.exit(code)")
    result = subprocess.run([sys.executable, "-c", script, str(ROOT / "examples" / "corpus"), str(tmp_path / "o2")],
                            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert result.stdout.strip() == "[]"  # it failed before loading the model SDK


def test_replay_answers_only_what_was_recorded(tmp_path):
    from polygraph_logic.errors import PolygraphError
    from polygraph_logic.llm import ModelClient, RecordedAnswers
    recorded = RecordedAnswers(ROOT / "examples" / "corpus" / "recorded" / "answers.jsonl")
    assert recorded.model == "recorded-fixture" and len(recorded) == 7
    with ModelClient(recorded.model, cache=recorded) as client:
        with pytest.raises(PolygraphError) as error:
            client.complete("rederive-merge", {"artifact": "x", "evidence": "(none)"}, 0, "rederivation")
    assert error.value.code == "replay_missing" and client.usage.calls == 0


def test_readme_test_command_is_what_ci_runs():
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line.startswith("pip install")]
    quick_start = [b.text.strip() for b in ALL_BLOCKS if b.document == ROOT / "README.md"
                   and b.text.strip().startswith("pip install") and "pytest" in b.text]
    assert len(ci) == 1 and quick_start == [ci[0].strip()], (ci, quick_start)
