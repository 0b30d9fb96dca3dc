"""``ledger list`` and ``ledger events`` tell a misspelt scheduleId the close one the ledger knows.

The near-miss rule is the spec's (one edit per four letters, case and ``_`` folded:
``timecontract.nearest``); an ID close to none is refused alone, as before.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from ledger_example import materialize_every_10_seconds
from typer.testing import Result


@pytest.fixture
def ledger_cli(run: Callable[..., Result]) -> Callable[..., Result]:
    materialize_every_10_seconds(run, "2026-11-01T00:01:00Z")
    return run


@pytest.mark.parametrize(
    "args", [("ledger", "list", "every-10-second"), ("ledger", "events", "Every-10-secnods")]
)
def test_a_close_schedule_id_is_suggested(
    ledger_cli: Callable[..., Result], args: tuple[str, ...]
) -> None:
    refused = ledger_cli(*args)
    assert refused.exit_code == 2, refused.output
    assert refused.stderr.strip() == (
        f"error: schedule not found: {args[2]!r}; did you mean every-10-seconds?"
    )


def test_an_id_close_to_none_is_refused_alone(ledger_cli: Callable[..., Result]) -> None:
    refused = ledger_cli("ledger", "list", "nightly-report")
    assert refused.exit_code == 2
    assert refused.stderr.strip() == "error: schedule not found: 'nightly-report'"
