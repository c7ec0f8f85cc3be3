"""The Datalog engine: rule language to evaluation, generic over the semiring.

Usable without the rest of the package (it imports only the ground floor and
``provenance``)::

    >>> from polygraph_logic.datalog import parse_program, evaluate
    >>> str(evaluate(parse_program('a1 :: e("x", "y"). p(x) :- e(x, _).')).label("p", ("x",)))
    'a1'

The pipeline, one module a stage: ``syntax`` (dataclasses) <- ``parser`` (lark tree to
syntax) <- ``source`` (fast reading of program text; ``preprocess``, the C preprocessor, for a
text with ``#`` lines) -> ``components`` (instances expanded) -> ``program`` (checks:
``declarations``, ``safety``, ``stratify``; Soufflé's ``directives`` and ``souffle_io``)
-> ``join_plan``/``join_steps`` (rule bodies as chained closures) -> ``evaluate``
(stratified semi-naive; ``functions``, ``aggregate``, ``budget``, ``fact_table``).
``pydatalog_engine`` is an independent engine the tests cross-check Boolean results with.
"""

from polygraph_logic.datalog.evaluate import Model, evaluate
from polygraph_logic.datalog.program import Program, load_program, parse_program

__all__ = ["Model", "Program", "evaluate", "load_program", "parse_program"]
