"""Matrix 3: a tz database release update with a real legal change, through the workflows.

Iran abolished DST: tz release 2022b's NEWS says "Iran no longer observes DST after 2022". Under
2022a, Asia/Tehran (+03:30) still had DST (+04:30) in 2023 from 2023-03-22 00:00 to 2023-09-22
00:00 local; under 2022b it stays at +03:30. A daily 12:00 Tehran schedule therefore runs at
07:30Z on 2023-03-22 … 2023-09-21 under 2022a and at 08:30Z under 2022b (hand arithmetic).

The releases come from the real ``tzdata`` wheels (downloaded once into pytest's cache, as in
``tests/cli/test_tzdb.py``) and are added with ``almanac tzdb add RELEASE --from-wheel``, to a store
that ``ALMANAC_TZDB_DIR`` points at — the same store the worker's activities read.

1. Release A: the store has only 2022a; revision 1 (pinned to 2022a, cutover 2023-03-01) runs
   from 2023-03-18 to 2023-03-25 (simulated), materializing two weeks ahead.
2. The worker gains release B: 2022b is added, a new worker starts on the same ledger. What was
   materialized under 2022a stays as it was: IDs, instants, offsets, tzdb release, reasons.
3. ``almanac tzdb diff`` on revision 1's spec reports the future change (2023-03-25 … 09-21).
4. Revision 2, pinned to 2022b with cutover 2023-03-28T00:00Z, is published by signal on 03-25; the
   schedule runs on to 2023-04-02. Each local day 03-18 … 04-01 runs exactly once: revision 1
   through 03-27 (at 07:30Z from 03-22), revision 2 from 03-28 (at 08:30Z); revision 1's
   materialized occurrences from the cutover on are CANCELLED (superseded), never run, never
   renumbered.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from faultkit import await_until, in_process_worker, running_sink, sqlite_ledger, start_schedule
from temporal_env import start_time_skipping
from typer.testing import CliRunner

import ledger
from almanac import tzdb
from almanac.cli import app
from ledger import OccurrenceState

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.fault, pytest.mark.slow]

SCHEDULE_ID = "tehran-noon"
CUTOVER = datetime(2023, 3, 28, tzinfo=UTC)
TEHRAN_STD = timedelta(hours=3, minutes=30)
TEHRAN_DST = timedelta(hours=4, minutes=30)


@pytest.fixture(scope="session")
def tzdata_wheels(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    """{"2022a": wheel, "2022b": wheel}, downloaded once with pip (kept in pytest's cache)."""
    cache = getattr(request.config, "cache", None)
    base = cache.mkdir("tzdata-wheels") if cache else tmp_path_factory.mktemp("tzdata-wheels")
    found = {}
    for release in ("2022a", "2022b"):
        folder = Path(base) / release
        folder.mkdir(exist_ok=True)
        existing = sorted(folder.glob("tzdata-*.whl"))
        found[release] = existing[0] if existing else tzdb.download_wheel(release, folder)
    return found


def almanac(*args: str) -> Any:
    """Run the ``almanac`` CLI in-process (the environment is the test's)."""
    return CliRunner().invoke(app, list(args))


def spec(sink_url: str, revision: int, release: str, cutover: str) -> dict[str, Any]:
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": SCHEDULE_ID,
        "revision": revision,
        "timeZone": "Asia/Tehran",
        "tzdbVersion": release,
        "rule": "FREQ=DAILY;BYHOUR=12;BYMINUTE=0",
        "gapPolicy": "SKIP",
        "foldPolicy": "FIRST_ONLY",
        "misfirePolicy": "SKIP",
        "cutoverAt": cutover,
        "action": {
            "name": "http",
            "parameters": {
                "url": f"{sink_url}/effects",
                "resultUrl": f"{sink_url}/effects/{{idempotencyKey}}",
                "timeoutSeconds": 5,
            },
        },
    }


def evidence(rows: list[ledger.OccurrenceView]) -> dict[str, tuple[Any, ...]]:
    """occurrenceId → what must never change once materialized."""
    return {
        r.occurrence_id: (
            r.revision,
            r.nominal_local,
            r.fold,
            r.instant_utc,
            r.utc_offset,
            r.tzdb_version,
            r.reason,
            r.logical_slot_id,
        )
        for r in rows
    }


def noon(d: date, offset: timedelta) -> datetime:
    return datetime(d.year, d.month, d.day, 12, tzinfo=UTC) - offset


