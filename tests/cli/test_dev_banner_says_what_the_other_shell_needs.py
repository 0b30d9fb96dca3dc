"""``almanac dev``'s banner and hints: what a second shell needs, spelled so that it runs.

With a non-default frontend or sink port, or data directory, the control commands (and the
README's Python example) need the stack's address and state in their environment: the banner
prints the ``export`` line (without ``ALMANAC_DATA_DIR``, ``almanac status`` would read the default
data directory's ledger and show another stack's counts). After
``make run`` the venv is not activated, so hints spell the command as it was run.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from almanac.stack import dev
from almanac.stack.dev import DevOptions, almanac_command


def banner(options: DevOptions) -> list[str]:
    said: list[str] = []
    dev._banner(options, options.worker_settings(), said.append)
    return said


def test_a_non_default_port_prints_the_export_line(tmp_path: Path) -> None:
    options = DevOptions(data_dir=tmp_path, examples=tmp_path, port=17233, sink_port=9000)
    (line,) = [s for s in banner(options) if "export" in s]
    assert "export ALMANAC_TEMPORAL_ADDRESS=127.0.0.1:17233 ALMANAC_DEV_SINK_PORT=9000" in line


def test_the_default_ports_and_data_dir_need_no_export(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))  # the default: $XDG_DATA_HOME/almanac
    options = DevOptions(data_dir=tmp_path / "almanac", examples=tmp_path)
    assert not [s for s in banner(options) if "export" in s]


def test_another_data_dir_is_exported_for_the_control_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    options = DevOptions(data_dir=tmp_path / "my data", examples=tmp_path)
    (line,) = [s for s in banner(options) if "export" in s]
    assert f"export ALMANAC_DATA_DIR='{tmp_path}/my data'  (the control" in line


def test_hints_spell_the_command_as_run_when_it_is_not_on_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(dev.shutil, "which", lambda name: None)
    monkeypatch.setattr(sys, "argv", [".venv/bin/almanac", "dev"])
    assert almanac_command() == ".venv/bin/almanac"
    monkeypatch.setattr(dev.shutil, "which", lambda name: "/usr/local/bin/almanac")
    assert almanac_command() == "almanac"


def test_the_banner_prints_the_console_address(tmp_path: Path) -> None:
    options = DevOptions(data_dir=tmp_path, examples=tmp_path, console_port=18240)
    (line,) = [s for s in banner(options) if "Almanac console" in s]
    assert "http://localhost:18240/" in line


def test_a_headless_stack_gives_no_web_ui_hint(tmp_path: Path) -> None:
    headless = DevOptions(data_dir=tmp_path, examples=tmp_path, ui=False)
    (line,) = [s for s in banner(headless) if "Temporal Web UI" in s]
    assert line.endswith("[/bold] (headless: --no-ui)")  # no filter hint for a UI not there
    (line,) = [s for s in banner(DevOptions(data_dir=tmp_path, examples=tmp_path)) if "Web UI" in s]
    assert 'http://localhost:8233  (filter occurrences: ScheduleId="every-10-seconds")' in line


def test_every_banner_value_starts_in_one_column(tmp_path: Path) -> None:
    import re

    options = DevOptions(data_dir=tmp_path, examples=tmp_path, port=17233, sink_port=9000)
    labelled = [re.sub(r"\[/?bold\]", "", s) for s in banner(options) if "[bold]" in s]
    assert any(s.startswith("  in another shell") for s in labelled)
    assert any(s.startswith("  try ") for s in labelled)
    # A label of up to 18 characters, padded, one space, then the value in column 22.
    assert [s for s in labelled if not re.match(r"  .{18} \S", s)] == []
