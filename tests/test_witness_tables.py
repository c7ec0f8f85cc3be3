"""Witness labels built set at a time by DuckDB (engines/sql_witness.py, ``build --engine duckdb
--tables --labels witness``).

Checked against the Python engine's witness labels (provenance/witness.py, itself checked against
brute force in test_witness_labels.py): on random programs with cycles, self-loops, facts stated
twice and background facts, every fact's witness and exactness are the same; on the examples and
the variant inputs (negated assertions, contradiction rules), the folder holds the rows of the
Python witness graph exported, and its derivations are those found again from the stored rules
(the circuit export-tables stores), rule numbers included.  ``check`` finds nothing wrong.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
from hypothesis import given

pytest.importorskip("duckdb")

from polygraph_logic.datalog import evaluate  # noqa: E402
from polygraph_logic.engines import sql_witness  # noqa: E402
from polygraph_logic.engines.duckdb_run import evaluate_duckdb  # noqa: E402
from polygraph_logic.graph.circuit_build import completed  # noqa: E402
from polygraph_logic.graph.engine_build import build_graph  # noqa: E402
from polygraph_logic.graph.store.circuit_rows import UNSTORED_RULE  # noqa: E402
from polygraph_logic.graph.store.check import check_graph  # noqa: E402
from polygraph_logic.graph.store.graph_file import Graph  # noqa: E402
from polygraph_logic.graph.tables.compare import differences  # noqa: E402
from polygraph_logic.graph.tables.layout import duckdb_connection, export_tables, table_path  # noqa: E402
from polygraph_logic.query import revival  # noqa: E402
from polygraph_logic.query.circuit_support import expanded  # noqa: E402
from polygraph_logic.query.whatif import Deletion, what_if  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_circuit_eval import EXAMPLES, cases  # noqa: E402
from test_contradictions import variant_inputs  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RO = str(ROOT / "rules" / "ro.dl")
CONTRADICTIONS = str(ROOT / "rules" / "contradictions.dl")


def _witnesses(model) -> dict:
    return {(name, tup): (label.support_sets(), label.exact)
            for name in model.relations() for tup, label in model.facts(name).items()}


@EXAMPLES
@given(cases())
def test_duckdb_witnesses_are_the_python_engines(case):
    """Whether a round keeps the derivations of facts held already or marks them (KEPT_AGAIN 0)."""
    python = evaluate(case.program(), "why", cap=None, circuit=True)
    python.witness = True
    for kept_again in (sql_witness.KEPT_AGAIN, 0):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(sql_witness, "KEPT_AGAIN", kept_again)
            duckdb, _ = evaluate_duckdb(case.program(), witness=True)
        assert _witnesses(duckdb) == _witnesses(python), (kept_again, case.text())


def _named_derivations(folder: Path) -> set[tuple]:
    """Each stored derivation as (fact, rule, body) with facts named by relation and arguments."""
    derivations, facts = table_path(folder, "derivations"), table_path(folder, "facts")
    with duckdb_connection() as con:
        rows = con.execute(f"""
            SELECT h.relation, h.args, d.rule, list_sort(list(b.relation || b.args) FILTER (WHERE b.num IS NOT NULL))
            FROM (SELECT row_number() OVER () AS k, fact, rule, body FROM read_parquet('{derivations}')) d
            JOIN read_parquet('{facts}') h ON h.num = d.fact
            LEFT JOIN (SELECT k, unnest(CAST(body AS BIGINT[])) AS n FROM
                       (SELECT row_number() OVER () AS k, body FROM read_parquet('{derivations}'))) u USING (k)
            LEFT JOIN read_parquet('{facts}') b ON b.num = u.n
            GROUP BY d.k, h.relation, h.args, d.rule""").fetchall()
    return {(relation, args, rule, tuple(body or ())) for relation, args, rule, body in rows}


def _inputs(name: str, directory: Path):
    if name == "variant":
        return (*variant_inputs(directory), [RO, CONTRADICTIONS])
    return ROOT / "examples" / name / "assertions.jsonl", ROOT / "examples" / name / "receipts.jsonl", [RO]


@pytest.fixture(scope="module", params=[("figure1", 0), ("synthetic", 0), ("variant", 0), ("synthetic", None)],
                ids=["figure1-marked", "synthetic-marked", "variant-marked", "synthetic-kept"])
def folders(request, tmp_path_factory):
    """The Python witness graph exported (its circuit found again from the stored rules), and the
    DuckDB witness folder: every round marking the facts it derives again (KEPT_AGAIN 0), or the
    default, which on these small graphs keeps every derivation."""
    name, kept_again = request.param
    directory = tmp_path_factory.mktemp(name)
    assertions, receipts, rules = _inputs(name, directory)
    build_graph(assertions, receipts, rules, output=directory / "python.graph", labels="witness")
    export_tables(directory / "python.graph", directory / "reference")
    with pytest.MonkeyPatch.context() as patch:
        if kept_again is not None:
            patch.setattr(sql_witness, "KEPT_AGAIN", kept_again)
        build_graph(assertions, receipts, rules, engine="duckdb", output=directory / "direct", tables=True,
                    labels="witness")
    return directory / "reference", directory / "direct"


def test_the_folder_holds_the_python_witness_graph(folders):
    reference, direct = folders
    assert differences(reference, direct) == []


def _names(folder: Path) -> dict[int, tuple[str, str]]:
    with duckdb_connection() as con:
        return {num: (relation, args) for num, relation, args in con.execute(
            f"SELECT num, relation, args FROM read_parquet('{table_path(folder, 'facts')}')").fetchall()}


def test_the_stored_derivations_with_those_found_again_are_every_derivation_of_every_inexact_fact(folders):
    """The folder keeps the derivations of the round that made each fact, and marks a fact derived
    again later; its stored rows are derivations of the reference's, every one it lacks is of a
    marked fact, and with the marked facts' derivations found again from the rules
    (circuit_build.completed) the circuit is the reference's."""
    reference, direct = folders
    stored, expected = _named_derivations(direct), _named_derivations(reference)
    assert expected, "the example has facts a witness cannot settle"
    marked = {(relation, args) for relation, args, rule, _ in stored if rule == UNSTORED_RULE}
    kept = {row for row in stored if row[2] != UNSTORED_RULE}
    assert kept <= expected
    assert {(relation, args) for relation, args, _, _ in expected - kept} <= marked
    names = _names(direct)
    with Graph(direct) as graph:
        inexact = [num for num, _, _ in graph.inexact_facts()]
        found = completed(graph, inexact)
    again = {(*names[fact], rule, tuple(sorted(names[b][0] + names[b][1] for b in body)))
             for fact, rows in found.items() for rule, body in rows}
    assert again == expected


