"""A dense rule's century streams with flat memory: pieces are sized in occurrences, not periods.

``iter_occurrences`` (``preview --json``, backfill) resolves a window piece by piece. A rule at
the densest supported density written from ``FREQ=DAILY`` (every other second through BYxxx
lists) has a day as its period, so pieces of 10,000 periods would each hold 432 million
occurrences. Run in a child process capped at 1 GiB of address space and 60 s: the first 30,000
records of a 100-year window must come out within both (a few MiB of records at a time).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHILD = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from datetime import UTC, datetime
from itertools import islice
from timecontract import iter_occurrences, parse_spec
every_other = ",".join(map(str, range(0, 60, 2)))
spec = parse_spec({
    "schema": "scheduleSpec.v1", "scheduleId": "dense", "revision": 1, "timeZone": "UTC",
    "tzdbVersion": "2026a", "cutoverAt": "2027-01-01T00:00:00Z",
    "rule": "FREQ=DAILY;BYHOUR=" + ",".join(map(str, range(24)))
    + ";BYMINUTE=" + ",".join(map(str, range(60))) + ";BYSECOND=" + every_other,
})
window = iter_occurrences(
    spec, datetime(2027, 1, 1, tzinfo=UTC), datetime(2127, 1, 1, tzinfo=UTC)
)
records = list(islice(window, 30_000))
print(len(records), records[-1].instant_utc.isoformat())
"""


def test_a_dense_century_streams_in_bounded_memory_and_time() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]
    # 30,000 instants every other second from 2027-01-01T00:00:00Z: the last is 59,998 s later.
    assert done.stdout.split() == ["30000", "2027-01-01T16:39:58+00:00"]
