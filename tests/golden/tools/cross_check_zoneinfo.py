"""Cross-check the golden cases with Python zoneinfo + the tzdata package.

Independent of java.time (which generated the files) and of the project's own code.
Run from anywhere:  .venv/bin/python tests/golden/tools/cross_check_zoneinfo.py

Checks, for every case file: the top-level and record keys, that each record's placement
(instant, or gapAt for SKIPPED_GAP) lies in [window.from, window.to) and at/after cutoverAt,
the sort order, and every instant / offset / gap / fold classification against zoneinfo.
"""

import glob
import json
import os
import sys
import zoneinfo
from datetime import UTC, datetime, timedelta

import tzdata

zoneinfo.reset_tzpath(to=[])  # use the tzdata package only, never /usr/share/zoneinfo

TOP_KEYS = {"name", "source", "spec", "window", "expected"}
REC_KEYS = ["nominalLocal", "fold", "instant", "gapAt", "utcOffset", "disposition", "reason"]
CASES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cases", "*.json")


def parse_utc(s):
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def fmt_utc(d):
    return d.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def fmt_offset(td):
    s = int(td.total_seconds())
    sign = "-" if s < 0 else "+"
    s = abs(s)
    return f"{sign}{s // 3600:02d}:{s // 60 % 60:02d}"


def check_record(spec, zone, r, naturals, window):
    nl = datetime.strptime(r["nominalLocal"], "%Y-%m-%dT%H:%M:%S")
    a0 = nl.replace(tzinfo=zone, fold=0)
    a1 = nl.replace(tzinfo=zone, fold=1)
    o0, o1 = a0.utcoffset(), a1.utcoffset()

    def round_trips(a):
        return a.astimezone(UTC).astimezone(zone).replace(tzinfo=None) == nl

    if o0 == o1:
        kind = "exists"
    elif round_trips(a0) and round_trips(a1):
        kind = "fold"
    else:
        kind = "gap"

    reason = r["reason"]
    if reason == "UNAMBIGUOUS":
        return (
            kind == "exists"
            and r["instant"] == fmt_utc(a0)
            and r["utcOffset"] == fmt_offset(o0)
            and r["fold"] == 0
            and r["gapAt"] is None
            and r["disposition"] == "PLANNED"
        )
    if reason == "FOLD_FIRST":
        return (
            kind == "fold"
            and spec["foldPolicy"] in ("FIRST_ONLY", "BOTH")
            and a0.astimezone(UTC) < a1.astimezone(UTC)
            and r["instant"] == fmt_utc(a0)
            and r["utcOffset"] == fmt_offset(o0)
            and r["fold"] == 0
            and r["gapAt"] is None
            and r["disposition"] == "PLANNED"
        )
    if reason == "FOLD_SECOND":
        return (
            kind == "fold"
            and spec["foldPolicy"] in ("SECOND_ONLY", "BOTH")
            and r["instant"] == fmt_utc(a1)
            and r["utcOffset"] == fmt_offset(o1)
            and r["fold"] == 1
            and r["gapAt"] is None
            and r["disposition"] == "PLANNED"
        )
    # gap records
    if kind != "gap" or r["fold"] != 0 or r["gapAt"] is None:
        return False
    gap_at = parse_utc(r["gapAt"])
    # gapAt is a transition instant lying between the two readings of the nominal time
    before = (gap_at - timedelta(seconds=1)).astimezone(zone).utcoffset()
    if before == gap_at.astimezone(zone).utcoffset():
        return False
    if not (nl - o1).replace(tzinfo=UTC) <= gap_at <= (nl - o0).replace(tzinfo=UTC):
        return False
    shifted = a0.astimezone(UTC)  # zoneinfo fold=0 in a gap = offset before (RFC 5545 3.3.5)
    if reason == "GAP_SHIFTED_FORWARD":
        return (
            spec["gapPolicy"] == "SHIFT_FORWARD"
            and r["instant"] == fmt_utc(shifted)
            and r["utcOffset"] == fmt_offset(shifted.astimezone(zone).utcoffset())
            and r["disposition"] == "PLANNED"
            and fmt_utc(shifted) not in naturals
        )
    if reason == "GAP_SKIPPED":
        return (
            spec["gapPolicy"] == "SKIP"
            and r["instant"] is None
            and r["utcOffset"] is None
            and r["disposition"] == "SKIPPED_GAP"
        )
    if reason == "GAP_SHIFT_COLLISION":
        ok = (
            spec["gapPolicy"] == "SHIFT_FORWARD"
            and r["instant"] is None
            and r["utcOffset"] is None
            and r["disposition"] == "SKIPPED_GAP"
        )
        if window[0] <= shifted < window[1]:
            ok = ok and fmt_utc(shifted) in naturals
        return ok
    return False


def main():
    print("tzdata (IANA)", tzdata.IANA_VERSION)
    files = sorted(glob.glob(CASES))
    n_rec = bad = 0
    for f in files:
        with open(f, encoding="utf-8") as fh:
            c = json.load(fh)
        if set(c) != TOP_KEYS or os.path.basename(f) != c["name"] + ".json":
            print("BAD FILE", f)
            bad += 1
            continue
        spec = c["spec"]
        zone = zoneinfo.ZoneInfo(spec["timeZone"])
        window = (parse_utc(c["window"]["from"]), parse_utc(c["window"]["to"]))
        cutover = parse_utc(spec["cutoverAt"])
        naturals = {r["instant"] for r in c["expected"] if r["gapAt"] is None}
        prev = None
        for r in c["expected"]:
            n_rec += 1
            ok = list(r) == REC_KEYS
            placed = parse_utc(r["instant"] or r["gapAt"])
            ok = ok and window[0] <= placed < window[1] and placed >= cutover
            ok = ok and check_record(spec, zone, r, naturals, window)
            key = (placed, r["nominalLocal"], r["fold"])
            ok = ok and (prev is None or prev < key)
            prev = key
            if not ok:
                bad += 1
                print("BAD", os.path.basename(f), r)
    print(f"{len(files)} cases, {n_rec} records checked, {bad} bad")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
