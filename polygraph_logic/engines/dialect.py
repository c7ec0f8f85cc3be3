"""The few SQL spellings that differ between the engines a plan runs on.

Everything else in the plan is plain SQL both DuckDB and Spark SQL read (joins, GROUP
BY, UNION ALL, CASE); list functions and lambdas are spelled through a ``Dialect``, so a
plan written for DuckDB is written again for Spark by choosing the other table entry,
not by editing statements.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Dialect:
    """Format strings for list operations; ``{0}``, ``{1}`` are SQL expressions."""

    name: str
    lam: str          # a one-argument lambda: {0} the parameter, {1} the body
    length: str       # number of elements
    concat: str       # two lists concatenated
    distinct: str     # duplicates removed (any order)
    sort: str         # ascending, lists compared lexicographically
    flatten: str      # a list of lists made one list
    transform: str    # {0} list, {1} lambda
    filter: str       # {0} list, {1} lambda
    has_all: str      # every element of {1} is in {0}
    union: str        # two sorted monomials united, sorted, without duplicates
    prepend: str      # {0} element put before list {1}
    tail: str         # the list {0} without its first element
    head: str         # the first {1} elements of {0}
    single: str       # the one-element list of {0}
    first: str        # the first element of {0}
    collect: str      # aggregate: the list of every {0} in the group
    int: str          # {0} as a 32-bit integer (an assertion number's type)
    int_list: str     # the SQL type of a list of integers
    empty_label: str  # the label with the empty monomial alone (background knowledge, 1)
    materialized: str | None = None  # how a CTE is asked to be computed once (None: it may not be)
    sorted_first: bool = False  # labels.normalize orders a label before minimising it under a cap

    def __call__(self, operation: str, *args: str) -> str:
        return getattr(self, operation).format(*args)

    def lambda_(self, parameter: str, body: str) -> str:
        return self.lam.format(parameter, body)


DUCKDB = Dialect(
    name="duckdb",
    lam="lambda {0}: {1}",
    length="len({0})",
    concat="list_concat({0}, {1})",
    distinct="list_distinct({0})",
    sort="list_sort({0})",
    flatten="flatten({0})",
    transform="list_transform({0}, {1})",
    filter="list_filter({0}, {1})",
    # not list_has_all: inside the nested lambdas of labels.minimal it took 1.13 s against 0.32 s
    # for this spelling (x40, 137 k captured products; 4.78 s against 0.20 s for the 1,057 of
    # more than 16 monomials), the same kept monomials (docs/bench/notebook.md)
    has_all="len(list_filter({1}, lambda a_: list_contains({0}, a_))) = len({1})",
    # not list_sort(list_distinct(...)): list_distinct hashes (x40 products, 0.64 -> 0.45 s)
    union="list_sort(list_concat({0}, list_filter({1}, lambda c_: NOT list_contains({0}, c_))))",
    prepend="list_prepend({0}, {1})",
    tail="list_slice({0}, 2, len({0}))",
    head="list_slice({0}, 1, {1})",
    single="[{0}]",
    first="{0}[1]",
    collect="list({0})",
    int="CAST({0} AS INTEGER)",
    int_list="INTEGER[]",
    empty_label="[[]::INTEGER[]]",
    materialized="MATERIALIZED ",
    sorted_first=True,
)

SPARK = Dialect(
    name="spark",
    lam="{0} -> {1}",
    length="size({0})",
    concat="concat({0}, {1})",
    distinct="array_distinct({0})",
    sort="array_sort({0})",
    flatten="flatten({0})",
    transform="transform({0}, {1})",
    filter="filter({0}, {1})",
    has_all="size(array_except({1}, {0})) = 0",
    union="array_sort(array_distinct(concat({0}, {1})))",
    prepend="concat(array({0}), {1})",
    tail="slice({0}, 2, size({0}))",
    head="slice({0}, 1, {1})",
    single="array({0})",
    first="element_at({0}, 1)",
    collect="collect_list({0})",
    int="CAST({0} AS INT)",
    int_list="ARRAY<INT>",
    empty_label="array(cast(array() AS ARRAY<INT>))",
)

DIALECTS = {d.name: d for d in (DUCKDB, SPARK)}
