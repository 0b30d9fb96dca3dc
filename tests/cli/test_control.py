"""The control commands (apply, status, upcoming, disable, enable, delete, worker), real server.

One Temporal dev server (the venv's ``temporal`` binary, in memory, headless, free ports) and one
``almanac worker`` subprocess serve the module; each test uses schedule IDs of its own. Every
command runs as the installed ``almanac`` executable, so exit codes, the one-line errors and the
``os._exit`` ending are the real ones. Instants in specs are relative to the test's own clock
reading (a later revision's cutover must not lie in the past), never to a fixed date.
"""

from __future__ import annotations

import itertools
import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from almanac.stack.sink import Sink
from workflows import search_attributes

pytestmark = [pytest.mark.temporal, pytest.mark.slow]

BIN = Path(sys.executable).parent
ALMANAC = str(BIN / "almanac")
TEMPORAL = str(BIN / "temporal")
SA_TYPES = {"KEYWORD": "Keyword", "INT": "Int"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Control:
    """The module's server, worker and sink, and a way to run ``almanac`` against them."""

    env: dict[str, str]
    sink: Sink
    tmp: Path

    def run(self, *args: str, timeout: float = 60, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [ALMANAC, *args],
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def json(self, *args: str) -> Any:
        result = self.run(*args, "--json")
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    def spec_file(self, schedule_id: str, **overrides: Any) -> Path:
        data: dict[str, Any] = {
            "schema": "scheduleSpec.v1",
            "scheduleId": schedule_id,
            "revision": 1,
            "timeZone": "Europe/Berlin",
            "tzdbVersion": "2026a",
            "rule": "FREQ=SECONDLY;INTERVAL=10",
            "misfirePolicy": "SKIP",
            # The first revision may start in the past; a minute back keeps materialization small.
            "cutoverAt": _z(datetime.now(UTC) - timedelta(minutes=1)),
            "action": {
                "name": "http",
                "parameters": {
                    "url": f"{self.sink.url}/effects",
                    "resultUrl": f"{self.sink.url}/effects/{{idempotencyKey}}",
                },
            },
        }
        data.update(overrides)
        data = {k: v for k, v in data.items() if v is not None}
        path = self.tmp / f"{schedule_id}-r{data['revision']}-{uuid.uuid4().hex[:6]}.yaml"
        path.write_text(yaml.safe_dump(data))
        return path


def _z(at: datetime) -> str:
    return at.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _wait(probe: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not probe():
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {timeout}s")
        time.sleep(0.3)


@pytest.fixture(scope="module")
def control(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Control]:
    tmp = tmp_path_factory.mktemp("control")
    port = free_port()
    command = [
        TEMPORAL,
        "server",
        "start-dev",
        "--headless",
        "--ip",
        "127.0.0.1",
        "--port",
        str(port),
        "--metrics-port",
        str(free_port()),
        "--log-level",
        "error",
    ]
    for key in search_attributes.ALL:
        command += ["--search-attribute", f"{key.name}={SA_TYPES[key.indexed_value_type.name]}"]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    env = {
        **os.environ,
        "ALMANAC_DATA_DIR": str(tmp / "data"),
        "ALMANAC_TEMPORAL_ADDRESS": f"127.0.0.1:{port}",
        "ALMANAC_TEMPORAL_NAMESPACE": "default",
        "ALMANAC_TEMPORAL_TASK_QUEUE": f"control-{uuid.uuid4().hex[:8]}",
        "ALMANAC_EGRESS_ALLOW": "127.0.0.1",  # the test's sink is on loopback
    }
    env.pop("ALMANAC_LEDGER_URL", None)
    worker: subprocess.Popen[bytes] | None = None
    try:

        def ready() -> bool:
            probe = subprocess.run(
                [TEMPORAL, "operator", "namespace", "describe", "--address", f"127.0.0.1:{port}"],
                capture_output=True,
            )
            return probe.returncode == 0

        _wait(ready, "the dev server answers")
        worker = subprocess.Popen(
            [ALMANAC, "worker", "--identity", "control-test-worker"],
            env=env,
            stdout=(tmp / "worker.log").open("wb"),
            stderr=subprocess.STDOUT,
        )
        log = tmp / "worker.log"
        _wait(lambda: "control-test-worker" in log.read_text(), "the worker polls", timeout=60)
        with Sink() as sink:
            yield Control(env, sink, tmp)
    finally:
        if worker is not None:
            worker.terminate()
            try:
                assert worker.wait(timeout=30) == 0, (tmp / "worker.log").read_text()[-3000:]
            finally:
                worker.kill()
        server.terminate()
        server.wait(timeout=30)


def test_apply_status_upcoming_disable_enable(control: Control) -> None:
    sid = f"cli-{uuid.uuid4().hex[:6]}"
    applied = control.json("apply", str(control.spec_file(sid)))
    assert applied["action"] == "started" and applied["verdict"]["accepted"] is True
    assert applied["workflowId"] == f"almanac-schedule-{sid}"
    assert applied["verdict"]["gate"]["activeRevision"] == 1

    status = control.json("status", sid, "-n", "3")
    gate = status["status"]["gate"]
    assert gate["activeRevision"] == 1 and gate["disabled"] is False
    assert len(status["upcoming"]) == 3
    assert status["status"]["countsByState"]["PLANNED"] > 0

    upcoming = control.json("upcoming", sid, "-n", "4")
    instants = [datetime.fromisoformat(o["instant"]) for o in upcoming]
    assert len(upcoming) == 4 and instants == sorted(instants)
    assert all(b - a == timedelta(seconds=10) for a, b in itertools.pairwise(instants))
    # Local (Europe/Berlin, +01:00 or +02:00) and UTC differ by the zone's offset.
    first = upcoming[0]
    local = datetime.fromisoformat(first["nominalLocal"])
    assert local - instants[0].replace(tzinfo=None) in {timedelta(hours=1), timedelta(hours=2)}

    table = control.run("status", sid)
    assert table.returncode == 0, table.stderr
    # The next occurrences move on every 10 s: check the shape, not a particular one.
    assert "active revision r1" in table.stdout and f"{sid}.r1." in table.stdout

    def listed() -> bool:
        rows = control.json("status")
        return any(r["scheduleId"] == sid and r["status"] for r in rows)

    _wait(listed, "`almanac status` lists the schedule")

    # The verdict comes back with the command: no polling.
    done = control.run("disable", sid, "--reason", "maintenance window")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{sid}: disabled (maintenance window), gate generation 1;")
    shown = control.json("status", sid, "-n", "0")["status"]["gate"]
    assert shown["disabled"] is True and shown["disabledReason"] == "maintenance window"
    enabled = control.json("enable", sid)
    assert enabled["changed"] is True and enabled["gate"]["disableGeneration"] == 2
    assert enabled["cameDue"] == enabled["released"] + enabled["expired"]
    assert control.json("status", sid, "-n", "0")["status"]["gate"]["disabled"] is False


def test_revision_must_increase_and_a_newer_one_is_published(control: Control) -> None:
    sid = f"rev-{uuid.uuid4().hex[:6]}"
    first = control.spec_file(sid)
    assert control.json("apply", str(first))["action"] == "started"

    # The same spec again is harmless (apply is idempotent); the same revision changed is refused.
    assert control.json("apply", str(first))["action"] == "unchanged"
    again = control.run("apply", str(control.spec_file(sid, rule="FREQ=DAILY;BYHOUR=3")))
    assert again.returncode == 2
    assert "revision=1" in again.stderr and "already published" in again.stderr
    assert "Traceback" not in again.stderr

    # A later revision's cutover may not lie in the past: one minute after this test's "now".
    cutover = datetime.now(UTC) + timedelta(minutes=1)
    newer = control.spec_file(sid, revision=2, cutoverAt=_z(cutover))
    published = control.json("apply", str(newer))
    assert published["action"] == "published"
    assert published["verdict"]["gate"]["activeRevision"] == 2
    assert published["verdict"]["cutoverAt"] == _z(cutover)

    older = control.run("apply", str(control.spec_file(sid)))
    assert older.returncode == 2 and "active revision is 2" in older.stderr


def test_invalid_input_exits_2_naming_field_and_value(control: Control) -> None:
    no_action = control.run("apply", str(control.spec_file("no-action", action=None)))
    assert no_action.returncode == 2 and "action: no-action r1 has no action;" in no_action.stderr
    bad = control.run("apply", str(control.spec_file("bad-zone", timeZone="Mars/Base")))
    assert bad.returncode == 2 and "Mars/Base" in bad.stderr
    empty = control.run("disable", "whatever", "--reason", " ")
    assert empty.returncode == 2 and "--reason" in empty.stderr
    missing = control.run("enable", "never-applied")
    assert missing.returncode == 2 and "never-applied" in missing.stderr
    nowhere = control.run("delete", "never-applied", "--reason", "x")
    assert nowhere.returncode == 2 and "never-applied" in nowhere.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("status",),
        ("upcoming", "some-schedule"),
        ("disable", "some-schedule", "--reason", "x"),
        ("apply", "SPEC"),
    ],
)
def test_temporal_unreachable_is_one_line_and_exit_1(
    control: Control, args: tuple[str, ...]
) -> None:
    spec = str(control.spec_file("unreachable"))
    address = f"127.0.0.1:{free_port()}"  # nothing listens there
    result = control.run(
        *[spec if a == "SPEC" else a for a in args], ALMANAC_TEMPORAL_ADDRESS=address
    )
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: Temporal unreachable at " + address)
    assert lines[0].endswith("is the dev stack running? Start it with `make run`")
    assert result.stdout == ""


def test_a_success_is_shown_within_seconds_whatever_the_next_wake_up(control: Control) -> None:
    # One run today, ~20 s from now; the schedule's next wake-up is then the hourly refresh (or
    # tomorrow's run): only a status read from the ledger can show the success in time.
    sid = f"live-{uuid.uuid4().hex[:6]}"
    fire = (datetime.now(UTC) + timedelta(seconds=20)).replace(microsecond=0)
    rule = f"FREQ=DAILY;BYHOUR={fire.hour};BYMINUTE={fire.minute};BYSECOND={fire.second}"
    applied = control.json("apply", str(control.spec_file(sid, timeZone="Etc/UTC", rule=rule)))
    assert applied["action"] == "started" and applied["verdict"]["accepted"] is True

    def succeeded() -> bool:
        status = control.json("status", sid, "-n", "0")["status"]
        assert status["source"] == "ledger", status
        return bool(status["countsByState"].get("SUCCEEDED") == 1)

    _wait(succeeded, "status shows SUCCEEDED", timeout=20 + 30)
    seen_at = datetime.now(UTC)
    assert seen_at - fire < timedelta(seconds=30)
    # The workflow's own reading (what `status` showed before) is still the one from the release:
    # with the ledger out of reach, status says so and shows no success yet.
    stale = control.run(
        "status", sid, "-n", "0", "--json", ALMANAC_LEDGER_URL=f"sqlite:///{control.tmp}/none.db"
    )
    assert stale.returncode == 0, stale.stderr
    reading = json.loads(stale.stdout)["status"]
    assert reading["source"] == "workflow" and "no ledger at" in reading["ledgerProblem"]
    assert reading["countsByState"].get("SUCCEEDED", 0) == 0
    text = control.run("status", sid, ALMANAC_LEDGER_URL=f"sqlite:///{control.tmp}/none.db")
    assert "as of the schedule's last wake-up" in text.stdout


def test_upcoming_beyond_the_horizon_is_computed_from_the_spec(control: Control) -> None:
    sid = f"far-{uuid.uuid4().hex[:6]}"
    spec = control.spec_file(sid, timeZone="Etc/UTC", rule="FREQ=DAILY;BYHOUR=12")
    before = datetime.now(UTC)
    applied = control.run("apply", str(spec), "--horizon-hours", "1", "--json")
    assert applied.returncode == 0, applied.stderr
    assert json.loads(applied.stdout)["warnings"] == []
    rows = control.json("upcoming", sid, "-n", "3")
    instants = [datetime.fromisoformat(r["instant"]) for r in rows]
    noon = before.replace(hour=12, minute=0, second=0, microsecond=0)
    first = noon if noon > before else noon + timedelta(days=1)
    assert instants == [first + timedelta(days=k) for k in range(3)]
    for row, instant in zip(rows, instants, strict=True):
        if instant - before > timedelta(hours=2):  # beyond the one-hour horizon
            assert row["materialized"] is False and row["state"] is None
        if row["materialized"]:
            assert row["state"] == "PLANNED"
    table = control.run("upcoming", sid, "-n", "3")
    assert table.returncode == 0 and "not yet materialized" in table.stdout


def test_apply_prints_warnings_and_json_carries_them(control: Control) -> None:
    sid = f"warn-{uuid.uuid4().hex[:6]}"
    spec = control.spec_file(sid, rule="FREQ=MINUTELY;INTERVAL=30")  # Europe/Berlin, FIRST_ONLY
    result = control.run("apply", str(spec), "--json")
    assert result.returncode == 0, result.stderr
    codes = [w["code"] for w in json.loads(result.stdout)["warnings"]]
    assert codes == ["REPEATED_HOUR_SILENT"]
    assert "warning:" in result.stderr and "[REPEATED_HOUR_SILENT]" in result.stderr


def test_trigger_refuses_a_schedule_that_is_not_running_or_disabled(control: Control) -> None:
    # Never applied: refused before anything is started (the trial saw "triggered", exit 0).
    missing = control.run("trigger", f"nosuch-{uuid.uuid4().hex[:6]}", "--reason", "try")
    assert missing.returncode == 2, missing.stdout
    assert "is not running (apply its spec first)" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1

    sid = f"trg-{uuid.uuid4().hex[:6]}"
    assert control.run("apply", str(control.spec_file(sid))).returncode == 0
    assert control.run("disable", sid, "--reason", "quiet hours").returncode == 0
    refused = control.run("trigger", sid, "--reason", "while disabled")
    assert refused.returncode == 2, refused.stdout
    assert "is disabled (quiet hours): enable it first" in refused.stderr
    # Nothing was written: no manual occurrence in the ledger, and the request ID is not spent.
    rows = control.json("ledger", "list", sid, "--state", "CANCELLED")
    assert not [r for r in rows if ".manual." in r["occurrenceId"]], rows
    assert control.json("enable", sid)["changed"] is True
    ran = control.json("trigger", sid, "--reason", "while disabled")
    assert ran["started"] is True

    empty = control.run("trigger", sid, "--reason", "x", "--request-id", "")
    assert empty.returncode == 2 and "request" in empty.stderr.lower(), empty.stderr
    assert control.run("delete", sid, "--reason", "done").returncode == 0
    gone = control.run("trigger", sid, "--reason", "after delete")
    assert gone.returncode == 2, gone.stdout


def test_status_names_a_next_instant_beyond_the_horizon(control: Control) -> None:
    # A trial: a month-end schedule showed "next instant —" above its own "next 5" table. A daily
    # rule starting 30 days from now has nothing in the 14-day horizon: the status line names the
    # first projected instant (the same as the table's first row) and says it is not materialized.
    sid = f"later-{uuid.uuid4().hex[:6]}"
    start = (datetime.now(UTC) + timedelta(days=30)).replace(microsecond=0, tzinfo=None)
    spec = control.spec_file(sid, rule="FREQ=DAILY", start=start.isoformat())
    assert control.run("apply", str(spec)).returncode == 0
    upcoming = control.json("upcoming", sid, "-n", "1")
    assert len(upcoming) == 1 and upcoming[0]["materialized"] is False
    first = upcoming[0]["instant"].replace("+00:00", "Z")
    shown = control.run("status", sid, "-n", "1")
    assert shown.returncode == 0, shown.stderr
    assert f"next instant {first} (beyond the horizon, not yet materialized)" in shown.stdout


def test_status_without_a_worker_answers_from_the_ledger(control: Control) -> None:
    # A schedule workflow on a task queue no worker polls: the server refuses its query
    # (FAILED_PRECONDITION, "no poller seen"); status still answers from the ledger, exit 0.
    sid = f"nopoll-{uuid.uuid4().hex[:6]}"
    address = control.env["ALMANAC_TEMPORAL_ADDRESS"]
    started = subprocess.run(
        [TEMPORAL, "workflow", "start", "--address", address, "--type", "AlmanacSchedule",
         "--task-queue", f"nobody-{sid}", "--workflow-id", f"almanac-schedule-{sid}"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert started.returncode == 0, started.stderr
    shown = control.run("status", sid, "-n", "0", timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert "read from the ledger" in shown.stdout
    assert "the schedule workflow's part is missing" in shown.stdout
    status = control.json("status", sid, "-n", "0")["status"]
    assert status["source"] == "ledger" and "no worker answered" in status["workerProblem"]


def test_status_with_temporal_unreachable_answers_from_the_ledger(control: Control) -> None:
    # The ledger is readable (`ledger list` works), so one schedule's status still answers,
    # exit 0, saying the workflow's part is missing; an ID the ledger lacks stays exit 1.
    sid = f"notemporal-{uuid.uuid4().hex[:6]}"
    assert control.json("apply", str(control.spec_file(sid)))["action"] == "started"
    away = {"ALMANAC_TEMPORAL_ADDRESS": f"127.0.0.1:{free_port()}"}  # nothing listens there
    shown = control.run("status", sid, "-n", "2", **away)
    assert shown.returncode == 0, shown.stderr
    assert f"{sid}  enabled  active revision r1" in shown.stdout and "next 2" in shown.stdout
    assert "read from the ledger" in shown.stdout
    assert "the schedule workflow's part is missing" in shown.stdout
    assert f"Temporal unreachable at {away['ALMANAC_TEMPORAL_ADDRESS']}" in shown.stdout
    as_json = control.run("status", sid, "--json", **away)
    assert as_json.returncode == 0, as_json.stderr
    status = json.loads(as_json.stdout)["status"]
    assert status["source"] == "ledger" and status["gate"]["scheduleId"] == sid
    assert status["workerProblem"].startswith("Temporal unreachable at ")
    unknown = control.run("status", "quite-another-schedule", **away)
    assert unknown.returncode == 1 and "Temporal unreachable at" in unknown.stderr
    assert "did you mean" not in unknown.stderr
    misspelt = control.run("status", sid[:-1], **away)  # the ledger knows a close one
    assert misspelt.returncode == 1 and "Temporal unreachable at" in misspelt.stderr
    assert misspelt.stderr.strip().endswith(f"knows no {sid[:-1]!r}: did you mean {sid}?")
