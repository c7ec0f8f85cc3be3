"""Request parameters: the query string (or a JSON body) read into checked values.

Every function raises ``ApiError`` (a 4xx with a JSON body) on a bad value, so a handler
never sees one it did not expect.
"""

from __future__ import annotations

import json
from urllib.parse import parse_qs

from polygraph_logic.errors import PolygraphError
from polygraph_logic.query.evidence import EvidenceView, Requirement
from polygraph_logic.query.policies import check_policy
from polygraph_logic.query.whatif import POLICIES, Deletion

MAX_LIMIT = 1000
# the names a deletion takes, each under the parameter a query string repeats
DELETION_PARAMETERS = {"source": "sources", "relation": "relations", "assertion": "assertions"}


class ApiError(Exception):
    """A request the server refuses: HTTP status, a stable code and a message a user can act on."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message

    def to_json(self) -> dict:
        return {"error": {"code": self.code, "message": self.message}}


Params = dict[str, list[str]]


def parse_query(query: str) -> Params:
    """Returns the parameters of a query string (repeated names keep every value)."""
    try:
        return parse_qs(query, keep_blank_values=True, strict_parsing=False, errors="strict")
    except (ValueError, UnicodeError):
        raise ApiError(400, "bad_request", "the query string is not valid UTF-8 percent-encoding") from None


def parse_body(body: bytes, content_type: str) -> Params:
    """Returns the parameters of a POST body: a JSON object (values a string or a list of
    strings) or ``application/x-www-form-urlencoded``."""
    if content_type.split(";")[0].strip() == "application/json":
        try:
            data = json.loads(body.decode("utf-8") or "{}")
        except (ValueError, UnicodeError, RecursionError):
            raise ApiError(400, "bad_json", "the request body is not a JSON object") from None
        if not isinstance(data, dict):
            raise ApiError(400, "bad_json", "the request body must be a JSON object")
        params: Params = {}
        for key, value in data.items():
            values = value if isinstance(value, list) else [value]
            if not all(isinstance(v, (str, int, float, bool)) for v in values):
                raise ApiError(400, "bad_json", f"{key!r} must be a string, number or list of strings")
            params[key] = [str(v).lower() if isinstance(v, bool) else str(v) for v in values]
        return params
    try:
        return parse_query(body.decode("utf-8"))
    except UnicodeError:
        raise ApiError(400, "bad_request", "the request body is not UTF-8") from None


def one(params: Params, name: str, default: str | None = None) -> str:
    """Returns the single value of a parameter; missing without a default is a 400."""
    values = params.get(name)
    if not values:
        if default is None:
            raise ApiError(400, "missing_parameter", f"the parameter {name!r} is required")
        return default
    if len(values) > 1:
        raise ApiError(400, "bad_parameter", f"the parameter {name!r} was given {len(values)} times; give it once")
    return values[0]


def many(params: Params, name: str) -> list[str]:
    """Returns every value of a repeated parameter, each once, in order (empty values dropped)."""
    return list(dict.fromkeys(v for v in params.get(name, []) if v))


def pasted(params: Params, name: str) -> list[str]:
    """Returns the names of a pasted list: separated by commas, semicolons or white space."""
    out: list[str] = []
    for value in params.get(name, []):
        out.extend(value.replace(",", " ").replace(";", " ").split())
    return list(dict.fromkeys(out))


def integer(params: Params, name: str, default: int, low: int = 0, high: int = MAX_LIMIT) -> int:
    """Returns an integer parameter within ``[low, high]``."""
    text = one(params, name, str(default))
    try:
        value = int(text)
    except ValueError:
        raise ApiError(400, "bad_parameter", f"{name} must be an integer, not {text[:40]!r}") from None
    if not low <= value <= high:
        raise ApiError(400, "bad_parameter", f"{name} must be between {low} and {high}, not {value}")
    return value


def flag(params: Params, name: str) -> bool:
    """Returns a boolean parameter: 1/true/yes/on or 0/false/no/off (absent is false)."""
    text = one(params, name, "0").lower()
    if text in ("1", "true", "yes", "on", ""):
        return text != ""
    if text in ("0", "false", "no", "off"):
        return False
    raise ApiError(400, "bad_parameter", f"{name} must be true or false, not {text[:40]!r}")


def policy(value: str) -> str:
    """Returns a known cleanup policy (or one composed per layer); an unknown one is a 400 naming the choices."""
    try:
        return check_policy(value)
    except PolygraphError as error:
        raise ApiError(400, "unknown_policy", error.message[:400]) from None


def policies(params: Params) -> list[str]:
    """Returns the requested policies (``policy`` repeated; default trust-all), each once."""
    names = [policy(p) for p in many(params, "policy")] or ["trust-all"]
    if len(names) > len(POLICIES):
        raise ApiError(400, "bad_parameter", "too many policies")
    return names


def deletion(params: Params) -> Deletion:
    """Returns the deletion the parameters name: ``source``, ``relation``, ``assertion``, each
    repeatable, one name a value; and the view of the evidence of ``as_of``, ``stale_after`` and
    ``scope`` (as the flags --as-of, --stale-after and --scope take them), or ``raw=1`` (as --raw)."""
    raw = flag(params, "raw")
    try:
        view = EvidenceView.parse(*(one(params, name, "") or None for name in ("as_of", "stale_after", "scope")), raw)
    except PolygraphError as error:
        raise ApiError(400, error.code, error.message) from None
    return Deletion(**{field: tuple(many(params, name)) for name, field in DELETION_PARAMETERS.items()},
                    evidence=view, raw=raw)


def requirement(params: Params, authorization=None) -> Requirement | None:
    """``require`` (repeatable, each a kind or kinds joined by commas), as ``--require`` takes it;
    ``authorization`` (the server's policy, graph/authorization.py): only the assertions it
    authorizes count."""
    values = many(params, "require")
    try:
        return Requirement.parse(values, authorization if values else None)
    except PolygraphError as error:
        raise ApiError(400, error.code, error.message) from None
