"""Open the ledger a command names: ``--url``, else the settings' URL; exit 1 when unusable.

Shared by the command modules that read or write the ledger directly (``ledger``, ``rollout``,
``shadow``, ``db``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from almanac.cli.output import EXIT_OPERATIONAL, almanac_settings, fail

if TYPE_CHECKING:
    from ledger import Ledger

UrlOption = Annotated[
    str | None,
    typer.Option("--url", help="Ledger URL (default: ALMANAC_LEDGER_URL, else the SQLite file)."),
]


def ledger_url(url: str | None) -> str:
    """The ``--url`` option, else the settings' ledger URL (``ALMANAC_LEDGER_URL`` or SQLite)."""
    return url or almanac_settings().resolved_ledger_url


@contextmanager
def open_ledger(url: str | None) -> Iterator[Ledger]:
    """Open the ledger; exit 1 if it is unreachable or not migrated to the newest schema."""
    from ledger import Ledger, LedgerError, LedgerUnavailable, ScheduleNotFound
    from ledger.migrate import current, head

    resolved = ledger_url(url)
    if resolved.startswith("sqlite:///"):
        path = Path(resolved.removeprefix("sqlite:///"))
        if not path.exists():
            fail(f"no ledger at {path}: run `almanac db upgrade`", EXIT_OPERATIONAL)
    try:
        handle = Ledger.from_url(resolved)
    except LedgerError as exc:
        fail(str(exc))
    try:
        try:
            at = current(handle.engine)
        except Exception as exc:  # the driver's own error: unreachable, refused, bad auth
            from ledger.errors import translate

            fail(str(translate(exc, handle.engine.url)), EXIT_OPERATIONAL)
        if at != head():
            fail(
                f"ledger schema is at {at or 'nothing'}, not {head()}: run `almanac db upgrade`",
                EXIT_OPERATIONAL,
            )
        yield handle
    except LedgerUnavailable as exc:
        fail(f"ledger unavailable: {exc}", EXIT_OPERATIONAL)
    except ScheduleNotFound as exc:
        fail(f"{exc}{_did_you_mean(handle, exc.schedule_id)}")
    except LookupError as exc:
        fail(str(exc))
    except LedgerError as exc:
        fail(str(exc))
    finally:
        handle.dispose()


def _did_you_mean(handle: Ledger, schedule_id: str) -> str:
    """``; did you mean every-10-seconds?`` for a scheduleId close to one the ledger knows."""
    from almanac.readings import nearest_schedule_id

    meant = nearest_schedule_id(handle, schedule_id)
    return f"; did you mean {meant}?" if meant else ""
