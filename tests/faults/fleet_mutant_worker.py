"""``python -m tests.faults.fleet_mutant_worker``: the production worker with a mutant ledger.

The fleet-recovery gate's mutant (``test_fleet_recovery_gate.py``): ``ledger.release_due`` releases
nothing (returns ``None``), so no overdue occurrence is ever decided. Everything else is the
production worker, run as ``python -m worker`` runs it.
"""

import ledger
from almanac.cli.worker import main

ledger.release_due = lambda *a, **k: None

if __name__ == "__main__":
    main()
