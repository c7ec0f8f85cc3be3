"""``polygraph repl GRAPH``: what-if deletions interactively, one Session method a command.

Line editing, tab completion of sources, relations and artifact ids, and a history
kept across sessions (``$POLYGRAPH_HISTORY``, default ``~/.polygraph_history``) come
from readline where the platform has it.
"""

from __future__ import annotations

import cmd
import os
import shlex
import sys
from pathlib import Path

from polygraph_logic.cli.printing import print_robustness, print_why, print_whynot
from polygraph_logic.errors import PolygraphError, visible
from polygraph_logic.query.session import Session
from polygraph_logic.query.whatif import POLICIES, Outcome


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
        self._say(f"deletion: {outcome.deletion.summary()} ({len(outcome.deleted)} assertions); policy {outcome.policy}; "
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
        """Runs one command; an error prints as the CLI prints it, ``code: message``."""
        try:
            return super().onecmd(line)
        except PolygraphError as error:
            self._say(str(error))
        except KeyError as error:  # the CLI's mapping (cli.main): a name looked up and not found
            self._say(f"not_found: {visible(error.args[0] if error.args else error)}")
        except UnicodeError as error:  # a lone surrogate from the terminal, as the CLI reports it
            self._say(f"encoding_error: {error.reason} ({visible(repr(error.object[error.start:error.end]))}): "
                      "text must be UTF-8 without lone surrogates")
        except ValueError as error:
            self._say(f"bad_argument: {visible(error)}")
        return False

    def emptyline(self) -> bool:
        return False

    def default(self, line: str) -> bool:
        if line.strip() == "EOF":  # what cmd sends at the end of input; not a command to list
            self._say()
            return True
        self._say(f"unknown_command: {line.split()[0]!r} is not a command; type help")
        return False

    # --- arguments -------------------------------------------------------------------
    def _arguments(self, command: str, arg: str, least: int, most: int) -> list[str]:
        """Returns the words of ``arg`` (quotes group a name holding spaces), or raises
        ``bad_argument`` with the command's usage line when there are too few or too many."""
        try:
            words = shlex.split(arg)
        except ValueError as error:
            raise PolygraphError("bad_argument", f"{error}; usage: {self._usage(command)}") from None
        if not least <= len(words) <= most:
            wanted = ("no argument" if most == 0 else f"{least} argument" if least == most == 1
                      else f"{least} to {most} arguments")
            raise PolygraphError("bad_argument", f"{command} takes {wanted}, got {len(words)}; "
                                                 f"usage: {self._usage(command)}")
        return words

    def _one(self, command: str, arg: str) -> str:
        return self._arguments(command, arg, 1, 1)[0]

    def _usage(self, command: str) -> str:
        return (getattr(self, f"do_{command}").__doc__ or command).split(":")[0]

    def _choice(self, command: str, arg: str, choices: tuple[str, ...]) -> str:
        word = self._one(command, arg)
        if word not in choices:
            raise PolygraphError("bad_argument", f"{command} takes {' or '.join(choices)}, not {word!r}; "
                                                 f"usage: {self._usage(command)}")
        return word

    # --- commands --------------------------------------------------------------------
    def do_retract(self, arg: str) -> None:
        """retract SOURCE: add every assertion of SOURCE to the deletion (quote a name with spaces)"""
        self._diff(self.session.retract(self._one("retract", arg)))

    def do_revoke(self, arg: str) -> None:
        """revoke RELATION: add every assertion with predicate RELATION to the deletion"""
        self._diff(self.session.revoke(self._one("revoke", arg)))

    def do_delete(self, arg: str) -> None:
        """delete ASSERTION: add one assertion to the deletion"""
        self._diff(self.session.delete(self._one("delete", arg)))

    def do_restore(self, arg: str) -> None:
        """restore NAME: take a source, relation or assertion back out of the deletion"""
        self._diff(self.session.restore(self._one("restore", arg)))

    def do_undo(self, arg: str) -> None:
        """undo: return to the deletion before the last change"""
        self._arguments("undo", arg, 0, 0)
        self._diff(self.session.undo())

    def do_redo(self, arg: str) -> None:
        """redo: re-apply the last undone change"""
        self._arguments("redo", arg, 0, 0)
        self._diff(self.session.redo())

    def do_diff(self, arg: str) -> None:
        """diff [list]: touched, dead and kept artifacts per layer (list: name the dead ones)"""
        listing = bool(self._arguments("diff", arg, 0, 1)) and self._choice("diff", arg, ("list",)) == "list"
        self._diff(self.session.diff(exact=self.exact), listing=listing)

    def do_policy(self, arg: str) -> None:
        """policy NAME: deployed, trust-all, flat or distrust:LAYER"""
        self._diff(self.session.set_policy(self._one("policy", arg)))

    def do_exact(self, arg: str) -> None:
        """exact on|off: settle dead verdicts on capped labels by re-derivation in diff"""
        self.exact = self._choice("exact", arg, ("on", "off")) == "on"
        self._say(f"exact re-derivation {'on' if self.exact else 'off'}")

    def do_why(self, arg: str) -> None:
        """why ARTIFACT: support sets with sources, and a derivation tree"""
        print_why(self.session.why(self._one("why", arg)), self.stdout)

    def do_whynot(self, arg: str) -> None:
        """whynot ARTIFACT: which deleted sources broke each support set"""
        print_whynot(self.session.whynot(self._one("whynot", arg)), self.stdout)

    def do_robustness(self, arg: str) -> None:
        """robustness ARTIFACT: fewest sources that kill it, support sets with no source or no origin in common, echo"""
        print_robustness(self.session.robustness(self._one("robustness", arg)), self.stdout)

    def do_top(self, arg: str) -> None:
        """top [N]: the N sources (default 10) whose retraction kills the most artifacts (with a deletion under way: beyond it, among the sources it does not retract)"""
        words = self._arguments("top", arg, 0, 1)
        if words and not (words[0].isdigit() and int(words[0]) > 0):
            raise PolygraphError("bad_argument", f"top takes a positive whole number, not {words[0]!r}; "
                                                 f"usage: {self._usage('top')}")
        if self.session.deletion:
            self._say(f"  beyond the current deletion ({self.session.deletion}):")
        for row in self.session.top(int(words[0]) if words else 10):
            layers = ", ".join(f"{k} {v}" for k, v in sorted(row["by_layer"].items()))
            self._say(f"  {row['source']:30} {row['dead']:>6}  ({layers})")

    def do_apply(self, arg: str) -> None:
        """apply PATH: write the graph with the deletion applied as a new snapshot (the folder must exist)"""
        path = self._one("apply", arg)
        outcome = self.session.apply(path)
        removed = ", ".join(f"{counts['dead']} {layer}" for layer, counts in outcome.by_layer().items()
                            if counts["dead"])
        if not outcome.deleted:
            what = "a copy of the graph (the deletion is empty)"
        else:
            what = (f"the graph without the {len(outcome.deleted)} assertion(s) of {outcome.deletion} and the "
                    f"{len(outcome.dead)} artifact(s) that die under {outcome.policy}"
                    + (f" ({removed})" if removed else ""))
        self._say(f"wrote the new graph file {path}: {what}; {self.session.graph.path} is unchanged")

    def do_history(self, arg: str) -> None:
        """history: the commands that changed this session"""
        self._arguments("history", arg, 0, 0)
        for i, command in enumerate(self.session.history, 1):
            self._say(f"  {i:3} {command}")

    def do_quit(self, arg: str) -> bool:
        """quit: leave the session (the graph file is unchanged)"""
        return True

    do_exit = do_quit

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


def run_repl(path: str, policy: str = "trust-all", stdin=None, stdout=None, at: int | None = None) -> int:
    """Runs the REPL on a graph file (at version ``at``, if given) until quit or end of input; returns the
    exit status."""
    session = Session.open(path, policy, at=at)
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
