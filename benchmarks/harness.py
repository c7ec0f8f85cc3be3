"""The benchmarks' shared harness: a child process timed with its own peak memory, a call timed in
this process, medians and ratios, aligned tables, and where the GO slice is.

Every script in benchmarks/ measures through these; none keeps a runner or a timer of its own.

A child's peak memory is read without GNU time: the command runs under a small launcher (a
fresh ``python -I -S`` that forks the command and waits for it with ``os.wait4``), so the
``ru_maxrss`` it reads is the command's own.  Started straight from this process it would not
be: Linux charges a process, in its peak RSS, the image it was forked from until it calls exec
(and with ``vfork``, as ``subprocess`` uses, that image's peak), so a child of a benchmark that
holds 1 GB reports at least 1 GB whatever it used itself.
"""

from __future__ import annotations

import gc
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

#: the repository when the benchmarks run from a checkout (examples/, rules/, pyproject.toml)
CHECKOUT = Path(__file__).resolve().parents[1]  # the checkout: benchmarks/ is a folder at its top


def default_data() -> Path:
    """Returns where the GO slice is: ``$POLYGRAPH_DATA/go-pombase`` if set (the shared data
    folder, as the docs and tests read it; a folder holding the slice itself is accepted too),
    else the first of ``../shared/data/go-pombase`` beside a checkout of this package or beside
    the current folder that holds it (the checkout's path when none does, for the skip message)."""
    if os.environ.get("POLYGRAPH_DATA"):
        folder = Path(os.environ["POLYGRAPH_DATA"])
        return folder / "go-pombase" if (folder / "go-pombase").is_dir() else folder
    candidates = [CHECKOUT.parent / "shared" / "data" / "go-pombase",
                  Path.cwd().parent / "shared" / "data" / "go-pombase"]
    for candidate in candidates:
        if (candidate / "truncated-pombase.gpad").is_file():
            return candidate
    return candidates[0]


# --- child processes ---------------------------------------------------------------------

# argv: the report file, then the command.  Forks the command from this small image, waits
# for it and writes "exit-code seconds ru_maxrss cpu-seconds" to the report file.
_LAUNCHER = r"""
import os, sys, time
report, command = sys.argv[1], sys.argv[2:]
started = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(command[0], command)
    except OSError as error:
        os.write(2, f"cannot run {command[0]}: {error}\n".encode())
    os._exit(127)
_, status, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - started
with open(report, "w") as handle:
    handle.write(f"{os.waitstatus_to_exitcode(status)} {seconds!r} {usage.ru_maxrss} "
                 f"{usage.ru_utime + usage.ru_stime!r}")
"""
_LAUNCHER_WORKS = hasattr(os, "fork") and hasattr(os, "wait4")


@dataclass
class Run:
    """One finished child: wall seconds, its peak RSS in MiB and its CPU seconds (user and
    system, its own children's included; None where unknown), its exit code (None: stopped at
    the time limit) and what it printed."""

    command: list[str]
    seconds: float
    peak_mib: float | None
    code: int | None
    stdout: str
    stderr: str
    timeout: float | None = field(default=None, repr=False)
    cpu_seconds: float | None = None

    @property
    def timed_out(self) -> bool:
        return self.code is None

    def last_words(self, lines: int = 1) -> list[str]:
        """What the child said last (standard error, else standard output), or why it stopped."""
        if self.timed_out:
            return [f"did not finish in {self.timeout:g} s (stopped)"]
        said = (self.stderr.strip() or self.stdout.strip()).splitlines()
        return said[-lines:] or [f"exit code {self.code}"]

    def check(self, what: str) -> "Run":
        """Returns the run when it exited 0; raises RuntimeError with its last words otherwise."""
        if self.timed_out:
            raise RuntimeError(f"{what} did not finish in {self.timeout:g} s (stopped)")
        if self.code != 0:
            raise RuntimeError(f"{what} exited with {self.code}:\n" + "\n".join(self.last_words(5)))
        return self

    def json(self):
        """The JSON of the last line of standard output."""
        return json.loads(self.stdout.strip().splitlines()[-1])


