"""Guards that tell a harness message from a model answer, before anything is cached.

The study's harness cached a provider session-limit banner as the answer to 1,123
prompts, and later 13 content-filter refusals: both were non-empty, so both looked
like answers. Here an answer is checked in this order:

1. a ``refusal`` stop reason is a Refusal, whatever the text;
2. no text (or only whitespace) is an EmptyAnswer;
3. an answer cut off at ``max_tokens`` is a SchemaViolation (it cannot be whole);
4. text that is not JSON and reads like a quota, rate or session-limit banner is a
   QuotaBanner, and text that reads like a refusal is a Refusal.

Step 4 looks only at answers that do not start with a JSON object, so a well-formed
answer that happens to mention "rate limit" or "policy" is never mistaken for a banner;
anything else that is not JSON fails the strict parse later.
"""

from __future__ import annotations

import re

from polygraph_logic.llm.errors import EmptyAnswer, QuotaBanner, Refusal, SchemaViolation

#: phrases of quota, rate and session-limit banners (providers, CLIs, gateways)
BANNER_PATTERNS = (
    r"\busage limit",
    r"\bsession limit",
    r"\brate[- ]limit",
    r"\bquota\b",
    r"\blimit (?:reached|exceeded|hit)\b",
    r"\breached (?:your|the) (?:\w+ )?limit",
    r"\b(?:resets?|try again) (?:at|in|after|later)\b",
    r"\bout of (?:extra )?usage\b",
    r"\bcredit balance is too low\b",
    r"\b(?:too many requests|overloaded)\b",
    r"\bupgrade (?:your|to a) plan\b",
    r"\|\d{9,}\s*$",  # the "Claude AI usage limit reached|1754000000" form
)

#: phrases of refusals and content-filter notices
REFUSAL_PATTERNS = (
    r"^(?:i'?m sorry|sorry|unfortunately)\b",
    r"^i (?:can(?:no|')t|cannot|won'?t|am unable|am not able|must decline)\b",
    r"^i'm (?:unable|not able)\b",
    r"\bcontent (?:filter|filtering|policy|policies)\b",
    r"\boutput blocked\b",
    r"\busage polic(?:y|ies)\b",
    r"\b(?:decline|refuse) to (?:help|assist|answer|comply)\b",
    r"\bnot able to (?:help|assist) with\b",
)

_BANNER = re.compile("|".join(BANNER_PATTERNS), re.IGNORECASE | re.MULTILINE)
_REFUSAL = re.compile("|".join(REFUSAL_PATTERNS), re.IGNORECASE | re.MULTILINE)
_JSON_START = re.compile(r"\A\s*(?:```(?:json)?\s*)?\{")


def _excerpt(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit] + "..."


def check_answer(text: str, stop_reason: str | None, *, template: str | None = None,
                 draw: int | None = None) -> None:
    """Raises the ModelError the answer deserves, or returns None when it may be parsed."""
    if stop_reason == "refusal":
        raise Refusal(f"the model refused (stop reason 'refusal'): {_excerpt(text) or 'no text'}",
                      template=template, draw=draw)
    if not text or not text.strip():
        raise EmptyAnswer(f"the model returned no text (stop reason {stop_reason!r})",
                          template=template, draw=draw)
    if stop_reason == "max_tokens":
        raise SchemaViolation("the answer was cut off at max_tokens; raise max_tokens",
                              template=template, draw=draw, code="truncated_answer")
    if _JSON_START.match(text):
        return
    if _BANNER.search(text):
        raise QuotaBanner(f"the answer is a quota or session-limit banner, not an answer: "
                          f"{_excerpt(text)!r}", template=template, draw=draw)
    if _REFUSAL.search(text.strip()):
        raise Refusal(f"the answer is a refusal, not an answer: {_excerpt(text)!r}",
                      template=template, draw=draw)
