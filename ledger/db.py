"""Connecting to the ledger and running one transaction, with bounded retries.

Backends:

- **SQLite** (the embedded default, a file): WAL journal, ``busy_timeout``, foreign keys on, and
  every write transaction opened with ``BEGIN IMMEDIATE``. pysqlite's own transaction handling is
  switched off and SQLAlchemy's ``begin`` event issues the ``BEGIN``, so a writer takes SQLite's
  write lock *before* it reads: two writers never both read a state and then race to update it,
  they queue on the lock (``busy_timeout``) instead of failing at commit with SQLITE_BUSY.
  Read-only transactions open with a deferred ``BEGIN`` and never block writers (WAL).
- **PostgreSQL** through psycopg 3 (``postgresql+psycopg://…``), READ COMMITTED. Races are decided
  by row locks: every operation that depends on the gate locks the gate row (``FOR SHARE`` to read
  it, ``UPDATE`` to change it), then compares-and-sets the occurrence row.

Transient failures (serialization failures, deadlocks, SQLite busy after the timeout, dropped
connections) are retried a bounded number of times with the whole transaction; every other driver
error is translated once into :mod:`ledger.errors`.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ledger.errors import (
    ClaimLost,
    InvalidLedgerUrl,
    LedgerDataError,
    LedgerUnavailable,
    is_transient,
    translate,
)

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine

T = TypeVar("T")

SQLITE_BUSY_TIMEOUT_MS = 30_000
"""How long a SQLite writer waits for the write lock before the attempt counts as transient."""

DEFAULT_RETRIES = 5
"""Attempts per transaction on transient errors (the first included)."""

_READ_ONLY = "almanac_read_only"


def create_ledger_engine(url: str, **kwargs: Any) -> Engine:
    """Create an engine for a ledger URL with the backend settings described above.

    Args:
        url: a SQLAlchemy URL: ``sqlite:///path/ledger.sqlite3`` or ``postgresql+psycopg://…``
            (``postgresql://`` is read as psycopg 3).
        **kwargs: passed to :func:`sqlalchemy.create_engine`.

    Raises:
        InvalidLedgerUrl: not a URL, or an unsupported backend (only SQLite and PostgreSQL are);
            the message does not repeat the URL (it may hold a password).

    """
    # SQLAlchemy loads when a ledger is opened, not when the package is imported (``ledger``).
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError) as exc:
        why = "a port that is not a number" if "int()" in str(exc) else "not a URL"
        raise InvalidLedgerUrl(
            f"invalid ledger URL ({why}): use sqlite:///PATH or "
            "postgresql+psycopg://USER@HOST:PORT/DATABASE"
        ) from None
    if parsed.get_backend_name() == "postgresql" and parsed.get_driver_name() != "psycopg":
        parsed = parsed.set(drivername="postgresql+psycopg")
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        if parsed.database in (None, "", ":memory:"):
            raise InvalidLedgerUrl(
                "the SQLite ledger must be a file (a shared in-memory DB is unsafe)"
            )
        engine = create_engine(parsed, **kwargs)
        _configure_sqlite(engine)
        return engine
    if backend == "postgresql":
        kwargs.setdefault("pool_pre_ping", True)
        kwargs.setdefault("isolation_level", "READ COMMITTED")
        return create_engine(parsed, **kwargs)
    raise InvalidLedgerUrl(
        f"unsupported ledger backend {backend!r}: use sqlite or postgresql+psycopg"
    )


def _configure_sqlite(engine: Engine) -> None:
    from sqlalchemy import event

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" event emit BEGIN itself (pysqlite's implicit BEGIN is deferred).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        read_only = connection.get_execution_options().get(_READ_ONLY, False)
        connection.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")


def _not_text() -> LedgerDataError:
    # A str holding an unpaired surrogate (a byte that was not UTF-8, as Python decodes command
    # lines): the driver cannot encode it, and the same write would fail again.
    return LedgerDataError("a text value is not valid Unicode (an unpaired surrogate); not stored")


class Ledger:
    """A handle on one ledger database: an engine plus the transaction runner.

    Every public ledger operation takes a ``Ledger`` first and runs exactly one transaction
    through :meth:`write` (or :meth:`read`).

    Args:
        engine: from :func:`create_ledger_engine`.
        retries: attempts per transaction on transient errors (>= 1).

    """

    def __init__(self, engine: Engine, *, retries: int = DEFAULT_RETRIES) -> None:
        if retries < 1:
            raise ValueError("retries must be at least 1")
        self.engine = engine
        self.retries = retries

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> Ledger:
        """Open a ledger at ``url`` (see :func:`create_ledger_engine`); no schema is created."""
        return cls(create_ledger_engine(url, **kwargs))

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self.engine.dialect.name

    def write(self, work: Callable[[Connection], T]) -> T:
        """Run ``work`` in one write transaction; commit if it returns, roll back if it raises.

        The whole transaction is re-run on transient errors (and on :class:`ClaimLost` raised by
        a bulk compare-and-set), at most ``retries`` times in all, with a short jittered backoff.

        Raises:
            LedgerUnavailable: the database is unreachable or kept failing transiently.
            LedgerIntegrityError: a schema constraint rejected the write.
            ValueError: a column type refused a value (a naive instant, an aware local time).
            LedgerError: whatever ``work`` raised on purpose.

        """
        return self._run(work, read_only=False)

    def read(self, work: Callable[[Connection], T]) -> T:
        """Run ``work`` in one read-only transaction (deferred ``BEGIN`` on SQLite)."""
        return self._run(work, read_only=True)

    def _run(self, work: Callable[[Connection], T], *, read_only: bool) -> T:
        from sqlalchemy import exc as sa_exc  # loaded already: the engine is SQLAlchemy's

        for attempt in range(1, self.retries + 1):
            try:
                with self.engine.connect() as connection:
                    if read_only:
                        connection = connection.execution_options(**{_READ_ONLY: True})
                    with connection.begin():
                        return work(connection)
            except ClaimLost:
                if read_only or attempt == self.retries:
                    raise
            except sa_exc.DBAPIError as error:
                if attempt == self.retries or not is_transient(error):
                    raise translate(error, self.engine.url) from error
            except UnicodeEncodeError:
                raise _not_text() from None
            except sa_exc.StatementError as error:
                if isinstance(error.orig, UnicodeEncodeError):
                    raise _not_text() from None
                if isinstance(error.orig, ValueError | TypeError):
                    # A value our column types refused (e.g. a naive instant): the caller's bug.
                    raise error.orig from error
                raise translate(error, self.engine.url) from error
            except sa_exc.SQLAlchemyError as error:
                raise translate(error, self.engine.url) from error
            time.sleep(random.uniform(0, 0.01 * 2**attempt))
        raise LedgerUnavailable("unreachable")  # pragma: no cover

    def dispose(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()
