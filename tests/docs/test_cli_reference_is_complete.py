"""docs/reference/cli.md documents every ``almanac`` command and option, as ``--help`` has them.

Each command (a leaf of the command tree: ``almanac ledger show``, ``almanac sink``) must have a
section headed ``### `almanac …` `` naming each of its options (``--wait``, ``--no-wait``,
``-n``); the root's ``--version`` likewise. A section for a command that does not exist fails too,
so a renamed command cannot leave its old section behind.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import typer
from doc_markdown import ROOT, prose_lines, slug
from typer._click.core import Command  # Typer 0.29 vendors Click (almanac.cli.output too)
from typer.core import TyperGroup, TyperOption

from almanac.cli import build_app

REFERENCE = ROOT / "docs" / "reference" / "cli.md"
_SECTION = re.compile(r"^###\s+`(almanac[^`]*)`\s*$")


def sections() -> dict[str, str]:
    """Command path (``almanac ledger show``) → the text of its ``###`` section."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for _, line in prose_lines(REFERENCE.read_text(encoding="utf-8")):
        heading = _SECTION.match(line)
        if heading:
            current = found.setdefault(heading.group(1).strip(), [])
        elif line.startswith("#"):
            current = None
        elif current is not None:
            current.append(line)
    return {name: "\n".join(lines) for name, lines in found.items()}


def commands(command: Command, path: str) -> Iterator[tuple[str, Command]]:
    """Every leaf command under ``command`` with its path."""
    children = command.commands if isinstance(command, TyperGroup) else {}
    if not children:
        yield path, command
    for name, child in sorted(children.items()):
        yield from commands(child, f"{path} {name}")


def option_names(command: Command) -> set[str]:
    """Every option spelling a user types (``--help`` aside)."""
    names: set[str] = set()
    for param in command.params:
        if isinstance(param, TyperOption):
            names.update(param.opts, param.secondary_opts)
    return names - {"--help"}


def root() -> TyperGroup:
    group = typer.main.get_command(build_app())
    assert isinstance(group, TyperGroup)
    return group


def documents(text: str, option: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text) is not None


def test_every_command_and_option_is_documented() -> None:
    documented = sections()
    missing = []
    for path, command in commands(root(), "almanac"):
        if path not in documented:
            missing.append(f"no section ### `{path}`")
            continue
        missing += [
            f"{path}: {option}"
            for option in sorted(option_names(command))
            if not documents(documented[path], option)
        ]
    for option in sorted(option_names(root())):
        section = documented.get(f"almanac {option}", "")
        if not documents(section, option):
            missing.append(f"no section ### `almanac {option}`")
    assert missing == []


def test_every_documented_command_exists() -> None:
    real = {path for path, _ in commands(root(), "almanac")}
    real |= {f"almanac {option}" for option in option_names(root())}
    assert sorted(set(sections()) - real) == []


def test_the_contents_list_links_every_command_section() -> None:
    contents = REFERENCE.read_text(encoding="utf-8").split("\n## ", 1)[0]
    unlisted = [name for name in sections() if f"](#{slug(f'`{name}`')})" not in contents]
    assert unlisted == []


def test_the_walk_sees_nested_commands_and_flag_pairs() -> None:
    # Guards the tests above against walking nothing.
    leaves = dict(commands(root(), "almanac"))
    assert {"almanac ledger show", "almanac shadow report", "almanac apply"} <= set(leaves)
    assert {"--wait", "--no-wait", "--request-id"} <= option_names(leaves["almanac trigger"])
    assert "-n" in option_names(leaves["almanac status"])
