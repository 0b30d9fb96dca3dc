"""``almanac db``: the ledger database's migrations.

Exit codes as in ``almanac.cli.output``: 0 success; 2 invalid input (a bad URL, a directory that
cannot be created); 1 an operational failure (the database unreachable).
"""

from __future__ import annotations

from pathlib import Path

from almanac.cli.ledger_access import UrlOption, ledger_url
from almanac.cli.output import (
    EXIT_OPERATIONAL,
    JsonOption,
    command_group,
    fail,
    out,
    print_json,
)

db_app, mount = command_group(
    "db",
    "The ledger database: apply its migrations.",
)


@db_app.command("upgrade")
def db_upgrade(url: UrlOption = None, as_json: JsonOption = False) -> None:
    """Apply the ledger's migrations (creates the SQLite file and its directory if needed).

    Says what it did: created the schema, upgraded it from one revision to another, or found it
    already at the newest. With --json: an object with revision (the schema's Alembic
    revision afterwards), from (before; null for a new ledger) and url (without its password).
    """
    from ledger import LedgerError, LedgerUnavailable
    from ledger.migrate import revision_of, upgrade

    resolved = ledger_url(url)
    if resolved.startswith("sqlite:///"):
        folder = Path(resolved.removeprefix("sqlite:///")).parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            fail(f"cannot create the ledger's directory {folder}: {exc.strerror}")
    try:
        before = revision_of(resolved)
        revision = upgrade(resolved)
    except LedgerUnavailable as exc:
        fail(f"ledger unavailable: {exc}", EXIT_OPERATIONAL)
    except LedgerError as exc:
        fail(str(exc))
    if as_json:
        print_json({"revision": revision, "from": before, "url": _redact(resolved)})
        return
    if before is None:
        done = f"created at {revision}"
    elif before == revision:
        done = f"already at {revision}"
    else:
        done = f"upgraded {before} → {revision}"
    out().print(f"ledger schema {done} ({_redact(resolved)})", soft_wrap=True)


def _redact(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
