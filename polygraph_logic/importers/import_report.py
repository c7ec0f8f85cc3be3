"""What an import read, kept, skipped and could not read: the account a user checks."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from polygraph_logic.importers.relations import relation_name

SHOWN_MALFORMED = 20  # malformed records listed by summary(); the rest are counted


@dataclass
class ImportReport:
    """Counts of one import; ``read == imported + comments + len(malformed)``.

    ``malformed`` holds ``(line, reason)`` pairs (line is None where the format has no
    lines to point at, as in JSON; the reason then says which record). ``relations``
    counts imported records per predicate CURIE. ``short_lines`` counts lines that
    lacked optional trailing columns, read as empty.  ``negated`` counts the imported
    records that are NOT-qualified (kept as negated assertions, among ``imported``).
    """

    path: str
    format: str
    unit: str = "lines"
    read: int = 0
    imported: int = 0
    negated: int = 0
    comments: int = 0
    short_lines: int = 0
    malformed: list[tuple[int | None, str]] = field(default_factory=list)
    relations: Counter = field(default_factory=Counter)

    @property
    def accounted(self) -> int:
        """Returns how many records the counts explain (equal to ``read`` after an import)."""
        return self.imported + self.comments + len(self.malformed)

    def summary(self) -> str:
        """Returns a few lines of text: totals, counts per relation, malformed records."""
        counts = [f"{self.imported} imported"]
        if self.unit == "lines":  # annotation files; JSON has neither NOT qualifiers nor comments
            counts[0] += f" ({self.negated} NOT-qualified, kept as negated assertions)"
            counts.append(f"{self.comments} comment/header")
        counts.append(f"{len(self.malformed)} malformed")
        lines = [f"{self.path} ({self.format}): {self.read} {self.unit} read: {', '.join(counts)}"]
        if self.short_lines:
            lines.append(f"  {self.short_lines} lines lacked optional trailing columns (read as empty)")
        for predicate, count in sorted(self.relations.items(), key=lambda item: (-item[1], item[0])):
            name = relation_name(predicate)
            shown = f"{name} ({predicate})" if name else predicate
            lines.append(f"  {shown}: {count}")
        for line, reason in self.malformed[:SHOWN_MALFORMED]:
            where = f"line {line}" if line is not None else "record"
            lines.append(f"  malformed {where}: {reason}")
        if len(self.malformed) > SHOWN_MALFORMED:
            lines.append(f"  ... and {len(self.malformed) - SHOWN_MALFORMED} more malformed")
        return "\n".join(lines)
