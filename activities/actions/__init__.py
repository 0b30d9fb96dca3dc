"""Action adapters: how an occurrence becomes one downstream effect (DESIGN §7).

The worker builds one :class:`ActionRegistry` (``ActionRegistry.default(temporal_client=...)``);
activities look adapters up by the spec's ``action.name``. Each adapter declares whether its
downstream accepts an idempotency key and whether it can be asked for a result; ``invoke``
returns an :class:`Outcome` and never raises for downstream trouble.

Trust (DESIGN §10): adapters resolve secret references at call time (:class:`SecretResolver`)
and connect only where the worker's :class:`EgressPolicy` allows.
"""

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
from activities.actions.egress import EgressPolicy, EgressRefused
from activities.actions.http_action import HttpAction, HttpParameters, occurrence_body
from activities.actions.noop_action import NoopAction, NoopParameters
from activities.actions.registry import ActionRegistry
from activities.actions.secrets import SecretRef, SecretResolver, SecretUnavailable
from activities.actions.smtp_action import SmtpAction, SmtpParameters
from activities.actions.temporal_action import (
    TemporalAction,
    TemporalParameters,
    effect_workflow_id,
)

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
