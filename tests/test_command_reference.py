"""docs/commands.md is the command reference generated from the argument parser, never stale."""

from __future__ import annotations

from pathlib import Path

from polygraph_logic.cli import COMMANDS
from polygraph_logic.cli.reference import REGENERATE, command_reference

ROOT = Path(__file__).resolve().parent.parent
COMMANDS_MD = ROOT / "docs" / "commands.md"


def test_docs_commands_md_is_the_generated_reference():
    expected = command_reference()
    actual = COMMANDS_MD.read_text(encoding="utf-8") if COMMANDS_MD.exists() else ""
    assert actual == expected, f"docs/commands.md is stale: regenerate it with `{REGENERATE}`"


def test_every_command_is_in_the_reference():
    reference = command_reference()
    missing = [name for name in COMMANDS if f"\n### polygraph {name}\n" not in reference
               or f"usage: polygraph {name} " not in reference]
    assert not missing, f"commands missing from the reference: {missing}"


def test_the_reference_does_not_depend_on_the_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "40")
    narrow = command_reference()
    monkeypatch.setenv("COLUMNS", "250")
    assert command_reference() == narrow
