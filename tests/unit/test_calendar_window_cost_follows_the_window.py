"""A calendar schedule's window cost follows the window, not the calendar's length: a week in
2190 asks the calendar about as many dates as a week in 2027 (the dates are looked up, never
walked from the calendar's first year or the spec's start)."""

from calsupport import LIBRARY, records

from timecontract.calendars import BusinessCalendar

FIELDS = {
    "rule": "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;BYHOUR=16",
    "calendar": {"name": "NYSE", "release": LIBRARY},
    "businessDaysOnly": True,
    "holidayPolicy": "FOLLOWING",
}


def _lookups(monkeypatch: object, start: str, end: str) -> int:
    calls = 0
    closed = BusinessCalendar.closed

    def counting(self: BusinessCalendar, day: object) -> str | None:
        nonlocal calls
        calls += 1
        return closed(self, day)  # type: ignore[arg-type]

    monkeypatch.setattr(BusinessCalendar, "closed", counting)  # type: ignore[attr-defined]
    records(FIELDS, start, end)
    return calls


def test_a_week_late_in_the_calendar_costs_what_a_week_early_costs(monkeypatch: object) -> None:
    early = _lookups(monkeypatch, "2027-06-01T00:00:00", "2027-06-08T00:00:00")
    late = _lookups(monkeypatch, "2190-06-01T00:00:00", "2190-06-08T00:00:00")
    assert 0 < early <= 400 and 0 < late <= 400
    assert abs(late - early) <= 60
