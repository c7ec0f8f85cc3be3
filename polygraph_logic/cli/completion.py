"""``completion``: a shell completion script for bash, zsh or fish, generated from the argument parser.

The script knows every command, each command's options, and the values of options and
arguments that have a fixed set of choices; anything else completes as a file name. It is
printed, not installed: each shell's help says where to put it. Nothing here is hand-written
per command, so a new flag completes as soon as it is registered.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass

from polygraph_logic import __version__
from polygraph_logic.cli import build_parser

SHELLS = ("bash", "zsh", "fish")
#: words a script may hold unquoted: option strings, command names, choices
_WORD = re.compile(r"[A-Za-z0-9_.:+/=-]+")

LOADING = {
    "bash": 'eval "$(polygraph completion bash)" in ~/.bashrc, or save the script as '
            "~/.local/share/bash-completion/completions/polygraph",
    "zsh": 'eval "$(polygraph completion zsh)" in ~/.zshrc after compinit, or save the script as '
           "_polygraph in a folder of $fpath",
    "fish": "polygraph completion fish > ~/.config/fish/completions/polygraph.fish",
}


@dataclass(frozen=True)
class Option:
    """One option of a command: its flags, whether it takes a value, and the values it allows."""

    flags: tuple[str, ...]
    help: str
    takes_value: bool
    choices: tuple[str, ...]


@dataclass(frozen=True)
class Command:
    """One subcommand: its options and the choices of its positional arguments."""

    name: str
    help: str
    options: tuple[Option, ...]
    choices: tuple[str, ...]


def register(commands) -> None:
    """Adds the ``completion`` subcommand."""
    completion = commands.add_parser(
        "completion", help="print a shell completion script for bash, zsh or fish",
        description="Prints a completion script for SHELL, generated from this command's argument parser: "
                    "commands, their options and the values of options with a fixed set of choices. "
                    f"bash: {LOADING['bash']}. zsh: {LOADING['zsh']}. fish: {LOADING['fish']}.")
    completion.add_argument("shell", choices=SHELLS, help="the shell to complete in: bash, zsh or fish")
    completion.set_defaults(run=_run_completion)


def _run_completion(args: argparse.Namespace) -> int:
    print(completion_script(args.shell), end="")
    return 0


def completion_script(shell: str) -> str:
    """Returns the completion script of ``polygraph`` for ``shell`` (one of SHELLS)."""
    commands = read_commands(build_parser())
    return {"bash": _bash, "zsh": _zsh, "fish": _fish}[shell](commands)


def read_commands(parser: argparse.ArgumentParser) -> list[Command]:
    """The subcommands of ``parser`` in ``--help`` order, each with its options and choices."""
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
    return [_command(name, helps[name], action.choices[name]) for name in helps]


def _command(name: str, help_text: str, parser: argparse.ArgumentParser) -> Command:
    formatter = parser._get_formatter()
    options, choices = [], []
    for action in parser._actions:
        allowed = tuple(str(c) for c in action.choices or () if _WORD.fullmatch(str(c)))
        if not action.option_strings:
            choices += allowed
            continue
        shown = formatter._expand_help(action) if action.help and action.help is not argparse.SUPPRESS else ""
        options.append(Option(tuple(f for f in action.option_strings if _WORD.fullmatch(f)), _short(shown),
                              action.nargs != 0, allowed))
    return Command(name, _short(help_text), tuple(options), tuple(choices))


def _short(text: str, width: int = 70) -> str:
    """One line of help: white space folded, cut at a word before ``width`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width].rsplit(" ", 1)[0] + " ..."


def _flags(command: Command) -> list[str]:
    return [flag for option in command.options for flag in option.flags]


def _header(shell: str) -> list[str]:
    return [f"# {shell} completion for polygraph (polygraph_logic {__version__}), generated from its "
            "argument parser by `polygraph completion`", f"# load it: {LOADING[shell]}"]


def _bash(commands: list[Command]) -> str:
    lines = [*_header("bash"), "_polygraph() {",
             '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" options="" values=""',
             "    if (( COMP_CWORD == 1 )); then",
             f'        COMPREPLY=($(compgen -W "{" ".join(c.name for c in commands)} -h --help --version" -- "$cur"))',
             "        return", "    fi", '    case "${COMP_WORDS[1]} $prev" in']
    for command in commands:
        for option in command.options:
            if option.choices:
                pattern = "|".join(f'"{command.name} {flag}"' for flag in option.flags)
                lines.append(f'        {pattern}) COMPREPLY=($(compgen -W "{" ".join(option.choices)}" -- "$cur")); '
                             "return;;")
    lines += ["    esac", '    case "${COMP_WORDS[1]}" in']
    for command in commands:
        lines.append(f'        {command.name}) options="{" ".join(_flags(command))}"; '
                     f'values="{" ".join(command.choices)}";;')
    lines += ["    esac",
              '    if [[ "$cur" == -* ]]; then',
              '        COMPREPLY=($(compgen -W "$options" -- "$cur"))',
              "    else",
              '        COMPREPLY=($(compgen -W "$values" -- "$cur") $(compgen -f -- "$cur"))',
              "    fi", "}", "complete -o filenames -o bashdefault -F _polygraph polygraph"]
    return "\n".join(lines) + "\n"


def _zsh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _zsh(commands: list[Command]) -> str:
    described = " ".join(_zsh_quote(f"{c.name}:{c.help}") for c in commands)
    lines = ["#compdef polygraph", *_header("zsh"), "_polygraph() {",
             "    local -a commands options values",
             f"    commands=({described})",
             "    if (( CURRENT == 2 )); then",
             "        _describe -t commands 'polygraph command' commands",
             "        return", "    fi", '    case "$words[2] $words[CURRENT-1]" in']
    for command in commands:
        for option in command.options:
            if option.choices:
                pattern = "|".join(_zsh_quote(f"{command.name} {flag}") for flag in option.flags)
                lines.append(f"        {pattern}) values=({' '.join(option.choices)}); compadd -a values; return;;")
    lines += ["    esac", '    case "$words[2]" in']
    for command in commands:
        lines.append(f"        {command.name}) options=({' '.join(_flags(command))}); "
                     f"values=({' '.join(command.choices)});;")
    lines += ["    esac",
              "    if [[ $PREFIX == -* ]]; then",
              "        compadd -a options",
              "    else",
              "        (( $#values )) && compadd -a values",
              "        _files",
              "    fi", "}",
              'if [[ "$funcstack[1]" == _polygraph ]]; then',
              '    _polygraph "$@"',
              "else",
              "    compdef _polygraph polygraph",
              "fi"]
    return "\n".join(lines) + "\n"


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _fish(commands: list[Command]) -> str:
    lines = _header("fish")
    for command in commands:
        lines.append(f"complete -c polygraph -n __fish_use_subcommand -f -a {command.name} "
                     f"-d {_fish_quote(command.help)}")
    for command in commands:
        seen = f"-n {_fish_quote('__fish_seen_subcommand_from ' + command.name)}"
        for option in command.options:
            flags = " ".join(f"-l {f[2:]}" if f.startswith("--") else f"-s {f[1:]}" if len(f) == 2 else f"-o {f[1:]}"
                             for f in option.flags)
            value = f"-x -a {_fish_quote(' '.join(option.choices))}" if option.choices \
                else "-r" if option.takes_value else ""
            lines.append(" ".join(part for part in (f"complete -c polygraph {seen}", flags, value,
                                                    f"-d {_fish_quote(option.help)}") if part))
        if command.choices:
            lines.append(f"complete -c polygraph {seen} -a {_fish_quote(' '.join(command.choices))}")
    return "\n".join(lines) + "\n"