def run(command: Sequence[str], *, env: dict | None = None, cwd: str | Path | None = None,
        timeout: float | None = None, input: str | bytes | None = None, peak: bool = True,
        tail: int | None = None) -> Run:
    """Runs ``command`` to its end (or stops it, with every process it started, after ``timeout``
    seconds); returns its wall time, its output (read from files, so that a child that prints a
    lot never blocks) and, with ``peak``, its own peak RSS and CPU seconds (see the module
    docstring; the wall time is then the launcher's, from the fork to the child's end).  Without
    ``peak`` the command starts straight from this process, the wall time taken from outside.
    ``tail``: keep only the last ``tail`` bytes of its output (a listing as long as the graph,
    timed, need not be read back whole)."""
    command = [str(c) for c in command]
    launched = peak and _LAUNCHER_WORKS
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as given, \
            tempfile.NamedTemporaryFile("r", suffix=".run") as report:
        if input is not None:
            given.write(input.encode("utf-8", "surrogateescape") if isinstance(input, str) else input)
            given.seek(0)
        full = [sys.executable, "-I", "-S", "-c", _LAUNCHER, report.name, *command] if launched else command
        started = time.perf_counter()
        process = subprocess.Popen(full, stdin=given if input is not None else subprocess.DEVNULL, stdout=out,
                                   stderr=err, env=env, cwd=cwd, start_new_session=True)
        code = None
        try:
            code = process.wait(timeout)
        except subprocess.TimeoutExpired:
            pass
        finally:  # stopped at the limit, or this process interrupted: nothing it started lives on
            if process.returncode is None:
                _stop(process)
        seconds, peak_mib, cpu = time.perf_counter() - started, None, None
        if launched and code is not None:
            reported = report.read().split()
            if len(reported) == 4:
                code, seconds, cpu = int(reported[0]), float(reported[1]), float(reported[3])
                # ru_maxrss: KiB on Linux, bytes on macOS
                peak_mib = int(reported[2]) / (2**20 if sys.platform == "darwin" else 2**10)
        out.seek(0 if tail is None else max(0, out.seek(0, os.SEEK_END) - tail))
        err.seek(0)
        return Run(command, seconds, peak_mib, code, out.read().decode("utf-8", "replace"),
                   err.read().decode("utf-8", "replace"), timeout, cpu)


