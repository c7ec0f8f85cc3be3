"""``python -m polygraph_logic``: the ``polygraph`` command."""

import sys

from polygraph_logic.cli import main

sys.exit(main())
