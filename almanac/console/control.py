"""A schedule's writes from its page: disable, enable and trigger, through the CLI's client.

Each is a POST that needs a signed-in operator and the session's CSRF token (``Console.writer``),
checks its input before anything connects (the CLI's one line naming the field and value), then
calls ``almanac.client.AlmanacClient`` — the update or manual run that ``almanac disable``,
``enable`` and ``trigger`` send, with the same Temporal settings (``AlmanacSettings``) — and shows
the ledger's verdict on the schedule's page. Who did it: a trigger's occurrence events carry
``by=console:<operator>``, and so do a disable's DISABLED and an enable's ENABLED schedule events
(the updates carry who decides).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr

import ledger
from almanac import manual
from almanac.apply_checks import check_disable_reason
from almanac.client import AlmanacClient
from almanac.client_errors import (
    ChangeNotApplied,
    ChangeRejected,
    NoVerdict,
    NoWorkerAnswered,
    ScheduleNotRunning,
    TemporalUnavailable,
    TriggerRefused,
)
from almanac.console import forms
from almanac.schedule_reader import connect_temporal

if TYPE_CHECKING:
    from almanac.settings import AlmanacSettings

ACTIONS = ("disable", "enable", "trigger")
OPERATIONAL = (TemporalUnavailable, NoWorkerAnswered, NoVerdict, ChangeNotApplied)
"""Failures of Temporal or the worker, not of the input: a one-line 503 page."""


@dataclass(frozen=True)
class Verdict:
    """What a write did, for the page: the action, who, and the client's answer (the ledger's)."""

    action: str
    by: str
    answer: Any
    """``ChangeGateResult`` for disable/enable, ``manual.TriggerReport`` for trigger."""


@dataclass(frozen=True)
class Write:
    """A write's checked input."""

    action: str
    schedule_id: str
    by: str
    reason: str
    request_id: str | None


def check(action: str, schedule_id: str, operator: str, form: Any) -> Write:
    """Check a write's form before anything connects.

    Raises:
        forms.FormError: text that is too long or holds NUL.
        ChangeRejected: a disable without a reason (the client's message).
        ValueError: a trigger without a reason or with a malformed request ID (the CLI's).
    """
    by = f"console:{operator}"
    reason = forms.text("reason", forms.submitted(form, "reason"), required=False)
    request_id = forms.text("requestId", forms.submitted(form, "requestId"), required=False) or None
    if action == "disable":
        reason = check_disable_reason(reason)
    elif action == "trigger":
        manual.check_request(schedule_id, reason, request_id)
    return Write(action, schedule_id, by, reason, request_id)


def client_settings(settings: AlmanacSettings, handle: ledger.Ledger) -> AlmanacSettings:
    """The settings for the client: Temporal's as given, the ledger the console reads."""
    url = handle.engine.url.render_as_string(hide_password=False)
    return settings.model_copy(update={"ledger_url": SecretStr(url)})


async def send(request: Write, settings: AlmanacSettings, clock: Any) -> Verdict:
    """Send a checked write through the client; the verdict it answers with.

    Raises:
        TemporalUnavailable, NoWorkerAnswered, NoVerdict, ChangeNotApplied: operational.
        ChangeRejected, TriggerRefused, ScheduleNotRunning: the schedule refused.
    """
    client = AlmanacClient(await connect_temporal(settings), settings, clock=clock)
    try:
        sid = request.schedule_id
        if request.action == "disable":
            answer: Any = await client.disable(sid, request.reason, by=request.by)
        elif request.action == "enable":
            answer = await client.enable(sid, by=request.by)
        else:
            answer = await client.trigger(
                sid,
                reason=request.reason,
                request_id=request.request_id,
                by=request.by,
                requested_at_utc=clock(),
            )
    finally:
        client.close()
    return Verdict(request.action, request.by, answer)


REFUSED = (ChangeRejected, TriggerRefused, ScheduleNotRunning, ValueError)
"""What the schedule or the input refused: shown on the schedule's page, nothing written."""


def status_of(exc: Exception) -> int:
    """The HTTP status of a refusal: 400 bad input, 409 the schedule's state refuses."""
    return 409 if isinstance(exc, TriggerRefused | ScheduleNotRunning) else 400
