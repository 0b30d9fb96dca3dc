"""Paged reads (``ledger.browse``) on SQLite and PostgreSQL: every row once, in order, filtered."""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "console"))

from scenario import NOW, R2_CUTOVER, SCHEDULE, build, spec

from ledger import (
    Ledger,
    OccurrenceState,
    delete_schedule,
    gates_page,
    last_placed_at,
    list_occurrences,
    occurrence_page,
    publish_revision,
    published_specs,
    revision_cutovers,
    schedule_facts,
)

pytest_plugins = ["ledger_fixtures"]  # ledger, backend and the PostgreSQL cluster


def _walk(ledger: Ledger, limit: int, **filters: object) -> list[str]:
    seen: list[str] = []
    after = None
    while True:
        page = occurrence_page(ledger, SCHEDULE, after=after, limit=limit, **filters)  # type: ignore[arg-type]
        seen += [r.occurrence_id for r in page.rows]
        assert len(page.rows) <= limit
        if page.next is None:
            return seen
        after = page.next


def test_pages_of_three_visit_every_occurrence_once_in_placed_order(ledger: Ledger) -> None:
    build(ledger)
    everything = list_occurrences(ledger, SCHEDULE)
    seen = _walk(ledger, 3)
    assert sorted(seen) == sorted(r.occurrence_id for r in everything)
    assert len(seen) == len(set(seen)) == len(everything)
    placed = {r.occurrence_id: r.placed_at_utc for r in everything}
    keys = [(placed[i], i) for i in seen]
    assert keys == sorted(keys)


def test_fold_occurrences_share_a_page_boundary_without_loss(ledger: Ledger) -> None:
    facts = build(ledger)
    # Pages of one row each around the fold night: both fold ordinals appear, in UTC order.
    seen = _walk(ledger, 1, from_utc=NOW + timedelta(days=9), to_utc=NOW + timedelta(days=11))
    assert seen.index(facts.fold[0]) + 1 == seen.index(facts.fold[1])


def test_state_and_revision_filters(ledger: Ledger) -> None:
    facts = build(ledger)
    never_ran = _walk(
        ledger, 50, states=[OccurrenceState.SKIPPED_GAP, OccurrenceState.MISFIRE_EXPIRED]
    )
    assert never_ran == [facts.expired, facts.gap]
    r2 = _walk(ledger, 500, revisions=[2])
    assert r2 and all(".r2." in i for i in r2)
    assert facts.gap in r2
    window = occurrence_page(ledger, SCHEDULE, to_utc=R2_CUTOVER, revisions=[2], limit=10)
    assert window.rows == () and window.next is None


def test_gates_page_walks_schedule_ids_in_order(ledger: Ledger) -> None:
    for name in ("c-report", "a-report", "b-report"):
        publish_revision(ledger, spec(scheduleId=name), NOW, by="test")
    first = gates_page(ledger, limit=2)
    assert [g.schedule_id for g in first] == ["a-report", "b-report"]
    rest = gates_page(ledger, after="b-report", limit=2)
    assert [g.schedule_id for g in rest] == ["c-report"]
    with pytest.raises(ValueError, match="limit=0"):
        gates_page(ledger, limit=0)


def test_schedule_facts_count_states_next_run_cases_and_revisions(ledger: Ledger) -> None:
    build(ledger)
    publish_revision(ledger, spec(scheduleId="quiet"), NOW, by="test")
    facts = schedule_facts(ledger, [SCHEDULE, "quiet", "unknown-id"], NOW)
    ops = facts[SCHEDULE]
    assert ops.counts[OccurrenceState.UNKNOWN_EFFECT] == 1
    assert ops.counts[OccurrenceState.SUCCEEDED] == 1
    assert sum(ops.counts.values()) == len(list_occurrences(ledger, SCHEDULE))
    assert ops.open_cases == 1
    # The first PLANNED at or after NOW (2026-10-22T12:00Z): 10-23 01:30 EDT = 05:30Z.
    assert ops.next_planned_utc is not None
    assert ops.next_planned_utc.isoformat() == "2026-10-23T05:30:00+00:00"
    assert [
        (r.revision, r.cutover_at_utc.isoformat(), r.time_zone, r.tzdb_version)
        for r in ops.revisions
    ] == [
        (1, "2026-10-01T00:00:00+00:00", "America/New_York", "2026a"),
        (2, "2027-01-01T00:00:00+00:00", "America/New_York", "2026a"),
    ]
    assert facts["quiet"].counts == {} and facts["quiet"].open_cases == 0
    assert facts["unknown-id"].revisions == ()
    assert revision_cutovers(ledger, SCHEDULE) == ops.revisions
    assert revision_cutovers(ledger, "unknown-id") == ()


def test_schedule_facts_hold_what_a_projection_needs_only_where_one_is_needed(
    ledger: Ledger,
) -> None:
    build(ledger)
    quiet = spec(scheduleId="quiet")
    publish_revision(ledger, quiet, NOW, by="test")
    publish_revision(ledger, spec(scheduleId="gone"), NOW, by="test")
    delete_schedule(ledger, "gone", NOW, by="test", reason="test")
    facts = schedule_facts(ledger, [SCHEDULE, "quiet", "gone", "unknown-id"], NOW)
    # ops-report is materialized to 2027-03-20T00:00Z: its last run before then is r2's
    # 2027-03-19 02:30 EDT (clocks went forward on 03-14) = 06:30Z; it has a PLANNED run ahead.
    assert facts[SCHEDULE].last_placed_utc == datetime(2027, 3, 19, 6, 30, tzinfo=UTC)
    assert facts[SCHEDULE].last_placed_utc == last_placed_at(ledger, SCHEDULE, NOW)
    assert facts[SCHEDULE].specs == ()
    # quiet has no occurrence and no PLANNED run: its one spec, as published.
    assert facts["quiet"].last_placed_utc is None
    assert facts["quiet"].specs == (quiet,)
    assert facts["quiet"].specs == tuple(published_specs(ledger, "quiet"))
    # A deleted schedule is projected nothing, so its specs are not read.
    assert facts["gone"].revisions and facts["gone"].specs == ()
    assert facts["unknown-id"].specs == () and facts["unknown-id"].last_placed_utc is None
