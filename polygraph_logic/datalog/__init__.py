"""The Datalog engine: rule language to evaluation, generic over the semiring.

Usable without the rest of the package (it imports only the ground floor and
``provenance``)::

    >>> from polygraph_logic.datalog import parse_program, evaluate
    >>> str(evaluate(parse_program('a1 :: e("x", "y"). p(x) :- e(x, _).')).label("p", ("x",)))
    'a1'

Its folders, bottom to top (tests/test_layers.py keeps the arrows pointing down):

- ``values/``: the value width (``domain``), records and ADTs, conversions, ``match``
  patterns and the built-in ``functions``;
- here: ``syntax`` (the dataclasses), ``directives`` (``.decl``, ``.type``, ``.input``...),
  ``fact_table`` (ground facts in bulk), ``rewrite``, ``budget``;
- ``checks/``: ``safety``, ``stratify``, ``declarations``, ``record_types``,
  ``souffle_checks``, ``record_patterns``;
- ``reading/``: ``parser`` (lark tree to syntax), ``source`` (fast reading of program text),
  ``preprocess`` and ``includes`` (the C preprocessor, ``.include``), ``components``
  (instances expanded), ``souffle_input`` (``.input`` fact files);
- ``joins/``: ``join_plan``/``join_steps`` (rule bodies as chained closures), ``unit_steps``,
  ``aggregate``, ``subsumption``;
- here: ``program`` (a checked program), ``model`` (facts and labels; ``choice``),
  ``fixpoint`` (a stratum's semi-naive rounds over labels) and ``circuit_eval`` (why-provenance
  as the Boolean closure and one gate per derivation), ``evaluate`` (stratified, either way),
  ``souffle_output``, and ``pydatalog_engine``, an independent engine the tests cross-check
  Boolean results with;
- ``lazy/``: what a graph build leaves unmaterialized and its derivation on demand.
"""

from __future__ import annotations

from polygraph_logic.lazy_exports import lazy_exports

# name -> the module of this package that defines it, imported on first use (PEP 562)
_EXPORTS = {
    "Model": "evaluate", "Program": "program", "evaluate": "evaluate", "load_program": "program",
    "parse_program": "program",
}

__all__ = [*_EXPORTS]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
