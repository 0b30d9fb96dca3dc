"""``ledger.backfill_window`` on SQLite and PostgreSQL: plan, create, requeue, skip, bound, refusal.

Expectations come from the contract, not the code: the occurrence IDs of a daily 02:30
America/New_York schedule are ``daily-ops-summary.r1.<YYYYMMDD>T023000.f0`` (the documented ID
format, ``timecontract.ids``) and equal what normal materialization records for the same window
in another ledger whose revision was applied before it; the only way out of ``MISFIRE_EXPIRED`` is
a backfill with ``include_expired``, recorded as an event naming who and why.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from ledger_support import T0, claim_now, make_spec
from sqlalchemy import func, select, text

import ledger as ledger_package
from ledger import (
    BackfillAction,
    BackfillRefused,
    IllegalTransition,
    Ledger,
    LedgerIntegrityError,
    OccurrenceState,
    backfill_window,
    disable,
    list_occurrences,
    mark_running,
    materialize,
    publish_revision,
    release_due,
    show_occurrence,
    succeeded,
    unknown_effect,
)
from ledger.backfill import MAX_WINDOW_OCCURRENCES
from ledger.events import EVENTS, OCCURRENCES
from ledger.migrate import alembic_config, current, head, upgrade
from ledger.states import BACKFILL_TRANSITIONS, TERMINAL, TRANSITIONS
from ledger.transitions import transition

pytest_plugins = ["ledger_fixtures"]

S = OccurrenceState
A = BackfillAction
SID = "daily-ops-summary"
OCT1 = datetime(2026, 10, 1, tzinfo=UTC)
"""The revision's cutoverAt (make_spec); it is published at T0 = 2026-11-01Z, a month later."""


def _id(day: datetime) -> str:
    return f"{SID}.r1.{day:%Y%m%d}T023000.f0"


def _published(ledger: Ledger, **overrides: object) -> None:
    publish_revision(ledger, make_spec(**overrides), T0, by="test")


def _rows(ledger: Ledger) -> int:
    return ledger.read(
        lambda c: (
            c.execute(select(func.count()).select_from(OCCURRENCES)).scalar_one(),
            c.execute(select(func.count()).select_from(EVENTS)).scalar_one(),
        )
    )


def _backfill(ledger: Ledger, start: datetime, end: datetime, **kw: object) -> object:
    kw.setdefault("now_utc", T0)
    now = kw.pop("now_utc")
    return backfill_window(ledger, SID, start, end, now, by="alice@ops", reason="late data", **kw)


@pytest.fixture
def other_ledger(tmp_path: Path) -> Iterator[Ledger]:
    url = f"sqlite:///{tmp_path / 'normal.sqlite3'}"
    upgrade(url)
    handle = Ledger.from_url(url)
    yield handle
    handle.dispose()


def test_dry_run_prints_the_plan_and_writes_nothing(ledger: Ledger) -> None:
    _published(ledger)
    before = _rows(ledger)
    plan = backfill_window(
        ledger, SID, OCT1, OCT1 + timedelta(days=3), T0, by="a", reason="r", dry_run=True
    )
    assert not plan.applied and plan.released == ()
    assert [(e.occurrence_id, e.action, e.state) for e in plan.entries] == [
        (_id(OCT1 + timedelta(days=d)), A.CREATE, None) for d in range(3)
    ]
    assert _rows(ledger) == before


def test_backfill_creates_with_the_ids_normal_materialization_gives(
    ledger: Ledger, other_ledger: Ledger
) -> None:
    _published(ledger)
    window = (OCT1, OCT1 + timedelta(days=10))
    plan = _backfill(ledger, *window)
    assert plan.applied and plan.count(A.CREATE) == 10
    rows = list_occurrences(ledger, SID, from_utc=window[0], to_utc=window[1])
    assert [r.occurrence_id for r in rows] == [_id(OCT1 + timedelta(days=d)) for d in range(10)]
    assert all(r.state is S.DUE for r in rows)
    # Normal materialization of the same revision, applied before the window, in another ledger.
    publish_revision(other_ledger, make_spec(), OCT1 - timedelta(days=1), by="test")
    normal = materialize(other_ledger, make_spec(), window[0], window[1], OCT1)
    assert [(v.occurrence_id, v.logical_slot_id, v.instant_utc) for v in normal.rows] == [
        (r.occurrence_id, r.logical_slot_id, r.instant_utc) for r in rows
    ]
    detail = show_occurrence(ledger, rows[0].occurrence_id)
    released = detail.events[-1]
    assert (released.from_state, released.to_state, released.by) == ("PLANNED", "DUE", "alice@ops")
    assert "backfill" in released.why and "late data" in released.why
    stamped = ledger.read(
        lambda c: (
            c.execute(select(OCCURRENCES.c.backfill_at_utc).where(OCCURRENCES.c.schedule_id == SID))
            .scalars()
            .all()
        )
    )
    assert len(stamped) == 10 and all(s is not None for s in stamped)


