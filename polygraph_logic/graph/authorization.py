"""Authorization: which agents may assert which kinds, read from a policy file.

A policy is a JSON Lines file, one rule a line (docs/ledger.md#authorization)::

    {"agents": ["reviewer-*"], "kinds": ["verification", "user_assertion"]}
    {"agent_types": ["model"], "kinds": ["model_hypothesis"]}
    {"agent_types": ["model"], "kinds": ["source_claim"], "requires": ["text", "acquisition"]}
    {"unattributed": true, "kinds": ["source_claim"]}

A rule lets the agents it names assert the kinds it lists:

- ``agents``: agent ids (graph/agents.py), each a pattern where ``*`` stands for any text and ``?``
  for one character (``reviewer-*``); ``agent_types``: ``model``, ``person``, ``tool``,
  ``organization``. Given both, an agent must match both; ``unattributed: true`` instead covers the
  assertions that name no agent;
- ``kinds``: the kinds it may assert (kinds.py), or ``["*"]`` for every kind;
- ``requires`` (optional): what each such assertion must carry: ``text`` (the evidence span it
  was read from: a claim's receipt), ``acquisition`` (how it was acquired), ``time``;
- ``note`` (optional): a comment for the reader.

An assertion is authorized when some rule lets its agent (or, naming none, an ``unattributed``
rule) assert its kind with what it carries; nothing else is. Without a policy file nothing is
refused: authorization is opt-in. With one, ``build`` and ``add`` refuse every unauthorized
assertion at its file and line (``unauthorized``), and a requirement of kinds (``--require``,
query/evidence.py) counts only authorized assertions. A bad rule is ``bad_policy`` (an unknown
kind ``unknown_kind``) at the policy's file and line.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from polygraph_logic.errors import PolygraphError, Position
from polygraph_logic.graph.agents import AGENT_TYPES, Agent, agent_of
from polygraph_logic.graph.json_lines import Given, read_records, source_of
from polygraph_logic.graph.kinds import DEFAULT_KIND, KINDS
from polygraph_logic.graph.records import LoadError

#: what a rule may require an assertion to carry
REQUIRABLE = ("text", "acquisition", "time")
_KEYS = ("agents", "agent_types", "unattributed", "kinds", "requires", "note")


@dataclass(frozen=True)
class Rule:
    """One line of a policy: who (``agents`` patterns, ``agent_types``, or ``unattributed``) may
    assert which ``kinds``, carrying what (``requires``)."""

    kinds: tuple[str, ...]
    agents: tuple[str, ...] | None = None
    agent_types: tuple[str, ...] | None = None
    unattributed: bool = False
    requires: tuple[str, ...] = ()
    line: int = 0

    def covers(self, agent: Agent | None) -> bool:
        """Whether the rule speaks of this agent (None: an assertion naming none)."""
        if agent is None:
            return self.unattributed
        if self.unattributed:
            return False
        return ((self.agents is None or any(fnmatchcase(agent.id, p) for p in self.agents))
                and (self.agent_types is None or agent.type in self.agent_types))

    def lets(self, agent: Agent | None, kind: str, carried: frozenset[str]) -> bool:
        """Whether the rule authorizes an assertion of ``kind`` by ``agent`` carrying ``carried``."""
        return self.covers(agent) and ("*" in self.kinds or kind in self.kinds) and set(self.requires) <= carried

    def to_json(self) -> dict:
        out: dict = {"kinds": list(self.kinds)}
        if self.unattributed:
            out["unattributed"] = True
        for name in ("agents", "agent_types"):
            if getattr(self, name) is not None:
                out[name] = list(getattr(self, name))
        if self.requires:
            out["requires"] = list(self.requires)
        return out


@dataclass(frozen=True)
class Policy:
    """The rules of a policy file (the module docstring); ``name`` says where it was read."""

    rules: tuple[Rule, ...]
    name: str = "<policy>"

    def allows(self, agent: Agent | None, kind: str, carried: frozenset[str]) -> bool:
        """Whether some rule authorizes an assertion of ``kind`` by ``agent`` carrying ``carried``."""
        return any(rule.lets(agent, kind, carried) for rule in self.rules)

    def refusal(self, agent: Agent | None, kind: str, carried: frozenset[str]) -> str:
        """Why an assertion is not authorized, naming the rules that speak of its agent."""
        who = "naming no agent" if agent is None else f"by agent {agent.id!r}" + (
            f" ({agent.type})" if agent.type else "")
        near = [r for r in self.rules if r.covers(agent) and ("*" in r.kinds or kind in r.kinds)]
        if near:
            lacking = sorted({field for r in near for field in r.requires if field not in carried})
            return (f"a {kind} {who} is authorized by {self.name} only with {', '.join(lacking)} "
                    f"(rule on line {near[0].line}); this assertion lacks it")
        others = [f"line {r.line}: {', '.join(r.kinds)}" for r in self.rules if r.covers(agent)]
        said = f"; its rules let it assert only ({'; '.join(others)})" if others else "; no rule names it"
        return f"{self.name} does not authorize a {kind} {who}{said}"

    @property
    def sha256(self) -> str:
        text = json.dumps([r.to_json() for r in self.rules], sort_keys=True)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


def carried_by(record: dict) -> frozenset[str]:
    """What of REQUIRABLE an assertion record carries."""
    return frozenset(name for name in REQUIRABLE
                     if isinstance(record.get(name), (str, dict)) and record.get(name))


def load_policy(path: str | Path | Given) -> Policy:
    """Reads a policy file; raises a LoadError listing every bad rule."""
    source = source_of(path)
    problems: list[PolygraphError] = []
    rules = []
    for number, record in read_records(source, problems):
        where = Position(str(source), number, 1)
        rule = _rule(record, number, lambda code, message: problems.append(PolygraphError(code, message, where)))
        if rule is not None:
            rules.append(rule)
    if not rules and not problems:
        problems.append(PolygraphError("bad_policy", "the policy has no rule: it would refuse every assertion "
                                                     "(give no policy to refuse none)", Position(str(source), 1, 1)))
    if problems:
        raise LoadError(problems)
    return Policy(tuple(rules), str(source))


def _names(record: dict, key: str, problem, allowed=None) -> tuple[str, ...] | None:
    value = record.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() for v in value):
        problem("bad_policy", f"{key!r} must be a non-empty list of names, got {value!r}")
        return None
    if allowed is not None:
        unknown = [v for v in value if v not in allowed]
        if unknown:
            code = "unknown_kind" if key == "kinds" else "bad_policy"
            problem(code, f"{key!r} names {', '.join(map(repr, unknown))}: choose from {', '.join(allowed)}")
            return None
    return tuple(dict.fromkeys(value))


def _rule(record: dict, number: int, problem) -> Rule | None:
    """The rule of one policy line, or None with its problems reported."""
    count = [0]

    def counted(code: str, message: str) -> None:
        count[0] += 1
        problem(code, message)

    for key in record:
        if key not in _KEYS:
            counted("bad_policy", f"unknown key {key!r}; a rule says {', '.join(_KEYS)}")
    kinds = _names(record, "kinds", counted, (*KINDS, "*"))
    if "kinds" not in record:
        counted("bad_policy", "a rule needs 'kinds': the kinds it lets its agents assert")
    agents = _names(record, "agents", counted)
    types = _names(record, "agent_types", counted, AGENT_TYPES)
    requires = _names(record, "requires", counted, REQUIRABLE) or ()
    unattributed = record.get("unattributed", False)
    if not isinstance(unattributed, bool):
        counted("bad_policy", f"'unattributed' must be true or false, got {unattributed!r}")
    elif unattributed and ("agents" in record or "agent_types" in record):
        counted("bad_policy", "a rule for unattributed assertions names no agents or agent_types")
    elif not unattributed and "agents" not in record and "agent_types" not in record:
        counted("bad_policy", "a rule says whom it authorizes: 'agents', 'agent_types' or \"unattributed\": true")
    if record.get("note") is not None and not isinstance(record["note"], str):
        counted("bad_policy", "'note' is a text")
    if count[0]:
        return None
    return Rule(kinds, agents, types, unattributed, requires, number)


def unauthorized_records(assertions: str | Path | Given, policy: Policy) -> list[PolygraphError]:
    """An ``unauthorized`` error at its file and line for each assertion record the policy does not
    authorize. Lines that are not well-formed assertions are left to the loader to report."""
    source = source_of(assertions)
    found = []
    for number, record in read_records(source, []):
        kind = record.get("kind", DEFAULT_KIND)
        if kind not in KINDS:
            continue
        agent = None
        if record.get("agent") is not None:
            bad: list = []
            agent = agent_of(record["agent"], lambda code, message: bad.append(code))
            if bad:
                continue
        carried = carried_by(record)
        if not policy.allows(agent, kind, carried):
            name = record.get("id")
            found.append(PolygraphError("unauthorized", f"assertion {name!r}: " + policy.refusal(agent, kind, carried),
                                        Position(str(source), number, 1)))
    return found


def check_authorized(assertions, policy: Policy | str | Path | None) -> Policy | None:
    """Raises a LoadError listing every assertion ``policy`` does not authorize (None: no policy, nothing
    refused); returns the policy read. ``assertions``: a JSON Lines path, or records (dicts or
    Assertion objects) given in memory."""
    if policy is None or assertions is None:
        return None if policy is None else as_policy(policy)
    policy = as_policy(policy)
    if not isinstance(assertions, (str, Path, Given)):
        assertions = Given("<assertions>", tuple(a if isinstance(a, dict) else a.to_json() for a in assertions))
    found = unauthorized_records(assertions, policy)
    if found:
        raise LoadError(found)
    return policy


def as_policy(policy: Policy | str | Path) -> Policy:
    """A Policy, read from its file when given a path."""
    return policy if isinstance(policy, Policy) else load_policy(policy)
