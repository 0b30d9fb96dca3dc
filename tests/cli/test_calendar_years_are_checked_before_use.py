"""A calendar file's years bound what a spec pinned to it may do: one line, exit 2, no traceback.

The expectation comes from the file itself: it lists holidays of 2026 only, so it decides no day
of 2027 (a preview window reaching 2027 is refused) and a revision cut over in 2026 cannot pin a
file of 2025 (validate and apply refuse it before anything is written).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from typer.testing import Result

CALENDAR = """name: acme
holidays:
  - {date: 2026-12-25, name: Christmas}
"""
SPEC = """schema: scheduleSpec.v1
scheduleId: acme-daily
revision: 1
timeZone: UTC
tzdbVersion: 2026a
rule: "FREQ=DAILY;BYHOUR=9;BYMINUTE=0"
calendar: {{name: acme, release: {release}}}
holidayPolicy: FOLLOWING
cutoverAt: {cutover}
"""


def _pinned(run: Callable[..., Result], tmp_path: Path, calendar: str, cutover: str) -> Path:
    (tmp_path / "cal1.yaml").write_text(calendar)
    added = run("calendar", "add-file", str(tmp_path / "cal1.yaml"), "--json")
    assert added.exit_code == 0, added.output
    release = next(w for w in added.output.replace('"', " ").split() if w.startswith("sha256-"))
    spec = tmp_path / "acme.yaml"
    spec.write_text(SPEC.format(release=release, cutover=cutover))
    return spec


def _one_line(result: Result, *named: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert all(n in lines[0] for n in named), lines[0]


def test_preview_past_the_files_years_is_one_line_naming_the_release(
    run: Callable[..., Result], tmp_path: Path
) -> None:
    spec = _pinned(run, tmp_path, CALENDAR, "2026-12-01T00:00:00Z")
    window = ("--from", "2026-12-30T00:00:00Z", "--to", "2027-01-05T00:00:00Z")
    for extra in ((), ("--json",)):
        result = run("preview", str(spec), *window, *extra)
        _one_line(result, "calendar.release='sha256-", "2026–2026", "2027-01-01")
    inside = run(
        "preview", str(spec), "--from", "2026-12-20T00:00:00Z", "--to", "2026-12-31T00:00:00Z"
    )
    assert inside.exit_code == 0, inside.output


def test_validate_and_apply_refuse_a_file_that_misses_the_cutover_year(
    run: Callable[..., Result], tmp_path: Path
) -> None:
    spec = _pinned(
        run, tmp_path, CALENDAR.replace("2026-12-25", "2025-12-25"), "2026-03-01T00:00:00Z"
    )
    for command in ("validate", "apply"):
        result = run(command, str(spec))
        assert result.exit_code == 2, result.output
        problem = "calendar.release='sha256-"
        assert f"{problem}" in result.output and "covers 2025–2025, not 2026" in result.output
        assert "unreachable" not in result.output  # refused before Temporal is asked
    covered = spec.read_text().replace("2026-03-01", "2025-03-01")
    spec.write_text(covered)
    assert run("validate", str(spec)).exit_code == 0


def test_a_covered_cutover_year_validates_in_a_zone_with_dst(
    run: Callable[..., Result], tmp_path: Path
) -> None:
    # The DST advisories look months ahead of the cutover; a file of 2025 alone ends that look
    # (advice), it does not refuse a spec whose cutover year it covers.
    spec = _pinned(
        run, tmp_path, CALENDAR.replace("2026-12-25", "2025-12-25"), "2025-03-01T00:00:00Z"
    )
    spec.write_text(spec.read_text().replace("timeZone: UTC", "timeZone: America/New_York"))
    assert run("validate", str(spec)).exit_code == 0
    window = ("--from", "2025-03-01T00:00:00Z", "--to", "2025-03-10T00:00:00Z")
    previewed = run("preview", str(spec), *window)
    assert previewed.exit_code == 0, previewed.output
