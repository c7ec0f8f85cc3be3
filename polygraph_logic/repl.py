"""``polygraph repl GRAPH``: what-if deletions interactively, one Session method a command.

Line editing, tab completion of sources, relations and artifact ids, and a history
kept across sessions (``$POLYGRAPH_HISTORY``, default ``~/.polygraph_history``) come
from readline where the platform has it.
"""

from __future__ import annotations

import cmd
import os
import sys
from pathlib import Path

from .errors import PolygraphError
from .session import Session
from .whatif import POLICIES, Outcome


def _history_file() -> Path:
    return Path(os.environ.get("POLYGRAPH_HISTORY", Path.home() / ".polygraph_history"))


class Repl(cmd.Cmd):
    """The command loop; each ``do_`` method calls the Session and prints its answer."""

    intro = "polygraph repl: type help for commands, quit to leave. The graph file is never changed."
    prompt = "polygraph> "

    def __init__(self, session: Session, stdin=None, stdout=None):
        super().__init__(stdin=stdin, stdout=stdout)
        self.session = session
        if stdin is not None:
            self.use_rawinput = False
        self.exact = False

    # --- output ----------------------------------------------------------------------
    def _say(self, text: str = "") -> None:
        self.stdout.write(text + "\n")

    def _diff(self, outcome: Outcome, listing: bool = False) -> None:
        self._say(f"deletion: {outcome.deletion} ({len(outcome.deleted)} assertions); policy {outcome.policy}; "
                  f"{outcome.elapsed_ms:.2f} ms")
        for layer, counts in outcome.by_layer().items():
            self._say(f"  {layer:9} touched {counts['touched']:>6}  dead {counts['dead']:>6}  kept {counts['kept']:>6}")
        for summary, entry in sorted(outcome.summaries.items()):
            self._say(f"  {summary}: {entry['status']} ({entry['dead_sentences']}/{entry['sentences']} sentences dead)")
        if outcome.settled:
            self._say(f"  re-derivation revived {outcome.revived} of {outcome.settled} capped dead verdicts")
        if listing:
            for artifact in outcome.dead:
                self._say(f"  - {artifact}")

    def onecmd(self, line: str) -> bool:
        try:
            return super().onecmd(line)
        except PolygraphError as error:
            self._say(f"error: {error}")
        except (KeyError, ValueError) as error:
            self._say(f"error: {error.args[0] if error.args else error}")
        return False

    def emptyline(self) -> bool:
        return False

    def default(self, line: str) -> None:
        self._say(f"unknown command {line.split()[0]!r}; type help")

    # --- commands --------------------------------------------------------------------
    def do_retract(self, arg: str) -> None:
        """retract SOURCE: add every assertion of SOURCE to the deletion"""
        self._diff(self.session.retract(arg.strip()))

    def do_revoke(self, arg: str) -> None:
        """revoke RELATION: add every assertion with predicate RELATION to the deletion"""
        self._diff(self.session.revoke(arg.strip()))

    def do_delete(self, arg: str) -> None:
        """delete ASSERTION: add one assertion to the deletion"""
        self._diff(self.session.delete(arg.strip()))

    def do_restore(self, arg: str) -> None:
        """restore NAME: take a source, relation or assertion back out of the deletion"""
        self._diff(self.session.restore(arg.strip()))

    def do_undo(self, arg: str) -> None:
        """undo: return to the deletion before the last change"""
        self._diff(self.session.undo())

    def do_redo(self, arg: str) -> None:
        """redo: re-apply the last undone change"""
        self._diff(self.session.redo())

    def do_diff(self, arg: str) -> None:
        """diff [list]: touched, dead and kept artifacts per layer (list: name the dead ones)"""
        self._diff(self.session.diff(exact=self.exact), listing=arg.strip() == "list")

    def do_policy(self, arg: str) -> None:
        """policy NAME: deployed, trust-all, flat or distrust:LAYER"""
        self._diff(self.session.set_policy(arg.strip()))

    def do_exact(self, arg: str) -> None:
        """exact on|off: settle dead verdicts on capped labels by re-derivation in diff"""
        self.exact = arg.strip() != "off"
        self._say(f"exact re-derivation {'on' if self.exact else 'off'}")

    def do_why(self, arg: str) -> None:
        """why ARTIFACT: support sets with sources, and a derivation tree"""
        from .cli.whatif import print_why
        print_why(self.session.why(arg.strip()), self.stdout)

    def do_whynot(self, arg: str) -> None:
        """whynot ARTIFACT: which deleted sources broke each support set"""
        from .cli.whatif import print_whynot
        print_whynot(self.session.whynot(arg.strip()), self.stdout)

    def do_robustness(self, arg: str) -> None:
        """robustness ARTIFACT: fewest sources that kill it, independent sources, echo"""
        from .cli.whatif import print_robustness
        print_robustness(self.session.robustness(arg.strip()), self.stdout)

    def do_top(self, arg: str) -> None:
        """top [N]: the sources whose retraction kills the most artifacts"""
        for row in self.session.top(int(arg) if arg.strip() else 10):
            layers = ", ".join(f"{k} {v}" for k, v in sorted(row["by_layer"].items()))
            self._say(f"  {row['source']:30} {row['dead']:>6}  ({layers})")

    def do_apply(self, arg: str) -> None:
        """apply PATH: write the graph with the deletion applied as a new snapshot"""
        if not arg.strip():
            raise PolygraphError("missing_path", "apply needs the path of the new snapshot")
        outcome = self.session.apply(arg.strip())
        self._say(f"wrote {arg.strip()}: {len(outcome.dead)} artifacts removed, {len(outcome.deleted)} assertions")

    def do_history(self, arg: str) -> None:
        """history: the commands that changed this session"""
        for i, command in enumerate(self.session.history, 1):
            self._say(f"  {i:3} {command}")

    def do_quit(self, arg: str) -> bool:
        """quit: leave the session (the graph file is unchanged)"""
        return True

    do_exit = do_quit

    def do_EOF(self, arg: str) -> bool:
        self._say()
        return True

    # --- completion ------------------------------------------------------------------
    def _complete(self, names, text: str) -> list[str]:
        return sorted(n for n in names if n.startswith(text))

    def complete_retract(self, text, line, begin, end):
        return self.session.graph.complete("source", text)

    def complete_revoke(self, text, line, begin, end):
        return self.session.graph.complete("predicate", text)

    def complete_delete(self, text, line, begin, end):
        return self.session.graph.complete("id", text)

    def complete_restore(self, text, line, begin, end):
        d = self.session.deletion
        return self._complete(d.sources + d.relations + d.assertions, text)

    def complete_policy(self, text, line, begin, end):
        return self._complete(POLICIES, text)

    def complete_why(self, text, line, begin, end):
        return self.session.graph.artifact_ids(text, limit=200)

    complete_whynot = complete_robustness = complete_why


def run_repl(path: str, policy: str = "trust-all", stdin=None, stdout=None) -> int:
    """Runs the REPL on a graph file until quit or end of input; returns the exit status."""
    session = Session.open(path, policy)
    repl = Repl(session, stdin=stdin, stdout=stdout)
    readline = None
    if stdin is None and sys.stdin.isatty():
        try:
            import readline
            readline.set_completer_delims(" \t\n")  # ids contain ':' and '#'
            history = _history_file()
            if history.exists():
                readline.read_history_file(history)
        except (ImportError, OSError):
            readline = None
    try:
        repl.cmdloop()
    finally:
        if readline is not None:
            try:
                readline.set_history_length(1000)
                readline.write_history_file(_history_file())
            except OSError:
                pass
    return 0
