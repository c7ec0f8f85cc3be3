"""An assertion's agent and acquisition in PROV-O: who asserted it, and the activity that generated it.

For an assertion whose record names them (graph/agents.py), in the assertions graph:

- the agent, once per agent id, minted ``{base}agent/{id}``: a ``prov:Agent`` (and
  ``prov:SoftwareAgent`` for a model or a tool, ``prov:Person``, ``prov:Organization``), with
  ``pg:agentId``, ``pg:agentType``, ``rdfs:label``, and a model's ``pg:model``, ``pg:promptTemplate``,
  ``pg:promptVersion``, ``pg:promptSha256`` or a tool's ``pg:softwareVersion``; the assertion
  ``prov:wasAttributedTo`` it;
- the acquisition, once per acquisition id (an unnamed one by its content: agents.Acquisition.key),
  minted ``{base}activity/{id}``: a ``prov:Activity`` and ``pg:Acquisition`` with
  ``pg:acquisitionId``, ``pg:acquisitionType``, ``prov:startedAtTime``, ``prov:endedAtTime``,
  ``prov:used`` each input (an assertion of the graph, else a source or document, typed
  ``prov:Entity``), ``pg:query``, ``pg:promptSha256``, ``pg:messageId``, ``pg:requestId`` and
  ``prov:wasAssociatedWith`` the assertion's agent; the assertion ``prov:wasGeneratedBy`` it.

An agent (or acquisition) stated by several assertions is described as the first states it.
"""

from __future__ import annotations

from typing import Callable, Iterator

from polygraph_logic.export.once import Once
from polygraph_logic.export.namespaces import PG, PROV, RDF_TYPE, RDFS, XSD_DATETIME
from polygraph_logic.graph.agents import Acquisition, Agent
from polygraph_logic.graph.evidence import show_time

#: the PROV-O class of each agent type, beside prov:Agent
AGENT_CLASSES = {"model": PROV + "SoftwareAgent", "tool": PROV + "SoftwareAgent", "person": PROV + "Person",
                 "organization": PROV + "Organization"}
_AGENT_FIELDS = (("label", RDFS + "label"), ("model", PG + "model"), ("prompt", PG + "promptTemplate"),
                 ("prompt_version", PG + "promptVersion"), ("prompt_sha256", PG + "promptSha256"),
                 ("version", PG + "softwareVersion"))
_ACQUISITION_FIELDS = (("query", PG + "query"), ("prompt_sha256", PG + "promptSha256"),
                       ("message_id", PG + "messageId"), ("request_id", PG + "requestId"))


class AgentQuads:
    """The agent and acquisition quads of each assertion, each agent and activity described once.

    ``literal(value, datatype)`` makes a literal, ``minted(kind, value)`` an IRI under the base,
    ``assertion(id)`` an assertion's IRI, ``is_assertion(id)`` says whether the graph holds it, and
    ``input(value)`` returns the IRI of an input that is not an assertion and whether it still
    needs its ``prov:Entity`` type (a source of the graph is typed already)."""

    def __init__(self, literal: Callable, minted: Callable[[str, str], str], assertion: Callable[[str], str],
                 is_assertion: Callable[[str], bool], input: Callable[[str], tuple[str, bool]]):
        self.literal, self.minted, self.assertion = literal, minted, assertion
        self.is_assertion, self.input = is_assertion, input
        self._agents, self._activities = Once(), Once()

    def quads(self, node: str, agent: Agent | None, acquisition: Acquisition | None, g: str) -> Iterator[tuple]:
        """The quads of the assertion ``node``'s agent and acquisition in graph ``g``."""
        agent_iri = None
        if agent is not None:
            agent_iri = self.minted("agent", agent.id)
            if self._agents.first(agent.id):
                yield from self._agent(agent_iri, agent, g)
            yield node, PROV + "wasAttributedTo", agent_iri, g
        if acquisition is not None:
            key = acquisition.key()
            activity = self.minted("activity", key)
            if self._activities.first(key):
                yield from self._activity(activity, key, acquisition, g)
            if agent_iri is not None:  # several assertions of one call may name several agents: each once
                if self._activities.first(f"{key}\x00{agent.id}"):
                    yield activity, PROV + "wasAssociatedWith", agent_iri, g
            yield node, PROV + "wasGeneratedBy", activity, g

    def _agent(self, iri: str, agent: Agent, g: str) -> Iterator[tuple]:
        yield iri, RDF_TYPE, PROV + "Agent", g
        if agent.type in AGENT_CLASSES:
            yield iri, RDF_TYPE, AGENT_CLASSES[agent.type], g
        yield iri, PG + "agentId", self.literal(agent.id), g
        if agent.type is not None:
            yield iri, PG + "agentType", self.literal(agent.type), g
        for field, predicate in _AGENT_FIELDS:
            value = getattr(agent, field)
            if value is not None:
                yield iri, predicate, self.literal(value), g

    def _activity(self, iri: str, key: str, acquisition: Acquisition, g: str) -> Iterator[tuple]:
        yield iri, RDF_TYPE, PROV + "Activity", g
        yield iri, RDF_TYPE, PG + "Acquisition", g
        yield iri, PG + "acquisitionId", self.literal(key), g
        if acquisition.type is not None:
            yield iri, PG + "acquisitionType", self.literal(acquisition.type), g
        for moment, predicate in ((acquisition.time, PROV + "startedAtTime"), (acquisition.ended, PROV + "endedAtTime")):
            if moment is not None:
                yield iri, predicate, self.literal(show_time(moment), XSD_DATETIME), g
        for field, predicate in _ACQUISITION_FIELDS:
            value = getattr(acquisition, field)
            if value is not None:
                yield iri, predicate, self.literal(value), g
        for value in acquisition.used:
            if self.is_assertion(value):
                yield iri, PROV + "used", self.assertion(value), g
                continue
            used, untyped = self.input(value)
            if untyped:
                yield used, RDF_TYPE, PROV + "Entity", g
            yield iri, PROV + "used", used, g
