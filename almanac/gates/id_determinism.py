"""The ID determinism gate's corpus: every occurrenceId and logicalSlotId code path, printed.

Seed: the IDs "never use discovery, start or wall-clock time". The corpus is a fixed set of
records built through each path that writes an ID:

- the fast calendar path (``timecontract.resolve._build_all``: one f-string per record, far
  from a transition), a minutely window around two DST transitions (``IdFormatter.occurrence``
  and ``.slot`` next to them, folds under ``BOTH``, a gap under ``SHIFT_FORWARD``), a COUNT
  rule walked from DTSTART, a leap day;
- an elapsed-time ``interval`` spec (``interval_occurrence_id`` and ``logical_slot_id``);
- a manual run (``manual_occurrence_id``) and the public builders, a year before 1000 included.

``python -m almanac.gates.id_determinism [--setup MODULE]`` prints the corpus as JSON: the gate runs
it in two processes at different wall-clock moments and in different local zones (``TZ``) and
compares them with each other and with its own process. ``--setup``: a module imported first (a
test's mutant). Each record is also checked against the documented format
(``timecontract.ids``), built here from the record's own fields, independently of the code.
"""

from __future__ import annotations

import importlib
import json
import sys
import time
from datetime import UTC, datetime
from typing import Any

RELEASE = "2026a"


def _spec(schedule_id: str, **fields: Any) -> dict[str, Any]:
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": schedule_id,
        "revision": 7,
        "timeZone": "America/New_York",
        "tzdbVersion": RELEASE,
        "cutoverAt": "2020-01-01T00:00:00Z",
        **fields,
    }


CALENDAR_CASES: tuple[tuple[dict[str, Any], str, str], ...] = (
    (_spec("ids-fast", rule="FREQ=HOURLY;BYMINUTE=7"), "2026-06-01T00:00:00", "2026-06-04T00:00"),
    (
        _spec("ids-spring", rule="FREQ=MINUTELY;INTERVAL=15", gapPolicy="SHIFT_FORWARD"),
        "2026-03-08T05:00:00",
        "2026-03-08T09:00:00",
    ),
    (
        _spec("ids-fall", rule="FREQ=MINUTELY;INTERVAL=20", foldPolicy="BOTH"),
        "2026-11-01T04:00:00",
        "2026-11-01T08:00:00",
    ),
    (
        _spec("ids-count", rule="FREQ=MONTHLY;BYMONTHDAY=31;COUNT=5", start="2026-01-31T09:30:00"),
        "2026-01-01T00:00:00",
        "2027-01-01T00:00:00",
    ),
    (
        _spec("ids-leap", rule="FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29", timeZone="Asia/Kolkata"),
        "2027-01-01T00:00:00",
        "2033-01-01T00:00:00",
    ),
    (_spec("ids-interval", interval="PT7H"), "2026-03-07T00:00:00", "2026-03-10T00:00:00"),
)
"""(spec, from, to): windows in UTC."""


def corpus() -> list[list[str]]:
    """``[kind, occurrenceId, logicalSlotId or "", expected occurrenceId, expected slot]`` rows.

    The expected IDs are the documented formats applied to the record's own fields.
    """
    from timecontract import ids, occurrences, parse_spec

    rows: list[list[str]] = []
    for data, start, stop in CALENDAR_CASES:
        spec = parse_spec(data)
        window = [datetime.fromisoformat(t).replace(tzinfo=UTC) for t in (start, stop)]
        for r in occurrences(spec, window[0], window[1]):
            interval = "interval" in data
            expected = _expected_occurrence(
                spec.schedule_id, spec.revision, r.nominal_local, r.fold, r.instant_utc, interval
            )
            slot = "" if r.instant_utc is None else _expected_slot(spec.schedule_id, r.instant_utc)
            rows.append(
                [data["scheduleId"], r.occurrence_id, r.logical_slot_id or "", expected, slot]
            )
    nominal, instant = datetime(999, 2, 3, 4, 5, 6), datetime(999, 2, 3, 9, 5, 6, tzinfo=UTC)
    rows.append(
        [
            "builders",
            ids.occurrence_id("ids-old", 1, nominal, 1),
            ids.logical_slot_id("ids-old", instant),
            _expected_occurrence("ids-old", 1, nominal, 1, None, False),
            _expected_slot("ids-old", instant),
        ]
    )
    rows.append(
        [
            "interval-builder",
            ids.interval_occurrence_id("ids-old", 2, instant),
            "",
            _expected_occurrence("ids-old", 2, nominal, 0, instant, True),
            "",
        ]
    )
    manual = ids.manual_occurrence_id("ids-manual", "req-1")
    rows.append(["manual", manual, "", "ids-manual.manual.req-1", ""])
    return rows


def _digits(moment: datetime) -> str:
    return (
        f"{moment.year:04d}{moment.month:02d}{moment.day:02d}"
        f"T{moment.hour:02d}{moment.minute:02d}{moment.second:02d}"
    )


def _expected_occurrence(
    schedule_id: str,
    revision: int,
    nominal_local: datetime,
    fold: int,
    instant_utc: datetime | None,
    interval: bool,
) -> str:
    """``<id>.r<rev>.<YYYYMMDDTHHMMSS>.f<fold>``, or ``…<instant>Z`` for an interval spec."""
    if interval:
        assert instant_utc is not None
        return f"{schedule_id}.r{revision}.{_digits(instant_utc.astimezone(UTC))}Z"
    return f"{schedule_id}.r{revision}.{_digits(nominal_local)}.f{fold}"


def _expected_slot(schedule_id: str, instant_utc: datetime) -> str:
    """``<id>@<YYYYMMDDTHHMMSSZ>`` (the year as ``strftime``'s ``%Y`` writes it, ``ids``)."""
    moment = instant_utc.astimezone(UTC)
    year = f"{moment:%Y}"
    return f"{schedule_id}@{year}{_digits(moment)[4:]}Z"


def main(argv: list[str]) -> int:
    """Print ``{"corpus": rows, "wall": time.time() after it}`` (``--setup MODULE``: import it)."""
    if argv[:1] == ["--setup"]:
        importlib.import_module(argv[1])
    rows = corpus()
    json.dump({"corpus": rows, "wall": time.time()}, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
