"""The worker's action adapters, by name (DESIGN §7): a spec names one, never code to import."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from activities.actions.base import (
    ActionAdapter,
    ActionCapabilities,
    ActionContext,
    Outcome,
    QueryOutcome,
    UnknownAction,
    at_field,
    parameter_problems,
    unknown_action_name,
)
from activities.actions.egress import EgressPolicy
from activities.actions.http_action import HttpAction
from activities.actions.noop_action import NoopAction
from activities.actions.secrets import SecretResolver
from activities.actions.smtp_action import SmtpAction
from activities.actions.temporal_action import TemporalAction
from timecontract import ScheduleSpecV1, SpecError

if TYPE_CHECKING:
    import httpx
    from temporalio.client import Client


class ActionRegistry:
    """Action adapters by name; lookups of unknown names raise :class:`UnknownAction`."""

    def __init__(self, adapters: Iterable[ActionAdapter[Any]] = ()) -> None:
        """Register ``adapters`` (each under its ``name``)."""
        self._adapters: dict[str, ActionAdapter[Any]] = {}
        for adapter in adapters:
            self.register(adapter)

    @classmethod
    def default(
        cls,
        temporal_client: Client | None = None,
        http_transport: httpx.AsyncBaseTransport | None = None,
        *,
        egress: EgressPolicy | None = None,
        secrets: SecretResolver | None = None,
    ) -> ActionRegistry:
        """The built-in adapters: ``http``, ``temporal`` (on a client), ``smtp`` and ``noop``.

        Without a client the ``temporal`` adapter still validates parameters, but invoking it
        raises :class:`ActionNotConfigured`. ``egress`` bounds where ``http`` and ``smtp``
        connect (default: globally routable addresses only); ``secrets`` resolves their secret
        references (default: ``ALMANAC_SECRET_*`` environment variables, no file references).
        """
        return cls(
            [
                HttpAction(http_transport, egress=egress, secrets=secrets),
                TemporalAction(temporal_client),
                SmtpAction(egress=egress, secrets=secrets),
                NoopAction(),
            ]
        )

    def register(self, adapter: ActionAdapter[Any]) -> None:
        """Add ``adapter``; a second adapter with the same name raises ``ValueError``."""
        if adapter.name in self._adapters:
            raise ValueError(f"an action adapter named {adapter.name!r} is already registered")
        self._adapters[adapter.name] = adapter

    def names(self) -> list[str]:
        """The registered names, sorted."""
        return sorted(self._adapters)

    def get(self, name: str) -> ActionAdapter[Any]:
        """The adapter named ``name``.

        Raises:
            UnknownAction: no such adapter (the message lists the registered names).
        """
        try:
            return self._adapters[name]
        except KeyError:
            raise UnknownAction(name, self.names()) from None

    def validate(self, name: str, parameters: Mapping[str, Any]) -> ActionCapabilities:
        """Check a spec's action (apply time): the adapter exists and takes these parameters.

        Returns:
            the adapter's contract for these parameters.

        Raises:
            UnknownAction, InvalidActionParameters.
        """
        return self.get(name).capabilities(parameters)

    def check(self, name: str, parameters: Mapping[str, Any]) -> ActionCapabilities:
        """Check a spec's action (the publish activity), naming the spec field.

        The same check as :meth:`validate` — registry → adapter → the adapter's parameter model —
        with an unknown name reported as a spec problem too, so callers handle one error type.
        The command line makes the same check without building the adapters
        (:mod:`activities.actions.catalog`).

        Returns:
            the adapter's contract for these parameters.

        Raises:
            SpecError: ``action.name`` (no such adapter: the message lists the registered ones)
                or :class:`InvalidActionParameters` (``action.parameters.<field>`` and the value).
        """
        try:
            return self.validate(name, parameters)
        except UnknownAction as exc:
            raise unknown_action_name(name, exc.known) from None

    def problems(self, name: str, parameters: Mapping[str, Any]) -> list[SpecError]:
        """Every problem :meth:`check` finds, one :class:`SpecError` each (empty: none)."""
        return parameter_problems(lambda: self.check(name, parameters))

    def check_spec(self, spec: ScheduleSpecV1) -> None:
        """:meth:`check` every action of ``spec`` (``action``, ``failureStreak.action``).

        Raises:
            SpecError: the first problem, named at the field where that action is written
                (``failureStreak.action.parameters.url``).
        """
        for field, action in spec.actions().items():
            if problems := at_field(field, self.problems(action.name, action.parameters)):
                raise problems[0]

    async def invoke(self, name: str, ctx: ActionContext) -> Outcome:
        """Invoke adapter ``name`` once for ``ctx``."""
        return await self.get(name).invoke(ctx)

    async def query_result(self, name: str, ctx: ActionContext) -> QueryOutcome:
        """Ask adapter ``name`` whether ``ctx``'s effect happened."""
        return await self.get(name).query_result(ctx)
