"""An apply refused by the worker is one line naming the field and value once."""

from __future__ import annotations

from almanac.client import refusal_line


def test_a_reason_that_names_its_field_is_not_prefixed_again() -> None:
    url = "http://169.254.169.254/x"
    reason = f"action.parameters.url={url!r}: the worker's egress policy refuses it: link-local"
    assert refusal_line("action.parameters.url", url, reason) == reason


def test_a_bare_reason_gets_the_field_and_value() -> None:
    assert refusal_line("cutoverAt", "2026-01-01T00:00:00Z", "before the published cutover") == (
        "cutoverAt='2026-01-01T00:00:00Z': before the published cutover"
    )
    assert refusal_line("maxCatchUp", True, "must be a whole number") == (
        "maxCatchUp=true: must be a whole number"
    )
    assert refusal_line("action", None, "has no action") == "action=null: has no action"
    assert refusal_line(None, None, "invalid scheduleSpec (2 problems)") == (
        "invalid scheduleSpec (2 problems)"
    )
