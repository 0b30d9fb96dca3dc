"""A CLI test's ledger holding the ``every-10-seconds`` example, recorded through the CLI itself."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from typer.testing import Result

EVERY_10_SECONDS = Path(__file__).resolve().parents[2] / "examples" / "every-10-seconds.yaml"


def materialize_every_10_seconds(run: Callable[..., Result], to: str) -> None:
    """Upgrade ``run``'s ledger and record ``examples/every-10-seconds.yaml`` from 2026-11-01Z
    to ``to`` (``almanac ledger materialize``, now 2026-10-30Z)."""
    assert run("db", "upgrade").exit_code == 0
    made = run(
        "ledger", "materialize", str(EVERY_10_SECONDS),
        "--from", "2026-11-01T00:00:00Z", "--to", to, "--now", "2026-10-30T00:00:00Z",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
