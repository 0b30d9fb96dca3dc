"""Action adapters: how an occurrence becomes one downstream effect (DESIGN §7).

The worker builds one :class:`ActionRegistry` (``ActionRegistry.default(temporal_client=...)``);
activities look adapters up by the spec's ``action.name``. Each adapter declares whether its
downstream accepts an idempotency key and whether it can be asked for a result; ``invoke``
returns an :class:`Outcome` and never raises for downstream trouble. The command line checks a
spec's action against the same parameter models without the adapters
(:mod:`activities.actions.catalog`).

Trust (DESIGN §10): adapters resolve secret references at call time (:class:`SecretResolver`)
and connect only where the worker's :class:`EgressPolicy` allows.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from activities.actions.base import (
    ActionAdapter,
    ActionCapabilities,
    ActionContext,
    ActionError,
    ActionNotConfigured,
    InvalidActionParameters,
    Outcome,
    OutcomeKind,
    QueryOutcome,
    QueryOutcomeKind,
    UnknownAction,
)
from activities.actions.parameters import (
    HttpParameters,
    NoopParameters,
    SecretRef,
    SmtpParameters,
    TemporalParameters,
)
from activities.actions.secrets import SecretResolver, SecretUnavailable

if TYPE_CHECKING:
    from activities.actions.egress_policy import EgressPolicy, EgressRefused
    from activities.actions.http_action import HttpAction, occurrence_body
    from activities.actions.noop_action import NoopAction
    from activities.actions.registry import ActionRegistry
    from activities.actions.smtp_action import SmtpAction
    from activities.actions.temporal_action import TemporalAction, effect_workflow_id

_HOMES = {
    "ActionRegistry": "activities.actions.registry",
    "EgressPolicy": "activities.actions.egress_policy",
    "EgressRefused": "activities.actions.egress_policy",
    "HttpAction": "activities.actions.http_action",
    "NoopAction": "activities.actions.noop_action",
    "SmtpAction": "activities.actions.smtp_action",
    "TemporalAction": "activities.actions.temporal_action",
    "effect_workflow_id": "activities.actions.temporal_action",
    "occurrence_body": "activities.actions.http_action",
}


def __getattr__(name: str) -> Any:
    """Import an adapter's module on first use of one of its names (PEP 562).

    Why lazily: the adapters import httpx, httpcore, anyio, smtplib, ``email`` and asyncio, and
    the command line's check of a spec's action needs none of them (it imports
    :mod:`activities.actions.catalog`, which loads this package first). The worker pays the
    same imports as before, on its first use of ``ActionRegistry``.
    """
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'activities.actions' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


__all__ = [
    "ActionAdapter",
    "ActionCapabilities",
    "ActionContext",
    "ActionError",
    "ActionNotConfigured",
    "ActionRegistry",
    "EgressPolicy",
    "EgressRefused",
    "HttpAction",
    "HttpParameters",
    "InvalidActionParameters",
    "NoopAction",
    "NoopParameters",
    "Outcome",
    "OutcomeKind",
    "QueryOutcome",
    "QueryOutcomeKind",
    "SecretRef",
    "SecretResolver",
    "SecretUnavailable",
    "SmtpAction",
    "SmtpParameters",
    "TemporalAction",
    "TemporalParameters",
    "UnknownAction",
    "effect_workflow_id",
    "occurrence_body",
]
