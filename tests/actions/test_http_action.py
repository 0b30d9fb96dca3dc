"""The ``http`` action against the real sink: idempotent repeats, precise error classes, and the
result query that reconciliation relies on."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest

from activities.actions import (
    ActionContext,
    EgressPolicy,
    HttpAction,
    InvalidActionParameters,
    OutcomeKind,
    QueryOutcome,
    QueryOutcomeKind,
)
from almanac.stack.sink import Sink

pytestmark = pytest.mark.anyio

OCCURRENCE = "daily-ops-summary.r7.20261101T013000.f0"
LOCAL = EgressPolicy.allowing(["127.0.0.1"])
"""The sink listens on loopback, which the default egress policy refuses."""


def ctx(
    parameters: dict[str, Any], occurrence_id: str = OCCURRENCE, attempt: int = 1
) -> ActionContext:
    return ActionContext(
        occurrence_id=occurrence_id,
        schedule_id="daily-ops-summary",
        revision=7,
        nominal_local="2026-11-01T01:30:00",
        instant_utc="2026-11-01T05:30:00Z",
        attempt=attempt,
        parameters=parameters,
    )


def sink_parameters(sink: Sink, **extra: Any) -> dict[str, Any]:
    return {
        "url": f"{sink.url}/effects",
        "resultUrl": f"{sink.url}/effects/{{idempotencyKey}}",
        **extra,
    }


async def test_post_sends_occurrence_with_idempotency_key_and_is_confirmed(sink: Sink) -> None:
    outcome = await HttpAction(egress=LOCAL).invoke(
        ctx(sink_parameters(sink, data={"report": "ops"}))
    )

    assert outcome.kind is OutcomeKind.CONFIRMED
    assert outcome.status_code == 201
    [effect] = sink.effects()
    assert effect.idempotency_key == OCCURRENCE
    assert outcome.result == effect.result
    assert effect.body == {
        "occurrenceId": OCCURRENCE,
        "idempotencyKey": OCCURRENCE,
        "scheduleId": "daily-ops-summary",
        "revision": 7,
        "nominalLocal": "2026-11-01T01:30:00",
        "instantUtc": "2026-11-01T05:30:00Z",
        "data": {"report": "ops"},
    }
    assert sink.server.last_headers["Almanac-Attempt"] == "1"


async def test_repeated_invocation_is_confirmed_with_the_first_result_and_one_effect(
    sink: Sink,
) -> None:
    action = HttpAction(egress=LOCAL)
    first = await action.invoke(ctx(sink_parameters(sink), attempt=1))
    second = await action.invoke(ctx(sink_parameters(sink), attempt=2))

    assert (first.kind, second.kind) == (OutcomeKind.CONFIRMED, OutcomeKind.CONFIRMED)
    assert (first.status_code, second.status_code) == (201, 200)
    assert first.result == second.result
    [effect] = sink.effects()
    assert effect.delivery_count == 2


async def test_hundred_concurrent_deliveries_of_one_key_make_one_effect(sink: Sink) -> None:
    action = HttpAction(egress=LOCAL)
    outcomes = []

    async def deliver(attempt: int) -> None:
        outcomes.append(await action.invoke(ctx(sink_parameters(sink), attempt=attempt)))

    async with anyio.create_task_group() as group:
        for attempt in range(1, 101):
            group.start_soon(deliver, attempt)

    assert {o.kind for o in outcomes} == {OutcomeKind.CONFIRMED}
    assert len(outcomes) == 100
    assert len({o.result["effectId"] for o in outcomes if o.result}) == 1
    [effect] = sink.effects()
    assert effect.delivery_count == 100


async def test_500_twice_then_200_is_retryable_twice_then_one_effect(sink: Sink) -> None:
    sink.add_fault(match=OCCURRENCE, failTimes=2, status=500)
    action = HttpAction(egress=LOCAL)

    kinds = [(await action.invoke(ctx(sink_parameters(sink), attempt=n))).kind for n in (1, 2, 3)]

    assert kinds == [
        OutcomeKind.RETRYABLE_FAILURE,
        OutcomeKind.RETRYABLE_FAILURE,
        OutcomeKind.CONFIRMED,
    ]
    [effect] = sink.effects()
    assert effect.delivery_count == 1
    assert "attempt" not in effect.body
    assert sink.server.last_headers["Almanac-Attempt"] == "3"


@pytest.mark.parametrize("status", [408, 429, 502, 503])
async def test_retryable_statuses(sink: Sink, status: int) -> None:
    sink.add_fault(failTimes=1, status=status)
    outcome = await HttpAction(egress=LOCAL).invoke(ctx(sink_parameters(sink)))
    assert outcome.kind is OutcomeKind.RETRYABLE_FAILURE
    assert outcome.status_code == status


@pytest.mark.parametrize("status", [400, 401, 404, 409, 422])
async def test_other_4xx_and_key_used_on_a_first_send_are_non_retryable(
    sink: Sink, status: int
) -> None:
    sink.add_fault(failTimes=1, status=status)
    outcome = await HttpAction(egress=LOCAL).invoke(ctx(sink_parameters(sink)))
    assert outcome.kind is OutcomeKind.NON_RETRYABLE_FAILURE
    assert outcome.status_code == status
    assert sink.effects() == []


async def test_connection_refused_is_retryable_nothing_sent(closed_port: int) -> None:
    params = {"url": f"http://127.0.0.1:{closed_port}/effects"}
    outcome = await HttpAction(egress=LOCAL).invoke(ctx(params))
    assert outcome.kind is OutcomeKind.RETRYABLE_FAILURE
    assert "not sent" in outcome.detail


async def _query_until_found(action: HttpAction, context: ActionContext) -> QueryOutcome:
    deadline = time.monotonic() + 10
    while True:
        answer = await action.query_result(context)
        if answer.kind is QueryOutcomeKind.FOUND or time.monotonic() > deadline:
            return answer
        await anyio.sleep(0.05)


async def test_timeout_after_acceptance_is_unconfirmed_and_the_query_finds_it(sink: Sink) -> None:
    sink.add_fault(match=OCCURRENCE, delay=30)
    action = HttpAction(egress=LOCAL)
    context = ctx(sink_parameters(sink, timeoutSeconds=0.5))

    outcome = await action.invoke(context)
    answer = await _query_until_found(action, context)

    assert outcome.kind is OutcomeKind.UNCONFIRMED
    assert "ReadTimeout" in outcome.detail
    assert answer.kind is QueryOutcomeKind.FOUND
    assert answer.result is not None
    assert answer.result["idempotencyKey"] == OCCURRENCE
    assert answer.result["deliveryCount"] == 1


async def test_connection_dropped_after_acceptance_is_unconfirmed(sink: Sink) -> None:
    sink.add_fault(match=OCCURRENCE, drop=True, delayTimes=1)
    action = HttpAction(egress=LOCAL)
    context = ctx(sink_parameters(sink))

    outcome = await action.invoke(context)
    answer = await _query_until_found(action, context)
    resend = await action.invoke(ctx(sink_parameters(sink), attempt=2))

    assert outcome.kind is OutcomeKind.UNCONFIRMED
    assert "RemoteProtocolError" in outcome.detail
    assert answer.kind is QueryOutcomeKind.FOUND
    # With an idempotency key a resend is harmless: the first result, still one effect.
    assert resend.kind is OutcomeKind.CONFIRMED
    assert resend.result is not None and answer.result is not None
    assert resend.result["effectId"] == answer.result["effectId"]
    assert len(sink.effects()) == 1


async def test_query_for_an_effect_never_sent_is_not_found(sink: Sink) -> None:
    answer = await HttpAction(egress=LOCAL).query_result(ctx(sink_parameters(sink)))
    assert answer.kind is QueryOutcomeKind.NOT_FOUND


async def test_query_without_result_url_is_unsupported(sink: Sink) -> None:
    params = {"url": f"{sink.url}/effects"}
    action = HttpAction(egress=LOCAL)
    assert action.capabilities(params).can_query_result is False
    assert action.capabilities(sink_parameters(sink)).can_query_result is True
    assert (await action.query_result(ctx(params))).kind is QueryOutcomeKind.UNSUPPORTED


async def test_query_that_gets_no_answer_failed_not_not_found(closed_port: int) -> None:
    params = {
        "url": f"http://127.0.0.1:{closed_port}/effects",
        "resultUrl": f"http://127.0.0.1:{closed_port}/effects/{{idempotencyKey}}",
    }
    answer = await HttpAction(egress=LOCAL).query_result(ctx(params))
    assert answer.kind is QueryOutcomeKind.QUERY_FAILED


@pytest.mark.parametrize(
    ("parameters", "field"),
    [
        ({}, "action.parameters.url"),
        ({"url": "ftp://example.test/x"}, "action.parameters.url"),
        ({"url": "http://x.test", "timeoutSeconds": 0}, "action.parameters.timeoutSeconds"),
        (
            {"url": "http://x.test", "resultUrl": "http://x.test/{key}"},
            "action.parameters.resultUrl",
        ),
        (
            {"url": "http://x.test", "headers": {"idempotency-key": "mine"}},
            "action.parameters.headers",
        ),
        ({"url": "http://x.test", "retries": 3}, "action.parameters.retries"),
    ],
)
async def test_invalid_parameters_name_the_parameter(
    parameters: dict[str, Any], field: str
) -> None:
    with pytest.raises(InvalidActionParameters) as raised:
        await HttpAction(egress=LOCAL).invoke(ctx(parameters))
    assert raised.value.field == field
    assert field in str(raised.value)
    assert "'http'" in str(raised.value)


async def test_every_attempt_sends_the_same_bytes_with_its_number_in_a_header(
    strict_sink: Sink,
) -> None:
    """A strict downstream fingerprints the keyed body: attempts 1–3 must send one body."""
    action = HttpAction(egress=LOCAL)
    params = sink_parameters(strict_sink, data={"report": "ops", "items": [1, 2]})
    numbers = []
    for attempt in (1, 2, 3):
        outcome = await action.invoke(ctx(params, attempt=attempt))
        assert outcome.kind is OutcomeKind.CONFIRMED, outcome.detail
        numbers.append(strict_sink.server.last_headers["Almanac-Attempt"])

    [effect] = strict_sink.effects()
    assert (effect.delivery_count, effect.refused_count) == (3, 0)
    assert numbers == ["1", "2", "3"]


@pytest.mark.parametrize("status", [409, 422])
async def test_key_used_on_a_re_send_is_unconfirmed_never_a_failure(
    sink: Sink, status: int
) -> None:
    """Draft "key already used" answers: the effect may exist, so reconcile (never FAILED)."""
    sink.add_fault(failTimes=1, status=status)
    outcome = await HttpAction(egress=LOCAL).invoke(ctx(sink_parameters(sink), attempt=2))
    assert outcome.kind is OutcomeKind.UNCONFIRMED
    assert outcome.status_code == status
    assert "key already used" in outcome.detail


async def test_re_send_while_the_first_is_in_flight_is_unconfirmed_then_found(
    strict_sink: Sink,
) -> None:
    """The worker died mid-call; its redelivery meets the strict downstream's 409 in flight."""
    strict_sink.add_fault(match=OCCURRENCE, delay=3, delayTimes=1)
    action = HttpAction(egress=LOCAL)
    params = sink_parameters(strict_sink)
    outcomes = []

    async def first() -> None:
        outcomes.append(await action.invoke(ctx(params, attempt=1)))

    async with anyio.create_task_group() as group:
        group.start_soon(first)
        deadline = time.monotonic() + 10
        while strict_sink.effect(OCCURRENCE) is None and time.monotonic() < deadline:
            await anyio.sleep(0.01)
        resend = await action.invoke(ctx(params, attempt=2))

    assert resend.kind is OutcomeKind.UNCONFIRMED, resend.detail
    assert resend.status_code == 409
    answer = await _query_until_found(action, ctx(params, attempt=2))
    assert answer.kind is QueryOutcomeKind.FOUND
    assert [o.kind for o in outcomes] == [OutcomeKind.CONFIRMED]
    [effect] = strict_sink.effects()
    assert (effect.delivery_count, effect.refused_count) == (1, 1)
