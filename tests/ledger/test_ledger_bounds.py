"""Every ID a valid input builds fits the ledger's columns, on both backends; a data error is final.

A 63-character scheduleId and a 20-character request ID make a 91-character manual occurrence ID
and logical slot: PostgreSQL refused it (``character varying(90)``) and the refusal was reported
as the ledger being unavailable, so the trigger was retried. The longest inputs the validator
accepts (:mod:`timecontract.ids`: scheduleId 63, revision 2**31 - 1, request ID 64) are written
here through the real operations and read back; a value no column can hold is a
``LedgerDataError`` naming its field, never ``LedgerUnavailable``.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from alembic import command
from ledger_support import T0, claim_now, due_occurrence, make_spec
from sqlalchemy import inspect

from ledger import (
    Ledger,
    LedgerDataError,
    LedgerUnavailable,
    get_gate,
    mark_running,
    record_trigger,
    show_occurrence,
    unknown_effect,
)
from ledger.migrate import alembic_config
from timecontract import InvalidSpec, parse_spec
from timecontract.ids import (
    MAX_LOGICAL_SLOT_ID_LENGTH,
    MAX_OCCURRENCE_ID_LENGTH,
    MAX_REQUEST_ID_LENGTH,
    MAX_REVISION_DIGITS,
    MAX_SCHEDULE_ID_LENGTH,
    logical_slot_id,
    manual_occurrence_id,
    occurrence_id,
)
from timecontract.spec import MAX_REVISION

pytest_plugins = ["ledger_fixtures"]  # ledger, backend and the PostgreSQL cluster

LONGEST_SID = "s" + "-x" * 31  # 63 characters
LONGEST_REQUEST = "r" * MAX_REQUEST_ID_LENGTH


def test_the_bounds_are_the_validator_s() -> None:
    assert len(LONGEST_SID) == MAX_SCHEDULE_ID_LENGTH == 63
    spec = make_spec(scheduleId=LONGEST_SID, revision=MAX_REVISION)
    assert len(str(spec.revision)) == MAX_REVISION_DIGITS
    with pytest.raises(InvalidSpec):
        parse_spec({**make_spec().model_dump(by_alias=True, mode="json"), "scheduleId": "s" * 64})
    with pytest.raises(ValueError):
        manual_occurrence_id("s", "r" * (MAX_REQUEST_ID_LENGTH + 1))
    # The longest ID of each form, built by the real builders, counted here.
    from datetime import UTC, datetime

    calendar = occurrence_id(LONGEST_SID, MAX_REVISION, datetime(9000, 12, 31, 23, 59, 59), 1)
    manual = manual_occurrence_id(LONGEST_SID, LONGEST_REQUEST)
    slot = logical_slot_id(LONGEST_SID, datetime(9000, 12, 31, 23, 59, 59, tzinfo=UTC))
    assert (len(calendar), len(manual), len(slot)) == (94, 135, 80)
    assert MAX_OCCURRENCE_ID_LENGTH == MAX_LOGICAL_SLOT_ID_LENGTH == 135


def test_the_longest_manual_occurrence_is_recorded_and_runs(ledger: Ledger) -> None:
    spec = make_spec(scheduleId=LONGEST_SID, revision=MAX_REVISION)
    due_occurrence(ledger, spec)
    at = T0 + timedelta(hours=1)
    trigger = record_trigger(ledger, LONGEST_SID, LONGEST_REQUEST, at, by="alice", reason="r")
    oid = trigger.occurrence.occurrence_id
    assert len(oid) == 135 and trigger.occurrence.logical_slot_id == oid
    attempt = claim_now(ledger, oid, at, gate=get_gate(ledger, LONGEST_SID)).attempt
    assert attempt is not None
    mark_running(ledger, oid, attempt.claim_generation, at, by="w")
    unknown_effect(
        ledger, oid, attempt.claim_generation, at, by="w", error_class="Timeout",
        error_message="",
    )  # fmt: skip
    detail = show_occurrence(ledger, oid)
    assert detail.case is not None and detail.occurrence.occurrence_id == oid


@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_a_value_longer_than_its_column_is_a_permanent_error_naming_the_field(
    ledger: Ledger,
) -> None:
    # SQLite does not enforce declared lengths; PostgreSQL does: its refusal is final.
    due_occurrence(ledger)
    with pytest.raises(LedgerDataError) as caught:
        record_trigger(ledger, "daily-ops-summary", "r1", T0, by="b" * 300, reason="r")
    assert not isinstance(caught.value, LedgerUnavailable)
    assert caught.value.field == "by"
    assert str(caught.value).startswith("by: 300 characters, more than the ledger's column holds")
    assert "bbbb" not in str(caught.value)


def _width(ledger: Ledger, table: str, column: str) -> int | None:
    columns = ledger.read(lambda c: inspect(c).get_columns(table))
    (found,) = [c for c in columns if c["name"] == column]
    return getattr(found["type"], "length", None)


def test_migration_0013_widens_the_id_columns_and_downgrades(ledger: Ledger) -> None:
    config = alembic_config(ledger.engine)
    assert _width(ledger, "occurrences", "occurrence_id") == 135
    assert _width(ledger, "logical_slots", "logical_slot_id") == 135
    command.downgrade(config, "0012")
    assert _width(ledger, "occurrences", "occurrence_id") == 120
    assert _width(ledger, "logical_slots", "logical_slot_id") == 90
    assert _width(ledger, "occurrence_events", "occurrence_id") == 120
    command.upgrade(config, "head")
    assert _width(ledger, "occurrence_events", "occurrence_id") == 135
    assert _width(ledger, "shadow_occurrences", "logical_slot_id") == 135


def test_migration_0013_refuses_to_downgrade_while_a_longer_id_is_held(ledger: Ledger) -> None:
    due_occurrence(ledger, make_spec(scheduleId=LONGEST_SID))
    record_trigger(ledger, LONGEST_SID, "r" * 30, T0 + timedelta(hours=1), by="a", reason="r")
    with pytest.raises(RuntimeError, match="cannot downgrade below 0013"):
        command.downgrade(alembic_config(ledger.engine), "0012")


def test_text_that_is_not_unicode_is_a_permanent_data_error(ledger: Ledger) -> None:
    """An unpaired surrogate (a byte that was not UTF-8) is refused for good, never retried."""
    from ledger import disable, publish_revision

    spec = make_spec()
    publish_revision(ledger, spec, T0, by="test")
    with pytest.raises(LedgerDataError, match="not valid Unicode"):
        disable(ledger, spec.schedule_id, T0, reason="evil\udc9bcsi", by="test")
