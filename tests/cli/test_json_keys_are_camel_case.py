"""``--json`` keys are camelCase on every command, as in the spec (``scheduleId``, ``cutoverAt``).

The control commands print the client's dataclasses; their snake_case field names must not leak
(issue 10's fresh-user trial: ``status``/``apply`` printed ``counts_by_state`` next to other
commands' ``scheduleId``). The expected objects are written out by hand from the spec's
convention, not derived from the code under test.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from activities import io
from almanac.cli.output import json_key, print_json

AT = datetime(2026, 11, 1, 5, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("field", "key"),
    [
        ("schedule_id", "scheduleId"),
        ("cutover_at_utc", "cutoverAt"),
        ("counts_by_state", "countsByState"),
        ("materialized_through_utc", "materializedThrough"),
        ("fold", "fold"),
        ("came_due", "cameDue"),
    ],
)
def test_a_field_name_becomes_a_camel_case_key(field: str, key: str) -> None:
    assert json_key(field) == key


def test_a_nested_verdict_prints_camel_case_keys_and_leaves_data_keys_alone(
    capsys: pytest.CaptureFixture[str],
) -> None:
    gate = io.GateSnapshot("nightly", 2, False, None, 3, 1, "default", AT)
    status = io.ScheduleStatus(
        "nightly", gate, AT, counts_by_state={"RETRY_WAIT": 1, "SUCCEEDED": 4}
    )
    print_json({"status": status, "verdict": io.ChangeGateResult("nightly", False, True, gate)})
    printed = json.loads(capsys.readouterr().out)
    expected_gate = {
        "scheduleId": "nightly",
        "activeRevision": 2,
        "disabled": False,
        "disabledReason": None,
        "disableGeneration": 3,
        "executionEpoch": 1,
        "implementationAlias": "default",
        "updatedAt": "2026-11-01T05:30:00Z",
        "deletedAt": None,
    }
    assert printed["verdict"] == {
        "scheduleId": "nightly",
        "disabled": False,
        "changed": True,
        "gate": expected_gate,
        "rejected": "",
        "cancelled": 0,
        "cameDue": 0,
        "dueBeforeDisable": 0,
        "released": 0,
        "expired": 0,
        "misfirePolicy": "",
    }
    assert printed["status"]["gate"] == expected_gate
    assert printed["status"]["nextInstant"] == "2026-11-01T05:30:00Z"
    # The states are data, not field names: printed as the ledger spells them.
    assert printed["status"]["countsByState"] == {"RETRY_WAIT": 1, "SUCCEEDED": 4}
