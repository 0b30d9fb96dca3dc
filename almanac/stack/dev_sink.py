"""How ``almanac dev`` aims the example specs at its own effect sink.

The examples post to the sink's default address (``http://127.0.0.1:8765/effects``).
:func:`for_dev_sink` aims a spec at this stack's sink when it listens elsewhere (and gives a spec
without an action the sink's ``http`` action); :func:`following_sink` makes the next revision of
a running schedule that still posts to another dev sink port (started before with another
``ALMANAC_DEV_SINK_PORT``), since the worker's egress policy allows only this stack's sink.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from timecontract import ScheduleSpecV1, format_instant
from timecontract.spec import parse_spec

DEFAULT_SINK_PORT = 8765
DEFAULT_SINK_PREFIXES = (
    f"http://127.0.0.1:{DEFAULT_SINK_PORT}",
    f"http://localhost:{DEFAULT_SINK_PORT}",
)


def for_dev_sink(spec: ScheduleSpecV1, sink_url: str) -> tuple[ScheduleSpecV1, str]:
    """The spec as the dev stack applies it, and a note on what changed (empty: nothing).

    A spec without an action gets the sink's ``http`` action; an ``http`` action aimed at the
    sink's default address is aimed at ``sink_url`` instead (when they differ).
    """
    data: dict[str, Any] = spec.resolved()
    if spec.action is None:
        data["action"] = {
            "name": "http",
            "parameters": {
                "url": f"{sink_url}/effects",
                "resultUrl": f"{sink_url}/effects/{{idempotencyKey}}",
            },
        }
        return parse_spec(data), "no action in the file: runs with the dev sink's http action"
    parameters = dict(spec.action.parameters)
    if spec.action.name != "http" or sink_url in DEFAULT_SINK_PREFIXES:
        return spec, ""
    changed = False
    for key in ("url", "resultUrl"):
        value = parameters.get(key)
        if isinstance(value, str):
            for prefix in DEFAULT_SINK_PREFIXES:
                if value.startswith(prefix):
                    parameters[key] = sink_url + value.removeprefix(prefix)
                    changed = True
    if not changed:
        return spec, ""
    data["action"] = {"name": "http", "parameters": parameters}
    return parse_spec(data), f"http action aimed at this stack's sink ({sink_url})"


SINK_FOLLOW_LEAD = timedelta(seconds=5)
"""How far ahead of now a revision that follows the sink cuts over (a cutover may not be past)."""
_LOOPBACK_SINK = re.compile(r"http://(?:127\.0\.0\.1|localhost):[0-9]+(?=/|$)")


def _sink_prefixes(sink_url: str) -> tuple[str, ...]:
    return DEFAULT_SINK_PREFIXES if sink_url in DEFAULT_SINK_PREFIXES else (sink_url,)


def _posts_elsewhere(running: str, applied: str, sink_url: str) -> bool:
    """``running`` is the same URL as ``applied`` but on another loopback sink than this one."""
    here = next((p for p in _sink_prefixes(sink_url) if applied.startswith(p)), None)
    there = _LOOPBACK_SINK.match(running)
    return (
        here is not None
        and there is not None
        and running != applied
        and running[there.end() :] == applied[len(here) :]
    )


def following_sink(
    running: ScheduleSpecV1, applied: ScheduleSpecV1, sink_url: str, now_utc: datetime
) -> ScheduleSpecV1 | None:
    """The next revision of ``running`` aimed at this stack's sink, or ``None`` when not needed.

    Needed when the running revision's ``http`` action posts to a sink on loopback at another
    port (a stack started earlier with another ``ALMANAC_DEV_SINK_PORT``) where ``applied`` (what
    this start would apply, :func:`for_dev_sink`) posts to this stack's sink, and nothing else in
    the two actions differs: the worker's egress policy allows only this stack's sink, so every
    run of the running revision would fail. The result is ``running`` with ``applied``'s action,
    revision ``running.revision + 1`` and ``cutoverAt`` :data:`SINK_FOLLOW_LEAD` after
    ``now_utc`` (whole seconds, rounded up): a later revision's cutover may not lie in the past
    (DESIGN §3), so occurrences before it stay the running revision's.
    """
    if running.action is None or applied.action is None:
        return None
    if running.action.name != "http" or applied.action.name != "http":
        return None
    old, new = running.action.parameters, applied.action.parameters
    if old == new or old.keys() != new.keys():
        return None
    for key in old:
        a, b = old[key], new[key]
        if a != b and not (
            isinstance(a, str) and isinstance(b, str) and _posts_elsewhere(a, b, sink_url)
        ):
            return None
    cutover = (now_utc + SINK_FOLLOW_LEAD).astimezone(UTC)
    if cutover.microsecond:
        cutover = cutover.replace(microsecond=0) + timedelta(seconds=1)
    data = running.resolved()
    data["action"] = applied.resolved()["action"]
    data["revision"] = running.revision + 1
    data["cutoverAt"] = format_instant(cutover)
    return parse_spec(data)


__all__ = [
    "DEFAULT_SINK_PORT",
    "DEFAULT_SINK_PREFIXES",
    "SINK_FOLLOW_LEAD",
    "following_sink",
    "for_dev_sink",
]