def test_a_second_identical_backfill_creates_nothing(ledger: Ledger) -> None:
    _published(ledger)
    _backfill(ledger, OCT1, OCT1 + timedelta(days=2))
    before = _rows(ledger)
    again = _backfill(ledger, OCT1, OCT1 + timedelta(days=2))
    assert [(e.action, e.state) for e in again.entries] == [(A.SKIP, S.DUE)] * 2
    assert again.released == () and _rows(ledger) == before


def test_backfilled_occurrences_are_not_expired_by_release(ledger: Ledger) -> None:
    # lateness PT0S under SKIP would expire anything a month late; backfilled ones are DUE.
    _published(ledger, misfirePolicy="SKIP", lateness="PT0S")
    _backfill(ledger, OCT1, OCT1 + timedelta(days=2))
    result = release_due(ledger, SID, T0)
    assert result.expired == ()
    assert {r.state for r in list_occurrences(ledger, SID, to_utc=T0)} == {S.DUE}


def _expired_week(ledger: Ledger) -> list[str]:
    """SKIP, lateness PT1M: a week materialized from T0 and released at T0+7d all expires."""
    spec = make_spec(misfirePolicy="SKIP", lateness="PT1M")
    publish_revision(ledger, spec, T0, by="test")
    materialize(ledger, spec, T0, T0 + timedelta(days=7), T0)
    expired = release_due(ledger, SID, T0 + timedelta(days=7)).expired
    assert len(expired) == 7
    return list(expired)


def test_expired_are_left_alone_unless_include_expired_then_requeued(ledger: Ledger) -> None:
    expired = _expired_week(ledger)
    now = T0 + timedelta(days=7)
    plain = _backfill(ledger, T0, now, now_utc=now)
    assert [(e.action, e.state) for e in plain.entries] == [(A.SKIP, S.MISFIRE_EXPIRED)] * 7
    assert plain.released == ()
    plan = _backfill(ledger, T0, now, now_utc=now, include_expired=True)
    assert plan.released == tuple(expired)
    assert [e.action for e in plan.entries] == [A.REQUEUE] * 7
    detail = show_occurrence(ledger, expired[0])
    assert detail.occurrence.state is S.DUE
    event = detail.events[-1]
    assert (event.from_state, event.to_state, event.by) == ("MISFIRE_EXPIRED", "DUE", "alice@ops")
    assert "late data" in event.why
    # Requeued occurrences claim like any DUE one (they still own their slot).
    assert claim_now(ledger, expired[0], now).won


def test_succeeded_and_unknown_effect_are_never_rerun(ledger: Ledger) -> None:
    spec = make_spec(misfirePolicy="CATCH_UP_BOUNDED", maxCatchUp=2, lateness="PT1M")
    publish_revision(ledger, spec, T0, by="test")
    materialize(ledger, spec, T0, T0 + timedelta(days=3), T0)
    now = T0 + timedelta(days=3)
    release_due(ledger, SID, now)
    rows = list_occurrences(ledger, SID, to_utc=now)
    states = [r.state for r in rows]
    assert states == [S.MISFIRE_EXPIRED, S.DUE, S.DUE]
    done, unknown = rows[1].occurrence_id, rows[2].occurrence_id
    for oid in (done, unknown):
        assert claim_now(ledger, oid, now).won
        mark_running(ledger, oid, 1, now, by="w")
    succeeded(ledger, done, 1, now, by="w")
    unknown_effect(ledger, unknown, 1, now, by="w", error_class="Timeout", error_message="t")
    plan = _backfill(ledger, T0, now, now_utc=now, include_expired=True)
    actions = {e.occurrence_id: (e.action, e.state) for e in plan.entries}
    assert actions[done] == (A.SKIP, S.SUCCEEDED)
    assert actions[unknown] == (A.SKIP, S.UNKNOWN_EFFECT)
    assert actions[rows[0].occurrence_id] == (A.REQUEUE, S.MISFIRE_EXPIRED)
    assert show_occurrence(ledger, done).occurrence.state is S.SUCCEEDED
    assert show_occurrence(ledger, unknown).occurrence.state is S.UNKNOWN_EFFECT


