"""The restart-at-period optimisation yields exactly the full expansion from DTSTART.

Oracle: ``dateutil.rrule.rrule(freq, dtstart=..., interval=..., by...=...)`` built directly with the
rule's parameters (dateutil derives its own defaults from DTSTART) and iterated from DTSTART,
filtered to the window. ``timecontract.expand.expand`` restarts near the window instead.
Generated rules cover every FREQ, INTERVAL, each BYxxx part, BYSETPOS and WKST; combinations that
can never match are avoided (the oracle would then walk to year 9999, see
``test_rule_that_can_never_occur_is_rejected``).

dateutil is the oracle only where it is right (issue 16): not for BYDAY mixing plain and ordinal
weekdays, not for BYWEEKNO (both expanded by ``timecontract.dayset``), and not for BYSETPOS in a
WEEKLY rule whose first week starts before DTSTART. Those rules are checked here against the
RFC 5545 reference expander instead (``rrule_reference.py``), far from DTSTART; the reference
property test (``test_expand_agrees_with_rfc5545_reference``) covers them at random.
"""

from datetime import datetime, timedelta
from typing import Any

import pytest
from dateutil import rrule as du
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from rrule_reference import expand as reference_expand

from timecontract.expand import expand
from timecontract.rrule import parse_rule

FREQS = ["YEARLY", "MONTHLY", "WEEKLY", "DAILY", "HOURLY", "MINUTELY", "SECONDLY"]
DAYS = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]
# How far DTSTART may lie before the window, and how long the window is, per FREQ (keeps the
# oracle, which always walks from DTSTART, cheap).
REACH = {
    "YEARLY": (timedelta(days=366 * 60), timedelta(days=366 * 8)),
    "MONTHLY": (timedelta(days=366 * 20), timedelta(days=366 * 2)),
    "WEEKLY": (timedelta(days=366 * 8), timedelta(days=200)),
    "DAILY": (timedelta(days=366 * 4), timedelta(days=60)),
    "HOURLY": (timedelta(days=200), timedelta(days=6)),
    "MINUTELY": (timedelta(days=4), timedelta(hours=8)),
    "SECONDLY": (timedelta(hours=5), timedelta(minutes=20)),
}


def _ints(low: int, high: int, negatives: bool) -> st.SearchStrategy[int]:
    values = st.integers(low, high)
    return st.one_of(values, values.map(lambda v: -v)) if negatives else values


def _set(element: st.SearchStrategy[int], size: int = 3) -> st.SearchStrategy[list[int]]:
    return st.lists(element, min_size=1, max_size=size, unique=True)


# INTERVALs coprime to the larger cycles a coarser BYxxx filter walks (a week of hours, minutes
# or seconds; twelve months; seven weekdays), so that a filtered rule still matches often and the
# oracle (and the code) never walk a long stretch without an occurrence.
DENSE_INTERVALS = {
    "YEARLY": [1, 2, 3, 7],
    "MONTHLY": [1, 5, 7, 13],
    "WEEKLY": [1, 2, 3, 5],
    "DAILY": [1, 2, 3, 5, 13],
    "HOURLY": [1, 5, 11, 13],
    "MINUTELY": [1, 11, 13, 17],
    "SECONDLY": [1, 11, 13, 17],
}
FREE_INTERVALS = [1, 2, 3, 5, 7, 12, 13, 15, 24, 60]
LEVEL = {f: i for i, f in enumerate(FREQS)}


