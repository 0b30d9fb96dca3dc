"""What one attempt's downstream call established: the input of the ledger's outcome decision."""

from __future__ import annotations

from enum import StrEnum


class OutcomeKind(StrEnum):
    """What one invocation established about the downstream effect."""

    CONFIRMED = "CONFIRMED"
    """The downstream accepted the effect and said so."""
    RETRYABLE_FAILURE = "RETRYABLE_FAILURE"
    """The effect did not happen and trying again may work (5xx, 408, 429, refused connection)."""
    NON_RETRYABLE_FAILURE = "NON_RETRYABLE_FAILURE"
    """The effect did not happen and trying again will not help (4xx, bad configuration)."""
    UNCONFIRMED = "UNCONFIRMED"
    """The request may have reached the downstream but no answer came (timeout or lost
    connection after sending): the effect may or may not have happened → UNKNOWN_EFFECT."""
