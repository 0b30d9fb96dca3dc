"""Deterministic jitter: a dispatch delay derived from the occurrenceId, never from a clock or RNG.

``jitter: PT30S`` spreads a schedule's dispatches (many schedules firing at 00:00 do not all hit
the downstream in the same second) the way Temporal Schedules' ``jitter`` does, but
reproducibly: the delay is a pure function of the occurrenceId, so every worker, every replay and
every process computes the same one::

    delay = (first 8 bytes of sha256(occurrenceId as UTF-8), big-endian) mod jitter_ms  milliseconds

which lies in ``[0, jitter)`` (``PT0S`` when jitter is ``PT0S``). ``timecontract.resolve`` passes
``min(jitter, gap to the next occurrence)`` as ``jitter``, as Temporal Schedules cap theirs.
The bias of the modulo is below
``jitter_ms / 2**64``, i.e. nil. Python's ``hash()`` is never used: it is salted per process.

The delay is evidence, recorded on the occurrence (the preview shows it; the ledger stores it,
``occurrences.jitter_ms``). It never changes the occurrenceId, the logical slot or the instant
the lateness decision is measured from: an occurrence is due at its instant and *dispatched* at
instant + delay (the orchestration applies it, see ``workflows``); misfire planning still
compares ``now`` with the instant, so ``lateness`` should exceed ``jitter``.
"""

from __future__ import annotations

import hashlib
from datetime import timedelta

_MILLISECOND = timedelta(milliseconds=1)


def jitter_delay(occurrence_id: str, jitter: timedelta) -> timedelta:
    """Return the dispatch delay of one occurrence: whole milliseconds in ``[0, jitter)``.

    Args:
        occurrence_id: the occurrence's ID (any string; hashed as UTF-8).
        jitter: the spec's ``jitter`` (``PT0S``: no delay).

    Returns:
        ``timedelta(0)`` when ``jitter`` is shorter than a millisecond, else the delay.

    Source: this module's formula (sha256 per FIPS 180-4).

    """
    span = jitter // _MILLISECOND
    if span <= 0:
        return timedelta(0)
    digest = hashlib.sha256(occurrence_id.encode("utf-8")).digest()
    return _MILLISECOND * (int.from_bytes(digest[:8], "big") % span)
