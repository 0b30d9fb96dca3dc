"""``python -m tests.faults.fleet_mutant_worker``: the production worker with a mutant ledger.

The fleet-recovery gate's mutant (``test_fleet_recovery_gate.py``): ``ledger.release_due`` decides
nothing (the gate, and nothing released, expired or DUE), so no overdue occurrence is ever decided
— neither by the worker's start-up catch-up nor by the schedule workflows, which both release
through it. Everything else is the production worker, run as ``python -m worker`` runs it.
"""

import ledger
from almanac.cli.worker import main

ledger.release_due = lambda store, schedule_id, *a, **k: ledger.ReleaseResult(
    (), (), gate=ledger.get_gate(store, schedule_id)
)

if __name__ == "__main__":
    main()
