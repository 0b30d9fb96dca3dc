"""Shadow mode on both backends: a candidate computes, the live ledger is compared, never touched.

Four weeks of an hourly America/New_York schedule (xx:30) across the fall-back of 2026-11-01, when
01:30 happens twice: 01:30 EDT = 05:30Z (fold 0) and 01:30 EST = 06:30Z (fold 1) (tz database
2026a; US rule: first Sunday of November, 02:00 local). The live revision keeps FIRST_ONLY.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import Connection, func, select
from typer.testing import CliRunner

from almanac.cli import app
from ledger import Ledger, materialize, publish_revision
from ledger.events import ATTEMPTS, EVENTS, GATES, OCCURRENCES, SHADOW_OCCURRENCES, SLOTS
from ledger.shadow import (
    estimate_records,
    latest_mismatches,
    shadow_materialize,
    shadow_report,
)
from timecontract import FoldPolicy, OccurrenceRecord, ScheduleSpecV1, occurrences, parse_spec

pytest_plugins = ["ledger_fixtures"]

SCHEDULE = "hourly-ny"
PUBLISHED = datetime(2026, 10, 14, tzinfo=UTC)
FROM = datetime(2026, 10, 15, tzinfo=UTC)
TO = datetime(2026, 11, 12, tzinfo=UTC)  # four weeks
LIVE = 28 * 24 - 1
SPEC = {
    "schema": "scheduleSpec.v1",
    "scheduleId": SCHEDULE,
    "revision": 1,
    "timeZone": "America/New_York",
    "tzdbVersion": "2026a",
    "rule": "FREQ=HOURLY;BYMINUTE=30",
    "gapPolicy": "SKIP",
    "foldPolicy": "FIRST_ONLY",
    "misfirePolicy": "SKIP",
    "cutoverAt": "2026-10-01T00:00:00Z",
}


def _live(ledger: Ledger) -> ScheduleSpecV1:
    spec = parse_spec(SPEC)
    publish_revision(ledger, spec, PUBLISHED, by="t")
    materialize(ledger, spec, FROM, TO, PUBLISHED)
    return spec


def _live_tables(ledger: Ledger) -> tuple[int, ...]:
    def counts(c: Connection) -> tuple[int, ...]:
        tables = (OCCURRENCES, EVENTS, ATTEMPTS, SLOTS)
        rows = [c.execute(select(func.count()).select_from(t)).scalar_one() for t in tables]
        return (*rows, c.execute(select(GATES.c.execution_epoch)).scalar_one())

    return ledger.read(counts)


def test_same_code_under_two_aliases_over_four_weeks_across_fall_back_agrees(
    ledger: Ledger,
) -> None:
    _live(ledger)
    before = _live_tables(ledger)
    # One xx:30 instant per UTC hour of the 672-hour window, except 06:30Z on 2026-11-01: the
    # second 01:30, which FIRST_ONLY drops → 671 live rows.
    assert before[0] == LIVE
    for alias in ("v1", "v2"):
        run = shadow_materialize(ledger, alias, SCHEDULE, FROM, TO, TO, by="shadow")
        assert run.records == LIVE and run.mismatches == 0
        report = shadow_report(ledger, alias)
        assert report.mismatches == 0 and report.matched == LIVE
    assert _live_tables(ledger) == before
    assert latest_mismatches(ledger) == {"v1": 0, "v2": 0}


def _second_only(spec: ScheduleSpecV1, low: datetime, high: datetime) -> list[OccurrenceRecord]:
    """A test-only candidate that (wrongly) keeps the later instant of a fold."""
    return occurrences(spec.model_copy(update={"fold_policy": FoldPolicy.SECOND_ONLY}), low, high)


def test_a_candidate_with_another_fold_policy_is_reported_and_dispatches_nothing(
    ledger: Ledger,
) -> None:
    _live(ledger)
    before = _live_tables(ledger)
    run = shadow_materialize(
        ledger, "v-fold", SCHEDULE, FROM, TO, TO, by="shadow", compute=_second_only
    )
    report = shadow_report(ledger, "v-fold")
    # The only affected nominal time: 2026-11-01 01:30 — fold 0 (05:30Z) live, fold 1 shadow.
    assert report.only_live == [f"{SCHEDULE}.r1.20261101T013000.f0"]
    assert report.only_shadow == [f"{SCHEDULE}.r1.20261101T013000.f1"]
    assert report.differing == [] and report.matched == LIVE - 1
    assert run.mismatches == report.mismatches == 2
    assert latest_mismatches(ledger) == {"v-fold": 2}
    assert _live_tables(ledger) == before
    payload = report.to_json()
    assert payload["onlyShadow"] == {"count": 1, "examples": report.only_shadow}


def test_report_since_narrows_the_comparison(ledger: Ledger) -> None:
    _live(ledger)
    shadow_materialize(ledger, "v-fold", SCHEDULE, FROM, TO, TO, by="s", compute=_second_only)
    after_fold = datetime(2026, 11, 2, tzinfo=UTC)
    assert shadow_report(ledger, "v-fold", since=after_fold).mismatches == 0


def test_manual_runs_are_outside_the_calendar_and_not_compared(ledger: Ledger) -> None:
    from datetime import timedelta

    from ledger import record_trigger

    _live(ledger)
    # A manual run at 12:00:05Z, inside the window: no calendar slot, so no candidate makes it.
    record_trigger(
        ledger, SCHEDULE, "u3", FROM + timedelta(hours=12, seconds=5), by="a", reason="x"
    )
    run = shadow_materialize(ledger, "v2", SCHEDULE, FROM, TO, TO, by="shadow")
    report = shadow_report(ledger, "v2")
    assert (run.mismatches, report.mismatches, report.only_live) == (0, 0, [])
    assert (report.matched, report.manual_excluded) == (LIVE, 1)


def test_backfilled_occurrences_before_publication_are_compared_and_the_rest_are_not(
    ledger: Ledger,
) -> None:
    from datetime import timedelta

    from ledger import backfill_window

    spec = parse_spec(SPEC)
    publish_revision(ledger, spec, PUBLISHED, by="t")
    materialize(ledger, spec, PUBLISHED, TO, PUBLISHED)
    # The revision's cutover (10-01) lies before its publication (10-14): live materialization
    # starts at the publication, so 10-13 is live only where an operator backfills it. Six xx:30
    # instants, 12:30Z … 17:30Z (08:30 … 13:30 EDT, UTC-4).
    day_before = PUBLISHED - timedelta(days=1)
    backfill_window(
        ledger,
        SCHEDULE,
        day_before + timedelta(hours=12),
        day_before + timedelta(hours=18),
        PUBLISHED + timedelta(hours=1),
        by="operator",
        reason="missed before publication",
    )
    live = (TO - PUBLISHED) // timedelta(hours=1) - 1 + 6  # minus the fold's second 01:30
    run = shadow_materialize(ledger, "v2", SCHEDULE, day_before, TO, TO, by="shadow")
    report = shadow_report(ledger, "v2")
    assert (run.mismatches, report.only_live, report.only_shadow) == (0, [], [])
    assert (report.matched, report.not_backfilled) == (live, 24 - 6)

    dropped = f"{SCHEDULE}.r1.20261013T103000.f0"  # 14:30Z, backfilled

    def drops_one(spec: ScheduleSpecV1, low: datetime, high: datetime) -> list[OccurrenceRecord]:
        return [r for r in occurrences(spec, low, high) if r.occurrence_id != dropped]

    shadow_materialize(ledger, "v-drop", SCHEDULE, day_before, TO, TO, by="s", compute=drops_one)
    assert shadow_report(ledger, "v-drop").only_live == [dropped]


MINUTELY = {**SPEC, "scheduleId": "minutely", "rule": "FREQ=MINUTELY"}


def test_a_shadow_run_writes_in_bounded_transactions_and_yields_between_them(
    ledger: Ledger,
) -> None:
    publish_revision(ledger, parse_spec(MINUTELY), PUBLISHED, by="t")
    yields: list[int] = []
    run = shadow_materialize(
        ledger,
        "v2",
        "minutely",
        FROM,
        FROM + timedelta(minutes=100),
        TO,
        by="t",
        batch=7,
        between_batches=lambda: yields.append(1),
    )
    assert run.records == 100  # one a minute over 100 minutes
    assert len(yields) == 100 // 7  # 15 transactions of at most 7 rows, a yield between two

    assert ledger.read(_shadow_rows) == 100


def test_the_cost_is_estimated_before_a_run(ledger: Ledger) -> None:
    publish_revision(ledger, parse_spec(MINUTELY), PUBLISHED, by="t")
    # 4 weeks of a one-minute rule: 28 × 24 × 60 instants (the window lies after the cutover).
    assert estimate_records(ledger, "minutely", FROM, TO) == 28 * 24 * 60


def test_the_command_refuses_a_run_beyond_its_bound_and_writes_nothing(
    ledger: Ledger, database_url: str
) -> None:
    publish_revision(ledger, parse_spec(MINUTELY), PUBLISHED, by="t")
    window = ["--since", "2026-10-15T00:00:00Z", "--until", "2026-10-16T00:00:00Z"]
    args = ["shadow", "run", "--alias", "v2", "--url", database_url, *window]
    refused = CliRunner().invoke(app, [*args, "--max-records", "1000"])
    assert refused.exit_code == 2
    assert "--max-records=1000: about 1440 records" in refused.stderr
    assert "nothing was written" in refused.stderr
    assert ledger.read(_shadow_rows) == 0
    ran = CliRunner().invoke(app, [*args, "--max-records", "1440"])
    assert ran.exit_code == 0, ran.output
    assert "about 1440 records for 1 schedule" in ran.stderr
    assert ledger.read(_shadow_rows) == 1440


def _shadow_rows(c: Connection) -> int:
    return c.execute(select(func.count()).select_from(SHADOW_OCCURRENCES)).scalar_one()