def test_a_plan_over_the_bound_is_refused_whole(ledger: Ledger) -> None:
    _published(ledger)
    before = _rows(ledger)
    with pytest.raises(BackfillRefused, match=r"creates or requeues 10 occurrences.*bound 9") as e:
        _backfill(ledger, OCT1, OCT1 + timedelta(days=10), max_occurrences=9)
    assert (e.value.field, e.value.value) == ("max", 9)
    assert _rows(ledger) == before
    assert _backfill(ledger, OCT1, OCT1 + timedelta(days=10), max_occurrences=10).applied


def test_a_window_holding_more_than_the_cap_is_refused_without_expanding_it_all(
    ledger: Ledger,
) -> None:
    # A month of a minutely rule holds 44,640 occurrences; the cap (2000) refuses it after
    # expanding one more than the cap, and nothing is written. Expanding the whole month first
    # takes seconds; the refusal must not (a generous 5 s bound on a busy machine).
    _published(ledger, rule="FREQ=MINUTELY")
    before = _rows(ledger)
    started = time.process_time()
    with pytest.raises(BackfillRefused, match="more than 2000 occurrences") as e:
        _backfill(ledger, OCT1, OCT1 + timedelta(days=31), max_occurrences=2000)
    assert time.process_time() - started < 5
    assert e.value.field == "to"
    assert _rows(ledger) == before
    # 2000 minutes exactly is within the cap.
    plan = _backfill(
        ledger, OCT1, OCT1 + timedelta(minutes=2000), max_occurrences=2000, dry_run=True
    )
    assert len(plan.entries) == MAX_WINDOW_OCCURRENCES == 2000


@pytest.mark.parametrize(
    ("start", "end", "field", "words"),
    [
        (OCT1.replace(tzinfo=None), OCT1 + timedelta(days=1), "from", "UTC offset"),
        (OCT1 + timedelta(days=1), OCT1, "to", "after from"),
        (OCT1, T0 + timedelta(seconds=1), "to", "after the schedule's now"),
        (OCT1 - timedelta(days=1), OCT1 + timedelta(days=1), "from", "cutoverAt"),
    ],
)
def test_refusals_name_the_field_and_write_nothing(
    ledger: Ledger, start: datetime, end: datetime, field: str, words: str
) -> None:
    _published(ledger)
    before = _rows(ledger)
    with pytest.raises(BackfillRefused, match=words) as e:
        _backfill(ledger, start, end)
    assert e.value.field == field
    assert _rows(ledger) == before


def test_a_disabled_schedule_is_refused(ledger: Ledger) -> None:
    _published(ledger)
    disable(ledger, SID, T0, by="test", reason="maintenance")
    with pytest.raises(BackfillRefused, match="disabled") as e:
        _backfill(ledger, OCT1, OCT1 + timedelta(days=1))
    assert e.value.field == "scheduleId"


def test_a_window_of_an_older_revision_is_refused(ledger: Ledger) -> None:
    _published(ledger)
    r2 = make_spec(revision=2, cutoverAt="2026-11-05T00:00:00Z")
    publish_revision(ledger, r2, T0, by="test")
    later = datetime(2026, 11, 10, tzinfo=UTC)
    with pytest.raises(BackfillRefused, match="revision 2's cutoverAt") as e:
        _backfill(ledger, OCT1, OCT1 + timedelta(days=1), now_utc=later)
    assert e.value.field == "from"
    # While revision 1 is still in force (r2's cutover ahead), its window may be backfilled.
    assert _backfill(ledger, OCT1, OCT1 + timedelta(days=1)).count(A.CREATE) == 1


