"""``timecontract.format_duration``: durations print as ISO 8601 (``PT5S``), never ``0:00:05``.

Expected texts are written by hand from ISO 8601-1 §5.5.2 (``PnDTnHnMnS``, zero parts left out,
``PT0S`` for zero) and agree with the spec's own ``lateness`` values (``PT5M`` default).
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from timecontract import format_duration


@pytest.mark.parametrize(
    ("duration", "text"),
    [
        (timedelta(seconds=5), "PT5S"),
        (timedelta(0), "PT0S"),
        (timedelta(minutes=5), "PT5M"),
        (timedelta(hours=1, minutes=30), "PT1H30M"),
        (timedelta(hours=2, seconds=1), "PT2H1S"),
        (timedelta(days=1, hours=2), "P1DT2H"),
        (timedelta(days=366), "P366D"),
        (timedelta(milliseconds=500), "PT0.5S"),
        (timedelta(seconds=-5), "-PT5S"),
    ],
)
def test_format_duration(duration: timedelta, text: str) -> None:
    assert format_duration(duration) == text
