"""The seed's acceptance gates: a script over :mod:`almanac.gates.harness` (same as ``almanac
gates``).

    .venv/bin/python bench/gates.py [GATE ...]    # about a minute; exit 1 if any gate fails

Gate names: golden, duplicates, recovery, catch-up, deliveries, unknown-effect, acceptance-points
(default: all). How each is measured: the docstring of ``almanac/gates/harness.py``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from almanac.gates.harness import main

if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    # temporalio may abort at interpreter exit (sdk-python#300); the exit code must stay ours.
    os._exit(code)