@st.composite
def rules(draw: st.DrawFn) -> tuple[str, dict[str, Any], str]:
    """(rule text, dateutil kwargs, freq) for a rule that matches at least every year or so."""
    freq = draw(st.sampled_from(FREQS))
    level = LEVEL[freq]
    parts: dict[str, str] = {"FREQ": freq}
    kw: dict[str, Any] = {}

    def add(part: str, key: str, values: list[int]) -> None:
        parts[part] = ",".join(map(str, values))
        kw[key] = tuple(values)

    day_kinds = ["none", "monthday", "byday", "both", "yearday", "weekno"]
    day_kind = draw(st.sampled_from(day_kinds))
    if freq == "WEEKLY" and day_kind in {"monthday", "both"}:
        day_kind = "byday"
    if freq != "YEARLY" and day_kind == "weekno":
        day_kind = "none"
    if freq in {"DAILY", "WEEKLY", "MONTHLY"} and day_kind == "yearday":
        day_kind = "none"
    if day_kind in {"monthday", "both"}:
        add("BYMONTHDAY", "bymonthday", draw(_set(_ints(1, 28, True))))
    if day_kind == "yearday":
        add("BYYEARDAY", "byyearday", draw(_set(_ints(1, 365, True))))
    if day_kind == "weekno":
        add("BYWEEKNO", "byweekno", draw(_set(_ints(1, 52, True))))
    if day_kind in {"byday", "both"} or (day_kind == "weekno" and draw(st.booleans())):
        ordinal_ok = freq in {"MONTHLY", "YEARLY"} and day_kind == "byday"
        days = draw(st.lists(st.sampled_from(DAYS), min_size=1, max_size=3, unique=True))
        items, weekdays = [], []
        for day in days:
            n = draw(st.sampled_from([None, 1, 2, -1, 4])) if ordinal_ok else None
            items.append(f"{n}{day}" if n else day)
            weekdays.append(du.weekday(DAYS.index(day), n))
        parts["BYDAY"] = ",".join(items)
        kw["byweekday"] = tuple(weekdays)
    if day_kind in {"none", "monthday", "byday", "both"} and draw(st.booleans()):
        add("BYMONTH", "bymonth", draw(_set(st.integers(1, 12), 4)))
    # Time-level parts.
    if draw(st.booleans()):
        add("BYHOUR", "byhour", draw(_set(st.integers(0, 23))))
    if draw(st.booleans()):
        add("BYMINUTE", "byminute", draw(_set(st.integers(0, 59))))
    if draw(st.booleans()):
        add("BYSECOND", "bysecond", draw(_set(st.integers(0, 59))))
    coarser = {
        "BYMONTH": 1,
        "BYMONTHDAY": 3,
        "BYDAY": 3,
        "BYYEARDAY": 3,
        "BYWEEKNO": 3,
        "BYHOUR": 4,
        "BYMINUTE": 5,
        "BYSECOND": 6,
    }
    filtered = any(coarser[p] <= level and p in parts for p in coarser) or (
        freq == "MONTHLY" and "BYMONTH" in parts
    )
    interval = draw(st.sampled_from(DENSE_INTERVALS[freq] if filtered else FREE_INTERVALS))
    if interval > 1:
        parts["INTERVAL"] = str(interval)
    kw["interval"] = interval
    if len(parts) > 2 - (interval == 1) and draw(st.booleans()):
        add("BYSETPOS", "bysetpos", [draw(st.sampled_from([1, -1]))])
    if draw(st.booleans()):
        wkst = draw(st.sampled_from(DAYS))
        parts["WKST"] = wkst
        kw["wkst"] = DAYS.index(wkst)
    text = ";".join(f"{k}={v}" for k, v in parts.items())
    return text, kw, freq


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, dict[str, Any], str, datetime, datetime, datetime]:
    text, kw, freq = draw(rules())
    reach, span = REACH[freq]
    dtstart = draw(st.datetimes(datetime(1995, 1, 1), datetime(2030, 1, 1)))
    dtstart = dtstart.replace(microsecond=0, fold=0)
    lead = draw(st.timedeltas(-span, reach)).total_seconds()
    window_start = dtstart + timedelta(seconds=int(lead))
    window_end = window_start + timedelta(
        seconds=int(draw(st.timedeltas(timedelta(0), span)).total_seconds())
    )
    return text, kw, freq, dtstart, window_start, window_end


def dateutil_is_right(text: str, dtstart: datetime) -> bool:
    """False for the rules dateutil 2.9 expands wrongly (issue 16; see the module docstring)."""
    parts = dict(part.split("=") for part in text.split(";"))
    byday = parts.get("BYDAY", "").split(",") if "BYDAY" in parts else []
    mixed = len({item[0].isalpha() for item in byday}) == 2
    week_start = DAYS.index(parts.get("WKST", "MO"))
    first_week_cut = parts["FREQ"] == "WEEKLY" and dtstart.weekday() != week_start
    return not (mixed or "BYWEEKNO" in parts or ("BYSETPOS" in parts and first_week_cut))


def oracle(freq: str, kw: dict[str, Any], dtstart: datetime, start: datetime, end: datetime):
    recurrence = du.rrule(getattr(du, freq), dtstart=dtstart, cache=False, **kw)
    found: list[datetime] = []
    if end < dtstart:
        return found
    for value in recurrence:  # full expansion from DTSTART
        if value > end:
            break
        if value >= start:
            found.append(value)
    return found


