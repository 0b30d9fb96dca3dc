"""The occurrence ledger: SQL facts, compare-and-set transitions and the gate (DESIGN §4).

Public surface; everything else is an implementation detail. Every operation takes a
:class:`Ledger` first, runs one transaction and takes ``now_utc`` as a parameter: the ledger never
reads the clock. The schema comes from the Alembic migrations (:func:`ledger.migrate.upgrade`).
"""

from ledger.db import Ledger, create_ledger_engine
from ledger.errors import (
    CaseNotFound,
    ClaimLost,
    IllegalTransition,
    InvalidLedgerUrl,
    LedgerError,
    LedgerIntegrityError,
    LedgerUnavailable,
    OccurrenceNotFound,
    RevisionNotFound,
    RevisionRejected,
    ScheduleNotFound,
)
from ledger.gate import (
    DEFAULT_IMPLEMENTATION_ALIAS,
    disable,
    enable,
    get_gate,
    publish_revision,
    rollback,
)
from ledger.materialize import materialize, release_due
from ledger.occurrences import (
    RECONCILIATION_DEADLINE,
    cancel,
    claim,
    failed,
    mark_running,
    redeliver,
    retry_wait,
    succeeded,
    unknown_effect,
)
from ledger.queries import (
    counts_by_schedule_and_state,
    counts_by_state,
    list_occurrences,
    next_due,
    published_specs,
    show_occurrence,
)
from ledger.reconcile import human_queue, open_cases, resolve_reconciliation
from ledger.states import (
    TERMINAL,
    TRANSITIONS,
    AttemptOutcome,
    ClaimRefusal,
    OccurrenceState,
    ReconciliationResolution,
)
from ledger.views import (
    AttemptView,
    CaseView,
    ClaimResult,
    EventView,
    GateView,
    MaterializeResult,
    OccurrenceDetail,
    OccurrenceView,
    PublishResult,
    ReleaseResult,
)

__all__ = [
    "DEFAULT_IMPLEMENTATION_ALIAS",
    "RECONCILIATION_DEADLINE",
    "TERMINAL",
    "TRANSITIONS",
    "AttemptOutcome",
    "AttemptView",
    "CaseNotFound",
    "CaseView",
    "ClaimLost",
    "ClaimRefusal",
    "ClaimResult",
    "EventView",
    "GateView",
    "IllegalTransition",
    "InvalidLedgerUrl",
    "Ledger",
    "LedgerError",
    "LedgerIntegrityError",
    "LedgerUnavailable",
    "MaterializeResult",
    "OccurrenceDetail",
    "OccurrenceNotFound",
    "OccurrenceState",
    "OccurrenceView",
    "PublishResult",
    "ReconciliationResolution",
    "ReleaseResult",
    "RevisionNotFound",
    "RevisionRejected",
    "ScheduleNotFound",
    "cancel",
    "claim",
    "counts_by_schedule_and_state",
    "counts_by_state",
    "create_ledger_engine",
    "disable",
    "enable",
    "failed",
    "get_gate",
    "human_queue",
    "list_occurrences",
    "mark_running",
    "materialize",
    "next_due",
    "open_cases",
    "publish_revision",
    "published_specs",
    "redeliver",
    "release_due",
    "resolve_reconciliation",
    "retry_wait",
    "rollback",
    "show_occurrence",
    "succeeded",
    "unknown_effect",
]
