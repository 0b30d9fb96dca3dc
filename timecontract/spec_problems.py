"""Validation problems of ``scheduleSpec.v1``, each a :class:`~timecontract.errors.SpecError`.

Pydantic reports a failed validation as a list of errors in its own words; a spec's reader gets
one line per problem naming the camelCase field and the value (shown only as the secret rule
allows at its path, ``timecontract.secrets``): a patterned field's rule in words, an unknown key
with the closest key its object takes, an RRULE problem as such. Also here: the problems found
between fields (``rule`` and ``interval``, the calendar fields), carried through pydantic.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from timecontract import zones
from timecontract.action_spec import ACTION_NAME_PATTERN
from timecontract.calendar_spec import CALENDAR_PATTERN_WORDING
from timecontract.errors import SpecError, yaml_word
from timecontract.ids import SCHEDULE_ID_PATTERN
from timecontract.nearest import nearest
from timecontract.rrule import RuleError
from timecontract.secrets import quiet_credentials, redact_at

PATTERN_WORDING = {
    SCHEDULE_ID_PATTERN: "must be 1–63 characters of a-z, 0-9 and '-', not starting or ending "
    "with '-' (it becomes part of workflow IDs)",
    ACTION_NAME_PATTERN: "must be a registered adapter's name: a-z first, then up to 62 of a-z, "
    "0-9, '_' and '-'",
    zones.RELEASE_PATTERN.pattern: "must be an IANA tz database release: a year and a letter, "
    "e.g. 2026a",
    **CALENDAR_PATTERN_WORDING,
}
"""What a patterned field must be, in words: a problem says this instead of quoting the regex."""

DURATION_WORDING = "must be an ISO 8601 duration, e.g. PT30S, PT5M, PT2H or P1D"
"""What a duration field (``lateness``, ``interval``…) must be, instead of pydantic's words."""
_SHORTHAND = re.compile(r"\s*(\d+)\s*([smh])\s*", re.IGNORECASE)
"""A duration in the shorthand other tools take (``5m``, ``30s``, ``2h``; pydantic reads
``1d`` as a day itself)."""


class FieldProblem(ValueError):
    """A problem between fields found after validation; carries the :class:`SpecError`."""

    def __init__(self, problem: SpecError) -> None:
        super().__init__(problem.problem)
        self.problem = problem


class RuleOrIntervalProblem(ValueError):
    """``rule``/``interval`` are both given or both missing; carries the :class:`SpecError`."""

    def __init__(self, problem: SpecError) -> None:
        super().__init__(problem.problem)
        self.problem = problem


def rule_or_interval_problems(
    data: Mapping[str, Any], present: Callable[[Any], bool] | None = None
) -> list[SpecError]:
    """Zero or one problem: spec data gives both ``rule`` and ``interval``, or neither.

    Args:
        data: spec data (raw, or the model's fields).
        present: whether a value counts as given (default: the key is present and not null).

    """
    given = present or (lambda value: value is not None)
    has_rule, has_interval = given(data.get("rule")), given(data.get("interval"))
    if has_rule and has_interval:
        return [
            SpecError(
                "interval",
                data.get("interval"),
                "rule and interval are mutually exclusive: give one of them (rule for calendar "
                "times, interval for elapsed-time spacing)",
            )
        ]
    if not has_rule and not has_interval and not data.get("rdates"):
        problem = "is required (or give interval or rdates instead)"
        if "rule" in data:
            return [SpecError("rule", data["rule"], problem)]
        return [SpecError.missing("rule", problem)]
    return []


def valid_identity(exc: ValidationError, data: Mapping[str, Any]) -> tuple[str | None, int | None]:
    """``scheduleId`` and ``revision`` as given, each only if the model found nothing wrong with it.

    The model's own check of the two fields decides (no second copy of their rules): a field is
    valid when it is given and no error's location starts with it. Both are strict (a string
    matching :data:`SCHEDULE_ID_PATTERN`; an int, not a bool, in 1..``spec.MAX_REVISION``), so the
    given value is the validated one.
    """
    failed = {error["loc"][0] for error in exc.errors(include_url=False) if error["loc"]}
    schedule_id, revision = data.get("scheduleId"), data.get("revision")
    return (
        schedule_id if isinstance(schedule_id, str) and "scheduleId" not in failed else None,
        revision if type(revision) is int and "revision" not in failed else None,
    )


