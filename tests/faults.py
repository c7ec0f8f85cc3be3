"""Fault injection for the write paths: run a command in a child process that stops at write step k.

A *write step* is one call that changes what is on disk: the first run of each statement on a
SQLite connection that may write (the same INSERT for the next row is no new step: within one
transaction every kill is rolled back alike), each commit, a DuckDB ``COPY ... TO`` (a Parquet
file written), and the file system's ``rename``, ``replace``, ``link``, ``mkdir``, ``write_text``,
``write_bytes`` and ``rmtree``.  The child counts them; at step ``k`` it either kills itself with
SIGKILL (no ``finally``, no journal clean-up: what a power cut or an OOM kill leaves) or raises
the error of a full disk as that layer would (SQLite's "database or disk is full", DuckDB's
IOException, the operating system's ENOSPC).  ``run(argv, k, mode)`` returns the child's exit
status and the number of steps it counted; a run that counted fewer than ``k`` steps finished
without the fault, so ``k`` from 1 until then covers every step.

Used by tests/test_ledger_faults.py; the patches live only in the child.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_CHILD = r'''
import errno, json, os, shutil, signal, sqlite3, sys
from pathlib import Path

AT, MODE, REPORT = int(sys.argv[1]), sys.argv[2], sys.argv[3]
steps = [0]

names = []
def step(what, error=None):
    steps[0] += 1
    if os.environ.get("FAULT_NAMES"):
        names.append(what)
    if steps[0] == AT:
        if MODE == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        said = f"No space left on device (injected at step {AT}: {what})"
        # what each layer raises for a full disk: SQLite's SQLITE_FULL, DuckDB's IOException, the OS's ENOSPC
        raise error(said) if error is not None else OSError(errno.ENOSPC, said)

seen = set()
FULL = lambda said: sqlite3.OperationalError("database or disk is full: " + said)

class Counting(sqlite3.Connection):
    """A connection that may write: the first run of each statement but a plain read (a row's
    INSERT run again for the next row is the same step), and every commit, is a step."""
    def execute(self, sql, *args):
        if sql not in seen and not sql.lstrip().upper().startswith(("SELECT", "PRAGMA")):
            seen.add(sql)
            step("sqlite " + sql.split()[0], FULL)
        return super().execute(sql, *args)
    def executemany(self, sql, *args):
        if ("many", sql) not in seen:
            seen.add(("many", sql))
            step("sqlite executemany", FULL)
        return super().executemany(sql, *args)
    def executescript(self, sql):
        step("sqlite script", FULL)
        return super().executescript(sql)
    def commit(self):
        step("sqlite commit", FULL)
        return super().commit()

connect = sqlite3.connect
def counting_connect(database, *args, **kwargs):
    if "mode=ro" not in str(database) and "factory" not in kwargs:
        kwargs["factory"] = Counting
    return connect(database, *args, **kwargs)
sqlite3.connect = counting_connect

def wrap(owner, name, what):
    original = getattr(owner, name)
    def stepped(*args, **kwargs):
        step(what)
        return original(*args, **kwargs)
    setattr(owner, name, stepped)

for name in ("rename", "replace", "link", "mkdir", "makedirs"):
    wrap(os, name, "os." + name)
for name in ("rename", "replace", "mkdir", "write_text", "write_bytes"):
    wrap(Path, name, "Path." + name)
rmtree = shutil.rmtree
def stepped_rmtree(path, ignore_errors=False, *args, **kwargs):
    try:
        step("shutil.rmtree")
    except OSError:
        if not ignore_errors:
            raise
        return  # what rmtree(..., ignore_errors=True) does when the disk refuses: leaves the tree
    return rmtree(path, ignore_errors, *args, **kwargs)
shutil.rmtree = stepped_rmtree

try:
    import duckdb
except ImportError:
    duckdb = None
if duckdb is not None:
    duck_connect = duckdb.connect
    class Duck:
        def __init__(self, con):
            object.__setattr__(self, "_con", con)
        def execute(self, sql, *args):
            if sql.lstrip().upper().startswith("COPY"):
                step("duckdb COPY", duckdb.IOException)
            return self._con.execute(sql, *args)
        def __getattr__(self, name):
            return getattr(self._con, name)
        def __enter__(self):
            return self
        def __exit__(self, *exc):
            self._con.close()
    duckdb.connect = lambda *args, **kwargs: Duck(duck_connect(*args, **kwargs))

from polygraph_logic.cli import main
try:
    code = main(sys.argv[4:])
except SystemExit as exit_:
    code = exit_.code if isinstance(exit_.code, int) else 1
with open(REPORT, "w") as out:
    json.dump({"steps": steps[0], "code": code, "names": names}, out)
sys.exit(code or 0)
'''


def run(argv: list[str], at: int, mode: str, work: Path) -> tuple[int, int | None, str]:
    """Runs ``polygraph ARGV`` stopping at write step ``at`` (``mode``: "kill" or "full");
    returns (exit status, steps counted or None when killed, its output)."""
    report = work / "fault-report.json"
    report.unlink(missing_ok=True)
    done = subprocess.run([sys.executable, "-c", _CHILD, str(at), mode, str(report), *argv],
                          cwd=ROOT, capture_output=True, text=True)
    steps = json.loads(report.read_text())["steps"] if report.is_file() else None
    return done.returncode, steps, done.stdout + done.stderr


__all__ = ["run"]