@pytest.mark.parametrize("rederived", [revival.REDERIVED_AT_MOST, 0])
def test_the_folder_checks_and_answers_what_ifs_as_the_python_graph(folders, rederived, monkeypatch):
    """The Python graph stores every derivation; the folder settles its marked facts by re-derivation
    (a few) or by the Boolean closure without the deleted assertions (``rederived`` 0: always)."""
    monkeypatch.setattr(revival, "REDERIVED_AT_MOST", rederived)
    reference, direct = folders
    assert check_graph(direct).ok
    with Graph(reference.parent / "python.graph") as python, Graph(direct) as folder:
        sources = sorted({a.source for a in python.assertions.values()})
        rng = random.Random(7)
        for chosen in [tuple(rng.sample(sources, min(k, len(sources)))) for k in (1, 1, 2, 5, 20)]:
            for policy in ("trust-all", "deployed"):
                a, b = (what_if(graph, Deletion(sources=chosen), policy) for graph in (python, folder))
                assert set(a.dead) == set(b.dead) and not b.uncertain, (chosen, policy)


def test_the_folder_expands_support_sets_as_the_python_graph(folders):
    """Every minimal support set of an inexact fact, expanded from the folder's circuit (the marked
    facts' derivations found again), is the Python graph's."""
    reference, direct = folders
    with Graph(reference.parent / "python.graph") as python, Graph(direct) as folder:
        facts = [(relation, args) for _, relation, args in folder.inexact_facts()]
        for fact in random.Random(3).sample(facts, min(40, len(facts))):
            a, b = expanded(python, fact), expanded(folder, fact)
            assert a.complete and b.complete and a.sets == b.sets, fact
