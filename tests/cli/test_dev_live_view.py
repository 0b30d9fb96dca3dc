"""``almanac dev``'s live view: every transition once, in time order, local and UTC time.

A SQLite ledger in a temporary file, transitions made with the ledger's own functions between
two polls; the view's output is read from a recording Rich console. America/New_York in November
2026 is EST (-05:00, hand-checked: DST ended 2026-11-01).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

import ledger
from almanac.cli import app
from almanac.stack.live import LiveLog, line, summary
from ledger.migrate import upgrade
from timecontract import parse_spec

T0 = datetime(2026, 11, 2, 14, 0, tzinfo=UTC)  # 09:00 EST


def spec(**overrides: Any) -> Any:
    data: dict[str, Any] = {
        "schema": "scheduleSpec.v1",
        "scheduleId": "minutely",
        "revision": 1,
        "timeZone": "America/New_York",
        "tzdbVersion": "2026a",
        "rule": "FREQ=MINUTELY",
        "misfirePolicy": "SKIP",
        "lateness": "PT30S",
        "cutoverAt": "2026-11-01T00:00:00Z",
    }
    data.update(overrides)
    return parse_spec(data)


@pytest.fixture
def url(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    upgrade(url)
    return url


@pytest.fixture
def handle(url: str) -> Iterator[ledger.Ledger]:
    opened = ledger.Ledger.from_url(url)
    yield opened
    opened.dispose()


def view(handle: ledger.Ledger) -> tuple[LiveLog, Console]:
    console = Console(record=True, width=400, color_system=None)
    live = LiveLog(handle, console)
    live.baseline()
    return live, console


def lines(console: Console) -> list[str]:
    return [x for x in console.export_text(clear=True).splitlines() if x.strip()]


def test_each_transition_between_two_polls_is_printed_once_in_order(
    handle: ledger.Ledger,
) -> None:
    minutely = spec()
    ledger.publish_revision(handle, minutely, T0, by="test")
    ledger.materialize(handle, minutely, T0, T0 + timedelta(minutes=3), T0)
    live, console = view(handle)
    occurrence_id = "minutely.r1.20261102T090000.f0"
    ledger.release_due(handle, "minutely", T0)
    won = ledger.claim(
        handle,
        occurrence_id,
        ledger.get_gate(handle, "minutely"),
        worker_identity="w",
        implementation_alias="default",
        input_digest="sha256:x",
        now_utc=T0 + timedelta(seconds=1),
    )
    assert won.attempt is not None
    generation = won.attempt.claim_generation
    ledger.mark_running(handle, occurrence_id, generation, T0 + timedelta(seconds=2), by="test")
    ledger.succeeded(handle, occurrence_id, generation, T0 + timedelta(seconds=3), by="test")

    live.poll()
    printed = lines(console)
    assert [p.split()[1] for p in printed] == ["DUE", "DISPATCHING", "RUNNING", "SUCCEEDED"]
    assert [p.split()[0] for p in printed] == ["14:00:00Z", "14:00:01Z", "14:00:02Z", "14:00:03Z"]
    assert all(occurrence_id in p for p in printed)
    assert "local 2026-11-02T09:00:00-05:00 · UTC 2026-11-02T14:00:00Z" in printed[-1]
    live.poll()
    assert lines(console) == []  # nothing twice


def test_a_burst_prints_some_and_names_the_command_that_lists_the_rest(
    handle: ledger.Ledger, url: str
) -> None:
    minutely = spec()
    ledger.publish_revision(handle, minutely, T0, by="test")
    ledger.materialize(handle, minutely, T0, T0 + timedelta(minutes=30), T0)
    live, console = view(handle)
    # 30 minutes of downtime: under SKIP every overdue occurrence but the on-time one expires.
    released = ledger.release_due(handle, "minutely", T0 + timedelta(minutes=29, seconds=10))
    expired = len(released.expired)
    assert expired == 29
    live.poll()
    printed = lines(console)
    shown = [p for p in printed if p.split()[1] == "MISFIRE_EXPIRED"]
    assert len(shown) == live.per_state_shown
    (summary,) = [p for p in printed if "more occurrences" in p]
    rest = expired - live.per_state_shown
    assert f"minutely: {rest} more occurrences MISFIRE_EXPIRED" in summary
    command = re.search(r"list them: almanac (ledger list .*)$", summary)
    assert command is not None
    listed = CliRunner().invoke(app, [*command.group(1).split(), "--url", url, "--json"])
    assert listed.exit_code == 0, listed.output
    ids = {r["occurrenceId"] for r in json.loads(listed.stdout)}
    shown_ids = {p.split()[2] for p in shown}
    assert len(ids) == rest and not ids & shown_ids
    assert all(i.startswith("minutely.r1.") for i in ids)


def test_ledger_show_gives_both_reasons_and_iso_durations(handle: ledger.Ledger, url: str) -> None:
    minutely = spec()
    ledger.publish_revision(handle, minutely, T0, by="test")
    ledger.materialize(handle, minutely, T0, T0 + timedelta(minutes=3), T0)
    ledger.release_due(handle, "minutely", T0 + timedelta(minutes=2, seconds=10))
    occurrence_id = "minutely.r1.20261102T090000.f0"
    shown = CliRunner().invoke(app, ["ledger", "show", occurrence_id, "--url", url])
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.stdout.split())
    assert "reason (resolution)" in text and "state reason" in text
    assert "UNAMBIGUOUS" in text  # the resolution reason
    assert "misfire: later than lateness PT30S under SKIP" in text  # the state reason
    assert "0:00:30" not in text
    assert "1 occurrence" in text and "1 occurrences" not in text


@pytest.mark.parametrize("state", [s.value for s in ledger.OccurrenceState])
def test_every_state_prints_one_by_one_and_summed_up(handle: ledger.Ledger, state: str) -> None:
    # The trial's crash: a state without a style became "[]SKIPPED_OVERLAP[/]", which Rich
    # refuses (MarkupError), and the error took the whole dev stack down.
    minutely = spec()
    ledger.publish_revision(handle, minutely, T0, by="test")
    ledger.materialize(handle, minutely, T0, T0 + timedelta(minutes=1), T0)
    [(event, row)] = ledger.events_after(handle, 0)
    moved = dataclasses.replace(event, to_state=state, why="[/] a reason with brackets")
    console = Console(record=True, width=400, color_system=None)
    console.print(line(moved, row), highlight=False, soft_wrap=True)
    console.print(summary("minutely", state, [(moved, row)]), highlight=False, soft_wrap=True)
    printed = lines(console)
    assert printed[0].split()[1] == state
    assert printed[0].endswith("[/] a reason with brackets")
    assert f"minutely: 1 more occurrence {state}, placed" in printed[1]


def test_a_restart_resumes_from_the_last_event_handled_not_from_now(
    handle: ledger.Ledger, tmp_path: Path
) -> None:
    minutely = spec()
    ledger.publish_revision(handle, minutely, T0, by="test")
    ledger.materialize(handle, minutely, T0, T0 + timedelta(minutes=3), T0)
    position = tmp_path / "live-view.position"
    first_run = LiveLog(handle, Console(record=True, width=400), position=position)
    first_run.resume()  # no position yet: from now on
    ledger.release_due(handle, "minutely", T0)
    first_run.poll()
    # Written after the last poll, before the stop (or while the stack was down).
    ledger.release_due(handle, "minutely", T0 + timedelta(minutes=1))
    console = Console(record=True, width=400, color_system=None)
    second_run = LiveLog(handle, console, position=position)
    second_run.resume()
    second_run.poll()
    printed = lines(console)
    assert [p.split()[1:3] for p in printed] == [["DUE", "minutely.r1.20261102T090100.f0"]]


def test_a_position_beyond_the_ledger_starts_from_now(
    handle: ledger.Ledger, tmp_path: Path
) -> None:
    position = tmp_path / "live-view.position"
    position.write_text("999999\n")  # another ledger's (after --reset)
    live = LiveLog(handle, Console(record=True), position=position)
    live.resume()
    assert live.after_id == ledger.last_event_id(handle)


def test_a_reason_s_control_characters_are_shown_escaped(handle: ledger.Ledger) -> None:
    """A reason reaches the live view as text: no escape sequence, CR or bidi override acts."""
    minutely = spec()
    ledger.publish_revision(handle, minutely, T0, by="test")
    ledger.materialize(handle, minutely, T0, T0 + timedelta(minutes=3), T0)
    live, console = view(handle)
    evil = "evil\x1b[31mRED\rOVER\u202eRTL\x07\x9bcsi\x1b]0;pwned\x07"
    ledger.cancel(handle, "minutely.r1.20261102T090000.f0", T0, by="test", why=evil)

    live.poll()
    [printed] = lines(console)
    assert "\x1b" not in printed and "\r" not in printed and "\u202e" not in printed
    assert "\x9b" not in printed and "\x07" not in printed
    assert "evil\\x1b[31mRED\\rOVER\\u202eRTL\\x07\\x9bcsi\\x1b]0;pwned\\x07" in printed


def test_a_retry_names_each_attempt_once_and_the_reasons_stay_in_one_column(
    handle: ledger.Ledger,
) -> None:
    """Each line's reason is its own event's: no second, current-attempt number before it.

    Read in one poll, attempt 1's events must not be labelled with the occurrence's attempt 2,
    and the reason starts where the UTC instant ends (two spaces after it) on every line.
    """
    minutely = spec()
    ledger.publish_revision(handle, minutely, T0, by="test")
    ledger.materialize(handle, minutely, T0, T0 + timedelta(minutes=3), T0)
    live, console = view(handle)
    occurrence_id = "minutely.r1.20261102T090000.f0"
    ledger.release_due(handle, "minutely", T0)

    def attempt(at: datetime) -> int:
        won = ledger.claim(
            handle,
            occurrence_id,
            ledger.get_gate(handle, "minutely"),
            worker_identity="w",
            implementation_alias="default",
            input_digest="sha256:x",
            now_utc=at,
        )
        assert won.attempt is not None
        generation = won.attempt.claim_generation
        ledger.mark_running(handle, occurrence_id, generation, at, by="test")
        return generation

    first = attempt(T0 + timedelta(seconds=1))
    ledger.retry_wait(
        handle,
        occurrence_id,
        first,
        T0 + timedelta(seconds=5),
        T0 + timedelta(seconds=2),
        by="test",
        error_class="Timeout",
        error_message="slow",
    )
    second = attempt(T0 + timedelta(seconds=5))
    ledger.failed(
        handle,
        occurrence_id,
        second,
        T0 + timedelta(seconds=6),
        by="test",
        error_class="Refused",
        error_message="no",
    )

    live.poll()
    printed = lines(console)
    reasons = [p.split("UTC 2026-11-02T14:00:00Z  ", 1)[1] for p in printed]
    assert [r.split(" by ")[0] for r in reasons] == [
        "released",
        "attempt 1 claimed",
        "attempt 1 running",
        "attempt 1 failed (Timeout); retry scheduled",
        "attempt 2 claimed",
        "attempt 2 running",
        "failed: Refused: no",
    ]
    assert all(not r.startswith(" ") for r in reasons)  # one column: no extra space before
