"""Times as the evidence metadata writes them: ISO 8601 read into aware UTC datetimes, written back with a Z."""

from __future__ import annotations

from datetime import datetime, timezone

from polygraph_logic.errors import PolygraphError


def parse_time(text, what: str = "time") -> datetime:
    """An ISO 8601 date or date-time as an aware UTC datetime; ``bad_time`` otherwise."""
    if isinstance(text, str) and text.strip():
        value = text.strip()
        try:
            parsed = datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value)
        except ValueError:
            parsed = None
        if parsed is not None:
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=timezone.utc)
            return parsed.astimezone(timezone.utc)
    raise PolygraphError("bad_time", f"{what} must be an ISO 8601 date or date-time such as 2024-05-01 or "
                                     f"2024-05-01T09:30:00Z, got {text!r}")


def show_time(moment: datetime) -> str:
    """A time as written back: ISO 8601 in UTC with a ``Z``."""
    return moment.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")
