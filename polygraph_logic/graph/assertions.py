"""Assertions: one source document stating one typed triple, one provenance variable each."""

from __future__ import annotations

from dataclasses import dataclass

from polygraph_logic.graph.evidence import Evidence


@dataclass(frozen=True)
class Assertion:
    """``(id, source, subject, predicate, object)`` with an optional evidence ``text``.

    ``id`` names the provenance variable; ``source`` is the document (``PMID:39973430``,
    ``GO_REF:0000024``, a URL); ``predicate`` is a CURIE such as ``RO:0002211``; ``kind``
    is what sort of evidence it is (kinds.py: ``source_claim`` unless stated); ``evidence`` its
    optional time, scope, freshness and status (evidence.py).
    """

    id: str
    source: str
    subject: str
    predicate: str
    object: str
    text: str | None = None
    kind: str = "source_claim"
    negated: bool = False  # it states that the triple does NOT hold (a GPAD/GAF NOT annotation)
    evidence: Evidence | None = None  # time, scope, freshness, status, verifies (evidence.py)

    def to_json(self) -> dict:
        """Returns the JSON Lines record of DESIGN.md (``text`` only when present)."""
        record = {
            "id": self.id,
            "source": self.source,
            "subject": self.subject,
            "predicate": self.predicate,
            "object": self.object,
        }
        if self.text is not None:
            record["text"] = self.text
        if self.kind != "source_claim":
            record["kind"] = self.kind
        if self.negated:
            record["negated"] = True
        if self.evidence is not None:
            record.update(self.evidence.to_json())
        return record

    @property
    def triple(self) -> tuple[str, str, str]:
        return (self.subject, self.predicate, self.object)
