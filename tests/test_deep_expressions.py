"""Long and deep expressions through the real command (issue 13, item 4): a sum of a few
hundred terms, a couple of thousand unary minuses or parentheses evaluate; only a clause
nested deeper than ``depth.MAX_DEPTH`` levels is refused, as ``too_deep`` at the file,
line and column of the expression. Expected values are Python's own arithmetic."""

from __future__ import annotations

import re

import pytest

from polygraph_logic.cli import main
from polygraph_logic.datalog.reading.depth import MAX_DEPTH


def run(tmp_path, capsys, expression: str):
    path = tmp_path / "deep.dl"
    path.write_text(f"p(7).\nq(y) :- p(x),\n  y = {expression}.\n")
    status = main(["eval", str(path)])
    out, err = capsys.readouterr()
    return status, out, err, path


@pytest.mark.parametrize("expression, value", [
    ("x" + " + 1" * 400, 7 + 400),
    ("x" + " - 2 + 3" * 600, 7 + 600),
    ("x" + " * 1" * 900, 7),
    ("-" * 1991 + "x", (-1) ** 1991 * 7),
    ("(" * 1900 + "x" + " + 1)" * 1900, 7 + 1900),
])
def test_long_and_deep_expressions_evaluate(tmp_path, capsys, expression, value):
    status, out, err, _ = run(tmp_path, capsys, expression)
    assert status == 0, err
    assert re.search(rf"\bq\({value}\)", out), out


@pytest.mark.parametrize("expression", [
    "x" + " + 1" * (MAX_DEPTH + 10),
    "-" * 30000 + "x",
    "(" * 5000 + "x" + " * 2)" * 5000,
])
def test_too_deep_expressions_name_file_line_and_column(tmp_path, capsys, expression):
    status, out, err, path = run(tmp_path, capsys, expression)
    assert status == 2
    assert err.strip().splitlines() == [err.strip()]  # one line, no traceback
    assert err.startswith(f"{path}:3:3: too_deep: ")


@pytest.mark.parametrize("rule, expression", [
    ("n(y, k) :- n(x, j), j < 16, k = j + 1, y = x * x.", "x * x"),  # 2^(2^13) has 2,467 digits, 2^(2^14) 4,933
    ("n(y, k) :- n(x, j), j < 1, k = j + 1, y = x ^ 100000.", "x ^"),  # refused before it is computed
])
def test_derived_integers_over_4300_digits_fail_where_they_are_made(tmp_path, capsys, rule, expression):
    column = rule.index(expression) + 1
    path = tmp_path / "big.dl"
    path.write_text(f"n(2, 0).\n{rule}\n")
    assert main(["eval", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{path}:2:{column}: too_large: "), err
    assert 2 ** 2 ** 13 < 10 ** 4300 <= 2 ** 2 ** 14  # the oracle for the first rule
