"""``almanac ledger list`` shows at most ``--limit`` occurrences (default 100) and counts the rest.

Unbounded, an every-10-seconds schedule listed 2,039 rows in 12.8 s. Expectations are
arithmetic on the rule: ``FREQ=SECONDLY;INTERVAL=10`` in Etc/UTC holds 6 instants a minute, so a
20-minute window holds 120; the earliest come first (cli.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from ledger_example import materialize_every_10_seconds
from typer.testing import Result

SCHEDULE = "every-10-seconds"
MORE = "more (use --limit 0 for all, or narrow with --from/--to/--state)"


@pytest.fixture
def listed(run: Callable[..., Result]) -> Callable[..., Result]:
    materialize_every_10_seconds(run, "2026-11-01T00:20:00Z")

    def list_(*args: str) -> Result:
        result = run("ledger", "list", SCHEDULE, *args)
        assert result.exit_code == 0, result.output
        return result

    return list_


def _rows(output: str) -> list[str]:
    return [line for line in output.splitlines() if f"{SCHEDULE}.r1." in line]


def test_the_default_shows_the_earliest_hundred_and_counts_the_rest(
    listed: Callable[..., Result],
) -> None:
    shown = listed()
    rows = _rows(shown.stdout)
    assert len(rows) == 100 and "2026-11-01T00:00:00Z" in rows[0]
    assert "2026-11-01T00:16:30Z" in rows[-1]  # the 100th: 99 × 10 s after the first
    assert shown.stdout.rstrip().endswith(f"… 20 {MORE}")


def test_limit_zero_lists_all_and_a_limit_that_fits_says_nothing_more(
    listed: Callable[..., Result],
) -> None:
    for limit in ("0", "120"):
        shown = listed("--limit", limit)
        assert len(_rows(shown.stdout)) == 120 and MORE not in shown.output


def test_the_rest_is_counted_within_the_filters(listed: Callable[..., Result]) -> None:
    # The last minute holds 6 instants: 3 shown, 3 more.
    shown = listed("--from", "2026-11-01T00:19:00Z", "--state", "PLANNED", "--limit", "3")
    assert len(_rows(shown.stdout)) == 3 and shown.stdout.rstrip().endswith(f"… 3 {MORE}")


def test_json_takes_the_same_limit_and_says_the_rest_on_stderr(
    listed: Callable[..., Result],
) -> None:
    shown = listed("--limit", "5", "--json")
    rows = json.loads(shown.stdout)
    assert [r["instant"] for r in rows] == [f"2026-11-01T00:00:{s:02d}Z" for s in range(0, 50, 10)]
    assert shown.stderr.strip() == f"… 115 {MORE}"
    assert len(json.loads(listed("--json").stdout)) == 100
