"""What every action adapter shares: the context it is called with, its outcomes, its contract.

An adapter turns one occurrence into one downstream effect (DESIGN §7). It never decides what to
do next: it reports what it knows, and the occurrence workflow chooses — retry, fail, or treat the
effect as UNKNOWN_EFFECT and reconcile. The one rule every adapter keeps: report
``UNCONFIRMED`` whenever the request may have reached the downstream without an answer, never a
failure that would invite a blind resend.

All types here are frozen dataclasses of strings, ints and JSON data, so they cross the Temporal
default data converter unchanged (activity inputs and results).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, Tag, ValidationError

from lifecycle.outcomes import OutcomeKind as OutcomeKind  # re-exported: what an adapter returns
from timecontract import AlmanacError, SpecError
from timecontract.secrets import redact_at
from timecontract.spec_problems import problem_words


@dataclass(frozen=True, slots=True)
class ActionContext:
    """One call of an action for one attempt of one occurrence."""

    occurrence_id: str
    """The occurrenceId; adapters send it as the idempotency key."""
    schedule_id: str
    """The schedule's scheduleId."""
    revision: int
    """The revision the occurrence belongs to."""
    nominal_local: str
    """The nominal local date-time, ISO 8601 without offset (``2026-11-01T01:30:00``)."""
    instant_utc: str
    """The resolved instant, ISO 8601 UTC (``2026-11-01T05:30:00Z``)."""
    attempt: int
    """The attempt's number: its ``claim_generation`` in the ledger (1 for the first try, one more
    for each retry or redelivery)."""
    parameters: dict[str, Any] = field(default_factory=dict)
    """The spec's ``action.parameters`` (JSON data), validated by the adapter."""
    key: str | None = None
    """The idempotency key when it is not the occurrenceId (a failure-streak notification's)."""

    @property
    def idempotency_key(self) -> str:
        """The idempotency key: ``key`` when given, else the occurrenceId."""
        return self.key or self.occurrence_id


class QueryOutcomeKind(StrEnum):
    """What a result query established."""

    FOUND = "FOUND"
    """The downstream has the effect (its result is in ``result``)."""
    NOT_FOUND = "NOT_FOUND"
    """The downstream answered that it has no effect for this key."""
    QUERY_FAILED = "QUERY_FAILED"
    """The query itself got no answer (timeout, 5xx, refused): still unknown, ask again later."""
    UNSUPPORTED = "UNSUPPORTED"
    """This adapter, or these parameters, cannot ask the downstream (see ``can_query_result``)."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """The result of :meth:`ActionAdapter.invoke`."""

    kind: OutcomeKind
    """What is known about the effect."""
    result: dict[str, Any] | None = None
    """The downstream's answer (JSON data) when CONFIRMED; ``None`` otherwise."""
    detail: str = ""
    """Human-readable why (status line, exception), for the ledger's attempt record."""
    status_code: int | None = None
    """The downstream's status (HTTP status, SMTP reply code), when one came back."""
    retry_after_seconds: float | None = None
    """The downstream's requested wait before a retry (HTTP ``Retry-After``), if it gave one."""


@dataclass(frozen=True, slots=True)
class QueryOutcome:
    """The result of :meth:`ActionAdapter.query_result`."""

    kind: QueryOutcomeKind
    """What the downstream said about the effect."""
    result: dict[str, Any] | None = None
    """The downstream's record of the effect when FOUND."""
    detail: str = ""
    """Human-readable why."""


@dataclass(frozen=True, slots=True)
class ActionCapabilities:
    """What an adapter, with given parameters, lets the occurrence workflow do."""

    accepts_idempotency_key: bool
    """A repeat with the same key cannot make a second effect, so a resend is safe."""
    can_query_result: bool
    """:meth:`ActionAdapter.query_result` can ask the downstream whether the effect happened."""


class ActionError(AlmanacError):
    """Root of the action adapters' errors."""


class UnknownAction(ActionError, LookupError):
    """No adapter is registered under this name."""

    def __init__(self, name: str, known: list[str]) -> None:
        super().__init__(f"no action adapter named {name!r} (registered: {', '.join(known)})")
        self.name = name
        self.known = known


class ActionNotConfigured(ActionError):
    """The adapter lacks something the worker must provide (e.g. a Temporal client)."""


class InvalidActionParameters(SpecError):
    """The spec's ``action.parameters`` do not fit the adapter.

    ``field``/``value``/``problem`` are the first problem's (``action.parameters.url``);
    ``problems`` lists every one as a :class:`SpecError` (a missing field's not ``given``: shown
    without a value, ``action.parameters.url: is required``), and the message names them all.
    """

    def __init__(self, action: str, problems: list[SpecError]) -> None:
        first = problems[0]
        super().__init__(first.field, first.value, first.problem, given=first.given)
        self.action = action
        self.problems = problems
        said = "; ".join(str(problem) for problem in problems)
        self.args = (f"invalid parameters for action {action!r}: {said}",)


P = TypeVar("P", bound=BaseModel)
M = TypeVar("M", bound=BaseModel)


