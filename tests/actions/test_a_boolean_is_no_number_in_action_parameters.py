"""A boolean in an action's number parameter is refused naming the field and the value: YAML's
``timeoutSeconds: true`` is a mistake, not one second (pydantic's lax mode reads it as 1)."""

from __future__ import annotations

from typing import Any

import pytest

from activities.actions import InvalidActionParameters
from activities.actions.catalog import check_action

SMTP = {"host": "mail.example", "from": "a@b.example", "to": "c@d.example", "subject": "s"}
HTTP = {"url": "https://h.example/x"}
TEMPORAL = {"workflowType": "W", "taskQueue": "q"}


@pytest.mark.parametrize(
    ("name", "parameters", "said"),
    [
        ("http", {**HTTP, "timeoutSeconds": True}, "timeoutSeconds=true: must be a number"),
        ("smtp", {**SMTP, "timeoutSeconds": False}, "timeoutSeconds=false: must be a number"),
        ("smtp", {**SMTP, "port": True}, "port=true: must be a whole number"),
        (
            "temporal",
            {**TEMPORAL, "executionTimeoutSeconds": True},
            "executionTimeoutSeconds=true: must be a whole number",
        ),
    ],
)
def test_a_boolean_number_parameter_is_refused(
    name: str, parameters: dict[str, Any], said: str
) -> None:
    with pytest.raises(InvalidActionParameters) as refused:
        check_action(name, parameters)
    assert [str(p) for p in refused.value.problems] == [f"action.parameters.{said}"]


def test_numbers_as_documented_still_pass() -> None:
    # A whole number is a number: timeoutSeconds: 5 is five seconds.
    check_action("http", {**HTTP, "timeoutSeconds": 5})
    check_action("smtp", {**SMTP, "port": 587, "timeoutSeconds": 2.5})
    check_action("temporal", {**TEMPORAL, "executionTimeoutSeconds": 60})
