"""The actions a spec names: ``action`` and ``failureStreak`` of ``scheduleSpec.v1``.

An action is a registered adapter, by name, with JSON parameters (DESIGN §7); the worker's
adapter registry checks the name and the parameters, not this module. Also here: how the time
contract's models (and the adapters' parameter models) are built without pydantic's plugin scan.
"""

from __future__ import annotations

import os
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, JsonValue, StrictBool, StrictInt

ACTION_NAME_PATTERN = r"^[a-z][a-z0-9_-]{0,62}$"
"""An action adapter's name: a-z first, then up to 62 of a-z, 0-9, ``_`` and ``-``."""

MAX_STREAK = 1000
"""The largest ``failureStreak.notifyAfter`` and ``recoverAfter``."""


class ActionSpec(BaseModel):
    """What an occurrence does: an action adapter registered in the worker, by name, with data.

    The parameters are plain JSON data; a spec never names code to import (DESIGN §7). Which names
    exist and what parameters they take is checked by the worker's adapter registry, not here.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    name: Annotated[str, Field(pattern=ACTION_NAME_PATTERN, description="Adapter name, e.g. http")]
    parameters: dict[str, JsonValue] = Field(
        default_factory=dict, description="Adapter parameters (JSON data)."
    )


class FailureStreakPolicy(BaseModel):
    """``failureStreak``: notify after N consecutive failures; notify recovery after M successes.

    A streak is the run of occurrences ended ``FAILED``, ``UNKNOWN_EFFECT`` or ``MISFIRE_EXPIRED``
    since the schedule's latest ``SUCCEEDED`` one (``ledger.streaks``). When it reaches
    ``notifyAfter`` the ledger records a ``STREAK`` fact once, and ``action`` runs with a
    ``kind: streak`` payload; ``pause`` also disables the schedule through the gate in that
    transaction. ``recoverAfter`` consecutive successes after a notified streak record a
    ``RECOVERED`` fact once, and ``action`` runs with ``kind: recovery``. The action is checked
    and run exactly as the spec's own ``action`` (registry, egress policy, secret references).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    notify_after: StrictInt = Field(
        alias="notifyAfter",
        ge=1,
        le=MAX_STREAK,
        description="Consecutive FAILED/UNKNOWN_EFFECT/MISFIRE_EXPIRED occurrences that notify.",
    )
    recover_after: StrictInt = Field(
        default=1,
        alias="recoverAfter",
        ge=1,
        le=MAX_STREAK,
        description="Consecutive SUCCEEDED occurrences after a notified streak that notify.",
    )
    action: ActionSpec = Field(description="The registered action adapter that notifies.")
    pause: StrictBool = Field(
        default=False, description="Disable the schedule through the gate when a streak notifies."
    )


def build_without_plugins(*models: type[BaseModel]) -> None:
    """Build ``models``' validators now, in order, with pydantic's plugins switched off.

    Each model must be declared with ``defer_build=True``, or it is already built (with plugins)
    when its class is created. A model built with plugins on makes pydantic scan every installed
    distribution's entry points for plugins (observability hooks such as logfire's) — once per
    process, and on the command line that scan costs about half of ``python -c "import
    pydantic"`` again (``bench/cli_startup.py``). Pure validation (the time contract, an action's
    parameters) needs no hook; Typer builds its parameter adapters the same way. The variable is
    restored afterwards, so other models in the process still see the plugins.
    """
    previous = os.environ.get("PYDANTIC_DISABLE_PLUGINS")
    os.environ["PYDANTIC_DISABLE_PLUGINS"] = "__all__"
    try:
        for model in models:
            model.model_rebuild(force=True)
    finally:
        if previous is None:
            del os.environ["PYDANTIC_DISABLE_PLUGINS"]
        else:
            os.environ["PYDANTIC_DISABLE_PLUGINS"] = previous
