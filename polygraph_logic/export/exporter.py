"""Exporting a graph file to RDF: the one call the CLI and notebooks make."""

from __future__ import annotations

import io
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable

from polygraph_logic.errors import PolygraphError
from polygraph_logic.files import replacing
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.query.evidence import Requirement
from polygraph_logic.query.whatif import Deletion, check_policy, what_if
from polygraph_logic.export.iris import DEFAULT_BASE, Minter
from polygraph_logic.export.model import ExportModel, Status
from polygraph_logic.export.rdf12 import write_rdf12
from polygraph_logic.export.rdf_writers import FORMATS, write_quads


@dataclass
class ExportReport:
    """What an export wrote."""

    path: str | None
    format: str
    rdf12: bool
    artifacts: int
    assertions: int
    quads: int
    bytes: int
    seconds: float
    deletion: str | None = None
    policy: str | None = None
    dead: int = 0

    @property
    def bytes_per_artifact(self) -> float:
        return self.bytes / self.artifacts if self.artifacts else 0.0

    def summary(self) -> str:
        """Returns one line: what was written where, how big, how fast."""
        where = self.path or "standard output"
        line = (f"wrote {where} ({self.format}{', RDF 1.2' if self.rdf12 else ''}): {self.artifacts} artifacts, "
                f"{self.assertions} assertions, {self.quads:,} quads, {self.bytes:,} bytes "
                f"({self.bytes_per_artifact:,.0f} per artifact) in {self.seconds:.2f} s")
        if self.deletion:
            line += f"; after {self.deletion} under {self.policy}: {self.dead} artifacts dead"
        return line


class _Counting(io.RawIOBase):
    """A write-only stream that counts the bytes it passes on."""

    def __init__(self, target):
        self.target, self.count = target, 0

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.target.write(data)
        self.count += len(data)
        return len(data)


def export_graph(graph: Graph | str | Path, output: str | Path | BinaryIO | None, format: str = "trig", *,
                 base: str = DEFAULT_BASE, deletion: Deletion | None = None, policy: str = "trust-all",
                 exact: bool = False, rdf12: bool = False, facts: bool = True,
                 progress: Callable[[], None] | None = None, require: Requirement | None = None) -> ExportReport:
    """Writes a graph as RDF and returns an ExportReport.

    ``output``: a path (written atomically: a temporary file renamed once complete), a
    binary stream, or None for standard output. With a ``deletion``, every artifact gets
    its status under ``policy`` (see whatif.py) and the deletion invalidates the dead ones.
    ``rdf12`` writes assertions and claims as triple terms (nquads, trig, turtle only);
    ``facts`` False leaves out the non-artifact facts that re-derivation needs. With ``require``
    (query/evidence.py) every artifact says whether it meets the requirement (``pg:meetsRequirement``).
    """
    if format not in FORMATS:
        raise PolygraphError("bad_argument", f"unknown RDF format {format!r}; choose one of {', '.join(FORMATS)}")
    started = time.perf_counter()
    own = not isinstance(graph, Graph)
    graph = Graph(graph) if own else graph
    try:
        status = None
        if deletion or require:
            check_policy(policy)
            outcome = what_if(graph, deletion or Deletion(), policy, exact=exact, require=require)
            status = Status(outcome.deletion, policy, exact, outcome.deleted, frozenset(outcome.dead),
                            require.kinds if require else (), frozenset(u["id"] for u in outcome.unqualified)
                            | frozenset(d["artifact"] for d in outcome.demoted))  # a demoted claim meets nothing
        # N-Quads declare no prefix: there each graph types the entities its PROV relations name
        model = ExportModel(graph, Minter(base), status, facts=facts, rdf12=rdf12, declare=format == "nquads")
        quads = model.quads(progress)
        write = write_rdf12 if rdf12 else write_quads
        if isinstance(output, (str, Path)):
            path = str(output)
            count, size = _write_file(Path(output), lambda out: write(quads, out, format, base))
        else:
            path = None
            stream = _Counting(output if output is not None else _stdout())
            count = write(quads, stream, format, base)
            size = stream.count
        return ExportReport(path, format, rdf12, sum(model.counts.values()), len(graph.assertions), count, size,
                            time.perf_counter() - started, str(deletion) if status else None,
                            policy if status else None, len(status.dead) if status else 0)
    finally:
        if own:
            graph.close()


def _stdout() -> BinaryIO:
    return sys.stdout.buffer


def _write_file(path: Path, write: Callable[[BinaryIO], int]) -> tuple[int, int]:
    """Writes through a temporary file beside ``path``, renamed over it once complete."""
    with replacing(path, ".partial") as temporary:
        with temporary.open("wb", buffering=1 << 20) as out:
            count = write(out)
    return count, path.stat().st_size