ModelsByPath = Mapping[tuple[str, ...], type[BaseModel]]
"""The spec's models by the path of keys to the object each validates (``()``: the spec)."""


def validation_problems(exc: ValidationError, models: ModelsByPath) -> list[SpecError]:
    """One :class:`SpecError` per error of ``exc``, in its order, naming the dotted field.

    Args:
        exc: the spec model's validation error.
        models: the models whose keys an unknown key is compared with (``did you mean``).

    Returns:
        The problems; a :class:`RuleOrIntervalProblem` is left out (``parse_spec`` reports it
        from the raw data), a :class:`FieldProblem` is its own :class:`SpecError`.
    """
    problems: list[SpecError] = []
    for error in exc.errors(include_url=False):
        loc = [str(part) for part in error["loc"]]
        field = ".".join(loc) or "spec"
        value = error.get("input")
        cause = error.get("ctx", {}).get("error")
        if isinstance(cause, RuleOrIntervalProblem):
            continue  # reported from the raw data by parse_spec
        if isinstance(cause, FieldProblem):
            problems.append(cause.problem)
            continue
        if error["type"] == "missing":
            problems.append(SpecError.missing(field, "is required"))
            continue
        message = problem_words(error, field)
        if error["type"] == "extra_forbidden":
            message += _did_you_mean(loc, models)
        if not loc and isinstance(value, Mapping):
            value = None
        problems.append(SpecError(field, redact_at(loc, value), quiet_credentials(message)))
    return problems


def problem_words(error: ErrorDetails, field: str) -> str:
    """What is wrong, in the spec's words, for one of pydantic's errors at dotted ``field``.

    The one translation of pydantic's error types (the spec's and the action parameters'):
    a type, bound or choice problem says what the field must be (:data:`TYPE_WORDING`), a
    duration its ISO 8601 form, a patterned field its rule in words (:data:`PATTERN_WORDING`),
    an RRULE problem is marked as such; any other keeps pydantic's message.
    """
    value, ctx, kind = error.get("input"), error.get("ctx", {}), error["type"]
    message = re.sub(r"^(Value|Assertion) error, ", "", error["msg"])
    if kind == "missing":
        return "is required"
    if kind in TYPE_WORDING:
        return TYPE_WORDING[kind](field, value, ctx)
    if kind in ("time_delta_parsing", "time_delta_type"):
        return DURATION_WORDING + _duration_hint(value)
    if kind in ("list_type", "tuple_type"):
        return "must be a list"
    if kind == "too_long":
        most = ctx.get("max_length")
        return f"has {ctx.get('actual_length')} entries; at most {most} are allowed"
    if kind == "string_pattern_mismatch" and isinstance(ctx.get("pattern"), str):
        return PATTERN_WORDING.get(ctx["pattern"], message)
    if isinstance(ctx.get("error"), RuleError):
        return f"invalid RRULE: {message}"
    return message


def _mapping_words(field: str, value: Any, ctx: Mapping[str, Any]) -> str:
    example = MAPPING_EXAMPLES.get(field)
    return "must be a mapping of fields" + (f", e.g. {field}: {example}" if example else "")


def _string_words(field: str, value: Any, ctx: Mapping[str, Any]) -> str:
    # YAML reads an unquoted 2026 as a number: the release needs its letter, and quotes.
    if field == "tzdbVersion" and isinstance(value, int | float) and not isinstance(value, bool):
        return "must be a string such as '2026a' (quote it in YAML)"
    return "must be a string" + _bool_word_hint(value)


def _bool_word_hint(value: Any) -> str:
    """``; YAML reads an unquoted no or off as false: quote the word if you meant it``.

    For a boolean where text is due: YAML 1.1, which PyYAML reads, takes an unquoted ``NO``,
    ``yes``, ``on`` or ``off`` as a boolean, so a word a reader meant arrives as ``false`` or
    ``true`` (yaml.org/type/bool). Else ``""``.
    """
    if not isinstance(value, bool):
        return ""
    words = "yes or on" if value else "no or off"
    return f"; YAML reads an unquoted {words} as {yaml_word(value)}: quote the word if you meant it"


def _unknown_key_words(field: str, value: Any, ctx: Mapping[str, Any]) -> str:
    """``unknown field (calendar has no such key)``: names the object that lacks the key."""
    holder = field.rpartition(".")[0] or "scheduleSpec.v1"
    return f"unknown field ({holder} has no such key)"


