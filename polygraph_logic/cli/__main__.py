"""``python -m polygraph_logic.cli``."""

import sys

from . import main

sys.exit(main())
