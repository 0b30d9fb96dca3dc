"""A table printed to a pipe or a file shows every cell whole (``almanac.cli.output.out``).

Rich fits a table into its console's width by cutting cells with an ellipsis. On a terminal that
width is the terminal's; piped (``almanac ledger list … | cat``, ``> file``, a CI log) it was a
fixed 160 columns, and a long occurrenceId (never cut: it is copied into other commands) made the
other columns give way: the instants read ``2026-1…``. The command runner here captures stdout,
so it is not a terminal, as in a pipe.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from typer.testing import Result

REPO = Path(__file__).resolve().parents[2]
SCHEDULE = "payments-team-nightly-settlement-export-to-the-ledger-of-record"
"""The longest scheduleId the spec allows (63 characters): its occurrenceIds are 85 long."""
INSTANTS = ["2026-11-01T00:00:00Z", "2026-11-01T00:00:10Z", "2026-11-01T00:00:20Z"]
"""What ``every-10-seconds`` (``FREQ=SECONDLY;INTERVAL=10`` in Etc/UTC) holds in the window."""


def _materialize(run: Callable[..., Result], tmp_path: Path) -> None:
    example = (REPO / "examples" / "every-10-seconds.yaml").read_text()
    spec = tmp_path / "long-id.yaml"
    spec.write_text(example.replace("scheduleId: every-10-seconds", f"scheduleId: {SCHEDULE}"))
    assert run("db", "upgrade").exit_code == 0
    made = run(
        "ledger", "materialize", str(spec), "--from", "2026-11-01T00:00:00Z",
        "--to", "2026-11-01T00:00:30Z", "--now", "2026-10-30T00:00:00Z",
    )  # fmt: skip
    assert made.exit_code == 0, made.output


def test_ledger_list_piped_shows_every_instant_whole(
    run: Callable[..., Result], tmp_path: Path
) -> None:
    _materialize(run, tmp_path)
    listed = run("ledger", "list", SCHEDULE)
    assert listed.exit_code == 0, listed.output
    assert "…" not in listed.output
    for instant in INSTANTS:
        assert instant in listed.output  # the instant (UTC) column
        assert instant.removesuffix("Z") in listed.output  # the nominal local one (UTC zone)
    for line in listed.output.splitlines():
        if line.startswith("│"):  # a row: its cells whole, occurrenceId last
            assert f"{SCHEDULE}.r1.20261101T0000" in line and "UNAMBIGUOUS" in line


def test_ledger_show_piped_shows_the_occurrence_whole(
    run: Callable[..., Result], tmp_path: Path
) -> None:
    _materialize(run, tmp_path)
    shown = run("ledger", "show", f"{SCHEDULE}.r1.20261101T000010.f0")
    assert shown.exit_code == 0, shown.output
    assert "…" not in shown.output
    assert "2026-11-01T00:00:10Z" in shown.output
