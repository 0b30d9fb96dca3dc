"""The built-in actions' parameter models by name: the edge's check, without the adapters.

``almanac validate`` and ``apply`` (``almanac.apply_checks.check_action``) check a spec's
action before anything is sent, with no worker: the name must be a built-in adapter's and the
parameters must fit its model. Building :meth:`ActionRegistry.default` for that would import
every adapter and with them httpx, httpcore, anyio, smtplib and asyncio, too slow for the
command line's start-up; this catalog imports only the parameter models
(:mod:`activities.actions.parameters`).

It is exactly as strict as the worker's registry about the parameters themselves: the adapters
validate with the same models through the same function
(:func:`~activities.actions.base.validate_parameters`), and no built-in adapter checks more than
its model, except what only the worker knows: ``HttpAction.capabilities`` also refuses a URL
its egress policy refuses by the host alone (an IP literal, ``localhost``). A test holds the two
together: the same names, the same model per name, the same problems for the same parameters.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel

from activities.actions.base import (
    at_field,
    parameter_problems,
    unknown_action_name,
    validate_parameters,
)
from activities.actions.egress_policy import EgressPolicy
from activities.actions.parameters import (
    HttpParameters,
    NoopParameters,
    SmtpParameters,
    TemporalParameters,
)
from timecontract import ScheduleSpecV1, SpecError, SpecWarning, WarningCode

PARAMETER_MODELS: Mapping[str, type[BaseModel]] = MappingProxyType(
    {
        "http": HttpParameters,
        "noop": NoopParameters,
        "smtp": SmtpParameters,
        "temporal": TemporalParameters,
    }
)
"""The parameter model of each built-in adapter (``ActionRegistry.default``), by its name."""


def check_action(name: str, parameters: Mapping[str, Any]) -> None:
    """Check a spec's action against the built-in adapters' parameter models (no worker).

    Raises:
        SpecError: ``action.name`` (no such adapter: the message lists the built-in ones) or
            :class:`InvalidActionParameters` (``action.parameters.<field>`` and the value).
    """
    model = PARAMETER_MODELS.get(name)
    if model is None:
        raise unknown_action_name(name, sorted(PARAMETER_MODELS))
    validate_parameters(name, model, parameters)


def action_problems(name: str, parameters: Mapping[str, Any]) -> list[SpecError]:
    """Every problem :func:`check_action` finds, one :class:`SpecError` each (empty: none)."""
    return parameter_problems(lambda: check_action(name, parameters))


def spec_action_problems(spec: ScheduleSpecV1) -> list[SpecError]:
    """:func:`action_problems` of every action of ``spec``, each named at its own field."""
    return [
        problem
        for field, action in spec.actions().items()
        for problem in at_field(field, action_problems(action.name, action.parameters))
    ]


def egress_warnings(
    name: str, parameters: Mapping[str, Any], policy: EgressPolicy
) -> list[SpecWarning]:
    """A warning per ``http`` URL that ``policy`` refuses by its host alone (no DNS).

    The worker's own policy refuses such a spec at apply (``HttpAction.capabilities``); here,
    without a worker, ``policy`` is this environment's (``ALMANAC_EGRESS_ALLOW``), which may not
    be the worker's: a warning, naming the URL and the refusal, never an error.
    """
    if name != "http":
        return []
    found = []
    for key in ("url", "resultUrl"):
        value = parameters.get(key)
        refusal = policy.refusal_of_url(value) if isinstance(value, str) else None
        if refusal is not None:
            why = str(refusal).removeprefix("egress refused: ")
            found.append(
                SpecWarning(
                    WarningCode.EGRESS_REFUSED,
                    f"action.parameters.{key}",
                    json.dumps(value),
                    f"a worker with this environment's egress policy refuses it ({why}); each call "
                    "would fail: allow it on the workers, or aim at another address",
                )
            )
    return found
