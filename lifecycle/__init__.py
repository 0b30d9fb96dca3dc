"""The values that cross the workflow boundary, defined once: states, the gate, occurrence payloads.

The ledger decides with these types, the activities return them, and the workflows read them, so
none is copied or converted on the way. The package imports only the standard library: workflow
code may import it inside the sandbox (replay-safe: nothing here reads a clock, a zone or a
database), and it sits below every other package (``tests/test_layering.py``). Names follow
DESIGN §4; the wire shape of each dataclass is part of the recorded histories. The payload
modules keep their annotations evaluated (no ``from __future__ import annotations``): Temporal's
converter reads them inside the workflow sandbox, where a string annotation cannot be resolved.
"""

from lifecycle.gate import DEFAULT_IMPLEMENTATION_ALIAS, GateView
from lifecycle.occurrences import UpcomingOccurrence
from lifecycle.outcomes import OutcomeKind
from lifecycle.states import ClaimRefusal, OccurrenceState

__all__ = [
    "DEFAULT_IMPLEMENTATION_ALIAS",
    "ClaimRefusal",
    "GateView",
    "OccurrenceState",
    "OutcomeKind",
    "UpcomingOccurrence",
]
