"""A corpus for the constructor: documents read from a folder, split into sentences, and the
relations a claim may use."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from polygraph_logic.errors import PolygraphError, Position

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")


@dataclass(frozen=True)
class Document:
    """One source document: its source id, its text and where it was read."""

    source: str
    text: str
    where: str


def slug(text: str) -> str:
    """Returns ``text`` in lower case with every run of other characters as one ``-``."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def split_sentences(text: str) -> list[str]:
    """Returns the sentences of ``text`` (split after . ! ? before a capital or a digit)."""
    flat = " ".join(text.split())
    return [s for s in _SENTENCE_END.split(flat) if s] if flat else []


def _record(value, where: str) -> Document:
    if not isinstance(value, dict) or not isinstance(value.get("source"), str) or not value["source"].strip() \
            or not isinstance(value.get("text"), str):
        raise PolygraphError("bad_document", f"{where}: a document record needs a non-empty 'source' "
                             "string and a 'text' string")
    return Document(value["source"].strip(), value["text"], where)


def _json(text: str, path: Path, line: int | None = None):
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise PolygraphError("invalid_json", f"not valid JSON: {error.msg}",
                             Position(str(path), line or error.lineno, error.colno)) from None


def _read_file(path: Path) -> list[Document]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise PolygraphError("file_error", f"cannot read {path}: {error}") from None
    if path.suffix == ".txt":
        first, _, rest = text.partition("\n")
        if first.lower().startswith("source:") and first[7:].strip():
            return [Document(first[7:].strip(), rest, str(path))]
        return [Document(f"file:{path.name}", text, str(path))]
    if path.suffix == ".jsonl":
        return [_record(_json(line, path, number), f"{path}:{number}")
                for number, line in enumerate(text.splitlines(), 1) if line.strip()]
    value = _json(text, path)
    if isinstance(value, list):
        return [_record(v, f"{path}[{i}]") for i, v in enumerate(value)]
    return [_record(value, str(path))]


def read_corpus(directory: str | Path) -> list[Document]:
    """Returns the documents of a folder: ``*.txt`` (first line ``source: ID``, else the source
    is ``file:NAME``), ``*.json`` (a record or a list of records) and ``*.jsonl`` (one record a
    line); a record is ``{"source": ..., "text": ...}``. Other files (a README) are ignored."""
    folder = Path(directory)
    if not folder.is_dir():
        raise PolygraphError("file_error", f"{folder} is not a folder of documents")
    documents: list[Document] = []
    for path in sorted(folder.iterdir()):
        if path.is_file() and not path.name.startswith(".") and path.suffix in (".txt", ".json", ".jsonl"):
            documents.extend(_read_file(path))
    seen: dict[str, str] = {}
    for document in documents:
        if document.source in seen:
            raise PolygraphError("duplicate_source", f"{document.where}: source {document.source!r} was "
                                 f"already used by {seen[document.source]}; one document per source id")
        seen[document.source] = document.where
    return documents


def read_relations(path: str | Path) -> dict[str, str]:
    """Returns the relations a file allows: one ``CURIE label`` a line, ``#`` starts a comment."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise PolygraphError("file_error", f"cannot read {path}: {error.strerror}") from None
    relations = {}
    for line in lines:
        curie, _, label = line.split("#", 1)[0].strip().partition(" ")
        if curie:
            relations[curie] = label.strip() or curie
    if not relations:
        raise PolygraphError("bad_option", f"{path} lists no relation (one 'CURIE label' a line)")
    return relations
