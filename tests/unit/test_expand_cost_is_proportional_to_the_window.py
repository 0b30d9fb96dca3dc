"""Issue 2: a 14-day window of a MINUTELY rule whose start is 30 years back must not iterate
30 years. Structural check: every recurrence the expansion builds (dateutil's, or
``timecontract.fastpath``'s arithmetic one) starts near the window (the restart point), and the
result equals that of a spec starting one day back."""

import importlib
from datetime import datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from dateutil import rrule as du
from tcsupport import row, utc

from timecontract import fastpath, occurrences
from timecontract.expand import period_start_at_or_before
from timecontract.rrule import parse_rule

expand_module = importlib.import_module("timecontract.expand")


class RecurrenceSpy(SimpleNamespace):
    """Stands in for ``dateutil.rrule`` and ``fastpath`` inside timecontract.expand.

    Records each recurrence's start: dateutil's DTSTART, or the period ``fastpath.iterate_periodic``
    restarts at.
    """

    def __init__(self) -> None:
        super().__init__()
        self.starts: list[datetime] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(du, name)

    def rrule(self, *args: Any, **kwargs: Any) -> du.rrule:
        # Spec validation's satisfiability probe runs at the end of dateutil's calendar
        # (timecontract.expand.check_satisfiable); only expansions are recorded.
        if kwargs["dtstart"].year < 9000:
            self.starts.append(kwargs["dtstart"])
        return du.rrule(*args, **kwargs)

    def is_periodic(self, rule: Any) -> bool:
        return fastpath.is_periodic(rule)

    def period_origin(self, rule: Any, dtstart: datetime) -> Any:
        return fastpath.period_origin(rule, dtstart)

    def iterate_periodic(self, rule: Any, dtstart: datetime, restart: datetime) -> Any:
        if restart.year < 9000:
            self.starts.append(restart)
        return fastpath.iterate_periodic(rule, dtstart, restart)


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> RecurrenceSpy:
    recorder = RecurrenceSpy()
    monkeypatch.setattr(expand_module, "du", recorder)
    monkeypatch.setattr(expand_module, "fastpath", recorder)
    return recorder


FROM, TO = utc("2026-06-01T00:00:00"), utc("2026-06-15T00:00:00")


def minutely(spec_factory, start: str):
    spec = spec_factory(rule="FREQ=MINUTELY", start=start, cutoverAt="1990-01-01T00:00:00Z")
    return occurrences(spec, FROM, TO)


def test_minutely_window_with_start_30_years_back_restarts_at_the_window(
    spec_factory, spy: RecurrenceSpy
) -> None:
    records = minutely(spec_factory, "1996-06-01T00:00:00")

    assert len(records) == 14 * 24 * 60  # no transition in New York between June 1 and 15
    assert spy.starts, "the expansion built no recurrence"
    # The widest documented margin is 3 days of floating local time around the window.
    assert all(start >= datetime(2026, 5, 28) for start in spy.starts), spy.starts


def test_minutely_window_30_years_back_equals_1_day_back(spec_factory, spy) -> None:
    far = minutely(spec_factory, "1996-06-01T00:00:00")
    far_starts = list(spy.starts)
    spy.starts.clear()
    near = minutely(spec_factory, "2026-05-31T00:00:00")

    assert [row(r) for r in far] == [row(r) for r in near]
    # Both restart within a few days of the window: the same amount of work, give or take.
    assert max(far_starts) - min(far_starts) <= timedelta(0)
    assert abs(min(far_starts) - min(spy.starts)) <= timedelta(days=4)


@pytest.mark.parametrize(
    ("rule", "period"),
    [
        ("FREQ=SECONDLY;INTERVAL=7", timedelta(seconds=7)),
        ("FREQ=MINUTELY;INTERVAL=13", timedelta(minutes=13)),
        ("FREQ=HOURLY;INTERVAL=5", timedelta(hours=5)),
        ("FREQ=DAILY;INTERVAL=3", timedelta(days=3)),
        ("FREQ=WEEKLY;INTERVAL=2;WKST=SU", timedelta(weeks=2)),
        ("FREQ=MONTHLY;INTERVAL=5", timedelta(days=31 * 5)),
        ("FREQ=YEARLY;INTERVAL=2", timedelta(days=366 * 2)),
    ],
)
def test_restart_point_is_within_one_period_of_the_window(rule: str, period: timedelta) -> None:
    dtstart = datetime(1996, 6, 1, 13, 7, 11)
    moment = datetime(2026, 6, 1, 9, 41, 3)
    restart = period_start_at_or_before(parse_rule(rule), dtstart, moment)
    assert moment - period < restart <= moment


@pytest.mark.parametrize(
    ("rule", "dtstart", "expected"),
    [
        # Issue 16: the first period starts where the FREQ's interval starts, not at DTSTART (RFC
        # 5545 §3.3.10: "A set of recurrence instances starts at the beginning of the interval
        # defined by the FREQ rule part"). 2024-01-04 is a Thursday.
        ("FREQ=WEEKLY", datetime(2024, 1, 4, 9), datetime(2024, 1, 1)),
        ("FREQ=WEEKLY;WKST=SU", datetime(2024, 1, 4, 9), datetime(2023, 12, 31)),
        ("FREQ=WEEKLY;WKST=TH", datetime(2024, 1, 4, 9), datetime(2024, 1, 4)),
        ("FREQ=DAILY", datetime(2026, 6, 1, 13, 7, 11), datetime(2026, 6, 1)),
        ("FREQ=HOURLY", datetime(2026, 6, 1, 13, 7, 11), datetime(2026, 6, 1, 13)),
        ("FREQ=MONTHLY", datetime(2026, 6, 17, 13), datetime(2026, 6, 1)),
        ("FREQ=YEARLY", datetime(2026, 6, 17, 13), datetime(2026, 1, 1)),
        # Week 1 of 2025 (Monday weeks) starts on Monday 2024-12-30; of 2026, on 2025-12-29.
        ("FREQ=YEARLY;BYWEEKNO=1", datetime(2024, 12, 31), datetime(2024, 12, 30)),
        ("FREQ=YEARLY;BYWEEKNO=1", datetime(2026, 1, 2), datetime(2025, 12, 29)),
    ],
)
def test_first_period_starts_at_the_start_of_its_interval_not_at_dtstart(
    rule: str, dtstart: datetime, expected: datetime
) -> None:
    assert period_start_at_or_before(parse_rule(rule), dtstart, dtstart) == expected
