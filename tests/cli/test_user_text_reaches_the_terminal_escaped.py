"""User text never reaches the terminal raw: its control characters are shown as escapes.

A reason like ``"ok\\x1b[2J\\rall clear"`` cleared the operator's screen and overwrote the line
when ``ledger show`` printed the event trail. Every way the CLI prints user text (Rich tables,
plain lines, error lines, plain tables) goes through ``almanac.cli.output.terminal_text``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import typer

import ledger
from almanac.cli.output import PlainTable, fail, terminal_text
from ledger.migrate import upgrade
from timecontract import parse_spec

EVIL = "ok\x1b[2J\x1b[31m\rall clear\x07 \u202edesrever\x9b"


def test_terminal_text_escapes_controls_and_keeps_text() -> None:
    assert terminal_text(EVIL) == "ok\\x1b[2J\\x1b[31m\\rall clear\\x07 \\u202edesrever\\x9b"
    assert terminal_text("tab\tand\nline, été, 日本") == "tab\tand\nline, été, 日本"


def test_ledger_show_prints_a_reason_with_its_controls_escaped(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    upgrade(url)
    store = ledger.Ledger.from_url(url)
    spec = parse_spec(
        {
            "schema": "scheduleSpec.v1",
            "scheduleId": "evil-reasons",
            "revision": 1,
            "timeZone": "UTC",
            "tzdbVersion": "2026a",
            "rule": "FREQ=DAILY",
            "cutoverAt": "2026-01-01T00:00:00Z",
        }
    )
    at = datetime(2026, 6, 1, tzinfo=UTC)
    ledger.publish_revision(store, spec, at, by="test")
    trigger = ledger.record_trigger(
        store, "evil-reasons", "r1", at + timedelta(hours=1), by=EVIL, reason=EVIL
    )
    store.dispose()
    result = run("ledger", "show", trigger.occurrence.occurrence_id, "--url", url)
    assert result.exit_code == 0, result.output
    assert (
        "\x1b" not in result.output and "\r" not in result.output and "\u202e" not in result.output
    )
    assert "\\x1b[2J" in result.output


def test_an_error_line_escapes_what_it_repeats(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(typer.Exit):
        fail(f"--reason={EVIL}: refused")
    assert capsys.readouterr().err == f"error: --reason={terminal_text(EVIL)}: refused\n"


@pytest.mark.parametrize("cell", [EVIL])
def test_a_plain_table_escapes_its_cells(cell: str) -> None:
    table = PlainTable("t", ["a"])
    table.add_row(cell)
    assert "\x1b" not in table.render()
