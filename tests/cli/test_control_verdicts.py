"""``apply``, ``disable``, ``enable`` and ``delete`` print the ledger's verdict (issue 10).

Against the real dev server and an ``almanac worker`` subprocess (the ``control`` fixture of
``test_control.py``). Exit 0 with what changed, 2 naming the refused field and value, 1 only for an
operational failure. Expectations come from the issue's rules and the spec text: an action the
adapters refuse never starts a schedule; a deleted schedule takes only a higher revision; on enable
the misfire policy's decision is reported (CATCH_UP_BOUNDED, maxCatchUp 1: one late run, the rest
expire).
"""

from __future__ import annotations

import socket
import time
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from test_control import Control, _wait, _z, control

__all__ = ["control"]

pytestmark = [pytest.mark.temporal, pytest.mark.slow]


@pytest.mark.parametrize(
    ("action", "named"),
    [
        ({"name": "ftp", "parameters": {}}, "action.name='ftp'"),
        ({"name": "http", "parameters": {"url": "nope"}}, "action.parameters.url='nope'"),
    ],
)
def test_an_action_the_adapters_refuse_exits_2_and_starts_nothing(
    control: Control, action: dict[str, object], named: str
) -> None:
    sid = f"edge-{uuid.uuid4().hex[:6]}"
    spec = control.spec_file(sid, action=action)
    checked = control.run("validate", str(spec))
    assert checked.returncode == 2 and named in checked.stderr
    applied = control.run("apply", str(spec))
    assert applied.returncode == 2, applied.stderr
    assert named in applied.stderr and "Traceback" not in applied.stderr
    status = control.run("status", sid)
    assert status.returncode == 2 and "not running" in status.stderr


def test_delete_then_only_a_higher_revision_comes_back(control: Control) -> None:
    sid = f"del-{uuid.uuid4().hex[:6]}"
    spec = control.spec_file(sid)
    first = control.run("apply", str(spec))
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith(f"{sid}: started revision 1, active from ")

    gone = control.run("delete", sid, "--reason", "retired")
    assert gone.returncode == 0, gone.stderr
    assert gone.stdout.startswith(f"{sid}: deleted (retired); ")
    assert "every fact kept; re-applying it needs revision 2 or higher" in gone.stdout
    # The completed run still answers its status query: the gate says deleted.
    status = control.run("status", sid, "-n", "0")
    assert status.returncode == 0 and "deleted: retired" in status.stdout
    # Deleting again: the workflow has completed; the ledger answers (the trial saw "not running
    # (apply its spec first)", which applying then refuses).
    again = control.run("delete", sid, "--reason", "again")
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith(f"{sid}: already deleted; re-applying it needs revision 2")
    third = control.json("delete", sid, "--reason", "again")
    assert (third["deleted"], third["rejected"]) == (False, None)  # null, not ""
    # Every command that needs the running workflow says the schedule was deleted (the trials
    # saw "not running (apply its spec first)", which applying then refuses): status too, for
    # its next occurrences (-n 0 above asks none).
    needing = (
        ["upcoming", sid],
        ["status", sid],
        ["disable", sid, "--reason", "x"],
        ["enable", sid],
    )
    for command in needing:
        refused = control.run(*command)
        assert refused.returncode == 2, (command, refused.stdout)
        assert f"schedule '{sid}' was deleted at " in refused.stderr, (command, refused.stderr)
        assert "(retired)" in refused.stderr and "higher revision to revive it" in refused.stderr

    same = control.run("apply", str(spec))
    assert same.returncode == 2 and "needs a higher revision" in same.stderr
    later = _z(datetime.now(UTC) + timedelta(minutes=1))
    revived = control.json("apply", str(control.spec_file(sid, revision=2, cutoverAt=later)))
    assert revived["action"] == "started" and revived["revision"] == 2