@settings(
    max_examples=500,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(cases())
def test_windowed_expansion_equals_full_dateutil_expansion_filtered_to_window(case) -> None:
    text, kw, freq, dtstart, window_start, window_end = case
    assume(dateutil_is_right(text, dtstart))
    try:
        expected = oracle(freq, kw, dtstart, window_start, window_end)
    except ValueError:
        assume(False)  # dateutil: "byxxx generates an empty set" (see the rejection test)
    assert list(expand(parse_rule(text), dtstart, window_start, window_end)) == expected


@pytest.mark.parametrize(
    ("rule", "kw", "freq"),
    [
        # RFC 5545 §3.8.5.3 shapes, with intervals that do not divide the larger unit.
        ("FREQ=MINUTELY;INTERVAL=7", {"interval": 7}, "MINUTELY"),
        ("FREQ=HOURLY;INTERVAL=5;BYMINUTE=17", {"interval": 5, "byminute": 17}, "HOURLY"),
        ("FREQ=SECONDLY;INTERVAL=61", {"interval": 61}, "SECONDLY"),
        (
            "FREQ=WEEKLY;INTERVAL=2;WKST=SU;BYDAY=TU,TH",
            {"interval": 2, "wkst": 6, "byweekday": (du.TU, du.TH)},
            "WEEKLY",
        ),
        (
            "FREQ=MONTHLY;INTERVAL=18;BYMONTHDAY=10,11,12",
            {"interval": 18, "bymonthday": (10, 11, 12)},
            "MONTHLY",
        ),
        (
            "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-2",
            {"byweekday": (du.MO, du.TU, du.WE, du.TH, du.FR), "bysetpos": -2},
            "MONTHLY",
        ),
        (
            "FREQ=YEARLY;INTERVAL=4;BYMONTH=11;BYDAY=TU;BYMONTHDAY=2,3,4,5,6,7,8",
            {"interval": 4, "bymonth": 11, "byweekday": du.TU, "bymonthday": (2, 3, 4, 5, 6, 7, 8)},
            "YEARLY",
        ),
        ("FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO", {"byweekno": 20, "byweekday": du.MO}, "YEARLY"),
        ("FREQ=MONTHLY;BYMONTHDAY=-1", {"bymonthday": -1}, "MONTHLY"),
        ("FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29", {"bymonth": 2, "bymonthday": 29}, "YEARLY"),
        ("FREQ=DAILY;INTERVAL=10", {"interval": 10}, "DAILY"),
    ],
)
@pytest.mark.parametrize(
    "dtstart", [datetime(1997, 9, 2, 9, 0), datetime(2001, 1, 1), datetime(2003, 7, 19, 23, 59, 1)]
)
def test_restart_far_from_dtstart_matches_full_expansion(rule, kw, freq, dtstart) -> None:
    reach, span = REACH[freq]
    window_start = dtstart + reach - timedelta(seconds=1)
    window_end = window_start + span
    expected = oracle(freq, kw, dtstart, window_start, window_end)
    assert expected, "the case must exercise at least one occurrence"
    assert list(expand(parse_rule(rule), dtstart, window_start, window_end)) == expected


@pytest.mark.parametrize(
    "rule",
    [
        # The rules dateutil gets wrong (issue 16), with the RFC 5545 reference as the oracle.
        "FREQ=MONTHLY;BYDAY=MO,1MO",
        "FREQ=MONTHLY;INTERVAL=5;BYDAY=TU,-1WE,2FR;BYSETPOS=2,-1",
        "FREQ=YEARLY;BYMONTH=3,11;BYDAY=FR,-1FR,1SU;BYHOUR=9,17",
        "FREQ=YEARLY;INTERVAL=3;BYDAY=SA,20MO,-1TU;BYSETPOS=-3",
        "FREQ=WEEKLY;BYDAY=MO,TH;BYSETPOS=2",
        "FREQ=WEEKLY;INTERVAL=3;WKST=SU;BYDAY=SU,WE,FR;BYHOUR=8,20;BYSETPOS=1,-2",
        "FREQ=YEARLY;INTERVAL=2;BYWEEKNO=1;BYDAY=MO,SU",
        "FREQ=YEARLY;INTERVAL=3;WKST=TH;BYWEEKNO=-1,53,2;BYSETPOS=1,-1",
        "FREQ=YEARLY;BYWEEKNO=-53,52;BYMONTH=1,12;BYDAY=TU,SA",
    ],
)
@pytest.mark.parametrize(
    "dtstart", [datetime(1997, 9, 2, 9, 0), datetime(2001, 1, 1), datetime(2003, 12, 29, 23, 59, 1)]
)
def test_restart_far_from_dtstart_matches_the_rfc5545_reference(rule: str, dtstart) -> None:
    window_start = dtstart + timedelta(days=366 * 15 + 100)
    window_end = window_start + timedelta(days=366 * 3)
    expected = [m for m in reference_expand(rule, dtstart, window_end) if m >= window_start]
    assert expected, "the case must exercise at least one occurrence"
    assert list(expand(parse_rule(rule), dtstart, window_start, window_end)) == expected
