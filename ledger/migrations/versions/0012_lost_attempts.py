"""A lost attempt is recorded as lost, not as finished at a time nobody observed.

When the worker running an attempt stops during the downstream call, the next try of the same
dispatch finds the attempt unfinished. Before this revision the finder closed it with its own clock
as ``finished_at_utc`` and outcome ``UNKNOWN``: a finish time nobody observed. Now:

- ``attempts.outcome`` gains ``LOST`` (the CHECK list is widened);
- ``attempts.lost_detected_at_utc`` and ``attempts.lost_detected_by`` (new, nullable) say when and
  by which worker the loss was noticed;
- CHECK ``ck_attempts_lost_is_detected``: a ``LOST`` attempt has no ``finished_at_utc`` and has
  both new fields; no other attempt has either.

Rows written before this revision keep what they say (``UNKNOWN`` + ``LostAcknowledgement``).
SQLite rebuilds ``attempts`` (Alembic batch mode; no table references it); PostgreSQL alters it in
place. Downgrade writes a ``LOST`` attempt in the older form: ``UNKNOWN``, finished when it was
found lost.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-15 12:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OUTCOME_VALID = "ck_attempts_outcome_valid"
LOST_IS_DETECTED = "ck_attempts_lost_is_detected"
_OLD_OUTCOMES = (
    "outcome IS NULL OR outcome IN ('SUCCEEDED', 'RETRYABLE_FAILURE', 'FAILED', 'UNKNOWN')"
)
_NEW_OUTCOMES = (
    "outcome IS NULL OR outcome IN ('SUCCEEDED', 'RETRYABLE_FAILURE', 'FAILED', 'UNKNOWN', 'LOST')"
)
_LOST_IS_DETECTED = (
    "(outcome = 'LOST' AND finished_at_utc IS NULL AND lost_detected_at_utc IS NOT NULL"
    " AND lost_detected_by IS NOT NULL)"
    " OR ((outcome IS NULL OR outcome <> 'LOST') AND lost_detected_at_utc IS NULL"
    " AND lost_detected_by IS NULL)"
)


def upgrade() -> None:
    with op.batch_alter_table("attempts") as batch:
        batch.add_column(
            sa.Column("lost_detected_at_utc", sa.DateTime(timezone=True), nullable=True)
        )
        batch.add_column(sa.Column("lost_detected_by", sa.String(200), nullable=True))
        batch.drop_constraint(op.f(OUTCOME_VALID), type_="check")
        batch.create_check_constraint(op.f(OUTCOME_VALID), _NEW_OUTCOMES)
        batch.create_check_constraint(op.f(LOST_IS_DETECTED), _LOST_IS_DETECTED)


def downgrade() -> None:
    # The older revisions' form of a lost attempt: UNKNOWN, finished when it was found lost.
    op.execute(
        "UPDATE attempts SET outcome = 'UNKNOWN', finished_at_utc = lost_detected_at_utc, "
        "lost_detected_at_utc = NULL, lost_detected_by = NULL WHERE outcome = 'LOST'"
    )
    with op.batch_alter_table("attempts") as batch:
        batch.drop_constraint(op.f(LOST_IS_DETECTED), type_="check")
        batch.drop_constraint(op.f(OUTCOME_VALID), type_="check")
        batch.create_check_constraint(op.f(OUTCOME_VALID), _OLD_OUTCOMES)
        batch.drop_column("lost_detected_by")
        batch.drop_column("lost_detected_at_utc")
