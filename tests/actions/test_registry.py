"""The action registry: adapters by name, their declared contracts, and payloads that cross
Temporal's default data converter unchanged."""

from __future__ import annotations

import pytest
from temporalio.converter import DataConverter

from activities.actions import (
    ActionCapabilities,
    ActionContext,
    ActionRegistry,
    HttpAction,
    InvalidActionParameters,
    Outcome,
    OutcomeKind,
    QueryOutcome,
    QueryOutcomeKind,
    UnknownAction,
)
from timecontract import AlmanacError, SpecError


def test_default_registry_names() -> None:
    assert ActionRegistry.default().names() == ["http", "noop", "smtp", "temporal"]


def test_unknown_action_is_a_lookup_error_naming_it_and_the_known_ones() -> None:
    with pytest.raises(UnknownAction) as raised:
        ActionRegistry.default().get("webhook")
    assert isinstance(raised.value, LookupError)
    assert "'webhook'" in str(raised.value) and "http, noop, smtp, temporal" in str(raised.value)


def test_duplicate_registration_is_refused() -> None:
    with pytest.raises(ValueError, match="'http'"):
        ActionRegistry([HttpAction(), HttpAction()])


@pytest.mark.parametrize(
    ("name", "parameters", "caps"),
    [
        ("http", {"url": "http://x.test/e"}, ActionCapabilities(True, False)),
        (
            "http",
            {"url": "http://x.test/e", "resultUrl": "http://x.test/e/{idempotencyKey}"},
            ActionCapabilities(True, True),
        ),
        ("temporal", {"workflowType": "W", "taskQueue": "q"}, ActionCapabilities(True, True)),
        (
            "smtp",
            {"host": "h", "from": "a@b.c", "to": "d@e.f", "subject": "s"},
            ActionCapabilities(False, False),
        ),
    ],
)
def test_declared_contracts(
    name: str, parameters: dict[str, object], caps: ActionCapabilities
) -> None:
    assert ActionRegistry.default().validate(name, parameters) == caps


def test_invalid_parameters_are_a_spec_error_listing_every_problem() -> None:
    with pytest.raises(InvalidActionParameters) as raised:
        ActionRegistry.default().validate("http", {"timeoutSeconds": "soon", "extra": 1})
    error = raised.value
    assert isinstance(error, SpecError) and isinstance(error, AlmanacError)
    fields = [p.field for p in error.problems]
    assert fields == [
        "action.parameters.url",
        "action.parameters.timeoutSeconds",
        "action.parameters.extra",
    ]
    for field in fields:
        assert field in str(error)
    assert "'soon'" in str(error)


def test_a_missing_parameter_is_named_without_a_value_and_null_as_null() -> None:
    with pytest.raises(InvalidActionParameters) as raised:
        ActionRegistry.default().validate("http", {"timeoutSeconds": None})
    said = str(raised.value)
    assert "action.parameters.url: is required" in said
    assert "action.parameters.timeoutSeconds=null: " in said
    assert str(raised.value.problems[0]) == "action.parameters.url: is required"


@pytest.mark.parametrize(
    "value",
    [
        ActionContext(
            "o.r1.20261101T013000.f0",
            "o",
            1,
            "2026-11-01T01:30:00",
            "2026-11-01T05:30:00Z",
            2,
            {"url": "http://x.test", "data": [1, {"a": None}]},
        ),
        Outcome(OutcomeKind.CONFIRMED, {"effectId": "e"}, "HTTP 201", 201),
        Outcome(OutcomeKind.RETRYABLE_FAILURE, None, "HTTP 503", 503, 2.0),
        QueryOutcome(QueryOutcomeKind.NOT_FOUND, None, "HTTP 404"),
        ActionCapabilities(False, False),
    ],
)
async def test_payloads_round_trip_through_the_default_data_converter(value: object) -> None:
    converter = DataConverter.default
    [decoded] = await converter.decode(await converter.encode([value]), [type(value)])
    assert decoded == value
    assert type(decoded) is type(value)


pytestmark = pytest.mark.anyio


def test_noop_action_confirms_without_any_downstream() -> None:
    import asyncio

    from activities.actions import ActionContext, OutcomeKind, QueryOutcomeKind

    registry = ActionRegistry.default()
    caps = registry.validate("noop", {"note": "canary"})
    assert caps.accepts_idempotency_key and caps.can_query_result
    ctx = ActionContext("s.r1.20261101T023000.f0", "s", 1, "2026-11-01T02:30:00", "x", 1, {})
    outcome = asyncio.run(registry.invoke("noop", ctx))
    assert outcome.kind is OutcomeKind.CONFIRMED and outcome.result is not None
    assert outcome.result["occurrenceId"] == ctx.occurrence_id
    assert asyncio.run(registry.query_result("noop", ctx)).kind is QueryOutcomeKind.FOUND


@pytest.mark.parametrize(
    ("parameters", "problem"),
    [
        ({"url": 5}, "action.parameters.url=5: must be an absolute URL"),
        ({"url": "nope"}, "action.parameters.url='nope': must be an absolute URL"),
        (
            {"url": "https://h.example/x", "timeoutSeconds": "x"},
            "action.parameters.timeoutSeconds='x': must be a number",
        ),
        (
            {"url": "https://h.example/x", "timeoutSeconds": 1000},
            "action.parameters.timeoutSeconds=1000: must be at most 600",
        ),
        (
            {"url": "https://h.example/x", "resultUrl": False},  # YAML's resultUrl: off
            "action.parameters.resultUrl=false: must be a string; YAML reads an unquoted no or "
            "off as false: quote the word if you meant it",
        ),
        (
            {"url": "https://h.example/x", "method": "GET"},
            "action.parameters.method='GET': unknown field (action.parameters has no such key)",
        ),
    ],
)
def test_a_parameter_problem_is_in_the_specs_words(
    parameters: dict[str, object], problem: str
) -> None:
    # Not pydantic's "Input should be …" or "Extra inputs are not permitted"; a bound as the
    # spec writes it (600, not 600.0).
    with pytest.raises(InvalidActionParameters) as raised:
        ActionRegistry.default().validate("http", parameters)
    [said] = [str(e) for e in raised.value.problems]
    assert said.startswith(problem), said
    assert "Input should" not in said and "Extra inputs" not in said
