"""Re-derivation oracles: one answer per draw, "would the constructor still produce this?"

An oracle has a ``name`` (recorded in AUDIT.json) and ``rederive(task) -> bool``: True
when the draw reproduces the artifact from the surviving evidence alone. A draw that
yields no usable answer raises FailedDraw; the audit records it as failed, never as
"not reproduced". Three oracles:

- ScriptedOracle: a Python callable (tests, hand-worked examples, other tools);
- ReplayOracle: recorded answers, from a previous AUDIT.json or from JSON Lines of
  ``{"deletion", "artifact", "draw", "verdict"}``, so an audit re-runs without a key;
- ModelOracle: a thin adapter over polygraph_logic.llm's ModelClient (answer_all, then complete).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Protocol

from polygraph_logic.errors import PolygraphError, Position
from polygraph_logic.audit.deletions import deletion_key
from polygraph_logic.audit.tasks import Task

AUDIT_FORMAT = "polygraph-audit/1"


class FailedDraw(PolygraphError):
    """A draw that produced no usable answer; ``code`` says why (refusal, quota_banner, ...)."""


class Oracle(Protocol):
    """Answers re-derivation tasks, one draw at a time.

    An oracle may also have ``prepare(tasks, progress)``: the audit then hands it every task
    before the first ``rederive``, so that it can ask them together (ModelOracle does: one
    Message Batch, or calls in parallel).
    """

    name: str

    def rederive(self, task: Task) -> bool:
        """Returns True when this draw reproduces the artifact; raises FailedDraw when it has no answer."""


class ScriptedOracle:
    """Answers with a Python callable ``answer(task) -> bool`` (which may raise FailedDraw)."""

    name = "scripted"

    def __init__(self, answer: Callable[[Task], bool]):
        self.answer = answer

    def rederive(self, task: Task) -> bool:
        return bool(self.answer(task))


class ReplayOracle:
    """Answers from recorded draws; a missing answer is an error naming it.

    ``path`` is a previous AUDIT.json (its draws, failed ones included) or JSON Lines of
    ``{"deletion": NAME or {"sources": [...], ...}, "artifact": ID, "draw": I, "verdict":
    true | false | null}`` (null: a failed draw, whose optional ``"failure"`` names the
    reason). A deletion is looked up by name, then by its sources, relations and
    assertions as sets.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.name = f"replay:{path}"
        self.prompt: str | None = None  # the prompt family the answers were given under, when recorded
        self.answers: dict[tuple, tuple[bool | None, str | None]] = {}
        try:
            text = self.path.read_text(encoding="utf-8")
        except OSError as error:
            raise PolygraphError("file_error", f"cannot read replay file {self.path}: "
                                               f"{error.strerror or error}") from None
        try:
            document = json.loads(text)
        except json.JSONDecodeError:
            document = None
        if isinstance(document, dict) and document.get("format") == AUDIT_FORMAT:
            try:
                self._load_audit(document)
            except (KeyError, TypeError, AttributeError) as error:
                raise PolygraphError("invalid_replay", f"{self.path} is not a well-formed {AUDIT_FORMAT} file "
                                                       f"(at {error!r})") from None
        else:
            self._load_lines(text)

    def _record(self, deletion, artifact: str, draw: int, answer: bool | None, code: str | None = None) -> None:
        for ref in _refs(deletion):
            self.answers[ref, artifact, draw] = (answer, code)

    def _load_audit(self, document: dict) -> None:
        self.prompt = document.get("prompt")
        for entry in document.get("deletions", ()):
            for artifact in entry.get("artifacts", ()):
                failures = {f["draw"]: f["code"] for f in artifact.get("failures", ())}
                for draw, answer in enumerate(artifact["draws"]):
                    for deletion in (entry["name"], entry["deletion"]):
                        self._record(deletion, artifact["artifact"], draw, answer, failures.get(draw))

    def _load_lines(self, text: str) -> None:
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            where = Position(str(self.path), number, 1)
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise PolygraphError("invalid_replay", f"not valid JSON: {error.msg}; expected an AUDIT.json "
                                                       "or one JSON object a line", where) from None
            if (not isinstance(record, dict) or not {"deletion", "artifact", "draw", "verdict"} <= set(record)
                    or not (record["verdict"] is None or isinstance(record["verdict"], bool))
                    or not isinstance(record["draw"], int)):
                raise PolygraphError("invalid_replay", 'expected {"deletion", "artifact", "draw": int, '
                                                       '"verdict": true|false|null}', where)
            self._record(record["deletion"], record["artifact"], record["draw"], record["verdict"],
                         record.get("failure"))

    def rederive(self, task: Task) -> bool:
        if self.prompt is not None and self.prompt != task.prompt:
            raise PolygraphError("replay_mismatch", f"{self.path} recorded answers to the {self.prompt!r} prompt, "
                                                    f"not to {task.prompt!r}")
        for ref in (("name", task.deletion.name), ("set", task.deletion.key)):
            found = self.answers.get((ref, task.artifact, task.draw))
            if found is not None:
                answer, code = found
                if answer is None:
                    raise FailedDraw(code or "failed_draw", f"draw {task.draw} of {task.artifact} failed when recorded")
                return answer
        raise PolygraphError("replay_missing", f"{self.path} has no answer for deletion {task.deletion.name!r}, "
                                               f"artifact {task.artifact!r}, draw {task.draw}")


