"""The command reference (docs/commands.md), generated from the ``polygraph`` argument parser.

``python -m polygraph_logic.cli.reference > docs/commands.md`` writes it again; a test fails
when the file is stale. The text depends on nothing but the parser: usage lines are wrapped
at a fixed width, never the terminal's.
"""

from __future__ import annotations

import argparse
import re
import sys

from polygraph_logic.cli import COMMAND_MODULES, COMMANDS, build_parser

#: the width usage lines wrap at (argparse would read the terminal's otherwise)
WIDTH = 100

#: a heading for the commands of each module of polygraph_logic.cli, in `polygraph --help` order
TITLES = {
    "program": "Programs",
    "graph": "Building and reading graphs",
    "ledger": "The ledger: versions",
    "whatif": "What-if and explanations",
    "contradictions": "Contradictions",
    "export": "RDF export",
    "serve": "The explorer",
    "memory": "Memory for agents (MCP)",
    "construct": "Construction with a model",
    "audit": "The audit",
    "regenerate": "Regeneration after a retraction",
    "retrieval": "Retrieval evaluation",
    "tables": "Tables folders and SQL what-if",
    "completion": "Shell completion",
}

REGENERATE = "python -m polygraph_logic.cli.reference > docs/commands.md"


def _formatter(prog: str) -> argparse.HelpFormatter:
    return argparse.HelpFormatter(prog, width=WIDTH)


def _markdown(text: str) -> str:
    """Help text as Markdown: white space folded, nothing that could read as an HTML tag."""
    text = " ".join(text.split())
    text = text.replace("*", "\\*")
    return re.sub(r"<(?=[A-Za-z/!?])", "&lt;", text)


def _subcommands(parser: argparse.ArgumentParser) -> tuple[dict[str, argparse.ArgumentParser], dict[str, str]]:
    """The subcommands' parsers in `polygraph --help` order, and each one's one-line help."""
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
    return {name: action.choices[name] for name in helps}, helps


def _arguments(command: argparse.ArgumentParser) -> list[str]:
    """One Markdown list per argument group of a subcommand (help itself left out)."""
    lines: list[str] = []
    formatter = _formatter(command.prog)
    for group in command._action_groups:
        actions = [a for a in group._group_actions
                   if a.help is not argparse.SUPPRESS and not isinstance(a, argparse._HelpAction)]
        if not actions:
            continue
        title = {"positional arguments": "Arguments", "options": "Options",
                 "optional arguments": "Options"}.get(group.title or "", group.title or "Options")
        lines += ["", f"{title[:1].upper()}{title[1:]}:", ""]
        for action in actions:
            invocation = formatter._format_action_invocation(action)
            help_text = _markdown(formatter._expand_help(action)) if action.help else ""
            if action.required and action.option_strings:
                help_text = f"(required) {help_text}".rstrip()
            lines.append(f"- `{invocation}`" + (f": {help_text}" if help_text else ""))
    return lines


def command_reference() -> str:
    """Returns docs/commands.md: every subcommand of ``polygraph`` with its usage, description
    and arguments, grouped as ``polygraph --help`` lists them."""
    parser = build_parser()
    commands, helps = _subcommands(parser)
    modules = [m for m in COMMAND_MODULES if any(COMMANDS.get(name) == m for name in commands)]
    modules += sorted({COMMANDS.get(name, "other") for name in commands} - set(modules))
    lines = [
        "# Command reference",
        "",
        "<!-- Generated from the argument parser by polygraph_logic/cli/reference.py; do not edit.",
        f"     Regenerate with: {REGENERATE} -->",
        "",
        "Every subcommand of `polygraph`, in the order of `polygraph --help`, with its usage, what it",
        "does and each argument. `polygraph COMMAND --help` prints the same. The conventions every",
        "command shares (one deletion from the deletion flags, errors, exit statuses, `--json`) are in",
        "[command-line.md](command-line.md).",
        "",
    ]
    for module in modules:
        names = [name for name in commands if COMMANDS.get(name, "other") == module]
        lines.append(f"- {TITLES.get(module, module)}: " + ", ".join(f"[`{n}`](#polygraph-{n})" for n in names))
    for module in modules:
        lines += ["", f"## {TITLES.get(module, module)}"]
        for name in (n for n in commands if COMMANDS.get(n, "other") == module):
            command = commands[name]
            command.formatter_class = _formatter
            usage = command.format_usage().strip()
            summary = _markdown(helps[name])
            summary = summary[:1].upper() + summary[1:] + ("" if summary.endswith(".") else ".")
            lines += ["", f"### polygraph {name}", "", summary, "", "```text", usage, "```"]
            if command.description:
                lines += ["", _markdown(command.description)]
            lines += _arguments(command)
    return "\n".join(lines) + "\n"


def main() -> int:
    sys.stdout.write(command_reference())
    return 0


if __name__ == "__main__":
    sys.exit(main())
