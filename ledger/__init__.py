"""The occurrence ledger: SQL facts, compare-and-set transitions and the gate (DESIGN §4).

Public surface; everything else is an implementation detail. Every operation takes a
:class:`Ledger` first, runs one transaction and takes ``now_utc`` as a parameter: the ledger never
reads the clock. The schema comes from the Alembic migrations (:func:`ledger.migrate.upgrade`).

Importing the package loads no SQLAlchemy: the handle (:class:`Ledger`), the errors, the states
and the views import it only when a ledger is opened or an error translated, and the operations'
modules (which build SQL at import) load on first use of one of their names (PEP 562). So what
only names the ledger — the activity definitions a Temporal client imports with the workflows,
``almanac.client`` — starts without it (``tests/cli/test_start_up_stays_light.py``). No submodule
is named like a public name, and the lazy table agrees with the imports type checkers read
(``tests/ledger/test_public_surface_loads_lazily.py``).
"""

import importlib
from typing import TYPE_CHECKING, Any

from ledger.db import Ledger, create_ledger_engine
from ledger.errors import (
    CaseNotFound,
    ClaimLost,
    IllegalTransition,
    ImplementationNotRegistered,
    InvalidLedgerUrl,
    LedgerDataError,
    LedgerError,
    LedgerIntegrityError,
    LedgerUnavailable,
    OccurrenceNotFound,
    RevisionNotFound,
    RevisionRejected,
    ScheduleDeleted,
    ScheduleNotFound,
)
from ledger.states import (
    TERMINAL,
    TRANSITIONS,
    AttemptOutcome,
    ClaimRefusal,
    OccurrenceState,
    ReconciliationResolution,
    ScheduleEventKind,
)
from ledger.views import (
    DEFAULT_IMPLEMENTATION_ALIAS,
    AttemptView,
    BoundedMaterialization,
    CaseView,
    ClaimResult,
    EventView,
    GateChange,
    GateView,
    MaterializeResult,
    OccurrenceDetail,
    OccurrenceView,
    PublishResult,
    ReleaseResult,
    ScheduleEventView,
)

if TYPE_CHECKING:
    from ledger.attempt_outcomes import (
        LOST_ACKNOWLEDGEMENT,
        RECONCILIATION_DEADLINE,
        failed,
        retry_wait,
        succeeded,
        unknown_effect,
    )
    from ledger.backfill import (
        DEFAULT_MAX_OCCURRENCES,
        BackfillAction,
        BackfillEntry,
        BackfillPlan,
        BackfillRefused,
        backfill_window,
    )
    from ledger.browse import (
        OccurrenceCursor,
        OccurrencePage,
        RevisionCutover,
        ScheduleFacts,
        change_stamp,
        gates_page,
        occurrence_page,
        revision_cutovers,
        schedule_facts,
    )
    from ledger.dispatch import CANCELLING_REFUSALS, DispatchClaim, claim_for_dispatch
    from ledger.gate import (
        change_gate,
        delete_schedule,
        disable,
        enable,
        get_gate,
        publish_revision,
    )
    from ledger.manual import (
        TriggerResult,
        default_request_id,
        manual_occurrence_id,
        record_trigger,
    )
    from ledger.materialization import materialize, materialize_bounded, release_due
    from ledger.occurrences import cancel, claim, mark_running, paced_evidence, redeliver
    from ledger.outcomes import (
        AttemptReport,
        RecordedOutcome,
        RetryPolicy,
        record_outcome,
    )
    from ledger.overlap import cancel_superseded
    from ledger.queries import (
        HorizonReading,
        MissedSchedule,
        count_occurrences,
        counts_by_schedule_and_state,
        counts_by_state,
        database_now,
        events_after,
        horizon_reading,
        last_event_id,
        last_placed_at,
        list_occurrences,
        missed_schedules,
        next_due,
        published_specs,
        read_occurrence,
        show_occurrence,
        skips_by_schedule_state_and_reason,
    )
    from ledger.reconcile import (
        human_queue,
        open_cases,
        open_cases_by_schedule,
        resolve_reconciliation,
    )
    from ledger.rollout import (
        NotRequeued,
        SwitchKind,
        SwitchResult,
        canary_bucket,
        in_canary,
        list_gates,
        recognised_id_formats,
        register_implementation,
        switch_implementation,
    )
    from ledger.schedule_trail import record_schedule_event, schedule_events