def _bound(value: Any) -> Any:
    """A bound as the spec writes it: ``600``, not ``600.0``."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _choice_words(field: str, value: Any, ctx: Mapping[str, Any]) -> str:
    """``must be one of SKIP, SHIFT_FORWARD, NEXT_VALID``, naming the choice a value misspells.

    ``; did you mean SKIP?`` follows when ``value`` is one of the choices in other case (or with
    ``-`` or spaces for ``_``); a boolean gets :func:`_bool_word_hint` (``foldPolicy: NO``).
    """
    expected = str(ctx.get("expected", ""))
    choices = re.findall(r"'([^']*)'", expected) or [expected]
    words = f"must be {choices[0]}" if len(choices) == 1 else f"must be one of {', '.join(choices)}"
    if isinstance(value, str):
        folded = {re.sub(r"[-\s]", "_", choice).casefold(): choice for choice in choices}
        meant = folded.get(re.sub(r"[-\s]", "_", value.strip()).casefold())
        if meant is not None and meant != value:
            return f"{words}; did you mean {meant}?"
    return words + _bool_word_hint(value)


DATETIME_WORDING = "must be an ISO 8601 date-time such as 2027-01-04T08:00:00"
URL_WORDING = "must be an absolute URL such as https://example.com/hook"

MAPPING_EXAMPLES = {"calendar": "{name: NYSE, release: holidays-0.108}"}
"""An example of a mapping field's shape, for a problem that it is not a mapping."""

TYPE_WORDING: dict[str, Callable[[str, Any, Mapping[str, Any]], str]] = {
    "dict_type": _mapping_words,
    "model_type": _mapping_words,
    "model_attributes_type": _mapping_words,
    "string_type": _string_words,
    "int_type": lambda field, value, ctx: "must be a whole number",
    "int_parsing": lambda field, value, ctx: "must be a whole number",
    "int_from_float": lambda field, value, ctx: "must be a whole number",
    "bool_type": lambda field, value, ctx: "must be true or false",
    "bool_parsing": lambda field, value, ctx: "must be true or false",
    "float_type": lambda field, value, ctx: "must be a number",
    "float_parsing": lambda field, value, ctx: "must be a number",
    "datetime_type": lambda field, value, ctx: DATETIME_WORDING,
    "datetime_parsing": lambda field, value, ctx: DATETIME_WORDING,
    "datetime_from_date_parsing": lambda field, value, ctx: DATETIME_WORDING,
    "url_type": lambda field, value, ctx: URL_WORDING,
    "url_parsing": lambda field, value, ctx: URL_WORDING,
    "extra_forbidden": _unknown_key_words,
    "greater_than_equal": lambda field, value, ctx: f"must be at least {_bound(ctx.get('ge'))}",
    "greater_than": lambda field, value, ctx: f"must be more than {_bound(ctx.get('gt'))}",
    "less_than_equal": lambda field, value, ctx: f"must be at most {_bound(ctx.get('le'))}",
    "less_than": lambda field, value, ctx: f"must be less than {_bound(ctx.get('lt'))}",
    "literal_error": _choice_words,
    "enum": _choice_words,
}
"""Pydantic's error types in the spec's words, by type: each takes the dotted field, the value
and pydantic's context for the error (its bound, its choices)."""


def _duration_hint(value: Any) -> str:
    """``; did you mean PT5M?`` for a shorthand duration (``5m``: minutes, as tools read it)."""
    shorthand = _SHORTHAND.fullmatch(value) if isinstance(value, str) else None
    if shorthand is None:
        return ""
    return f"; did you mean PT{shorthand[1]}{shorthand[2].upper()}?"


def _did_you_mean(loc: list[str], models: ModelsByPath) -> str:
    """``; did you mean `timeZone`?`` for an unknown key close to one its object takes, else ``""``.

    Close as :func:`timecontract.nearest.nearest` judges it, among the keys of the object holding
    the unknown key, if ``models`` has that object's model.
    """
    model = models.get(tuple(loc[:-1]))
    if model is None or not loc:
        return ""
    keys = [info.alias or name for name, info in model.model_fields.items()]
    meant = nearest(loc[-1], keys)
    return f"; did you mean `{meant}`?" if meant else ""
