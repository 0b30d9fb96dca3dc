"""Set-based bulk inserts: one short statement per table, the rows sent as one array parameter.

Materialization writes three rows per occurrence (occurrence, slot claim, event). Sent as
SQLAlchemy "insertmanyvalues" batches, every 1,000 rows became a statement with ~17,000 bound
parameters that the driver re-parsed and SQLAlchemy re-processed value by value. Here each table
gets one statement (PostgreSQL) or one per ~2,000 rows (SQLite):

- **PostgreSQL**: ``INSERT INTO t (c…) SELECT * FROM unnest(%s::text[], %s::int4[], …)
  [ON CONFLICT DO NOTHING] [RETURNING k]`` — one parameter per *column*, typed by an explicit
  array cast (never a length-limited one: ``::varchar(n)`` would truncate silently, whereas the
  column's own type rejects an overlong value).
- **SQLite**: ``INSERT INTO t (c…) VALUES (?, …), (?, …), … [ON CONFLICT DO NOTHING]
  [RETURNING k]``, as many rows per statement as SQLite's parameter limit allows and the rest
  in powers of two (:func:`statement_sizes`: few statement shapes, each parsed once per
  connection), the values bound positionally by the sqlite3 module (SQLite parses such a
  statement in C; the cost was in SQLAlchemy's per-value processing). Measured against
  ``executemany`` (no ``RETURNING``) and ``INSERT … SELECT … FROM json_each(?)``, it was the
  fastest of the three. ``RETURNING`` runs only for a statement whose inserted-row count does
  not already say which rows went in (:func:`_sqlite_insert`).

:func:`pg_arrays` gives the array parameters of a PostgreSQL ``unnest(…)`` on their own, for a
statement that does more than insert the rows (materialization's one-statement write,
:mod:`ledger.creation`).

The statements go through ``Connection.exec_driver_sql``, so they run on the caller's connection,
in the caller's transaction, with the same constraints, indexes and ``ON CONFLICT`` semantics as
the Core inserts they replace. Values are converted here exactly as the column types would (a
test compares them with the SQLAlchemy bind processors): aware instants only (a naive one raises
``ValueError``), stored on SQLite as SQLAlchemy's ``YYYY-MM-DD HH:MM:SS.ffffff`` UTC text;
``nominal_local`` as ``YYYY-MM-DDTHH:MM:SS``; JSON as ``json.dumps`` text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from itertools import chain
from typing import Any

from sqlalchemy import (
    JSON,
    ColumnElement,
    Connection,
    Dialect,
    Select,
    String,
    Table,
    all_,
    any_,
    bindparam,
    false,
    func,
    literal_column,
    select,
    true,
)
from sqlalchemy.dialects import postgresql
from sqlalchemy.types import TypeEngine

from ledger.types import NominalLocal, UtcDateTime

Converter = Callable[[Any], Any]

_ZERO = timedelta(0)


def utc_instant(value: datetime) -> datetime:
    """Check an instant is aware and return it in UTC (as :class:`UtcDateTime` does).

    Raises:
        ValueError: a naive datetime.
        TypeError: not a datetime.

    """
    if not isinstance(value, datetime):
        raise TypeError(f"expected an aware datetime, got {type(value).__name__}")
    offset = value.utcoffset()
    if offset is None:
        raise ValueError(f"naive datetime {value.isoformat()} where an aware UTC instant belongs")
    return value if offset == _ZERO and value.tzinfo is UTC else value.astimezone(UTC)


def sqlite_instant_text(value: datetime) -> str:
    """An aware instant as SQLAlchemy's SQLite ``DATETIME`` text of its UTC wall time.

    Raises:
        ValueError: a naive datetime.
        TypeError: not a datetime.

    """
    if value.__class__ is datetime and value.tzinfo is UTC:
        # The common case in one call: ``isoformat`` pads the year to four digits and ends an
        # aware instant with its offset (``+00:00``), which the slice drops.
        return value.isoformat(" ", "microseconds")[:26]
    return utc_instant(value).replace(tzinfo=None).isoformat(" ", "microseconds")


def nominal_local_text(value: datetime) -> str:
    """A naive whole-second wall time as ``YYYY-MM-DDTHH:MM:SS`` (as :class:`NominalLocal` does).

    Raises:
        ValueError: an aware or fractional value.

    """
    if value.tzinfo is not None:
        raise ValueError(f"aware datetime {value.isoformat()} where a naive local time belongs")
    if value.microsecond:
        raise ValueError(f"nominal local time {value.isoformat()} has fractional seconds")
    # The same text, three times faster, wherever ``strftime``'s ``%Y`` is four digits (it does
    # not pad years before 1000, ``isoformat`` does).
    return value.isoformat() if value.year >= 1000 else value.strftime("%Y-%m-%dT%H:%M:%S")


_TWO_DIGITS = tuple(f"{n:02d}" for n in range(60))


class StoredTimes:
    """SQLite's stored text of many instants and local times, each day's date formatted once.

    The same text as :func:`sqlite_instant_text` and :func:`nominal_local_text`, with the same
    errors, for a writer converting a window's values (consecutive values mostly share a day):
    a UTC instant or a local time after the year 999 is its day's ``YYYY-MM-DD`` prefix, kept
    from the previous value, followed by its time of day; any other value goes through the
    one-value function. Why: formatting the whole date-time per value was most of the cost of
    building a materialized row.
    """

    __slots__ = ("_local_day", "_local_prefix", "_utc_day", "_utc_prefix")

    def __init__(self) -> None:
        self._utc_day: tuple[int, int, int] | None = None
        self._utc_prefix = ""
        self._local_day: tuple[int, int, int] | None = None
        self._local_prefix = ""

    def instant(self, value: datetime) -> str:
        """:func:`sqlite_instant_text` of ``value`` (``YYYY-MM-DD HH:MM:SS.ffffff``, UTC)."""
        if value.__class__ is not datetime or value.tzinfo is not UTC:
            return sqlite_instant_text(value)
        day = (value.year, value.month, value.day)
        if day != self._utc_day:
            self._utc_day = day
            self._utc_prefix = value.isoformat(" ", "microseconds")[:11]
        two = _TWO_DIGITS
        return (
            f"{self._utc_prefix}{two[value.hour]}:{two[value.minute]}:{two[value.second]}"
            f".{value.microsecond:06d}"
        )

    def local(self, value: datetime) -> str:
        """:func:`nominal_local_text` of ``value`` (``YYYY-MM-DDTHH:MM:SS``)."""
        if value.tzinfo is not None or value.microsecond or value.year < 1000:
            return nominal_local_text(value)  # raises, or writes a year before 1000 as it does
        day = (value.year, value.month, value.day)
        if day != self._local_day:
            self._local_day = day
            self._local_prefix = value.isoformat()[:11]
        two = _TWO_DIGITS
        return f"{self._local_prefix}{two[value.hour]}:{two[value.minute]}:{two[value.second]}"


def _nullable(convert: Converter) -> Converter:
    def converted(value: Any) -> Any:
        return None if value is None else convert(value)

    return converted


def _json_text(value: Any) -> str | None:
    return None if value is None else json.dumps(value)


def _converter(column_type: Any, dialect: str) -> Converter | None:
    if isinstance(column_type, UtcDateTime):
        return _nullable(sqlite_instant_text if dialect == "sqlite" else utc_instant)
    if isinstance(column_type, NominalLocal):
        return _nullable(nominal_local_text)
    if isinstance(column_type, JSON):
        return _json_text
    return None


_LENGTH = re.compile(r"\(\d+\)")


def pg_type(column_type: TypeEngine[Any], dialect: Dialect) -> str:
    """The column's PostgreSQL type without a length (a cast to ``varchar(n)`` truncates)."""
    return _LENGTH.sub("", column_type.compile(dialect=dialect))


