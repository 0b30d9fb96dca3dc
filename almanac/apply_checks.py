"""Checks a spec passes here before it is sent to a schedule workflow (no worker needed).

The workflow's validator and the ledger check again; checking first turns a refusal into a
one-line error naming the field and value, with nothing sent.
"""

from __future__ import annotations

from typing import Any

from almanac.client_errors import ApplyRefused, ChangeRejected
from timecontract import InvalidSpec, ScheduleSpecV1
from timecontract.secrets import secret_problems


def ledger_published_specs(handle: Any, schedule_id: str) -> list[ScheduleSpecV1]:
    """``ledger.published_specs``, imported on use (the control path loads no SQLAlchemy)."""
    import ledger

    return ledger.published_specs(handle, schedule_id)


def spec_differences(
    old: dict[str, Any], new: dict[str, Any], prefix: str = ""
) -> list[tuple[str, Any, Any]]:
    """The leaves where two resolved specs differ: ``(dotted path, old, new)``, in key order.

    A key only one side has is a difference with ``None`` on the other side.
    """
    found: list[tuple[str, Any, Any]] = []
    for key in sorted({*old, *new}):
        a, b, path = old.get(key), new.get(key), f"{prefix}{key}"
        if isinstance(a, dict) and isinstance(b, dict):
            found += spec_differences(a, b, f"{path}.")
        elif a != b:
            found.append((path, a, b))
    return found


def differs_from_published(published: list[ScheduleSpecV1], spec: ScheduleSpecV1) -> str:
    """``; the published r1 differs in <field>: published …, here …`` (at most three fields).

    Said when a revision is refused as already published with another digest, so the one line
    says what to change; ``""`` when ``published`` lacks the revision or nothing differs.
    ``almanac dev`` aims an example's ``http`` action at its own sink's port when that is not
    the examples' 8765, so an unedited example then differs in ``action.parameters.url``.
    """
    same = next((s for s in published if s.revision == spec.revision), None)
    if same is None:
        return ""
    differences = spec_differences(same.resolved(), spec.resolved())
    if not differences:
        return ""
    shown = "; ".join(
        f"{path}: published {old!r}, here {new!r}" for path, old, new in differences[:3]
    )
    more = f" (and {len(differences) - 3} more)" if len(differences) > 3 else ""
    return f"; the published r{spec.revision} differs in {shown}{more}"


def check_action(spec: ScheduleSpecV1) -> None:
    """Check the spec's actions against the built-in adapters' parameter models (no worker).

    The catalog (``activities.actions.catalog``) holds the very models the worker's registry
    (``ActionRegistry.default``) validates with, so a name or a parameter the worker would refuse
    is refused before anything is sent — without importing the adapters.

    Raises:
        SpecError: the first problem of any action: ``action.name`` (no such adapter),
            ``action.parameters.<field>`` or the same under ``failureStreak.action``, with the
            value.
    """
    if not spec.actions():
        return
    from activities.actions.catalog import spec_action_problems

    check_secrets(spec)
    problems = spec_action_problems(spec)
    if problems:
        raise problems[0]


def check_secrets(spec: ScheduleSpecV1) -> None:
    """Refuse a spec holding a literal secret (``timecontract.secrets``), however it was built.

    ``load_spec`` applies the rule, but a spec built another way (``ScheduleSpecV1`` from data)
    has not been through it; the schedule workflow's validator would refuse it too, after a
    round trip.

    Raises:
        InvalidSpec: every literal secret, named by its field, its value ``<redacted>``.
    """
    if problems := secret_problems(spec.resolved()):
        raise InvalidSpec(problems, schedule_id=spec.schedule_id, revision=spec.revision)


def check_applicable(spec: ScheduleSpecV1) -> None:
    """Refuse a spec that cannot be applied whatever runs: one without an ``action``.

    Raises:
        ApplyRefused: naming the field (``action``), its value as the spec spells it when given
            (``action=null``), and the schedule.
    """
    if spec.action is None:
        field = "action=null" if "action" in spec.model_fields_set else "action"
        raise ApplyRefused(
            f"{field}: {spec.schedule_id} r{spec.revision} has no action; "
            "a spec without one can be validated and previewed, not applied"
        )


def check_disable_reason(reason: str) -> str:
    """``reason`` stripped: disabling needs one (the gate and its DISABLED event record it).

    Raises:
        ChangeRejected: ``reason`` is blank, named with its value; nothing is sent.
    """
    if not reason.strip():
        raise ChangeRejected(
            f"reason={reason!r}: disabling needs a non-empty reason", field="reason", value=reason
        )
    return reason.strip()
