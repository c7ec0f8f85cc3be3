"""Loading assertions and receipts: every bad input is an error naming file and line."""

import json

import pytest

from polygraph_logic.graph.records import LoadError, load_assertions, load_receipts

GOOD = {"id": "a1", "source": "PMID:1", "subject": "x", "predicate": "RO:0002211", "object": "y"}


def write(tmp_path, name, lines):
    path = tmp_path / name
    path.write_text("\n".join(l if isinstance(l, str) else json.dumps(l) for l in lines) + "\n")
    return path


def problems(call):
    with pytest.raises(LoadError) as caught:
        call()
    return [(p.code, p.position.line, str(p)) for p in caught.value.problems]


def test_assertions_load_with_optional_text(tmp_path):
    path = write(tmp_path, "a.jsonl", [GOOD, {**GOOD, "id": "a2", "text": "span"}, ""])
    loaded = load_assertions(path)
    assert [a.id for a in loaded] == ["a1", "a2"] and loaded[1].text == "span"
    assert loaded[0].to_json() == GOOD


def test_every_bad_assertion_line_is_reported_with_file_and_line(tmp_path):
    path = write(tmp_path, "a.jsonl", [
        GOOD,
        '{"id": "a2", "source": ',                      # malformed JSON
        {k: v for k, v in GOOD.items() if k != "object"} | {"id": "a3"},  # missing field
        {**GOOD, "id": "a1"},                           # duplicate id
        {**GOOD, "id": "a5", "subject": 7},             # wrong type
        "[1, 2]",                                       # not an object
    ])
    found = problems(lambda: load_assertions(path))
    assert [(code, line) for code, line, _ in found] == [
        ("invalid_json", 2), ("missing_field", 3), ("duplicate_assertion", 4), ("bad_field", 5),
        ("invalid_record", 6)]
    for _, line, text in found:
        assert text.startswith(f"{path}:{line}:")
    assert "line 1" in found[2][2]


def test_receipts_validate_support_sets_against_known_assertions(tmp_path):
    known = {"a1", "a2"}
    merge = {"artifact": "merge:m1", "layer": "merge",
             "content": {"canonical": "x", "members": ["x", "x2"]}, "support": [["a1"], ["a2"]]}
    path = write(tmp_path, "r.jsonl", [
        merge,
        {**merge, "artifact": "merge:m2", "support": [["a1", "a9"]]},         # unknown id
        {**merge, "artifact": "merge:m3", "support": [["a1"], []]},           # empty support set
        {**merge},                                                              # duplicate artifact
        {"artifact": "merge:m5", "layer": "merge", "content": {"canonical": "x", "members": ["y"]}},  # no support
        {**merge, "artifact": "merge:m6", "content": {"members": ["y"]}},     # merge without canonical
        {**merge, "artifact": "x:7", "layer": "essay"},                       # unknown layer
        {"artifact": "summary:s", "layer": "summary", "sentences": [{"text": "t", "support": [["a3"]]}]},
        {**merge, "artifact": "merge:m9", "support": "a1"},                   # not a list of lists
        '{"artifact": "merge:m10", "layer": "merge" "support": []}',          # malformed JSON
    ])
    found = problems(lambda: load_receipts(path, known))
    assert [(code, line) for code, line, _ in found] == [
        ("unknown_assertion", 2), ("empty_support", 3), ("duplicate_artifact", 4), ("missing_field", 5),
        ("missing_field", 6), ("bad_field", 7), ("unknown_assertion", 8), ("bad_support", 9),
        ("invalid_json", 10)]
    assert "'a9'" in found[0][2] and "'a3'" in found[6][2]
    for _, line, text in found:
        assert text.startswith(f"{path}:{line}:")


def test_sentence_level_summaries_load(tmp_path):
    path = write(tmp_path, "r.jsonl", [
        {"artifact": "summary:c3", "layer": "summary", "content": {"community": "c3"},
         "sentences": [{"text": "one", "support": [["a1"]]}, {"text": "two", "support": [["a1", "a2"], ["a2"]]}]},
    ])
    (receipt,) = load_receipts(path, {"a1", "a2"})
    assert [s.text for s in receipt.sentences] == ["one", "two"]
    assert receipt.sentence_id(2) == "summary:c3#s2"
    assert receipt.sentences[1].support == (frozenset({"a1", "a2"}), frozenset({"a2"}))


def test_missing_file_is_a_file_error(tmp_path):
    from polygraph_logic.errors import PolygraphError
    with pytest.raises(PolygraphError) as caught:
        load_assertions(tmp_path / "absent.jsonl")
    assert caught.value.code == "file_error"


def test_problems_of_both_files_are_reported_together(tmp_path, capsys):
    from polygraph_logic.cli import main
    from polygraph_logic.graph.records import load_inputs
    good = {"source": "s", "subject": "x", "predicate": "RO:0002211", "object": "y"}
    assertions = write(tmp_path, "a.jsonl", [json.dumps({"id": "a1", **good, "predicate": "bad pred"}),
                                             json.dumps({"id": "a2", **good})])
    receipts = write(tmp_path, "r.jsonl", [
        json.dumps({"artifact": "merge:m", "layer": "merge", "content": {"canonical": "x", "members": ["x", "z"]},
                    "support": [["a1"], ["a9"]]}),
        json.dumps({"artifact": "m2", "layer": "nope", "support": [["a2"]]})])
    with pytest.raises(LoadError) as error:
        load_inputs(assertions, receipts)
    together = [str(p) for p in error.value.problems]
    # independently: each file alone, the receipts checked against every id the assertions state
    alone = [line for _, _, line in problems(lambda: load_assertions(assertions))
             + problems(lambda: load_receipts(receipts, {"a1", "a2"}))]
    assert together == alone and len(together) == 3
    assert "a.jsonl:1:1: bad_predicate" in together[0] and "'a9'" in together[1] and "layer 'nope'" in together[2]
    assert not any("'a1'" in p for p in together)  # a bad assertion line is reported once, not by its citers
    for command in ("build", "compile"):
        argv = [command, "--assertions", str(assertions), "--receipts", str(receipts)]
        assert main(argv + (["-o", str(tmp_path / "g.graph")] if command == "build" else [])) == 2
        assert capsys.readouterr().err.splitlines() == together
    assert not (tmp_path / "g.graph").exists()