def _pg_array_type(column_type: TypeEngine[Any], dialect: Dialect) -> str:
    return pg_type(column_type, dialect) + "[]"


def pg_arrays(
    table: Table, columns: Sequence[str], by_column: Sequence[Sequence[Any]], dialect: Dialect
) -> dict[str, list[Any]]:
    """Array parameters ``c0``, ``c1``, … (``columns`` order), converted as each column type would.

    Raises:
        ValueError: a value a column type refuses (a naive instant, an aware local time).

    """
    converters = [_converter(table.c[name].type, dialect.name) for name in columns]
    converted = _convert(converters, list(by_column))
    return {f"c{i}": list(values) for i, values in enumerate(converted)}


def _convert(
    converters: Sequence[Converter | None], by_column: list[Sequence[Any]]
) -> list[Sequence[Any]]:
    for i, convert in enumerate(converters):
        if convert is _json_text:
            by_column[i] = list(map(convert, by_column[i]))
        elif convert is not None:
            # Instants: convert each distinct value once (creation times repeat on every row).
            distinct = {v: convert(v) for v in set(by_column[i])}
            by_column[i] = [distinct[v] for v in by_column[i]]
    return by_column


SQLITE_MAX_PARAMETERS = 32_766
"""SQLite's default ``SQLITE_MAX_VARIABLE_NUMBER`` since 3.32 (``RETURNING`` needs 3.35 anyway)."""


