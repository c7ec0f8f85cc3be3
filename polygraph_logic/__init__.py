"""polygraph_logic: Datalog with why-provenance for knowledge graphs built by language models.

    >>> from polygraph_logic import parse_program, evaluate
    >>> model = evaluate(parse_program('a1 :: e("x", "y"). p(x) :- e(x, _).'))
    >>> str(model.label("p", ("x",)))
    'a1'
"""

__version__ = "0.1.0"

from .errors import EvaluationError, ParseError, PolygraphError, Position, ProgramError
from .evaluate import Model, evaluate
from .program import Program, load_program, parse_program
from .provenance import make_semiring

__all__ = [
    "EvaluationError",
    "Model",
    "ParseError",
    "PolygraphError",
    "Position",
    "Program",
    "ProgramError",
    "__version__",
    "evaluate",
    "load_program",
    "make_semiring",
    "parse_program",
]
