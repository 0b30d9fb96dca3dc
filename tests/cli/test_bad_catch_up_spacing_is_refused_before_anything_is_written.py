"""A zero or negative ``catchUpSpacing`` is one line naming the field and value, exit 2, no write.

``validate`` and ``apply`` refuse it before the ledger or Temporal is touched (the Temporal address
is unreachable here, and the data directory gets no ledger file).
"""

from __future__ import annotations

from pathlib import Path

import pytest

SPEC = """\
schema: scheduleSpec.v1
scheduleId: paced
revision: 1
timeZone: Etc/UTC
tzdbVersion: 2026a
rule: FREQ=HOURLY
catchUpSpacing: {value}
cutoverAt: "2026-11-01T00:00:00Z"
action:
  name: http
  parameters:
    url: https://example.com/hook
"""


@pytest.mark.parametrize("value", ["PT0S", "-PT10S"])
@pytest.mark.parametrize("command", ["validate", "apply"])
def test_bad_spacing_exits_2_naming_it_and_writes_nothing(  # type: ignore[no-untyped-def]
    run, tmp_path: Path, command: str, value: str
) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC.format(value=value))
    result = run(command, str(path))
    assert result.exit_code == 2, result.output
    assert f"catchUpSpacing={value!r}" in result.output
    assert "between PT1S and P1D" in result.output
    assert not (tmp_path / "data" / "ledger.sqlite3").exists()
