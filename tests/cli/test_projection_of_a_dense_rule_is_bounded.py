"""``upcoming``/``status`` beyond the horizon project from the spec in windows sized in occurrences.

A rule firing every other second through BYxxx lists has a day as its period: a window of
``n + 1`` periods held 907,200 occurrences for ``-n 20`` (41 s and 615 MB here). Sized by the
rule's per-day bound, the projection resolves about ``n`` at a time. Run in a child process with
a 20 s deadline; the expected instants are the rule's arithmetic (every 2 s after the instant).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHILD = """
from datetime import UTC, datetime
from almanac.readings import project
from timecontract import parse_spec
every_other = ",".join(map(str, range(0, 60, 2)))
spec = parse_spec({
    "schema": "scheduleSpec.v1", "scheduleId": "dense", "revision": 1, "timeZone": "UTC",
    "tzdbVersion": "2026a", "cutoverAt": "2027-01-01T00:00:00Z",
    "rule": "FREQ=DAILY;BYHOUR=" + ",".join(map(str, range(24)))
    + ";BYMINUTE=" + ",".join(map(str, range(60))) + ";BYSECOND=" + every_other,
})
for item in project([spec], datetime(2027, 1, 1, tzinfo=UTC), 20):
    print(item.instant_utc.strftime("%H:%M:%S"))
"""


def test_the_next_twenty_of_a_dense_rule_are_projected_promptly() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=REPO, capture_output=True, text=True, timeout=20
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == [f"00:00:{s:02d}" for s in range(2, 42, 2)]