async def test_tzdb_update_keeps_history_and_a_new_revision_takes_over_at_its_cutover(
    tmp_path: Path, tzdata_wheels: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    data_dir = tmp_path / "data"
    store = data_dir / "tzdb"
    monkeypatch.setenv("ALMANAC_DATA_DIR", str(data_dir))
    monkeypatch.setenv("ALMANAC_TZDB_DIR", str(store))
    added = almanac("tzdb", "add", "2022a", "--from-wheel", str(tzdata_wheels["2022a"]))
    assert added.exit_code == 0, added.output
    url, ledger_ = sqlite_ledger(tmp_path)
    env = await start_time_skipping()
    try:
        with running_sink() as sink:
            r1 = spec(sink.url, 1, "2022a", "2023-03-01T00:00:00Z")
            r2 = spec(sink.url, 2, "2022b", "2023-03-28T00:00:00Z")
            options = {
                "horizon_seconds": timedelta(days=14).total_seconds(),
                "refresh_seconds": timedelta(days=1).total_seconds(),
            }
            # 1. Release A only.
            async with in_process_worker(env.client, "tzdb", url, data_dir, "worker-2022a"):
                handle = await start_schedule(
                    env.client,
                    "tzdb",
                    r1,
                    simulated_now_utc=datetime(2023, 3, 18, tzinfo=UTC),
                    server_now_utc=await env.get_current_time(),
                    stop_after_utc=datetime(2023, 3, 25, tzinfo=UTC),
                    **options,
                )
                await handle.result()
                await await_until(
                    lambda: ledger.list_occurrences(
                        ledger_, SCHEDULE_ID, to_utc=datetime(2023, 3, 25, tzinfo=UTC)
                    ),
                    lambda rows: (
                        len(rows) == 7 and all(r.state is OccurrenceState.SUCCEEDED for r in rows)
                    ),
                    timeout=30,
                    what="revision 1 runs 03-18 … 03-24",
                )
            under_a = ledger.list_occurrences(ledger_, SCHEDULE_ID)
            assert len(under_a) >= 14 and {r.tzdb_version for r in under_a} == {"2022a"}
            # The law under 2022a: +04:30 from 03-22.
            for r in under_a:
                d = r.nominal_local.date()
                want = TEHRAN_DST if d >= date(2023, 3, 22) else TEHRAN_STD
                assert (r.instant_utc, r.utc_offset) == (noon(d, want), want), r.occurrence_id

            # 2. The worker gains release B.
            added = almanac("tzdb", "add", "2022b", "--from-wheel", str(tzdata_wheels["2022b"]))
            assert added.exit_code == 0, added.output
            # 3. tzdb diff reports the future change for revision 1.
            spec_file = tmp_path / "tehran-r1.json"
            spec_file.write_text(json.dumps(r1))
            diff = almanac(
                "tzdb", "diff", str(spec_file), "--to", "2022b",
                "--from", "2023-03-25T00:00:00Z", "--until", "2024-01-01T00:00:00Z", "--json",
            )  # fmt: skip
            assert diff.exit_code == 0, diff.output
            changes = json.loads(diff.stdout)
            days = [date(2023, 3, 25) + timedelta(days=n) for n in range(181)]
            assert days[-1] == date(2023, 9, 21)
            assert [c["occurrenceId"] for c in changes] == [
                f"{SCHEDULE_ID}.r1.{d:%Y%m%d}T120000.f0" for d in days
            ]
            assert all(c["changed"] == ["instant", "utcOffset"] for c in changes)
            assert changes[0]["from"]["instant"] == "2023-03-25T07:30:00Z"
            assert changes[0]["to"]["instant"] == "2023-03-25T08:30:00Z"

            # 4. A new worker (both releases) and revision 2, published by signal on 03-25.
            async with in_process_worker(env.client, "tzdb", url, data_dir, "worker-2022b"):
                handle = await start_schedule(
                    env.client,
                    "tzdb",
                    r1,
                    simulated_now_utc=datetime(2023, 3, 25, tzinfo=UTC),
                    server_now_utc=await env.get_current_time(),
                    stop_after_utc=datetime(2023, 4, 2, tzinfo=UTC),
                    **options,
                )
                await handle.signal("publish_revision", r2)
                await handle.result()
                await await_until(
                    lambda: ledger.list_occurrences(
                        ledger_, SCHEDULE_ID, to_utc=datetime(2023, 4, 2, tzinfo=UTC)
                    ),
                    lambda rows: sum(r.state is OccurrenceState.SUCCEEDED for r in rows) == 15,
                    timeout=30,
                    what="15 local days ran",
                )
            rows = ledger.list_occurrences(ledger_, SCHEDULE_ID)
            effects = sink.effects()
    finally:
        await env.shutdown()
        ledger_.dispose()

    # History is never renumbered: every 2022a row is still there with the same evidence.
    after = evidence(rows)
    assert {k: after[k] for k in evidence(under_a)} == evidence(under_a)
    # Each local day 03-18 … 04-01 ran exactly once: r1 before the cutover, r2 from it on.
    ran = sorted(
        (r.nominal_local.date(), r.revision, r.instant_utc, r.utc_offset, r.tzdb_version)
        for r in rows
        if r.state is OccurrenceState.SUCCEEDED
    )
    expected = []
    for n in range(15):
        d = date(2023, 3, 18) + timedelta(days=n)
        if d < date(2023, 3, 28):
            offset = TEHRAN_DST if d >= date(2023, 3, 22) else TEHRAN_STD
            expected.append((d, 1, noon(d, offset), offset, "2022a"))
        else:
            expected.append((d, 2, noon(d, TEHRAN_STD), TEHRAN_STD, "2022b"))
    assert ran == expected
    # r1's materialized occurrences from the cutover on were superseded, never run.
    r1_after = [r for r in rows if r.revision == 1 and r.instant_utc and r.instant_utc >= CUTOVER]
    assert r1_after
    assert all(r.state is OccurrenceState.CANCELLED for r in r1_after)
    assert all("superseded by revision 2" in (r.state_reason or "") for r in r1_after)
    # One live owner per logical slot; one effect per run occurrence, none for anything else.
    live = [r.logical_slot_id for r in rows if r.state is not OccurrenceState.CANCELLED]
    assert all(n == 1 for n in Counter(live).values())
    keys = Counter(e.idempotency_key for e in effects)
    succeeded = {r.occurrence_id for r in rows if r.state is OccurrenceState.SUCCEEDED}
    assert set(keys) == succeeded and all(n == 1 for n in keys.values())
