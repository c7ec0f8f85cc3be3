"""The Gene Ontology slice of ../shared/data as a build's inputs, for the tests that build it.

Its annotations (GPAD lines) as assertions and the rules every GO build uses: RO's class
rules, the existential rules and the GO graph as background facts.  Tests skip with
``GO_SKIP`` when the shared data is absent.
"""

from pathlib import Path

import pytest

GO = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "go-pombase"
GO_SKIP = pytest.mark.skipif(not (GO / "truncated-pombase.gpad").exists(),
                             reason=f"the Gene Ontology slice is not at {GO}")


def go_inputs(folder: Path) -> tuple[list, list]:
    """The slice's assertions and rule files (the background written into ``folder``)."""
    from polygraph_logic.importers import read_gpad, read_obographs, write_background
    from polygraph_logic.resources import rule_file
    assertions, _ = read_gpad(GO / "truncated-pombase.gpad")
    edges, _, _ = read_obographs(GO / "go-truncated-pombase.json")
    write_background(folder / "background.dl", edges)
    return assertions, [rule_file("ro-class"), rule_file("existential"), folder / "background.dl"]
