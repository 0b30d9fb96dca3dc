"""Bad input and bad places are one clear line with exit 2 — never markup damage or a traceback.

That holds for the usage errors Click finds too (issue 10's fresh-user trial): a missing argument,
an unknown option or command, a value out of an option's range are one ``error:`` line on stderr,
never Click's usage block; an out-of-range value names the option, the value and both bounds.
The wording the same trial found: counts with the right plural, help without an escaped ``%%``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

SEED = Path(__file__).parents[2] / "examples" / "daily-ops-summary.yaml"
STATES = (
    "PLANNED, DUE, DISPATCHING, RUNNING, SUCCEEDED, RETRY_WAIT, UNKNOWN_EFFECT, FAILED, "
    "SKIPPED_GAP, MISFIRE_EXPIRED, CANCELLED, SKIPPED_OVERLAP, SKIPPED_HOLIDAY, EXCLUDED"
)


def test_brackets_in_values_and_paths_are_printed_verbatim(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "[red]"
    folder.mkdir()
    good = folder / "x.yaml"
    good.write_text(SEED.read_text())
    bad = tmp_path / "bad.yaml"
    bad.write_text(SEED.read_text().replace("scheduleId: daily-ops-summary", 'scheduleId: "[/]"'))
    result = run("validate", str(good), str(bad))
    assert result.exit_code == 2
    assert "[red]/x.yaml" in result.output
    assert "scheduleId='[/]'" in result.output
    assert "scheduleId='[/]': must be 1–63 characters of a-z, 0-9 and '-'" in result.output
    assert "Traceback" not in result.output


def test_an_unusable_data_directory_is_one_line_exit_2(run, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("ALMANAC_DATA_DIR", str(blocker))
    for args in (("db", "upgrade"), ("tzdb", "add", "2022b")):
        result = run(*args)
        assert result.exit_code == 2, (args, result.output)
        assert result.output.count("\n") == 1 and "error:" in result.output


def one_error_line(result) -> str:  # type: ignore[no-untyped-def]
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ") and "Usage:" not in result.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("upcoming", "nightly", "-n", "50"), "error: -n=50: must be between 1 and 20"),
        (("upcoming", "nightly", "-n", "0"), "error: -n=0: must be between 1 and 20"),
        (("status", "nightly", "-n", "21"), "error: -n=21: must be between 0 and 20"),
        (("sink", "--port", "-1"), "error: --port=-1: must be between 0 and 65535"),
    ],
)
def test_a_value_out_of_range_names_the_option_the_value_and_the_bounds(
    run, args: tuple[str, ...], expected: str
) -> None:  # type: ignore[no-untyped-def]
    line = one_error_line(run(*args))
    assert line.startswith(expected), line
    assert f"(see `almanac {args[0]} --help`)" in line


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("apply",), "almanac apply: Missing argument 'spec_file'"),
        (("status", "--bogus"), "almanac status: No such option: --bogus"),
        (("validate", "--bogus", str(SEED)), "almanac validate: No such option: --bogus"),
        (("ledger", "list"), "almanac ledger list: Missing argument 'schedule'"),
        (("ledger", "bogus"), "almanac ledger: No such command 'bogus'"),
        (("bogus",), "almanac: No such command 'bogus'"),
    ],
)
def test_a_usage_error_is_one_line_naming_the_command(run, args, words: str) -> None:  # type: ignore[no-untyped-def]
    assert one_error_line(run(*args)).startswith(f"error: {words}")


def test_a_group_typed_alone_still_shows_its_help(run) -> None:  # type: ignore[no-untyped-def]
    result = run("ledger")
    assert "Usage: almanac ledger" in result.output and "error:" not in result.output


def test_an_unknown_state_is_refused_with_the_valid_ones_named(run) -> None:  # type: ignore[no-untyped-def]
    line = one_error_line(run("ledger", "list", "nightly", "--state", "DONE", "--state", "DUE"))
    assert line == f"error: --state='DONE': unknown state (one of {STATES})"


def test_counts_are_singular_for_one(run) -> None:  # type: ignore[no-untyped-def]
    # The seed runs daily at 02:30 New York: one record in this day.
    result = run(
        "preview", str(SEED), "--from", "2026-11-02T00:00:00Z", "--to", "2026-11-03T00:00:00Z"
    )
    assert result.exit_code == 0, result.output
    assert "\n1 record, 0 decided by a DST policy" in result.stdout
    two = run(
        "preview", str(SEED), "--from", "2026-11-02T00:00:00Z", "--to", "2026-11-04T00:00:00Z"
    )
    assert "\n2 records, 0 decided by a DST policy" in two.stdout


def test_help_shows_a_plain_percent_sign(run) -> None:  # type: ignore[no-untyped-def]
    result = run("rollout", "--help")
    assert result.exit_code == 0
    assert "%%" not in result.stdout and "percentage (0 to 100)" in result.stdout


@pytest.mark.parametrize(
    ("window", "named"),
    [
        (("--from", "2026-01-01T00:00:00Z", "--to", "9999-12-31T00:00:00Z"), "--to="),
        (("--from", "9999-12-30T00:00:00Z"), "--from="),  # the default --to would overflow
    ],
)
def test_a_preview_window_past_the_last_instant_is_one_line(run, window, named) -> None:  # type: ignore[no-untyped-def]
    # The trial saw an OverflowError traceback: the local window is widened by a day each side.
    line = one_error_line(run("preview", str(SEED), *window))
    assert named in line and "9999-12-01T00:00:00Z" in line


def test_a_metrics_port_in_use_is_named(tmp_path: Path) -> None:
    # Before any Temporal call: the worker serves its metrics first.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {
            **os.environ,
            "ALMANAC_DATA_DIR": str(tmp_path / "data"),
            "ALMANAC_TEMPORAL_ADDRESS": "127.0.0.1:1",
        }
        almanac = str(Path(sys.executable).parent / "almanac")
        result = subprocess.run(
            [almanac, "worker", "--metrics-port", str(port)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert result.returncode == 1, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and f"127.0.0.1:{port}" in last and "in use" in last


def test_a_preview_to_before_the_default_from_names_the_default(run) -> None:  # type: ignore[no-untyped-def]
    # The trial gave only --to and was told it was "before --from": --from defaults to cutoverAt.
    line = one_error_line(run("preview", str(SEED), "--to", "2026-10-01T00:00:00Z"))
    assert "--to='2026-10-01T00:00:00Z'" in line
    assert "before the default --from, cutoverAt 2026-11-01T06:00:00Z" in line


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        # A nested group's variable is named with its own prefix, as the user set it.
        ("ALMANAC_TEMPORAL_TLS", "maybe", "ALMANAC_TEMPORAL_TLS='maybe': must be true or false"),
        ("ALMANAC_MAX_CLOCK_SKEW_SECONDS", "0", "ALMANAC_MAX_CLOCK_SKEW_SECONDS='0': must be more"),
        ("ALMANAC_MAX_CLOCK_SKEW_SECONDS", "soon", "='soon': must be a number"),
    ],
)
def test_a_bad_setting_is_named_as_set_and_said_in_words(  # type: ignore[no-untyped-def]
    run, monkeypatch, name: str, value: str, message: str
) -> None:
    monkeypatch.setenv(name, value)
    result = run("status", "some-schedule")
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.output
    assert "Input should" not in result.output
