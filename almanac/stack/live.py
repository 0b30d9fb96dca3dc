"""The live view of ``almanac dev``: every transition, once, in time order, from the ledger.

It follows the ledger's append-only event trail by event ID (``ledger.events_after``), so a
transition is printed exactly once even when several happen between two polls (``DUE →
DISPATCHING → RUNNING → SUCCEEDED`` within a second prints four lines), and nothing is missed or
repeated across polls. Each line shows when the transition happened (UTC), the new state, the
occurrence, its nominal local time with its UTC offset, its UTC instant and why (the ledger's
reason, which names the attempt: ``attempt 2 claimed by …``).

Creations (materialization, ``→ PLANNED``) are not printed. When one poll brings many transitions
of one schedule to one state (a misfire decision after downtime expires hundreds), the first
:data:`PER_STATE_SHOWN` are printed and the rest are summed up in one line that gives the command
listing them all (``almanac ledger list SCHEDULE --state STATE --from … --to … --limit 0``).

Across a restart the view resumes from the last event ID it handled, kept in a position file in
the data directory (:meth:`LiveLog.resume`), not from a time: a transition written just before
Ctrl-C, or while the stack was down, is printed by the next run. ``almanac dev`` also polls once
more after its worker has stopped, so what the worker's last activities wrote is printed too.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from rich.console import Console
from rich.markup import escape as rich_escape

import ledger
from almanac.text import terminal_text
from timecontract import format_instant, format_offset

PER_STATE_SHOWN = 10
"""Transitions of one schedule to one state printed per poll before the rest are summed up."""
BATCH = 2000
"""Events read per poll at most (the rest come with the next poll)."""
STATE_STYLE = {
    "DUE": "cyan",
    "DISPATCHING": "cyan",
    "RUNNING": "blue",
    "SUCCEEDED": "green",
    "RETRY_WAIT": "yellow",
    "UNKNOWN_EFFECT": "bold magenta",
    "FAILED": "bold red",
    "MISFIRE_EXPIRED": "yellow",
    "SKIPPED_GAP": "yellow",
    "SKIPPED_OVERLAP": "yellow",
    "CANCELLED": "dim",
}
"""Rich style of each state's name; a state without one prints plain (:func:`styled`)."""


def escape(text: str) -> str:
    """User text for a Rich line: control characters shown (``almanac.text``), markup escaped."""
    return rich_escape(terminal_text(text))


@dataclass
class LiveLog:
    """Prints each ledger transition once, oldest first (see the module docstring)."""

    store: ledger.Ledger
    console: Console
    after_id: int = 0
    """The last event already handled; :meth:`baseline` sets it to the newest at start-up."""
    per_state_shown: int = PER_STATE_SHOWN
    position: Path | None = None
    """Where the last handled event ID is kept across runs (``None``: not kept)."""
    command: str = "almanac"
    """How the printed hints spell the command (``.venv/bin/almanac`` when not on ``PATH``)."""

    def baseline(self) -> None:
        """Start after the newest event: only transitions from now on are printed."""
        self.after_id = ledger.last_event_id(self.store)

    def resume(self) -> None:
        """Start after the event the previous run handled last (its :attr:`position` file).

        Without a readable position, or with one beyond the ledger's newest event (another
        ledger: after ``--reset``, another ``ALMANAC_LEDGER_URL``), start as :meth:`baseline`.
        """
        newest = ledger.last_event_id(self.store)
        try:
            saved = int(self.position.read_text().strip()) if self.position else None
        except (OSError, ValueError):
            saved = None
        self.after_id = saved if saved is not None and 0 <= saved <= newest else newest

    def poll(self) -> int:
        """Read the transitions since the last poll and print them. Returns how many were read.

        The last event ID handled is then written to :attr:`position` (replaced atomically).
        """
        batch = ledger.events_after(self.store, self.after_id, limit=BATCH)
        if not batch:
            return 0
        self.after_id = batch[-1][0].id
        shown: dict[tuple[str, str], int] = defaultdict(int)
        held: dict[tuple[str, str], list[tuple[ledger.EventView, ledger.OccurrenceView]]] = (
            defaultdict(list)
        )
        for event, row in sorted(batch, key=lambda pair: (pair[0].at_utc, pair[0].id)):
            if event.to_state == ledger.OccurrenceState.PLANNED.value:
                continue
            key = (row.schedule_id, event.to_state)
            if shown[key] >= self.per_state_shown:
                held[key].append((event, row))
                continue
            shown[key] += 1
            self.console.print(line(event, row), highlight=False, soft_wrap=True)
        for (schedule_id, state), rest in sorted(held.items()):
            said = summary(schedule_id, state, rest, command=self.command)
            self.console.print(said, highlight=False, soft_wrap=True)
        if self.position is not None:
            written = self.position.with_name(self.position.name + ".tmp")
            written.write_text(f"{self.after_id}\n")
            written.replace(self.position)
        return len(batch)

    def drain(self) -> None:
        """Poll until nothing is left (at most :data:`BATCH` events at a time)."""
        while self.poll() == BATCH:
            pass


def line(event: ledger.EventView, row: ledger.OccurrenceView) -> str:
    """One transition: time (UTC), new state, occurrence, local time with offset, UTC instant, why.

    The attempt is the event's reason's to name (``attempt 2 claimed by …``): ``row`` is the
    occurrence as it is now, so its attempt number would mislabel an earlier attempt's events.
    """
    state = event.to_state
    placed = row.instant_utc or row.gap_at_utc
    utc = format_instant(placed) if placed else "—"
    local = row.nominal_local.isoformat()
    if row.utc_offset is not None:
        local += format_offset(row.utc_offset)
    why = f"  [dim]{escape(event.why)}[/dim]" if event.why else ""
    return (
        f"{clock(event.at_utc)}  {styled(state, f'{state:<15}')} {row.occurrence_id}  "
        f"local {local} · UTC {utc}{why}"
    )


def summary(
    schedule_id: str,
    state: str,
    rest: list[tuple[ledger.EventView, ledger.OccurrenceView]],
    *,
    command: str = "almanac",
) -> str:
    """The transitions not printed one by one, and the command that lists them (``command``)."""
    placed = [r.placed_at_utc for _, r in rest]
    low = format_instant(min(placed))
    high = format_instant(max(placed) + timedelta(seconds=1))
    noun = "occurrence" if len(rest) == 1 else "occurrences"
    return (
        f"{clock(rest[-1][0].at_utc)}  {escape(schedule_id)}: {len(rest)} more {noun} "
        f"{styled(state, state)}, placed {low} … {format_instant(max(placed))}; list them: "
        f"{escape(command)} ledger list {escape(schedule_id)} --state {state} --from {low} "
        f"--to {high} --limit 0"
    )


def styled(state: str, text: str) -> str:
    """``text`` (escaped) in the state's style; plain for a state :data:`STATE_STYLE` lacks.

    An empty style must not become ``[]…[/]``: Rich reads ``[/]`` with nothing open as a markup
    error, which would take the whole dev stack down on the first unstyled state.
    """
    style = STATE_STYLE.get(state)
    return f"[{style}]{escape(text)}[/{style}]" if style else escape(text)


def clock(at: datetime) -> str:
    """``HH:MM:SSZ`` of an instant (the live view's time column, UTC)."""
    return at.astimezone(UTC).strftime("%H:%M:%SZ")


__all__ = ["PER_STATE_SHOWN", "STATE_STYLE", "LiveLog", "clock", "line", "styled", "summary"]