def _stop(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()
    process.wait()


def python(code: str, *arguments: str, **options) -> Run:
    """``run`` of ``python -c CODE ARGUMENTS`` with this interpreter."""
    return run([sys.executable, "-c", code, *arguments], **options)


def module(name: str, *arguments) -> list[str]:
    """The command that runs the benchmark script ``name`` (e.g. its child mode) in a fresh interpreter,
    from whatever folder: the checkout is put on its path (benchmarks/ is not installed)."""
    code = (f"import runpy, sys; sys.path.insert(0, {str(CHECKOUT)!r}); "
            f"runpy.run_module('benchmarks.{name}', run_name='__main__', alter_sys=True)")
    return [sys.executable, "-c", code, *map(str, arguments)]


def child_json(name: str, *arguments, timeout: float | None = None, env: dict | None = None,
               cwd: str | Path | None = None) -> dict | list[str]:
    """Runs a benchmark script's child mode (``module``); returns the JSON of its last line of
    output, or (a list) what it said last when it failed or ran past ``timeout`` seconds."""
    done = run(module(name, *arguments), timeout=timeout, env=env, cwd=cwd)
    if done.code != 0:
        return done.last_words()
    return done.json()


class Polygraph:
    """Runs ``polygraph`` commands as ``python -P -m polygraph_logic.cli`` of this interpreter,
    each a child process (``run``).  ``python_path``: measure the polygraph_logic of another
    checkout (put first on the children's PYTHONPATH; ``-P`` keeps the current folder from
    shadowing it)."""

    def __init__(self, python_path: str | None = None, timeout: float | None = None, tail: int | None = None):
        """``tail``: keep the last ``tail`` bytes of each command's output (``run``)."""
        self.tail = tail
        self.env = dict(os.environ)
        if python_path:
            self.env["PYTHONPATH"] = os.pathsep.join(p for p in (python_path, self.env.get("PYTHONPATH")) if p)
        self.timeout = timeout

    def __call__(self, *arguments: str) -> Run:
        return run([sys.executable, "-P", "-m", "polygraph_logic.cli", *map(str, arguments)], env=self.env,
                   timeout=self.timeout, tail=self.tail)

    def python(self, code: str, *arguments: str) -> Run:
        return run([sys.executable, "-P", "-c", code, *map(str, arguments)], env=self.env, timeout=self.timeout)

    def code(self) -> str:
        """Returns where the measured polygraph_logic is imported from."""
        found = self.python("import polygraph_logic; print(polygraph_logic.__file__)").check("python")
        return str(Path(found.stdout.strip()).parent)


# --- calls in this process -----------------------------------------------------------------

def timings(call: Callable[[], object], repeat: int = 1, gc_off: bool = True) -> tuple[list[float], object]:
    """Returns the wall seconds of each of ``repeat`` calls and the last call's result.

    ``gc_off``: the garbage collector is off while they run (as timeit does: a collection of the
    whole process's objects would otherwise land on whichever call happens to trigger it);
    leave it on for calls that make much cyclic garbage (whole builds)."""
    seconds, result = [], None
    enabled = gc.isenabled()
    if gc_off:
        gc.disable()
    try:
        for _ in range(repeat):
            started = time.perf_counter()
            result = call()
            seconds.append(time.perf_counter() - started)
    finally:
        if enabled:
            gc.enable()
    return seconds, result


def timed(call: Callable[[], object], repeat: int = 1, gc_off: bool = True) -> float:
    """Returns the best wall time of ``repeat`` calls, in seconds (see ``timings``)."""
    return min(timings(call, repeat, gc_off)[0])


class Stopwatch:
    """Seconds since it was made (or last ``restart``): ``clock = Stopwatch(); ...; clock()``."""

    def __init__(self):
        self.started = time.perf_counter()

    def __call__(self) -> float:
        return time.perf_counter() - self.started

    def restart(self) -> float:
        """Returns the seconds so far and starts again."""
        now = time.perf_counter()
        seconds, self.started = now - self.started, now
        return seconds


# --- figures ---------------------------------------------------------------------------------

def median(values: Iterable[float]) -> float:
    return statistics.median(list(values))


def ratio(numerator: float | None, denominator: float | None) -> float:
    """numerator / denominator; NaN when either is missing or the denominator is 0."""
    if numerator is None or not denominator:
        return float("nan")
    return numerator / denominator


def summarise(runs: list[Run]) -> dict:
    """The median and best wall time of finished runs, their largest peak RSS and each run's time."""
    peaks = [r.peak_mib for r in runs if r.peak_mib is not None]
    return {"seconds": median(r.seconds for r in runs), "best": min(r.seconds for r in runs),
            "peak_mib": max(peaks) if peaks else None, "runs": [round(r.seconds, 3) for r in runs]}


def repeated(call: Callable[[], Run], repeat: int, what: str) -> tuple[dict, Run]:
    """Runs ``call`` ``repeat`` times, each checked (``Run.check``); returns ``summarise`` of the
    runs and the last run."""
    runs = [call().check(what) for _ in range(repeat)]
    return summarise(runs), runs[-1]


def slope(points: list[tuple[float, float]]) -> float | None:
    """Returns the least-squares slope of log(y) against log(x), None with fewer than two points."""
    points = [(math.log(x), math.log(y)) for x, y in points if x and y]
    if len(points) < 2 or len({x for x, _ in points}) < 2:
        return None
    mx, my = statistics.fmean(x for x, _ in points), statistics.fmean(y for _, y in points)
    return sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)


def mib(value: float | None) -> str:
    return "?" if value is None else f"{value:,.0f} MiB"


def table(headers: Sequence[str], rows: Iterable[Sequence], indent: str = "") -> list[str]:
    """Returns the lines of an aligned table: the first column left-aligned, the others right-aligned
    (cells are printed as given: format numbers before)."""
    cells = [[str(c) for c in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells if i < len(row)) for i in range(len(cells[0]))]
    lines = []
    for row in cells:
        parts = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:])]
        lines.append((indent + "  ".join(parts)).rstrip())
    return lines


def print_table(headers: Sequence[str], rows: Iterable[Sequence], out: Callable[[str], None] = print,
                indent: str = "") -> None:
    for line in table(headers, rows, indent):
        out(line)
