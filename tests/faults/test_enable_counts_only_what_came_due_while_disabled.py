"""``enable`` counts as "came due while disabled" only what came due while disabled.

An outage (no worker, or one run with ``--no-catch-up``) leaves overdue occurrences PLANNED; a
disable then finds them undecided. At enable the misfire policy decides them all, but those
whose instant passed before the disable did not come due while disabled: they are counted
apart (``due_before_disable``). Expected counts come from the daily 09:00 UTC rule.
"""

from __future__ import annotations

from pathlib import Path

from faultkit import day, local_actions, publish, spec_data, sqlite_ledger

from activities import io
from activities.clock import FixedClock
from activities.ledger_activities import AlmanacActivities


def test_occurrences_overdue_before_the_disable_are_not_counted_as_coming_due_while_disabled(
    tmp_path: Path,
) -> None:
    _, store = sqlite_ledger(tmp_path)
    publish(store, spec_data("outage", lateness="P7D", maxCatchUp=10), day(1, 0))
    clock = FixedClock(day(1, 0))
    acts = AlmanacActivities(store, local_actions(), identity="t", clock=clock)
    acts.materialize(io.MaterializeOccurrencesInput("outage", day(1, 0), 6 * 86400))
    # No worker released anything: 01-01 and 01-02 09:00 are overdue and PLANNED at the disable.
    clock.instant_utc = day(2, 12)
    off = acts.change_gate(io.ChangeGateInput("outage", True, "maintenance", day(2, 12)))
    assert off.changed
    # 01-03 and 01-04 09:00 come due while disabled.
    clock.instant_utc = day(4, 12)
    on = acts.change_gate(io.ChangeGateInput("outage", False, "", day(4, 12)))
    assert (on.came_due, on.due_before_disable) == (2, 2)
    assert on.released + on.expired == 4  # the misfire policy still decides all four
    store.dispose()