_LAZY: dict[str, tuple[str, ...]] = {
    "ledger.attempt_outcomes": (
        "LOST_ACKNOWLEDGEMENT",
        "RECONCILIATION_DEADLINE",
        "failed",
        "retry_wait",
        "succeeded",
        "unknown_effect",
    ),
    "ledger.backfill": (
        "DEFAULT_MAX_OCCURRENCES",
        "BackfillAction",
        "BackfillEntry",
        "BackfillPlan",
        "BackfillRefused",
        "backfill_window",
    ),
    "ledger.browse": (
        "OccurrenceCursor",
        "OccurrencePage",
        "RevisionCutover",
        "ScheduleFacts",
        "change_stamp",
        "gates_page",
        "occurrence_page",
        "revision_cutovers",
        "schedule_facts",
    ),
    "ledger.gate": (
        "change_gate",
        "delete_schedule",
        "disable",
        "enable",
        "get_gate",
        "publish_revision",
    ),
    "ledger.manual": (
        "TriggerResult",
        "default_request_id",
        "manual_occurrence_id",
        "record_trigger",
    ),
    "ledger.materialization": ("materialize", "materialize_bounded", "release_due"),
    "ledger.occurrences": ("cancel", "claim", "mark_running", "paced_evidence", "redeliver"),
    "ledger.dispatch": ("CANCELLING_REFUSALS", "DispatchClaim", "claim_for_dispatch"),
    "ledger.outcomes": ("AttemptReport", "RecordedOutcome", "RetryPolicy", "record_outcome"),
    "ledger.overlap": ("cancel_superseded",),
    "ledger.queries": (
        "HorizonReading",
        "MissedSchedule",
        "count_occurrences",
        "counts_by_schedule_and_state",
        "counts_by_state",
        "database_now",
        "events_after",
        "horizon_reading",
        "last_event_id",
        "last_placed_at",
        "list_occurrences",
        "missed_schedules",
        "next_due",
        "published_specs",
        "read_occurrence",
        "show_occurrence",
        "skips_by_schedule_state_and_reason",
    ),
    "ledger.reconcile": (
        "human_queue",
        "open_cases",
        "open_cases_by_schedule",
        "resolve_reconciliation",
    ),
    "ledger.rollout": (
        "NotRequeued",
        "SwitchKind",
        "SwitchResult",
        "canary_bucket",
        "in_canary",
        "list_gates",
        "recognised_id_formats",
        "register_implementation",
        "switch_implementation",
    ),
    "ledger.schedule_trail": ("record_schedule_event", "schedule_events"),
}
"""The operations' modules (each builds SQL at import) and the public names each defines: the
``TYPE_CHECKING`` imports above, for type checkers, in the form :func:`__getattr__` reads."""

_HOMES = {name: home for home, names in _LAZY.items() for name in names}


def __getattr__(name: str) -> Any:
    """Import an operation's module on first use of one of its public names (PEP 562).

    The value is then kept in the package, so this runs once per name. No submodule is named
    like a public name: importing a submodule binds it on the package under its own name, which
    would otherwise hide the function (``tests/ledger/test_public_surface_loads_lazily.py``).
    """
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'ledger' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


__all__ = [
    "CANCELLING_REFUSALS",
    "DEFAULT_IMPLEMENTATION_ALIAS",
    "DEFAULT_MAX_OCCURRENCES",
    "LOST_ACKNOWLEDGEMENT",
    "RECONCILIATION_DEADLINE",
    "TERMINAL",
    "TRANSITIONS",
    "AttemptOutcome",
    "AttemptReport",
    "AttemptView",
    "BackfillAction",
    "BackfillEntry",
    "BackfillPlan",
    "BackfillRefused",
    "BoundedMaterialization",
    "CaseNotFound",
    "CaseView",
    "ClaimLost",
    "ClaimRefusal",
    "ClaimResult",
    "DispatchClaim",
    "EventView",
    "GateChange",
    "GateView",
    "HorizonReading",
    "IllegalTransition",
    "ImplementationNotRegistered",
    "InvalidLedgerUrl",
    "Ledger",
    "LedgerDataError",
    "LedgerError",
    "LedgerIntegrityError",
    "LedgerUnavailable",
    "MaterializeResult",
    "MissedSchedule",
    "NotRequeued",
    "OccurrenceCursor",
    "OccurrenceDetail",
    "OccurrenceNotFound",
    "OccurrencePage",
    "OccurrenceState",
    "OccurrenceView",
    "PublishResult",
    "ReconciliationResolution",
    "RecordedOutcome",
    "ReleaseResult",
    "RetryPolicy",
    "RevisionCutover",
    "RevisionNotFound",
    "RevisionRejected",
    "ScheduleDeleted",
    "ScheduleEventKind",
    "ScheduleEventView",
    "ScheduleFacts",
    "ScheduleNotFound",
    "SwitchKind",
    "SwitchResult",
    "TriggerResult",
    "backfill_window",
    "canary_bucket",
    "cancel",
    "cancel_superseded",
    "change_gate",
    "change_stamp",
    "claim",
    "claim_for_dispatch",
    "count_occurrences",
    "counts_by_schedule_and_state",
    "counts_by_state",
    "create_ledger_engine",
    "database_now",
    "default_request_id",
    "delete_schedule",
    "disable",
    "enable",
    "events_after",
    "failed",
    "gates_page",
    "get_gate",
    "horizon_reading",
    "human_queue",
    "in_canary",
    "last_event_id",
    "last_placed_at",
    "list_gates",
    "list_occurrences",
    "manual_occurrence_id",
    "mark_running",
    "materialize",
    "materialize_bounded",
    "missed_schedules",
    "next_due",
    "occurrence_page",
    "open_cases",
    "open_cases_by_schedule",
    "paced_evidence",
    "publish_revision",
    "published_specs",
    "read_occurrence",
    "recognised_id_formats",
    "record_outcome",
    "record_schedule_event",
    "record_trigger",
    "redeliver",
    "register_implementation",
    "release_due",
    "resolve_reconciliation",
    "retry_wait",
    "revision_cutovers",
    "schedule_events",
    "schedule_facts",
    "show_occurrence",
    "skips_by_schedule_state_and_reason",
    "succeeded",
    "switch_implementation",
    "unknown_effect",
]