@dataclass(frozen=True, slots=True)
class _Plan:
    """A table's bulk statement: ``head`` + (``unnest(…)`` | ``VALUES (…), …``) + ``tail``.

    ``tail`` is the conflict clause, followed by ``RETURNING`` of the column at ``key`` in the
    rows (``returning``) where the statement asks for it.
    """

    head: str
    source: str
    tail: str
    returning: str
    key: int | None
    converters: tuple[Converter | None, ...]

    def sql(self, rows: int, *, returned: bool = True) -> str:
        """The statement for ``rows`` rows (the PostgreSQL one does not depend on it).

        ``returned``: with the ``RETURNING`` clause, if the plan has one.
        """
        tail = (
            f"{self.tail} RETURNING {self.returning}" if returned and self.returning else self.tail
        )
        if self.source.startswith("SELECT"):
            return f"{self.head} {self.source}{tail}"
        return _values_sql(self.head, self.source, tail, rows)


@cache
def _values_sql(head: str, row: str, tail: str, rows: int) -> str:
    return f"{head} VALUES {', '.join([row] * rows)}{tail}"


@cache
def _plan(
    table: Table,
    columns: tuple[str, ...],
    sa_dialect: Dialect,
    ignore_conflicts: bool,
    returning: str,
) -> _Plan:
    dialect = sa_dialect.name
    converters = tuple(_converter(table.c[name].type, dialect) for name in columns)
    head = f"INSERT INTO {table.name} ({', '.join(columns)})"
    if dialect == "postgresql":
        types = [_pg_array_type(table.c[name].type, sa_dialect) for name in columns]
        source = f"SELECT * FROM unnest({', '.join(f'%b::{t}' for t in types)})"
    else:
        source = f"({', '.join('?' * len(columns))})"
    tail = " ON CONFLICT DO NOTHING" if ignore_conflicts else ""
    key = columns.index(returning) if returning in columns else None
    return _Plan(head, source, tail, returning, key, converters)


def bulk_insert(
    connection: Connection,
    table: Table,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    ignore_conflicts: bool,
    returning: str = "",
) -> list[Any]:
    """Insert ``rows`` (tuples in ``columns`` order) into ``table``, set-based.

    Args:
        connection: the caller's connection (PostgreSQL or SQLite), inside its transaction.
        table: the target table.
        columns: the column names the tuples hold; other columns take their defaults.
        rows: the rows, Python values as the column types accept them.
        ignore_conflicts: append ``ON CONFLICT DO NOTHING`` (a row whose unique key exists is
            skipped; concurrent inserters of one key race on the unique index).
        returning: a column to return for each row actually inserted ("": return nothing); on
            SQLite one of ``columns``, stored as bound (a text key), see :func:`_sqlite_insert`.

    Returns:
        The ``returning`` column of the inserted rows (empty without ``returning``).

    Raises:
        ValueError: a value a column type refuses (a naive instant, an aware local time).

    """
    if not rows:
        return []
    plan = _plan(table, tuple(columns), connection.dialect, ignore_conflicts, returning)
    by_column: list[Sequence[Any]] = list(zip(*rows, strict=True))
    if len(by_column) != len(columns):
        raise ValueError(f"rows have {len(by_column)} values, columns name {len(columns)}")
    by_column = _convert(plan.converters, by_column)
    if connection.dialect.name == "postgresql":
        parameters = tuple(list(values) for values in by_column)
        result = connection.exec_driver_sql(plan.sql(len(rows)), parameters)
        return list(result.scalars()) if returning else []
    return _sqlite_insert(connection, plan, list(zip(*by_column, strict=True)), returning)