def branch_tag(name: str) -> Tag:
    """The :class:`~pydantic.Tag` of one branch of a parameter model's discriminated union.

    Pydantic puts the tag of the branch it validated into an error's location
    (``headers.Authorization.<tag>.secretRef.env``; pydantic issue #10433), where it names no
    field of the spec. The tag is written ``<name>``, a form no header name can take (RFC 9110
    token characters exclude ``<`` and ``>``), and :func:`validate_parameters` leaves every such
    part out of the field path it reports.
    """
    return Tag(f"<{name}>")


def _is_branch_tag(part: int | str) -> bool:
    return isinstance(part, str) and len(part) > 2 and part[0] == "<" and part[-1] == ">"


def validate_parameters(action: str, model: type[M], parameters: Mapping[str, Any]) -> M:
    """Check action ``action``'s ``parameters`` against its parameter ``model``.

    The one check of an action's parameters: the adapters make it before each call, the edge
    (``activities.actions.catalog``: ``almanac validate``, ``apply``) before anything is sent.

    Raises:
        InvalidActionParameters: naming each bad parameter as ``action.parameters.<name>`` (the
            path as written in the spec, without union branch tags: :func:`branch_tag`) and its
            value (a literal secret in it redacted, ``timecontract.secrets.redact_at``; none for
            a missing parameter).
    """
    try:
        return model.model_validate(dict(parameters))
    except ValidationError as exc:
        problems: list[SpecError] = []
        for err in exc.errors():
            path = [part for part in err["loc"] if not _is_branch_tag(part)]
            loc = ".".join(str(p) for p in path)
            where = f"action.parameters.{loc}" if loc else "action.parameters"
            if err["type"] == "missing":
                problems.append(SpecError.missing(where, problem_words(err, where)))
                continue
            # A problem's value may be a whole mapping: literal secrets in it stay unsaid.
            value = redact_at(path, err.get("input"))
            problems.append(SpecError(where, value, problem_words(err, where)))
        # Not chained: pydantic's error holds every input value, a literal secret included, and
        # a chained cause travels in tracebacks and Temporal failures.
        raise InvalidActionParameters(action, problems) from None


def unknown_action_name(name: str, known: list[str]) -> SpecError:
    """The spec problem of an ``action.name`` no adapter has (``known``: the names, sorted)."""
    return SpecError(
        "action.name", name, f"no action adapter named {name!r} (registered: {', '.join(known)})"
    )


def at_field(field: str, problems: list[SpecError]) -> list[SpecError]:
    """``problems`` of an action checked as ``action``, named at ``field`` instead.

    One check serves every action a spec holds: ``failureStreak.action.parameters.url`` is the
    spec's ``action.parameters.url`` problem under the field where that action is written.
    """
    return [
        SpecError(field + p.field.removeprefix("action"), p.value, p.problem, given=p.given)
        for p in problems
    ]


def parameter_problems(check: Callable[[], object]) -> list[SpecError]:
    """Every problem ``check`` raises, one :class:`SpecError` each (empty: none).

    ``check`` raises :class:`InvalidActionParameters` (one problem per bad parameter) or
    another :class:`SpecError` (one problem).
    """
    try:
        check()
    except InvalidActionParameters as exc:
        return exc.problems
    except SpecError as exc:
        return [exc]
    return []


class ActionAdapter(ABC, Generic[P]):
    """An action adapter: named, with a parameter model and a declared contract.

    Subclasses set ``name``, ``parameters_model``, ``accepts_idempotency_key`` and
    ``can_query_result`` (the latter may be narrowed per parameters by :meth:`capabilities`),
    and implement :meth:`invoke` (and :meth:`query_result` when they can).
    """

    name: ClassVar[str]
    parameters_model: ClassVar[type[BaseModel]]
    accepts_idempotency_key: ClassVar[bool]
    can_query_result: ClassVar[bool]

    def validate(self, parameters: Mapping[str, Any]) -> P:
        """Check ``parameters`` against the adapter's model (:func:`validate_parameters`).

        Raises:
            InvalidActionParameters: naming each bad parameter as ``action.parameters.<name>``.
        """
        return validate_parameters(self.name, self.parameters_model, parameters)  # type: ignore[return-value]

    def capabilities(self, parameters: Mapping[str, Any]) -> ActionCapabilities:
        """The contract for these parameters (validates them first)."""
        self.validate(parameters)
        return ActionCapabilities(self.accepts_idempotency_key, self.can_query_result)

    @abstractmethod
    async def invoke(self, ctx: ActionContext) -> Outcome:
        """Attempt the effect once for ``ctx``; never raises for downstream trouble.

        Raises:
            InvalidActionParameters: ``ctx.parameters`` do not fit (a non-retryable error).
        """

    async def query_result(self, ctx: ActionContext) -> QueryOutcome:
        """Ask the downstream whether the effect for ``ctx.occurrence_id`` happened.

        The default answers UNSUPPORTED: a downstream that cannot be asked ends in the human queue.
        """
        return QueryOutcome(QueryOutcomeKind.UNSUPPORTED, detail=f"{self.name} cannot be queried")
