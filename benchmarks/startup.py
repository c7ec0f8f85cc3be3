"""How light the core is: `polygraph --version` and `--help` as whole processes, and the installed size.

    python benchmarks/startup.py [--repeat 7]

Prints the wall time of each command (the best and the median of ``--repeat`` fresh
processes; target 0.3 s) and its least CPU time (user + system: what the wall time comes
down to on an idle machine), beside a bare ``python -c pass`` measured in the same run, the
heavy modules each one imports (none of numpy, rdflib, anthropic, sympy, matplotlib is
expected), and the size on disk of the installed distributions the core needs against the
core with each extra (the dependency closure read from the installed packages' metadata;
nothing is downloaded). Times are printed, never asserted.
"""

from __future__ import annotations

import argparse
import re
import resource
import statistics
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

HEAVY = ("numpy", "rdflib", "anthropic", "sympy", "matplotlib", "pyDatalog", "rank_bm25", "lark")
TARGET = 0.3


def wall(argv: list[str], repeat: int) -> tuple[list[float], list[float]]:
    """Wall times and CPU times (user + system, what an idle machine's wall time approaches) of fresh runs."""
    times, cpu = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return times, cpu


def imported(flag: str) -> list[str]:
    script = ("import sys; sys.argv = ['polygraph', %r]\nfrom polygraph_logic.cli import main\n"
              "try:\n    main()\nexcept SystemExit:\n    pass\n"
              "print(' '.join(m for m in %r if m in sys.modules), file=sys.stderr)") % (flag, HEAVY)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    return result.stderr.split()


def _name(requirement: str) -> str:
    return re.split(r"[\s;<>=!~\[(]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def closure(names: list[str]) -> set[str]:
    """The installed distributions ``names`` need, themselves included (extras' markers skipped)."""
    seen: set[str] = set()
    todo = [_name(n) for n in names]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        seen.add(name)
        todo.extend(_name(r) for r in dist.requires or () if "extra ==" not in r)
    return seen


def size(names: set[str]) -> int:
    total = 0
    for name in names:
        for file in metadata.distribution(name).files or ():
            path = Path(file.locate())
            if path.is_file():
                total += path.stat().st_size
    return total


def _requirements() -> list[str] | None:
    """The project's requirements in importlib.metadata's form: from the checkout's pyproject.toml
    when this script sits in one (the installed copy may be older), else from the installed metadata."""
    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    if pyproject.is_file():
        import tomllib
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        return [*project.get("dependencies", ()),
                *(f'{r}; extra == "{extra}"' for extra, rs in project.get("optional-dependencies", {}).items()
                  for r in rs)]
    try:
        return list(metadata.distribution("polygraph_logic").requires or ())
    except metadata.PackageNotFoundError:
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7, help="fresh processes per command (default 7)")
    args = parser.parse_args(argv)
    command = [sys.executable, "-m", "polygraph_logic.cli"]
    rows = [("python -c pass", [sys.executable, "-c", "pass"]),
            ("polygraph --version", [*command, "--version"]), ("polygraph --help", [*command, "--help"])]
    print(f"{'command':22} {'best s':>7} {'median s':>9} {'cpu s':>6}  heavy modules imported")
    for label, argv_ in rows:
        times, cpu = wall(argv_, args.repeat)
        heavy = "" if label.startswith("python") else (" ".join(imported(argv_[-1])) or "none")
        mark = "" if label.startswith("python") else ("  (target 0.3 s: met)" if min(times) <= TARGET
                                                      else "  (target 0.3 s: missed)")
        print(f"{label:22} {min(times):7.3f} {statistics.median(times):9.3f} {min(cpu):6.3f}  {heavy}{mark}")
    requires = _requirements()
    if requires is None:
        print("installed size: no pyproject.toml beside this script and polygraph_logic is not installed; not measured")
        return 0
    core = [r for r in requires if "extra ==" not in r]
    core_set = closure(core)
    print(f"installed size of the core's dependencies ({len(core_set)} distributions): "
          f"{size(core_set) / 2**20:.1f} MiB")
    extras = sorted({m.group(1) for r in requires for m in [re.search(r'extra == "([^"]+)"', r)] if m})
    for extra in extras:
        wanted = [r.split(";")[0] for r in requires if f'extra == "{extra}"' in r]
        added = closure(wanted) - core_set
        missing = [_name(w) for w in wanted if _name(w) not in closure([w])]
        note = f" (not installed here: {', '.join(missing)})" if missing else ""
        print(f"  + [{extra}]: {len(added)} more distributions, {size(added) / 2**20:.1f} MiB{note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
