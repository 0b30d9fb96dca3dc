"""Every command's ``--help`` is plain text: Click prints a docstring as written, so the
reStructuredText of the code's docs (double backticks, ``:func:`` roles) would show literally."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from typer.main import get_command
from typer.testing import CliRunner

from almanac.cli import app

MARKUP = ("``", ":func:", ":class:", ":mod:", ":data:", ":meth:")


def _paths(command: Any, path: list[str]) -> Iterator[list[str]]:
    yield path
    for name, sub in (getattr(command, "commands", None) or {}).items():
        yield from _paths(sub, [*path, name])


def test_no_help_text_carries_rst_markup() -> None:
    runner = CliRunner()
    paths = list(_paths(get_command(app), []))
    assert len(paths) >= 40  # every command and group, not a truncated walk
    marked = {}
    for path in paths:
        shown = runner.invoke(app, [*path, "--help"]).output
        found = [m for m in MARKUP if m in shown]
        if found:
            marked[" ".join(path) or "almanac"] = found
    assert marked == {}
