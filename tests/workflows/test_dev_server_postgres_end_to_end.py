"""Real time on the dev server with a PostgreSQL ledger: run, retry, and an unknown effect.

Two schedules run side by side for 40 seconds of wall-clock time:

- ``every-10-seconds-pg`` (FREQ=SECONDLY;INTERVAL=10, http to the sink): every occurrence in the
  window runs once, one effect each. Its second occurrence meets a downstream that answers 500
  twice, then 200: three attempts (RETRY_WAIT twice, backoff shortened to 1 s, 2 s), still one
  occurrence and one effect.
- ``smtp-once`` (one occurrence, the non-idempotent smtp adapter): the SMTP server takes the whole
  message and never answers. DESIGN §7: a timeout after DATA is UNKNOWN_EFFECT and, with no result
  query, the human queue — never a resend (the server holds exactly one message).
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from stack import Stack, record_history, running_stack
from temporal_env import eventually
from temporalio.testing import WorkflowEnvironment

from ledger import (
    OccurrenceState,
    ReconciliationResolution,
    human_queue,
    open_cases,
    show_occurrence,
)
from workflows import ScheduleWorkflow

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "actions"))
from smtp_server import FakeSmtpServer

pytestmark = [pytest.mark.anyio, pytest.mark.temporal, pytest.mark.postgres, pytest.mark.slow]

RUN_FOR = timedelta(seconds=40)
FINAL = {OccurrenceState.SUCCEEDED, OccurrenceState.FAILED, OccurrenceState.UNKNOWN_EFFECT}


def spec(schedule_id: str, now: datetime, **extra: Any) -> dict[str, Any]:
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": schedule_id,
        "revision": 1,
        "timeZone": "Etc/UTC",
        "tzdbVersion": "2026a",
        "rule": "FREQ=SECONDLY;INTERVAL=10",
        "misfirePolicy": "SKIP",
        "cutoverAt": f"{now - timedelta(minutes=1):%Y-%m-%dT%H:%M:%SZ}",
        **extra,
    }


async def settled(stack: Stack, schedule_id: str, stop: datetime) -> list[Any]:
    return stack.occurrences(schedule_id, to_utc=stop)


async def test_short_period_retry_and_unknown_effect_on_postgres(
    dev_env: WorkflowEnvironment, pg_ledger_url: str, tmp_path: Path, task_queue: str
) -> None:
    smtp = FakeSmtpServer(mode="hang_after_data")
    smtp.start()
    try:
        async with running_stack(dev_env, tmp_path, task_queue, ledger_url=pg_ledger_url) as stack:
            assert stack.ledger.dialect == "postgresql"
            now = datetime.now(UTC)
            stop = now + RUN_FOR
            options = {
                "horizon_seconds": 120.0,
                "refresh_seconds": 30.0,
                "occurrence_first_retry_delay_seconds": 1.0,
            }
            http = await stack.start_schedule(
                stack.spec(spec("every-10-seconds-pg", now)),
                simulate_from=now,
                stop_after=stop,
                **options,
            )
            # One SMTP occurrence: the first 10-second mark at least 5 s away.
            mark = (now + timedelta(seconds=15)).replace(microsecond=0)
            mark -= timedelta(seconds=mark.second % 10)
            local = f"{mark:%Y-%m-%dT%H:%M:%S}"
            email = {
                "name": "smtp",
                "parameters": {
                    "host": "127.0.0.1",
                    "port": smtp.port,
                    "from": "almanac@example.test",
                    "to": "ops@example.test",
                    "subject": "daily summary",
                    "timeoutSeconds": 2,
                },
            }
            mail = await stack.start_schedule(
                spec("smtp-once", now, start=local, end=local, action=email),
                simulate_from=now,
                stop_after=stop,
                **options,
            )
            upcoming = await eventually(
                lambda: http.query(ScheduleWorkflow.upcoming, 2), lambda u: len(u) == 2
            )
            flaky = upcoming[1].occurrence_id
            assert upcoming[1].instant_utc - datetime.now(UTC) > timedelta(seconds=3)
            stack.sink.add_fault(match=flaky, failTimes=2, status=500)

            await http.result()
            await mail.result()
            rows = await eventually(
                lambda: settled(stack, "every-10-seconds-pg", stop),
                lambda rs: all(r.state in FINAL for r in rs),
                timeout=20,
            )
            assert len(rows) >= 3  # 40 s of a 10 s period, the first mark after apply
            assert all(r.state is OccurrenceState.SUCCEEDED for r in rows)
            assert flaky in {r.occurrence_id for r in rows}
            effects = stack.sink.effects()
            assert sorted(e.idempotency_key for e in effects) == sorted(
                r.occurrence_id for r in rows
            )
            assert all(e.delivery_count == 1 for e in effects)
            for row in rows:
                detail = show_occurrence(stack.ledger, row.occurrence_id)
                expected = 3 if row.occurrence_id == flaky else 1
                assert len(detail.attempts) == expected, row.occurrence_id
            retried = show_occurrence(stack.ledger, flaky)
            waits = [e for e in retried.events if e.to_state == OccurrenceState.RETRY_WAIT]
            assert len(waits) == 2

            [sent] = await eventually(
                lambda: settled(stack, "smtp-once", stop),
                lambda rs: len(rs) == 1 and rs[0].state is OccurrenceState.UNKNOWN_EFFECT,
                timeout=20,
            )
            assert sent.instant_utc == mark
            outcome = await stack.client.get_workflow_handle(sent.occurrence_id).result()
            assert outcome["state"] == "UNKNOWN_EFFECT"
            [case] = open_cases(stack.ledger, "smtp-once")
            assert (case.occurrence_id, case.resolution) == (
                sent.occurrence_id,
                ReconciliationResolution.HUMAN,
            )
            queued = human_queue(stack.ledger, datetime.now(UTC))
            assert [c.occurrence_id for c in queued] == [sent.occurrence_id]
            assert len(show_occurrence(stack.ledger, sent.occurrence_id).attempts) == 1
            assert len(smtp.messages) == 1  # never resent
            assert smtp.messages[0]["X-Almanac-Occurrence-Id"] == sent.occurrence_id

            await record_history(stack.client, flaky, "occurrence-retried-twice")
            await record_history(stack.client, sent.occurrence_id, "occurrence-unknown-effect")
    finally:
        smtp.stop()
