"""Benchmark of the time contract: ``python bench/timecontract_bench.py``.

1. Expansion throughput: ``timecontract.occurrences`` (expansion + zone resolution + identity +
   collisions) against raw dateutil expansion of the same rules over the same window, in the same
   run: occurrences per second for each and the ratio.
2. Window cost: a 14-day window of the same rule with DTSTART 30 years back against 1 day back
   (the restart-at-period optimisation; the ratio should be close to 1).
3. COUNT rules in a window: a 5-minute window of ``FREQ=MINUTELY;COUNT=100000`` (and others)
   counted arithmetically (``timecontract.countwindow``) against the walk from DTSTART (the
   previous path, forced), same rule, same window, same run; the records must be equal.

Figures are the best of ``--repeat`` runs (default 5). Pure CPU, no I/O beyond the zone file.
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from dateutil import rrule as du

import timecontract
from timecontract import occurrences, parse_spec

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


def best(repeat: int, call: Callable[[], int]) -> tuple[float, int]:
    """Best wall time of ``repeat`` calls, and the count the call returned."""
    times, count = [], 0
    for _ in range(repeat):
        began = time.perf_counter()
        count = call()
        times.append(time.perf_counter() - began)
    return min(times), count


def throughput(repeat: int) -> list[tuple[str, int, float, float]]:
    rows = []
    for label, text, kwargs, length in RULES:
        spec = parse_spec({**BASE, "rule": text, "start": START.isoformat()})
        to = WINDOW_FROM + length
        tc_time, tc_count = best(repeat, lambda s=spec, t=to: len(occurrences(s, WINDOW_FROM, t)))

        low, high = WINDOW_FROM.replace(tzinfo=None), to.replace(tzinfo=None)
        freq = getattr(du, text.split(";")[0].split("=")[1])

        def raw(
            f: int = freq, kw: dict[str, Any] = kwargs, lo: datetime = low, hi: datetime = high
        ) -> int:
            # Raw dateutil over the same floating window, restarted at the window like
            # timecontract does (DTSTART at the window start: no walk from 2001).
            return sum(1 for _ in du.rrule(f, dtstart=lo, until=hi, cache=False, **kw))

        du_time, du_count = best(repeat, raw)
        rows.append((label, tc_count, tc_count / tc_time, du_count / du_time))
    return rows


def window_cost(repeat: int) -> list[tuple[str, float, float]]:
    rows = []
    window = (datetime(2026, 6, 1, tzinfo=UTC), datetime(2026, 6, 15, tzinfo=UTC))
    for label, text in [
        ("MINUTELY", "FREQ=MINUTELY"),
        ("HOURLY", "FREQ=HOURLY"),
        ("SECONDLY/30", "FREQ=SECONDLY;INTERVAL=30"),
    ]:
        results = []
        for start in (datetime(1996, 6, 1), datetime(2026, 5, 31)):
            spec = parse_spec({**BASE, "rule": text, "start": start.isoformat()})
            elapsed, _ = best(repeat, lambda s=spec: len(occurrences(s, *window)))
            results.append(elapsed)
        rows.append((label, results[0], results[1]))
    return rows


COUNT_RULES = [
    ("MINUTELY;COUNT=100000", "FREQ=MINUTELY;COUNT=100000", "2026-01-01T00:00:00"),
    ("SECONDLY/10;COUNT=100000", "FREQ=SECONDLY;INTERVAL=10;COUNT=100000", "2026-01-01T00:00:00"),
    ("HOURLY :00,:30;COUNT=50000", "FREQ=HOURLY;BYMINUTE=0,30;COUNT=50000", "2024-01-01T00:00:00"),
]


def count_window(repeat: int) -> list[tuple[str, float, float]]:
    import timecontract.resolve as resolve

    window = (datetime(2026, 3, 10, tzinfo=UTC), datetime(2026, 3, 10, 0, 5, tzinfo=UTC))
    rows = []
    for label, text, start in COUNT_RULES:
        spec = parse_spec({**BASE, "rule": text, "start": start, "gapPolicy": "SKIP"})
        fast_time, _ = best(repeat, lambda s=spec: len(occurrences(s, *window)))
        fast = occurrences(spec, *window)
        arithmetic = resolve.counts_arithmetically
        resolve.counts_arithmetically = lambda _rule: False  # type: ignore[assignment]
        try:
            walk_time, _ = best(max(1, repeat // 5), lambda s=spec: len(occurrences(s, *window)))
            walked = occurrences(spec, *window)
        finally:
            resolve.counts_arithmetically = arithmetic  # type: ignore[assignment]
        assert fast == walked, label
        rows.append((label, walk_time, fast_time))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    print(
        f"timecontract bench — Python {platform.python_version()}, {platform.machine()}, "
        f"tzdata {timecontract.zones.INSTALLED_RELEASE}, best of {args.repeat}"
    )
    print()
    print("1. Expansion throughput (occurrences/s), window from 2026-01-01, America/New_York")
    print(f"{'rule':<24}{'records':>9}{'timecontract/s':>16}{'dateutil/s':>13}{'ratio':>8}")
    for label, count, tc_rate, du_rate in throughput(args.repeat):
        print(f"{label:<24}{count:>9}{tc_rate:>16,.0f}{du_rate:>13,.0f}{du_rate / tc_rate:>7.1f}x")
    print(
        "   ratio = dateutil rate / timecontract rate (how many times slower the full contract is)"
    )
    print()
    print("2. Window cost: 14-day window 2026-06-01..15, DTSTART 30 years back vs 1 day back")
    print(f"{'rule':<24}{'30y back (s)':>14}{'1d back (s)':>13}{'ratio':>8}")
    for label, far, near in window_cost(args.repeat):
        print(f"{label:<24}{far:>14.3f}{near:>13.3f}{far / near:>7.2f}x")
    print()
    print("3. COUNT rules: 5-minute window 2026-03-10T00:00Z, walk from DTSTART vs arithmetic")
    print(f"{'rule':<28}{'walk (s)':>10}{'arithmetic (s)':>16}{'ratio':>10}")
    for label, walk, fast in count_window(args.repeat):
        print(f"{label:<28}{walk:>10.3f}{fast:>16.4f}{walk / fast:>9.0f}x")


if __name__ == "__main__":
    main()
