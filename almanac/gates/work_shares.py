"""Several workers on one recovery: who ran what, and that nothing ran twice.

Used by ``bench/scale.py --workers K`` and the multi-worker fault test after a run. The facts come
from the ledger (each attempt names the worker identity that claimed it, invariant 4) and from the
sink (effects keyed by idempotency key — the occurrence ID — with the number of deliveries). The
rules checked, one violation line per breach:

- **each worker did work**: every expected worker identity claimed at least one attempt;
- **one effect per run**: the sink holds exactly the keys of the SUCCEEDED occurrences, each once;
- **no second success**: no occurrence has two SUCCEEDED attempts;
- **one delivery per attempt**: a key's deliveries never exceed its occurrence's attempts (a
  redelivery after a lost acknowledgement is a new attempt, a new claim generation);
- **one dispatch per logical slot** (invariant 1): no logical slot has attempts on two
  occurrences.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

import ledger
from ledger.events import ATTEMPTS, OCCURRENCES
from ledger.states import AttemptOutcome, OccurrenceState

SHOWN = 5
"""Examples named per violation line (a breach on thousands of occurrences stays one line)."""


@dataclass(frozen=True)
class AttemptFact:
    """One attempt as the ledger records it, with its occurrence's logical slot."""

    occurrence_id: str
    slot: tuple[str, str | None]
    """(schedule ID, logical slot ID) of the occurrence."""
    worker_identity: str
    outcome: str | None


@dataclass(frozen=True)
class Shares:
    """The facts of one run over a set of schedules, and the rules' verdict on them."""

    attempts: list[AttemptFact]
    succeeded: set[str]
    """Occurrence IDs in SUCCEEDED."""
    deliveries: dict[str, int]
    """Sink effects of these schedules: idempotency key → deliveries the sink answered."""
    workers: tuple[str, ...]
    """The worker identities that ran."""

    def by_worker(self) -> dict[str, int]:
        """Attempts claimed per worker identity (every expected one listed, 0 if none)."""
        counts = Counter(a.worker_identity for a in self.attempts)
        return {w: counts.get(w, 0) for w in self.workers} | dict(counts)

    def violations(self) -> list[str]:
        """One line per broken rule (module docstring); empty when every rule holds."""
        return violations(self.attempts, self.succeeded, self.deliveries, self.workers)


def violations(
    attempts: Sequence[AttemptFact],
    succeeded: Iterable[str],
    deliveries: Mapping[str, int],
    workers: Sequence[str],
) -> list[str]:
    """The rules of the module docstring over plain facts: one line per broken rule.

    Args:
        attempts: every attempt of the run's occurrences.
        succeeded: the IDs of the occurrences in SUCCEEDED.
        deliveries: the sink's effects, idempotency key → deliveries answered (1 + repeats).
        workers: the identities of the workers that ran; each must have claimed an attempt.
    """
    out: list[str] = []
    claimed = Counter(a.worker_identity for a in attempts)
    idle = [w for w in workers if claimed[w] == 0]
    if idle:
        out.append(f"{len(idle)} of {len(workers)} workers claimed no attempt: {idle[:SHOWN]}")
    succeeded = set(succeeded)
    missing = sorted(succeeded - set(deliveries))
    if missing:
        out.append(f"{len(missing)} SUCCEEDED occurrences have no effect: {missing[:SHOWN]}")
    extra = sorted(set(deliveries) - succeeded)
    if extra:
        out.append(f"{len(extra)} effects for occurrences not SUCCEEDED: {extra[:SHOWN]}")
    wins = Counter(a.occurrence_id for a in attempts if a.outcome == AttemptOutcome.SUCCEEDED)
    twice = sorted(o for o, n in wins.items() if n > 1)
    if twice:
        out.append(f"{len(twice)} occurrences with two SUCCEEDED attempts: {twice[:SHOWN]}")
    tries = Counter(a.occurrence_id for a in attempts)
    resent = sorted(k for k, n in deliveries.items() if n > tries[k])
    if resent:
        out.append(
            f"{len(resent)} keys delivered more often than attempted: "
            + ", ".join(f"{k} ({deliveries[k]} > {tries[k]})" for k in resent[:SHOWN])
        )
    per_slot: dict[tuple[str, str | None], set[str]] = {}
    for a in attempts:
        if a.slot[1] is not None:
            per_slot.setdefault(a.slot, set()).add(a.occurrence_id)
    doubled = sorted(f"{s}/{slot}" for (s, slot), occ in per_slot.items() if len(occ) > 1)
    if doubled:
        out.append(f"{len(doubled)} logical slots dispatched twice: {doubled[:SHOWN]}")
    return out


def read_shares(
    store: ledger.Ledger,
    ids_prefix: str,
    deliveries: Mapping[str, int],
    workers: Sequence[str],
    *,
    before: datetime | None = None,
) -> Shares:
    """The facts of the schedules whose IDs start with ``ids_prefix``.

    Args:
        store: the ledger the workers shared.
        ids_prefix: selects the run's schedules.
        deliveries: the sink's effects, idempotency key → deliveries (every key; those of other
            schedules are left out here).
        workers: the identities of the workers that ran.
        before: only occurrences whose instant is before it (UTC; the caught-up ones), or all.
    """
    o, a = OCCURRENCES.c, ATTEMPTS.c
    mine = [o.schedule_id.startswith(ids_prefix)]
    if before is not None:
        mine.append(o.instant_utc < before)
    with store.engine.connect() as c:
        rows = c.execute(
            select(a.occurrence_id, o.schedule_id, o.logical_slot_id, a.worker_identity, a.outcome)
            .join(OCCURRENCES, o.occurrence_id == a.occurrence_id)
            .where(*mine)
        ).all()
        ids = set(c.execute(select(o.occurrence_id).where(*mine)).scalars())
        succeeded = set(
            c.execute(
                select(o.occurrence_id).where(*mine, o.state == OccurrenceState.SUCCEEDED.value)
            ).scalars()
        )
    attempts = [AttemptFact(r[0], (r[1], r[2]), r[3], r[4]) for r in rows]
    own = {k: n for k, n in deliveries.items() if k in ids}
    return Shares(attempts, succeeded, own, tuple(workers))
