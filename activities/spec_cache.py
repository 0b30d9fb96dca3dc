"""The activities' parsed specs, kept for the next wake-up: a bounded, least recently used cache.

A published (schedule, revision) keeps one spec for good (``ActivitiesBase._published_specs``
says why), so a kept spec never goes stale; the bound is only memory. A worker sizes it like its
workflow cache (``almanac worker --max-cached-workflows``): the schedules whose instances it keeps
are the ones that wake up again soon. An evicted spec is read again from the ledger when asked.
"""

from __future__ import annotations

from collections import OrderedDict
from threading import Lock

from timecontract import ScheduleSpecV1

DEFAULT_SPEC_CACHE_SIZE = 1000
"""Specs kept by default: the worker's default workflow cache (the SDK's, 1,000 instances)."""


class SpecCache:
    """At most ``size`` specs by (scheduleId, revision), evicting the least recently used.

    Thread-safe: the worker runs its activities in a thread pool that shares one cache.
    """

    def __init__(self, size: int = DEFAULT_SPEC_CACHE_SIZE) -> None:
        """Build an empty cache.

        Args:
            size: the most specs kept (≥ 0; 0 keeps none).

        Raises:
            ValueError: ``size`` is negative.
        """
        if size < 0:
            raise ValueError(f"spec cache size must be >= 0, got {size!r}")
        self._size = size
        self._specs: OrderedDict[tuple[str, int], ScheduleSpecV1] = OrderedDict()
        self._lock = Lock()

    def __len__(self) -> int:
        """The specs kept now (at most the size)."""
        return len(self._specs)

    def get(self, schedule_id: str, revision: int) -> ScheduleSpecV1 | None:
        """The kept spec of a revision, now the most recently used; ``None`` if not kept."""
        key = (schedule_id, revision)
        with self._lock:
            spec = self._specs.get(key)
            if spec is not None:
                self._specs.move_to_end(key)
            return spec

    def keep(self, spec: ScheduleSpecV1) -> None:
        """Keep a published revision's spec as the most recently used; evict past the size."""
        key = (spec.schedule_id, spec.revision)
        with self._lock:
            self._specs[key] = spec
            self._specs.move_to_end(key)
            while len(self._specs) > self._size:
                self._specs.popitem(last=False)