def test_enable_reports_what_the_misfire_policy_does_with_what_came_due(control: Control) -> None:
    sid = f"mis-{uuid.uuid4().hex[:6]}"
    spec = control.spec_file(sid, misfirePolicy="CATCH_UP_BOUNDED", maxCatchUp=1, lateness="PT1S")
    assert control.json("apply", str(spec))["action"] == "started"
    off = control.json("disable", sid, "--reason", "window")
    assert off["changed"] is True and off["gate"]["disableGeneration"] == 1
    # Absent values are null in JSON, not "" (a fresh-user trial): nothing was refused, and a
    # disable decides no misfire policy.
    assert (off["rejected"], off["misfirePolicy"]) == (None, None)
    disabled_at = time.monotonic()
    # Every 10 s (start 2001-01-01 00:00 Berlin: instants at UTC seconds ending in 0). Wait until
    # at least two instants have passed while disabled, then enable 2.5-4 s after an instant: an
    # instant within lateness (1 s) of the enable would be on time and run as well (CI saw 2 runs).
    _wait(lambda: time.monotonic() - disabled_at > 22, "two instants pass", timeout=40)
    _wait(lambda: 2.5 <= time.time() % 10 <= 4.0, "2.5 s past an instant", timeout=15)
    on = control.run("enable", sid)
    assert on.returncode == 0, on.stderr
    assert f"{sid}: enabled, gate generation 2; " in on.stdout
    assert "; under CATCH_UP_BOUNDED (maxCatchUp 1), lateness PT1S: 1 run now, " in on.stdout
    verdict = control.json("enable", sid)  # already enabled: unchanged, nothing decided
    assert (verdict["changed"], verdict["cameDue"]) == (False, 0)
    assert (verdict["rejected"], verdict["misfirePolicy"]) == (None, None)
    shown = on.stdout.split("; ", 1)[1]
    came_due = int(shown.split(" occurrence")[0])
    runs = int(shown.split(" run now")[0].rsplit(" ", 1)[1])
    expires = int(shown.split(" expire")[0].rsplit(" ", 1)[1])
    # On a busy machine an instant can pass just before the disable with no worker deciding it:
    # the verdict names it ("and 1 overdue one from before the disable") and counts it in.
    before = int(shown.split(" overdue one")[0].rsplit(" ", 1)[1]) if "overdue one" in shown else 0
    assert came_due >= 2 and runs == 1 and expires == came_due + before - 1


def test_disable_enable_and_delete_record_who_ran_them(control: Control) -> None:
    # cli.md: the event trail says who and why; the CLI's who is `user@host`, as for trigger
    # (getpass reads LOGNAME first, so the test names the user).
    sid = f"who-{uuid.uuid4().hex[:6]}"
    assert control.json("apply", str(control.spec_file(sid)))["action"] == "started"
    for command in (["disable", sid, "--reason", "window"], ["enable", sid]):
        done = control.run(*command, LOGNAME="ops-alice")
        assert done.returncode == 0, done.stderr
    gone = control.run("delete", sid, "--reason", "retired", LOGNAME="ops-alice")
    assert gone.returncode == 0, gone.stderr
    events = control.json("ledger", "events", sid)
    who = {e["kind"]: e["by"] for e in events if e["kind"] in {"DISABLED", "ENABLED", "DELETED"}}
    me = f"ops-alice@{socket.gethostname()}"
    assert who == {"DISABLED": me, "ENABLED": me, "DELETED": me}, events


def test_a_misspelt_schedule_id_is_told_the_close_one_the_ledger_knows(control: Control) -> None:
    # The spec's did-you-mean rule (one edit per four letters) over the ledger's scheduleIds.
    sid = f"did-you-mean-{uuid.uuid4().hex[:6]}"
    assert control.json("apply", str(control.spec_file(sid)))["action"] == "started"
    typo = sid.replace("mean", "men")
    for command in (
        ["status", typo],
        ["upcoming", typo],
        ["disable", typo, "--reason", "x"],
        ["enable", typo],
        ["delete", typo, "--reason", "x"],
        ["trigger", typo],
    ):
        refused = control.run(*command)
        assert refused.returncode == 2, (command, refused.stdout)
        assert refused.stderr.rstrip().endswith(
            f"schedule '{typo}' is not running (apply its spec first); did you mean {sid}?"
        ), (command, refused.stderr)
    far = control.run("status", "nothing-like-any-schedule-here")
    assert far.returncode == 2 and far.stderr.rstrip().endswith("(apply its spec first)")
