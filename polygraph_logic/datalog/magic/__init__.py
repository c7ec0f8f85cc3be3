"""Soufflé's magic-set transformation: a program's rules specialised to what its queries ask.

``request.py`` reads what the program asks for (``.pragma "magic-transform"``, the command
line, ``magic``/``no_magic`` qualifiers), ``ignored.py`` what is left alone, ``adorn.py``
the rewriting itself. docs/rule-language.md describes it for users.
"""

from polygraph_logic.datalog.magic.adorn import MagicSets, magic_sets
from polygraph_logic.datalog.magic.ignored import LeftAlone, left_alone
from polygraph_logic.datalog.magic.request import EXCLUDE, TRANSFORM, MagicRequest, excluded, magic_request, settings

__all__ = ["EXCLUDE", "TRANSFORM", "LeftAlone", "MagicRequest", "MagicSets", "excluded", "left_alone",
           "magic_request", "magic_sets", "settings"]
