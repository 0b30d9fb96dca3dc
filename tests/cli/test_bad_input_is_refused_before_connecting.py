"""Bad command-line input is exit 2 naming the input, even when Temporal is down.

The ``run`` fixture points Temporal at an address nothing listens on: a command that connected
first would say "Temporal unreachable" (exit 1) and hide the input error.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from typer.testing import Result

from almanac.cli.manual import BACKFILL_MAX_BOUND

WINDOW = ("--from", "2026-01-01T00:00:00Z", "--to", "2026-01-02T00:00:00Z")


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("trigger", "nightly", "--request-id", "Bad_ID"), "Bad_ID"),
        (("trigger", "nightly", "--reason", " "), "reason"),
        (("backfill", "nightly", *WINDOW, "--max", "5000"), "--max=5000"),
        (("backfill", "nightly", *WINDOW, "--max", "0"), "--max=0"),
        (("backfill", "nightly", *WINDOW, "--reason", " "), "--reason"),
        (
            ("backfill", "nightly", "--from", "2026-01-02T00:00:00Z", "--to", "2026-01-01T00:00Z"),
            "--to",
        ),
        (("enable", "Bad_ID"), "scheduleId='Bad_ID'"),
        (("status", "Bad_ID"), "scheduleId='Bad_ID'"),
        (("upcoming", "bad-"), "scheduleId='bad-'"),
        (("disable", "Bad_ID", "--reason", "x"), "scheduleId='Bad_ID'"),
    ],
)
def test_bad_input_is_exit_2_before_temporal_is_asked(
    run: Callable[..., Result], args: tuple[str, ...], named: str
) -> None:
    result = run(*args)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and named in lines[0], result.output
    assert "unreachable" not in result.output


def test_the_backfill_bound_checked_here_is_the_schedules() -> None:
    from workflows.schedule_validation import MAX_BACKFILL_BOUND

    assert BACKFILL_MAX_BOUND == MAX_BACKFILL_BOUND


NOT_UTF8 = "evil\udc9bcsi"
"""What Python makes of the argument bytes ``evil\\x9bcsi``: an unpaired surrogate, which no
ledger, log or Temporal payload can encode (it once stalled a schedule's control commands)."""


@pytest.mark.parametrize(
    "args",
    [
        ("disable", "nightly", "--reason", NOT_UTF8),
        ("delete", "nightly", "--reason", NOT_UTF8),
        ("trigger", "nightly", "--reason", NOT_UTF8),
        ("backfill", "nightly", *WINDOW, "--reason", NOT_UTF8),
    ],
)
def test_a_reason_that_is_not_utf8_is_exit_2_and_not_repeated(
    run: Callable[..., Result], args: tuple[str, ...]
) -> None:
    result = run(*args)
    assert result.exit_code == 2, result.output
    [line] = result.output.strip().splitlines()
    assert "--reason: not valid text" in line and "character 5" in line
    assert "evil" not in line


def test_the_schedule_workflow_refuses_such_a_reason_before_history() -> None:
    from temporalio.exceptions import ApplicationError

    from workflows.contracts import DisableInput
    from workflows.schedule_validation import check_reason

    with pytest.raises(ApplicationError, match="not valid text at character 5"):
        check_reason(DisableInput(NOT_UTF8))