def _refs(deletion) -> list[tuple]:
    if isinstance(deletion, str):
        return [("name", deletion)]
    return [("set", deletion_key(deletion))]


class ModelOracle:
    """Puts each draw to a model through ModelClient (the contract of polygraph_logic.llm).

    The template is the task's (rederive-merge, ..., blind-sentence), its placeholders
    ``{artifact}`` and ``{evidence}``, the schema "rederivation"; the draw index goes to
    the client so that draws are distinct samples (and distinct cache entries). A guard or
    parse failure (quota banner, refusal, empty answer, schema violation, unknown citation)
    is a failed draw, as is a batch request that errored or expired; anything else (no key,
    the API unreachable) stops the audit. ``prepare`` asks every task at once with
    ``answer_all`` (a batch in the client's batch mode, else bounded concurrency).
    """

    def __init__(self, client, model: str | None = None):
        from polygraph_logic.llm import (  # the model SDK: loaded only for a model oracle
            EmptyAnswer,
            QuotaBanner,
            Refusal,
            SchemaViolation,
            UnknownCitation,
            render_evidence,
        )

        self.client = client
        self._failures = (QuotaBanner, Refusal, EmptyAnswer, SchemaViolation, UnknownCitation)
        self._render = render_evidence
        self.name = f"anthropic:{model or getattr(client, 'model', None) or 'default'}"
        self._prepared: dict[tuple, object] = {}

    def _question(self, task: Task):
        from polygraph_logic.llm import Question  # the model layer: loaded only for a model oracle

        return Question(task.template, {"artifact": task.text, "evidence": self._render(task.evidence)},
                        task.draw, "rederivation")

    def prepare(self, tasks: list[Task], progress: Callable[[int, int], None] | None = None) -> None:
        """Asks every task at once (see the class docstring); ``rederive`` then reads the answers.
        A client with only ``complete`` is asked draw by draw instead."""
        if not hasattr(self.client, "answer_all"):
            return
        answers = self.client.answer_all([self._question(task) for task in tasks], progress=progress)
        self._prepared = {_task_key(task): answer for task, answer in zip(tasks, answers)}

    def rederive(self, task: Task) -> bool:
        if _task_key(task) in self._prepared:
            completion = self._prepared[_task_key(task)]
            if isinstance(completion, self._failures) or (isinstance(completion, PolygraphError)
                                                          and completion.code.startswith("batch_")):
                raise FailedDraw(completion.code, completion.message) from completion
            if isinstance(completion, PolygraphError):
                raise completion
        else:
            q = self._question(task)
            try:
                completion = self.client.complete(q.template, q.variables, draw=q.draw, schema=q.schema)
            except self._failures as error:
                raise FailedDraw(error.code, error.message) from error
        answer = completion.data.get("verdict") if isinstance(completion.data, dict) else None
        if not isinstance(answer, bool):
            raise FailedDraw("schema_violation", f"the answer to {task.template} has no true/false verdict")
        return answer


def _task_key(task: Task) -> tuple:
    return (task.deletion.key, task.artifact, task.draw)
