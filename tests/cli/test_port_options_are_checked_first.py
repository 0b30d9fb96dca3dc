"""Every port option is checked (1–65535; the sink's 0 picks a free port) before anything runs.

An out-of-range port is one line naming the option, exit 2, and nothing is written: no data
directory, no ``dev.lock``, no Temporal started.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("dev", "--port", "-1"), "--port=-1"),
        (("dev", "--port", "0"), "--port=0"),
        (("dev", "--ui-port", "65536"), "--ui-port=65536"),
        (("dev", "--sink-port", "0"), "--sink-port=0"),
        (("dev", "--metrics-port", "70000"), "--metrics-port=70000"),
        (("dev", "--server-metrics-port", "-5"), "--server-metrics-port=-5"),
        (("dev", "--console-port", "0"), "--console-port=0"),
        (("console", "--port", "0"), "--port=0"),
        (("sink", "--port", "65536"), "--port=65536"),
        (("worker", "--metrics-port", "0"), "--metrics-port=0"),
        (("worker", "--sdk-metrics-port", "99999"), "--sdk-metrics-port=99999"),
    ],
)
def test_an_out_of_range_port_is_one_line_naming_the_option(
    run: Callable[..., Result], tmp_path: Path, args: tuple[str, ...], named: str
) -> None:
    data = tmp_path / "dev-data"
    extra = ("--data-dir", str(data)) if args[0] == "dev" else ()
    result = run(*args, *extra)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and named in lines[0] and "65535" in lines[0], result.output
    assert not data.exists() and not (tmp_path / "data").exists()