def sqlite_insert_stored(
    connection: Connection,
    table: Table,
    columns: Sequence[str],
    rows: Sequence[tuple[Any, ...]],
    *,
    ignore_conflicts: bool,
    returning: str = "",
) -> list[Any]:
    """:func:`bulk_insert` on SQLite of rows already in the stored form: no conversion pass.

    For a writer that builds its rows once (materialization): instants as
    :func:`sqlite_instant_text`, local times as :func:`nominal_local_text`, JSON as text.

    Raises:
        ValueError: not a SQLite connection, or a row whose width is not ``columns``'.

    """
    if connection.dialect.name != "sqlite":
        raise ValueError(f"stored-form rows are SQLite's, not {connection.dialect.name}'s")
    if not rows:
        return []
    if {len(row) for row in rows} != {len(columns)}:
        raise ValueError(f"rows are not all {len(columns)} values wide ({', '.join(columns)})")
    plan = _plan(table, tuple(columns), connection.dialect, ignore_conflicts, returning)
    return _sqlite_insert(connection, plan, rows, returning)


def statement_sizes(count: int, most: int) -> list[int]:
    """Rows per statement for ``count`` rows: ``most`` at a time, the rest in powers of two.

    So a table's statements have at most ``1 + log2(most)`` distinct shapes, whatever the counts:
    each is parsed once per connection and then reused from the driver's statement cache
    (a statement of 1,000 rows costs SQLite about twice as much to parse as to run). Largest
    first; the sizes sum to ``count``.
    """
    sizes = [most] * (count // most)
    rest = count % most
    while rest:
        piece = 1 << (rest.bit_length() - 1)
        sizes.append(piece)
        rest -= piece
    return sizes


def _sqlite_insert(
    connection: Connection, plan: _Plan, rows: Sequence[tuple[Any, ...]], returning: str
) -> list[Any]:
    """``rows`` (stored form), in statements of :func:`statement_sizes` rows.

    With ``returning`` (one of the columns, whose stored value is the value bound: a text key),
    each statement runs first without ``RETURNING``, under a savepoint. SQLite's count of the
    rows it inserted then says that all of them went in (their keys are the ones sent) or none
    did (every one was a repeat); only a statement that inserted some of its rows is rolled back
    to the savepoint and run again with ``RETURNING``, which names them. Why: ``RETURNING`` has
    SQLite collect the inserted rows in a temporary table and the driver fetch each one, a
    seventh of the insert's cost, for what the count nearly always says.
    """
    out: list[Any] = []
    start = 0
    key = 0  # the returning column's place in a row (read only with ``returning``)
    if returning:
        if plan.key is None:
            raise ValueError(f"RETURNING {returning}: not one of the inserted columns")
        key = plan.key
    for size in statement_sizes(len(rows), SQLITE_MAX_PARAMETERS // len(plan.converters)):
        chunk = rows[start : start + size]
        start += size
        flat = tuple(chain.from_iterable(chunk))
        if not returning:
            connection.exec_driver_sql(plan.sql(size), flat)
            continue
        savepoint = connection.begin_nested()
        inserted = connection.exec_driver_sql(plan.sql(size, returned=False), flat).rowcount
        if inserted in (0, size):
            savepoint.commit()
            if inserted:
                out.extend([row[key] for row in chunk])
            continue
        savepoint.rollback()
        out.extend(connection.exec_driver_sql(plan.sql(size), flat).scalars().all())
    return out


def not_in_values(
    connection: Connection, column: ColumnElement[str], values: Sequence[str]
) -> ColumnElement[bool]:
    """``column NOT IN values`` with the values as one array parameter (any number of them).

    PostgreSQL: ``column <> ALL(%s::varchar[])``; SQLite: ``column NOT IN (SELECT value FROM
    json_each(?))``. An empty ``values`` is always true.
    """
    if not values:
        return true()
    if connection.dialect.name == "postgresql":
        array = bindparam("excluded", list(values), type_=postgresql.ARRAY(String()))
        return column != all_(array)
    listed: Select[tuple[Any]] = select(literal_column("value")).select_from(
        func.json_each(bindparam("excluded", json.dumps(list(values)), type_=String()))
    )
    return column.not_in(listed.scalar_subquery())


def in_values(
    connection: Connection, column: ColumnElement[str], values: Sequence[str]
) -> ColumnElement[bool]:
    """``column IN values`` with the values as one array parameter (any number of them).

    PostgreSQL: ``column = ANY(%s::varchar[])``; SQLite: ``column IN (SELECT value FROM
    json_each(?))``. An empty ``values`` is always false.
    """
    if not values:
        return false()
    if connection.dialect.name == "postgresql":
        array = bindparam("included", list(values), type_=postgresql.ARRAY(String()))
        return column == any_(array)
    listed: Select[tuple[Any]] = select(literal_column("value")).select_from(
        func.json_each(bindparam("included", json.dumps(list(values)), type_=String()))
    )
    return column.in_(listed.scalar_subquery())
