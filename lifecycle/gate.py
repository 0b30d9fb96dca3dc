"""The schedule gate as a claimer read it: what a claim is fenced by (DESIGN §4 invariant 3)."""

from dataclasses import dataclass
from datetime import datetime

DEFAULT_IMPLEMENTATION_ALIAS = "default"
"""The implementation alias a schedule's gate starts with (``GateView.implementation_alias``)."""


@dataclass(frozen=True, slots=True)
class GateView:
    """A schedule's gate as read; a claim succeeds only if the gate still shows these values.

    The ledger returns it, a releaser carries it to the occurrence workflow, and the claim hands
    it back to the ledger unchanged: one type on both sides of the workflow boundary.
    """

    schedule_id: str
    active_revision: int
    """The newest published revision."""
    disabled: bool
    disabled_reason: str | None
    """Why, when disabled."""
    disable_generation: int
    """Grows on every disable and enable."""
    execution_epoch: int
    """Grows on every rollback."""
    implementation_alias: str
    """The implementation workers must run to claim."""
    updated_at_utc: datetime
    """When the gate last changed (aware UTC)."""
    deleted_at_utc: datetime | None = None
    """When the schedule was deleted (``None``: it was not, or was revived). Deleted is disabled."""

    @property
    def deleted(self) -> bool:
        """Whether the schedule is deleted (then it is disabled too)."""
        return self.deleted_at_utc is not None
