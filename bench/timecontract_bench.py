"""Benchmark of the time contract: ``python bench/timecontract_bench.py [--rounds 5] [--only X]``.

1. Expansion throughput: ``timecontract.occurrences`` (expansion + zone resolution + identity +
   collisions) against raw dateutil expansion of the same rules over the same window, in the same
   run: occurrences per second for each and the ratio.
2. Window cost: a 14-day window of the same rule with DTSTART 30 years back against 1 day back
   (the restart-at-period optimisation; the ratio should be close to 1).
3. COUNT rules in a window: a 5-minute window of ``FREQ=MINUTELY;COUNT=100000`` (and others)
   counted arithmetically (``timecontract.countwindow``) against the walk from DTSTART (the
   previous path, forced), same rule, same window, same run; the records must be equal.

Each section alternates its two arms over ``--rounds`` rounds in one process (``bench/_pairs.py``)
and prints the medians and the median of the per-round ratios (≥ 1: as good as the baseline or
better) with the load average before each round. Pure CPU, no I/O beyond the zone file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import sys
import time
from collections.abc import Callable, Sized
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from dateutil import rrule as du

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import timecontract
from bench import _pairs
from timecontract import OccurrenceRecord, ScheduleSpecV1, occurrences, parse_spec

ZONE = "America/New_York"
BASE: dict[str, Any] = {
    "schema": "scheduleSpec.v1",
    "scheduleId": "bench",
    "revision": 1,
    "timeZone": ZONE,
    "tzdbVersion": "2026a",
    "cutoverAt": "1990-01-01T00:00:00Z",
    "gapPolicy": "SHIFT_FORWARD",
    "foldPolicy": "BOTH",
}

# (label, rule text, dateutil kwargs, window length)
RULES: list[tuple[str, str, dict[str, Any], timedelta]] = [
    (
        "DAILY 02:30",
        "FREQ=DAILY;BYHOUR=2;BYMINUTE=30",
        {"byhour": 2, "byminute": 30, "bysecond": 0},
        timedelta(days=3650),
    ),
    (
        "WEEKLY MO,WE,FR 09:00",
        "FREQ=WEEKLY;BYDAY=MO,WE,FR;BYHOUR=9",
        {"byweekday": (du.MO, du.WE, du.FR), "byhour": 9, "byminute": 0, "bysecond": 0},
        timedelta(days=3650),
    ),
    (
        "MONTHLY last day",
        "FREQ=MONTHLY;BYMONTHDAY=-1;BYHOUR=23",
        {"bymonthday": -1, "byhour": 23, "byminute": 0, "bysecond": 0},
        timedelta(days=36500),
    ),
    (
        "HOURLY :15,:45",
        "FREQ=HOURLY;BYMINUTE=15,45",
        {"byminute": (15, 45), "bysecond": 0},
        timedelta(days=365),
    ),
    (
        "MINUTELY every 5",
        "FREQ=MINUTELY;INTERVAL=5",
        {"interval": 5, "bysecond": 0},
        timedelta(days=60),
    ),
]
START = datetime(2001, 1, 1)
WINDOW_FROM = datetime(2026, 1, 1, tzinfo=UTC)


def _timed(call: Callable[..., Sized], *args: Any) -> tuple[float, int]:
    """Wall time of one call, and the length of what it returned."""
    began = time.perf_counter()
    count = len(call(*args))
    return time.perf_counter() - began, count


def _raw(freq: Any, kwargs: dict[str, Any], low: datetime, high: datetime) -> list[datetime]:
    # Raw dateutil over the same floating window, restarted at the window like
    # timecontract does (DTSTART at the window start: no walk from 2001).
    return list(du.rrule(freq, dtstart=low, until=high, cache=False, **kwargs))


def _specs() -> list[tuple[ScheduleSpecV1, int, dict[str, Any], datetime]]:
    out = []
    for _label, text, kwargs, length in RULES:
        spec = parse_spec({**BASE, "rule": text, "start": START.isoformat()})
        freq = getattr(du, text.split(";")[0].split("=")[1])
        out.append((spec, freq, kwargs, WINDOW_FROM + length))
    return out


def throughput_arms() -> list[_pairs.Arm]:
    """Two arms over the same five windows: the whole time contract, and raw dateutil."""
    specs = _specs()

    def contract(_round: int) -> dict[str, float]:
        elapsed, count = 0.0, 0
        for spec, _freq, _kwargs, to in specs:
            took, n = _timed(occurrences, spec, WINDOW_FROM, to)
            elapsed, count = elapsed + took, count + n
        return {"records": count, "records_per_s": count / elapsed}

    def raw(_round: int) -> dict[str, float]:
        elapsed, count = 0.0, 0
        for _spec, freq, kwargs, to in specs:
            low, high = WINDOW_FROM.replace(tzinfo=None), to.replace(tzinfo=None)
            took, n = _timed(_raw, freq, kwargs, low, high)
            elapsed, count = elapsed + took, count + n
        return {"records": count, "records_per_s": count / elapsed}

    return [_pairs.Arm("dateutil", raw), _pairs.Arm("timecontract", contract)]


WINDOW_COST_RULES = [
    ("MINUTELY", "FREQ=MINUTELY"),
    ("HOURLY", "FREQ=HOURLY"),
    ("SECONDLY/30", "FREQ=SECONDLY;INTERVAL=30"),
]


def window_cost_arms() -> list[_pairs.Arm]:
    """A 14-day window of three rules with DTSTART 1 day back (baseline) and 30 years back."""
    window = (datetime(2026, 6, 1, tzinfo=UTC), datetime(2026, 6, 15, tzinfo=UTC))

    def arm(start: datetime) -> Callable[[int], dict[str, float]]:
        specs = [
            (label, parse_spec({**BASE, "rule": text, "start": start.isoformat()}))
            for label, text in WINDOW_COST_RULES
        ]

        def run(_round: int) -> dict[str, float]:
            figures = {f"{label} s": _timed(occurrences, spec, *window)[0] for label, spec in specs}
            return {**figures, "total s": sum(figures.values())}

        return run

    return [
        _pairs.Arm("1 day back", arm(datetime(2026, 5, 31))),
        _pairs.Arm("30 years back", arm(datetime(1996, 6, 1))),
    ]


COUNT_RULES = [
    ("MINUTELY;COUNT=100000", "FREQ=MINUTELY;COUNT=100000", "2026-01-01T00:00:00"),
    ("SECONDLY/10;COUNT=100000", "FREQ=SECONDLY;INTERVAL=10;COUNT=100000", "2026-01-01T00:00:00"),
    ("HOURLY :00,:30;COUNT=50000", "FREQ=HOURLY;BYMINUTE=0,30;COUNT=50000", "2024-01-01T00:00:00"),
]


def count_window_arms() -> list[_pairs.Arm]:
    """A 5-minute window of COUNT rules: the walk from DTSTART (baseline) and the arithmetic."""
    import timecontract.resolve as resolve

    window = (datetime(2026, 3, 10, tzinfo=UTC), datetime(2026, 3, 10, 0, 5, tzinfo=UTC))
    specs = [
        (label, parse_spec({**BASE, "rule": text, "start": start, "gapPolicy": "SKIP"}))
        for label, text, start in COUNT_RULES
    ]
    seen: dict[str, list[OccurrenceRecord]] = {}

    def measure(walk: bool) -> dict[str, float]:
        arithmetic = resolve.counts_arithmetically
        if walk:
            resolve.counts_arithmetically = lambda _rule: False  # type: ignore[assignment]
        try:
            figures = {}
            for label, spec in specs:
                began = time.perf_counter()
                records = occurrences(spec, *window)
                figures[f"{label} s"] = time.perf_counter() - began
                # Both paths must give the same records.
                assert seen.setdefault(label, records) == records, label
        finally:
            resolve.counts_arithmetically = arithmetic
        return {**figures, "total s": sum(figures.values())}

    return [
        _pairs.Arm("walk", lambda _round: measure(walk=True)),
        _pairs.Arm("arithmetic", lambda _round: measure(walk=False)),
    ]


SECTIONS = {
    "throughput": (
        "1. Expansion + resolution over five rules' windows from 2026-01-01 (America/New_York): "
        "timecontract.occurrences against raw dateutil, records/s (aim: ratio >= 0.5)",
        throughput_arms,
        "dateutil",
        "records_per_s",
        False,
    ),
    "window": (
        "2. Window cost: a 14-day window (2026-06-01..15), DTSTART 30 years back against 1 day "
        "back, seconds (a ratio near 1: the cost follows the window)",
        window_cost_arms,
        "1 day back",
        "total s",
        True,
    ),
    "count": (
        "3. COUNT rules: a 5-minute window (2026-03-10T00:00Z), the arithmetic count against the "
        "walk from DTSTART, seconds (same records asserted)",
        count_window_arms,
        "walk",
        "total s",
        True,
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", choices=sorted(SECTIONS), action="append")
    parser.add_argument("--json", action="store_true", help="Also print every round as JSON.")
    args = parser.parse_args()

    print(
        f"timecontract bench — Python {platform.python_version()}, {platform.machine()}, "
        f"tzdata {timecontract.zones.INSTALLED_RELEASE}, {args.rounds} alternating rounds"
    )
    for name in args.only or list(SECTIONS):
        title, arms, baseline, metric, lower = SECTIONS[name]
        print(f"\n{title}")
        result = asyncio.run(
            _pairs.alternate(
                arms(),
                rounds=args.rounds,
                baseline=baseline,
                metric=metric,
                lower_is_better=lower,
                report=None,
            )
        )
        print(result.table())
        if args.json:
            print(json.dumps(result.as_dict()))


if __name__ == "__main__":
    main()
