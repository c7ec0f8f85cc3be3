"""Prompt templates: headers, strict rendering, the contract's templates, evidence lines."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from polygraph_logic.errors import PolygraphError
from polygraph_logic.graph.records import load_assertions
from polygraph_logic.llm import SCHEMAS, Shown, load_template, parse_template, render_evidence, template_names
from polygraph_logic.resources import resource_dir

ROOT = Path(__file__).resolve().parent.parent
AUDIT_TEMPLATES = ("rederive-merge", "rederive-summary", "rederive-sentence", "blind-merge", "blind-sentence")
CONSTRUCTION = {"extract-claims": ("claims", {"relations", "source", "document"}),
                "merge-with-receipts": ("merges", {"entities", "evidence"}),
                "summary-sentences": ("sentences", {"community", "evidence"}),
                "summary-flat": ("summary", {"community", "evidence"}),
                "summary-whole": ("summary", {"community", "evidence"})}
REGENERATION = {"regenerate-summary": ("sentences", {"community", "artifact", "context", "evidence"}),
                "regenerate-merge": ("merges", {"artifact", "entities", "evidence"})}


def test_every_template_the_issue_names_ships():
    assert set(template_names()) == set(AUDIT_TEMPLATES) | set(CONSTRUCTION) | set(REGENERATION)


@pytest.mark.parametrize("name", sorted(set(AUDIT_TEMPLATES) | set(CONSTRUCTION) | set(REGENERATION)))
def test_headers_parse_by_hand(name):
    path = resource_dir("prompts") / f"{name}.md"
    head, _, body = path.read_text(encoding="utf-8").partition("\n---\n")
    system, _, user = body.partition("\n--- user ---\n")
    fields = dict(line.split(": ", 1) for line in head.splitlines())
    template = load_template(name)
    assert (template.name, template.version, template.schema, template.system, template.body) == \
        (fields["name"], fields["version"], fields["schema"], system, user)
    assert template.version == "3" and system and user  # every shipped template has both parts
    assert template.name == name and template.schema in SCHEMAS and int(template.version) >= 1


@pytest.mark.parametrize("name", AUDIT_TEMPLATES)
def test_audit_templates_keep_the_contract(name):
    template = load_template(name)
    assert template.schema == "rederivation"
    assert set(template.placeholders) == {"artifact", "evidence"}


@pytest.mark.parametrize("name, expected", sorted({**CONSTRUCTION, **REGENERATION}.items()))
def test_construction_templates(name, expected):
    template = load_template(name)
    assert (template.schema, set(template.placeholders)) == expected


@pytest.mark.parametrize("name", sorted(set(AUDIT_TEMPLATES) | set(CONSTRUCTION) | set(REGENERATION)))
def test_rendering_fills_every_placeholder_and_keeps_json_braces(name):
    template = load_template(name)
    values = {p: f"<<{p.upper()}>>" for p in template.placeholders}
    prompt = template.render(values)
    whole = template.system + template.body
    for placeholder, value in values.items():
        assert prompt.count(value) == whole.count("{" + placeholder + "}") >= 1
    assert not re.search(r"\{[a-z_][a-z0-9_]*\}", prompt)
    assert prompt.count("{") == whole.count("{") - sum(whole.count("{" + p + "}") for p in values)
    parts = template.render_parts(values)
    assert '{"' in parts.system  # the JSON example of the answer survives as text, in the fixed part
    assert prompt == f"{parts.system}\n--- user ---\n{parts.user}"


@pytest.mark.parametrize("name", sorted(set(AUDIT_TEMPLATES) | set(CONSTRUCTION)))
def test_the_fixed_part_holds_only_what_a_whole_run_shares(name):
    template = load_template(name)
    in_system = {p for p in template.placeholders if "{" + p + "}" in template.system}
    assert in_system == ({"relations"} if name == "extract-claims" else set())


def test_a_template_without_the_user_mark_is_all_user_turn_and_an_empty_user_part_is_refused():
    template = parse_template("name: t\nversion: 1\nschema: claims\n---\nbody {x}\n", "t.md")
    assert template.system == "" and template.render_parts({"x": "1"}).user == "body 1\n"
    assert template.render({"x": "1"}) == "body 1\n"
    with pytest.raises(PolygraphError, match="the user part after '--- user ---' is empty"):
        parse_template("name: t\nversion: 1\nschema: claims\n---\nrules\n--- user ---\n\n", "t.md")


def test_values_are_inserted_verbatim_never_re_expanded():
    template = load_template("blind-sentence")
    prompt = template.render({"artifact": "a sentence mentioning {evidence} and {x}", "evidence": "E"})
    assert "a sentence mentioning {evidence} and {x}" in prompt and prompt.count("E\n") >= 1


@pytest.mark.parametrize("variables, message", [
    ({"artifact": "x"}, "missing variable(s) evidence"),
    ({"artifact": "x", "evidence": "e", "draw": "1"}, "unknown variable(s) draw"),
    ({"artifact": "x", "evidence": 3}, "evidence must be strings"),
])
def test_rendering_errors(variables, message):
    with pytest.raises(PolygraphError, match=re.escape(message)) as raised:
        load_template("rederive-merge").render(variables)
    assert raised.value.code == "template_error"


@pytest.mark.parametrize("text, message", [
    ("name: t\nversion: 1\nschema: claims\n", "no '---' line"),
    ("name: t\nversion: 1\nschema: claims\nbody without a separator\n", "is not one of name:"),
    ("name: t\nschema: claims\n---\nbody\n", "needs 'version:'"),
    ("name: t\nversion: one\nschema: claims\n---\nbody\n", "is not a number"),
    ("name: t\nversion: 1\nschema: claims\nauthor: x\n---\nbody\n", "header line 'author: x'"),
    ("name: t\nname: u\nversion: 1\nschema: claims\n---\nbody\n", "appears twice"),
    ("name: t\nversion: 1\nschema: claims\n---\n  \n", "body is empty"),
])
def test_header_errors(text, message):
    with pytest.raises(PolygraphError, match=re.escape(message)):
        parse_template(text, "t.md")


def test_a_file_whose_header_names_another_template_is_refused(tmp_path):
    path = tmp_path / "mine.md"
    path.write_text("name: theirs\nversion: 1\nschema: claims\n---\nbody {x}\n")
    with pytest.raises(PolygraphError, match="header says name 'theirs'"):
        load_template(path)
    (tmp_path / "theirs.md").write_text(path.read_text())
    assert load_template(tmp_path / "theirs.md").placeholders == ("x",)


def test_unknown_template_lists_the_shipped_ones():
    with pytest.raises(PolygraphError, match="shipped templates: blind-merge") as raised:
        load_template("rederive-edge")
    assert raised.value.code == "unknown_template"
    with pytest.raises(PolygraphError):
        load_template("README")


def test_render_evidence_writes_the_contract_lines():
    assertions = load_assertions(ROOT / "examples" / "figure1" / "assertions.jsonl")
    lines = render_evidence(assertions).splitlines()
    assert lines[2] == "[a20] MAPK/ERK | RO:0002213 | cell proliferation | MAPK/ERK activation drives proliferation"
    assert len(lines) == len(assertions)
    for line, assertion in zip(lines, assertions):  # each line splits back into its fields
        ident, rest = line.split("] ", 1)
        assert [ident[1:], *rest.split(" | ")] == [assertion.id, assertion.subject, assertion.predicate,
                                                   assertion.object, assertion.text]
    assert Shown.from_variables({"evidence": render_evidence(assertions)}).ids == {a.id for a in assertions}
    assert render_evidence([]) == "(none)"