def test_misfire_expired_to_due_only_through_a_backfill(ledger: Ledger) -> None:
    expired = _expired_week(ledger)
    now = T0 + timedelta(days=7)
    with pytest.raises(IllegalTransition):
        ledger.write(lambda c: transition(c, expired[0], S.DUE, now_utc=now, by="x", why="y"))
    # The backfill edge is the one edge: CANCELLED → DUE stays illegal even for a backfill.
    spec_rows = list_occurrences(ledger, SID)
    assert all(r.state is S.MISFIRE_EXPIRED for r in spec_rows)
    with pytest.raises(IllegalTransition):
        ledger.write(
            lambda c: transition(
                c, expired[0], S.CANCELLED, now_utc=now, by="x", why="y", backfill=True
            )
        )


def _raw(ledger: Ledger, sql: str, **params: object) -> None:
    ledger.write(lambda c: c.execute(text(sql), params))


def test_the_database_allows_the_edge_only_with_a_recorded_backfill(ledger: Ledger) -> None:
    expired = _expired_week(ledger)
    with pytest.raises(LedgerIntegrityError, match="illegal occurrence transition"):
        _raw(ledger, "UPDATE occurrences SET state = 'DUE' WHERE occurrence_id = :i", i=expired[0])
    _raw(
        ledger,
        "UPDATE occurrences SET state = 'DUE', backfill_at_utc = :t WHERE occurrence_id = :i",
        i=expired[0],
        t=T0 + timedelta(days=7),
    )
    assert show_occurrence(ledger, expired[0]).occurrence.state is S.DUE
    # Only from MISFIRE_EXPIRED: a backfill stamp does not open SUCCEEDED or CANCELLED.
    disable(ledger, SID, T0 + timedelta(days=7), by="test", reason="stop")  # DUE → CANCELLED
    assert show_occurrence(ledger, expired[0]).occurrence.state is S.CANCELLED
    with pytest.raises(LedgerIntegrityError, match="illegal occurrence transition"):
        _raw(
            ledger,
            "UPDATE occurrences SET state = 'DUE', backfill_at_utc = :t WHERE occurrence_id = :i",
            i=expired[0],
            t=T0 + timedelta(days=8),
        )


def _migration_0009() -> Any:
    path = Path(ledger_package.__file__).parent / "migrations" / "versions" / "0009_backfill.py"
    spec = importlib.util.spec_from_file_location("ledger_migration_0009", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_migration_0009_frozen_tables_equal_ledger_states() -> None:
    module = _migration_0009()
    as_states = {S(a): {S(b) for b in t} for a, t in module.TRANSITIONS.items()}
    # Migration 0014 added only states with no transitions (created terminal).
    assert as_states == {
        s: t for s, t in TRANSITIONS.items() if s not in {S.SKIPPED_HOLIDAY, S.EXCLUDED}
    }
    backfill = {S(a): {S(b) for b in t} for a, t in module.BACKFILL_TRANSITIONS.items()}
    assert backfill == BACKFILL_TRANSITIONS == {S.MISFIRE_EXPIRED: {S.DUE}}
    assert S.MISFIRE_EXPIRED in TERMINAL  # nothing automatic leaves it


def test_migration_0009_downgrades_with_a_requeued_row_and_upgrades(ledger: Ledger) -> None:
    expired = _expired_week(ledger)
    now = T0 + timedelta(days=7)
    _backfill(ledger, T0, T0 + timedelta(days=1), now_utc=now, include_expired=True)
    config = alembic_config(ledger.engine)
    command.downgrade(config, "0008")
    assert current(ledger.engine) == "0008"
    # The 0005 trigger is back: the edge is refused even with what was the backfill stamp.
    with pytest.raises(LedgerIntegrityError, match="illegal occurrence transition"):
        _raw(ledger, "UPDATE occurrences SET state = 'DUE' WHERE occurrence_id = :i", i=expired[1])
    command.upgrade(config, "head")
    assert current(ledger.engine) == head()
    assert show_occurrence(ledger, expired[0]).occurrence.state is S.DUE
    _backfill(ledger, T0, now, now_utc=now, include_expired=True)
    assert {r.state for r in list_occurrences(ledger, SID)} == {S.DUE}
