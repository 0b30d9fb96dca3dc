"""``validate`` and ``validate --json`` show each problem as one readable line, field and value.

Found by a fresh-user trial: a spec with one ``rdates`` entry too many printed a 39 KB line of
Python ``repr``s. The rule (``almanac validate`` docstring, docs/reference/cli.md): every problem
names the field and the value, the value shown in at most ``MAX_SHOWN`` characters.
"""

from __future__ import annotations

import json
from pathlib import Path

from timecontract.calendar_spec import MAX_DATES
from timecontract.errors import MAX_SHOWN

HEAD = """\
schema: scheduleSpec.v1
scheduleId: readable
revision: 3
timeZone: Etc/UTC
tzdbVersion: 2026a
cutoverAt: "2026-11-01T00:00:00Z"
"""


def _validate(run, path: Path) -> tuple[str, dict[str, object]]:  # type: ignore[no-untyped-def]
    text = run("validate", str(path))
    assert text.exit_code == 2, text.output
    assert "Traceback" not in text.output
    as_json = run("validate", "--json", str(path))
    assert as_json.exit_code == 2, as_json.output
    [report] = json.loads(as_json.stdout)
    return text.output, report


def test_too_many_rdates_is_one_short_line_naming_the_count_and_the_bound(  # type: ignore[no-untyped-def]
    run, tmp_path: Path
) -> None:
    path = tmp_path / "rdates.yaml"
    dates = "".join(f"  - 2027-01-01T{n // 60:02d}:{n % 60:02d}:00\n" for n in range(MAX_DATES + 1))
    path.write_text(HEAD + "rdates:\n" + dates)
    output, report = _validate(run, path)
    [problem] = report["problems"]  # type: ignore[misc]
    assert problem["field"] == "rdates"
    assert problem["problem"] == f"has {MAX_DATES + 1} entries; at most {MAX_DATES} are allowed"
    assert problem["value"].startswith("[2027-01-01T00:00:00, 2027-01-01T00:01:00, ")
    assert len(problem["value"]) <= MAX_SHOWN + len(f" ({MAX_DATES + 1} entries)")
    [line] = [line for line in output.splitlines() if "rdates=" in line]
    assert len(line) < 3 * MAX_SHOWN and "datetime" not in output
    assert (report["scheduleId"], report["revision"]) == ("readable", 3)


def test_a_key_given_twice_still_names_the_schedule_in_json(  # type: ignore[no-untyped-def]
    run, tmp_path: Path
) -> None:
    # The documented contract: an invalid file names scheduleId and revision when each is valid.
    path = tmp_path / "twice.yaml"
    path.write_text(HEAD + "rule: FREQ=DAILY\nrule: FREQ=HOURLY\n")
    output, report = _validate(run, path)
    [problem] = report["problems"]  # type: ignore[misc]
    assert (problem["field"], problem["value"]) == ("rule", "FREQ=HOURLY")
    assert "rule='FREQ=HOURLY': given more than once (again on line 8)" in output
    assert (report["scheduleId"], report["revision"]) == ("readable", 3)
