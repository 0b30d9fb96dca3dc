"""``status`` with Temporal unreachable opens the ledger once, for the reading or the hint.

An ID the ledger knows answers from it (exit 0); a misspelt one is refused as Temporal's absence
(exit 1) with the close ID the ledger knows (``timecontract.nearest``: one edit), from the same
open as the failed reading.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from ledger_example import materialize_every_10_seconds
from typer.testing import Result

from almanac import readings


@pytest.fixture
def opens(run: Callable[..., Result], monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ledger URLs ``readings.open_ledger`` opens, from the ledger's set-up on."""
    materialize_every_10_seconds(run, "2026-11-01T00:01:00Z")
    seen: list[str] = []
    real: Callable[[str], Any] = readings.open_ledger

    def counted(url: str) -> Any:
        seen.append(url)
        return real(url)

    monkeypatch.setattr(readings, "open_ledger", counted)
    return seen


def test_a_misspelt_id_gets_its_hint_from_one_ledger_open(
    run: Callable[..., Result], opens: list[str]
) -> None:
    refused = run("status", "every-10-second")
    assert refused.exit_code == 1, refused.output
    assert "Temporal unreachable at 127.0.0.1:1" in refused.stderr
    assert refused.stderr.strip().endswith(
        "; the ledger knows no 'every-10-second': did you mean every-10-seconds?"
    )
    assert len(opens) == 1


def test_a_known_id_answers_from_one_ledger_open(
    run: Callable[..., Result], opens: list[str]
) -> None:
    shown = run("status", "every-10-seconds", "-n", "1")
    assert shown.exit_code == 0, shown.output
    assert "read from the ledger" in shown.stdout
    assert len(opens) == 1
    # A time read from a clock is shown to the second (the reading's is the host's now).
    second = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"
    assert re.search(rf"read from the ledger at {second}\n", shown.stdout), shown.stdout


def test_an_unknown_id_with_no_close_one_is_said_unknown_to_the_ledger(
    run: Callable[..., Result], opens: list[str]
) -> None:
    refused = run("status", "zzz")
    assert refused.exit_code == 1, refused.output
    assert "Temporal unreachable at 127.0.0.1:1" in refused.stderr
    assert refused.stderr.strip().endswith("; the ledger knows no 'zzz'")
    assert len(opens) == 1
