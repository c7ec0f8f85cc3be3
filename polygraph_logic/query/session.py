"""An interactive what-if session: a deletion built up step by step, with undo and redo.

Every REPL command is a method here, so a notebook can do the same:

    >>> s = Session("figure1.graph")
    >>> s.retract("PMID:39973430"); s.diff().by_layer()
    >>> s.why("merge:mapk-erk"); s.undo(); s.apply("figure1-cleaned.graph")

The stored graph is never changed; ``apply`` writes a copy with the deletion as one more version.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from polygraph_logic.errors import PolygraphError
from polygraph_logic.query.explain import Explainer, robustness, top_sources, why, whynot
from polygraph_logic.graph.store.graph_file import Graph
from polygraph_logic.query.replay import apply_version
from polygraph_logic.query.whatif import Deletion, Outcome, check_policy, what_if


@dataclass
class Session:
    """A graph, the current deletion, its undo/redo stacks and the command history."""

    graph: Graph
    policy: str = "trust-all"
    deletion: Deletion = field(default_factory=Deletion)
    history: list[str] = field(default_factory=list)
    _undo: list[Deletion] = field(default_factory=list, repr=False)
    _redo: list[Deletion] = field(default_factory=list, repr=False)
    _explainer: Explainer | None = field(default=None, repr=False)

    @classmethod
    def open(cls, path: str | Path, policy: str = "trust-all", at: int | None = None) -> "Session":
        """Opens a graph file for a session (at an old version, with ``at``)."""
        return cls(Graph(path, at=at), check_policy(policy))

    # --- building the deletion ---------------------------------------------------------
    def _change(self, deletion: Deletion, command: str) -> Outcome:
        deletion.numbers(self.graph)  # unknown names raise before anything changes
        self._undo.append(self.deletion)
        self._redo.clear()
        self.deletion = deletion
        self.history.append(command)
        return self.diff()

    def retract(self, source: str) -> Outcome:
        """Adds every assertion of a source to the deletion; returns the new diff."""
        return self._change(self.deletion + Deletion(sources=(source,)), f"retract {source}")

    def revoke(self, relation: str) -> Outcome:
        """Adds every assertion with a predicate to the deletion."""
        return self._change(self.deletion + Deletion(relations=(relation,)), f"revoke {relation}")

    def delete(self, assertion: str) -> Outcome:
        """Adds one assertion to the deletion."""
        return self._change(self.deletion + Deletion(assertions=(assertion,)), f"delete {assertion}")

    def restore(self, name: str) -> Outcome:
        """Takes a source, relation or assertion back out of the deletion."""
        d = self.deletion
        if name not in d.sources + d.relations + d.assertions:
            raise PolygraphError("not_deleted", f"{name!r} is not part of the current deletion ({d})")
        restored = Deletion(tuple(s for s in d.sources if s != name), tuple(r for r in d.relations if r != name),
                            tuple(a for a in d.assertions if a != name))
        return self._change(restored, f"restore {name}")

    def undo(self) -> Outcome:
        """Returns to the deletion before the last change."""
        if not self._undo:
            raise PolygraphError("nothing_to_undo", "nothing to undo")
        self._redo.append(self.deletion)
        self.deletion = self._undo.pop()
        self.history.append("undo")
        return self.diff()

    def redo(self) -> Outcome:
        """Re-applies the last undone change."""
        if not self._redo:
            raise PolygraphError("nothing_to_redo", "nothing to redo")
        self._undo.append(self.deletion)
        self.deletion = self._redo.pop()
        self.history.append("redo")
        return self.diff()

    def set_policy(self, policy: str) -> Outcome:
        """Changes the cleanup policy the diff uses."""
        self.policy = check_policy(policy)
        self.history.append(f"policy {policy}")
        return self.diff()

    # --- looking at it ---------------------------------------------------------------
    def diff(self, exact: bool = False) -> Outcome:
        """Returns what the current deletion does under the session's policy."""
        return what_if(self.graph, self.deletion, self.policy, exact=exact)

    @property
    def explainer(self) -> Explainer:
        if self._explainer is None:
            self._explainer = Explainer(self.graph)
        return self._explainer

    def why(self, artifact: str, trees: int = 1) -> dict:
        return why(self.graph, self._known(artifact), self.explainer, trees)

    def whynot(self, artifact: str) -> dict:
        return whynot(self.graph, self._known(artifact), self.deletion, self.policy)

    def robustness(self, artifact: str) -> dict:
        return robustness(self.graph, self._known(artifact))

    def top(self, limit: int = 10) -> list[dict]:
        """The ``limit`` sources whose retraction kills the most artifacts; with a deletion under
        way, the sources it does not retract yet, ranked by what each kills beyond it."""
        return top_sources(self.graph, limit, self.policy, beyond=self.deletion or None)

    def _known(self, artifact: str) -> str:
        if not self.graph.has_artifact(artifact):
            raise PolygraphError("unknown_artifact",
                                 f"no artifact named {artifact!r}{self.graph.artifact_hint(artifact)}")
        return artifact

    # --- applying it -----------------------------------------------------------------
    def apply(self, path: str | Path) -> Outcome:
        """Writes the graph with the deletion applied to ``path`` (never in place): a copy of the
        graph file, history and all, with one more version recording the deletion and policy.

        Dead artifacts are dropped, labels lose the deleted assertions, trimmed summaries
        keep their surviving sentences; what they were stays readable (``--at``) in the
        copy, and the original file is unchanged.  Returns the outcome applied.
        """
        graph = self.graph
        target = Path(path).resolve()
        if target == graph.path.resolve():
            raise PolygraphError("in_place", "apply writes a new snapshot; choose a path other than the graph's own")
        if graph.at is not None:
            raise PolygraphError("bad_argument", f"the session reads version {graph.at}; apply a deletion to the "
                                                 "latest version")
        outcome = self.diff()
        apply_version(target, outcome, copy_of=graph.path, command=f"apply {path}")
        self.history.append(f"apply {path}")
        return outcome
