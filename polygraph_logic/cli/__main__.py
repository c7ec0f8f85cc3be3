"""``python -m polygraph_logic.cli``."""

import sys

from polygraph_logic.cli import main

sys.exit(main())
