"""The overview's reads do not grow with its rows: schedules whose next run lies beyond the
materialized horizon are projected from facts read for the whole page (``schedule_facts``).

Golden value from the calendar: after 2026-10-22 the next 29 February is in 2028 (2027 is not a
leap year), 08:00 in London, which keeps GMT (+00:00) in February.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from scenario import NOW, console_holding, spec
from sqlalchemy import event
from starlette.testclient import TestClient
from test_console_pages import text

from almanac.console import ConsoleSettings, create_app
from almanac.settings import AlmanacSettings
from ledger import Ledger

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx`:DeprecationWarning")

PROJECTED = "2028-02-29 08:00:00 +00:00 2028-02-29T08:00:00Z beyond the horizon"


@dataclass
class Reads:
    statements: int = 0
    transactions: int = 0


@contextmanager
def counted(ledger: Ledger) -> Iterator[Reads]:
    """The SQL statements and transactions ``ledger``'s engine runs inside the block."""
    reads = Reads()

    def statement(*_: Any) -> None:
        reads.statements += 1

    def begin(*_: Any) -> None:
        reads.transactions += 1

    event.listen(ledger.engine, "before_cursor_execute", statement)
    event.listen(ledger.engine, "begin", begin)
    try:
        yield reads
    finally:
        event.remove(ledger.engine, "before_cursor_execute", statement)
        event.remove(ledger.engine, "begin", begin)


def add_leap_day_schedules(ledger: Ledger, settings: Any, console: Any, ids: range) -> None:
    """Publish a yearly 29 February schedule per ID, materialized 14 days as a worker leaves it."""
    for n in ids:
        leap = spec(
            scheduleId=f"leap-{n}",
            timeZone="Europe/London",
            rule="FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYHOUR=8;BYMINUTE=0",
        )
        console_holding(ledger, settings, console, leap)


def overview_reads(client: TestClient, ledger: Ledger, rows: int) -> Reads:
    client.get("/schedules")  # warm: the first request's one-time reads are not the page's
    with counted(ledger) as reads:
        page = text(client.get("/schedules").text)
    assert page.count(PROJECTED) == rows
    return reads


def test_overview_reads_do_not_grow_with_the_rows_it_projects(
    ledger: Ledger, settings: AlmanacSettings, console_settings: ConsoleSettings
) -> None:
    client = TestClient(create_app(ledger, settings, console_settings, clock=lambda: NOW))
    add_leap_day_schedules(ledger, settings, console_settings, range(2))
    two = overview_reads(client, ledger, 2)
    add_leap_day_schedules(ledger, settings, console_settings, range(2, 6))
    six = overview_reads(client, ledger, 6)
    assert (six.statements, six.transactions) == (two.statements, two.transactions)
