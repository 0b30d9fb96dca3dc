"""What every ``almanac`` command shares: exit codes, the one error line, ``--json``, the exit.

Exit codes (the same for every command):

- ``0`` success;
- ``2`` invalid input: a bad spec, option or argument, an unknown ID; the message names the field
  and the value;
- ``1`` an operational failure: Temporal, the database or the network unreachable, no worker
  answering, a port in use (and, for ``almanac gates``, a gate that fails).

A failure is one line on stderr (``error: <field>=<value>: <why>``), never a traceback; so is a
usage error Click finds (a missing or unknown option: :class:`AlmanacGroup`). A command that
prints a result takes ``--json`` and then prints JSON on stdout: camelCase keys, as in the spec
(a dataclass's ``cutover_at_utc`` is ``cutoverAt``: the ``Z`` of the value says UTC), instants as
ISO 8601 UTC with ``Z``.

One way to exit: a command returns (exit 0) or raises ``typer.Exit(code)``, through :func:`fail`
when there is something to say. :func:`run`, the console entry, turns that into the process's
exit code and leaves with ``os._exit`` after flushing: temporalio may abort the interpreter at
exit (sdk-python#300), and the exit code must stay the command's. Only the console entry and a
second Ctrl-C under ``almanac dev`` call :func:`exit_now`.

Start-up cost is part of the interface (``bench/cli_startup.py``: ``almanac --help``,
``validate`` and a one-day ``preview`` each within 1.5× of importing typer, pydantic, dateutil and
yaml). So this module imports neither asyncio nor Rich: help is Click's plain help (Typer's Rich
help alone loads Rich, markdown-it and Pygments), the error line is
written directly, and Rich is loaded by :func:`out`/:func:`err` when a command prints a table.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable, Coroutine
from dataclasses import fields, is_dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import typer
from typer import _click as click
from typer.core import TyperGroup

from almanac.text import terminal_text

if TYPE_CHECKING:
    from pathlib import Path

    from pydantic import ValidationError
    from pydantic_settings import BaseSettings
    from rich.console import Console
    from rich.table import Table

    from almanac.settings import AlmanacSettings

EXIT_OK = 0
EXIT_OPERATIONAL = 1
EXIT_INVALID = 2
EXIT_INTERRUPTED = 130
"""Ctrl-C while a command waits (128 + SIGINT, as shells report it)."""

JsonOption = Annotated[
    bool, typer.Option("--json", help="Print JSON on stdout instead of a table or text.")
]

T = TypeVar("T")


def check_text(param: typer.CallbackParam, value: str | None) -> str | None:
    """Typer callback: refuse text that is not valid Unicode before anything connects (exit 2).

    A byte that is not UTF-8 in an argument reaches Python as an unpaired surrogate, which no
    ledger, log or payload can encode: refused here, naming the option and the position, never
    repeating the text.

    Returns:
        ``value`` unchanged.
    """
    if value is None:
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        name = param.opts[0] if param.opts else str(param.name)
        fail(f"{name}: not valid text: a byte that is not UTF-8 at character {exc.start + 1}")
    return value


def check_schedule_id(value: str | None) -> str | None:
    """Typer callback: refuse a malformed scheduleId before anything connects (exit 2).

    Returns:
        ``value`` unchanged (``None`` for an optional argument left out).

    Raises:
        typer.Exit: code 2 naming the value and what a scheduleId must be
            (``timecontract.ids.SCHEDULE_ID_PATTERN``), so a typo is an input error even
            when Temporal is down.
    """
    if value is None:
        return None
    import re

    from timecontract.ids import SCHEDULE_ID_PATTERN
    from timecontract.spec_problems import PATTERN_WORDING

    if re.fullmatch(SCHEDULE_ID_PATTERN, value) is None:
        fail(f"scheduleId={value!r}: {PATTERN_WORDING[SCHEDULE_ID_PATTERN]}")
    return value


ScheduleArg = Annotated[
    str,
    typer.Argument(help="The scheduleId.", show_default=False, callback=check_schedule_id),
]
"""A command's scheduleId argument, checked before the command connects."""


def new_app(help_text: str, **options: Any) -> typer.Typer:
    """A Typer app (or command group) with Almanac's settings: no completion, plain exceptions.

    Its group class is :class:`AlmanacGroup`: a usage error is one error line, like any other.
    """
    options.setdefault("rich_markup_mode", None)
    options.setdefault("cls", AlmanacGroup)
    return typer.Typer(
        help=help_text, add_completion=False, pretty_exceptions_enable=False, **options
    )


def command_group(name: str, help_text: str) -> tuple[typer.Typer, Callable[[typer.Typer], None]]:
    """A command group ``almanac NAME …`` (help when called alone) and the ``mount`` adding it.

    Returns:
        The group's Typer app (its commands register on it) and its module's ``mount(app)``.
    """
    group = new_app(help_text, name=name, no_args_is_help=True)

    def mount(app: typer.Typer) -> None:
        app.add_typer(group, name=name)

    mount.__doc__ = f"Add ``{name}`` to the ``almanac`` app."
    return group, mount


def tzdb_store() -> Path:
    """The tz release store (also the calendar store's root), as ``AlmanacSettings`` reads it.

    Read from the environment (:mod:`almanac.paths`), not ``AlmanacSettings``: importing
    pydantic-settings alone costs about the light commands' whole start-up budget.
    """
    from almanac.paths import tzdb_store_from_environment

    return tzdb_store_from_environment()


class AlmanacGroup(TyperGroup):
    """A command group whose usage errors are one ``error:`` line (exit 2), not Click's block.

    Click reports a missing argument, an unknown option or a value out of range as a usage
    block (usage, a hint, then the error) on stderr. Parsing happens in the group's
    ``make_context`` (its own options) and, for a subcommand, inside the group's ``invoke``;
    both are wrapped here (Typer's documented ``Typer(cls=...)`` hook), so every command below
    the group reports the same way. ``almanac`` and ``almanac ledger`` alone still print help.
    """

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        """Parse the group's own options; a usage error becomes one error line."""
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.exceptions.ClickException as exc:
            _usage_failure(exc)

    def invoke(self, ctx: click.Context) -> Any:
        """Parse and run the subcommand; a usage error becomes one error line."""
        try:
            return super().invoke(ctx)
        except click.exceptions.ClickException as exc:
            _usage_failure(exc)


def _usage_failure(exc: click.exceptions.ClickException) -> NoReturn:
    if isinstance(exc, click.exceptions.NoArgsIsHelpError):
        raise exc  # help, asked for by typing the group alone
    fail(usage_error_line(exc), exc.exit_code)


def usage_error_line(exc: click.exceptions.ClickException) -> str:
    """One line for a usage error Click raised, naming the option and the value when it can.

    A value outside an option's ``min``/``max`` states the bounds: ``-n=50: must be between 1
    and 20``. Anything else keeps Click's own words (``No such option: --bogus``, ``Missing
    argument 'SPEC_FILE'``), prefixed by the command and followed by where help is.
    """
    ctx = getattr(exc, "ctx", None)
    path = ctx.command_path if ctx is not None else ""
    hint = f" (see `{path} --help`)" if path else ""
    param = getattr(exc, "param", None)
    bounded = _out_of_range(exc, param) if param is not None else None
    if bounded is not None:
        return f"{bounded}{hint}"
    message = " ".join(exc.format_message().split()).rstrip(".")
    return f"{path}: {message}{hint}" if path else message


_RANGE_ERRORS = frozenset({"less_than_equal", "greater_than_equal", "less_than", "greater_than"})


def _out_of_range(exc: click.exceptions.ClickException, param: Any) -> str | None:
    """``<option>=<value>: must be …`` when ``exc`` is a value outside ``param``'s bounds."""
    from pydantic import ValidationError  # Typer validates values with it: already loaded

    low, high = getattr(param, "min", None), getattr(param, "max", None)
    cause = exc.__cause__
    if (low is None and high is None) or not isinstance(cause, ValidationError):
        return None
    errors = cause.errors()
    if not errors or errors[0]["type"] not in _RANGE_ERRORS:
        return None
    name = max(param.opts, key=len) if param.opts else param.name
    if low is not None and high is not None:
        bounds = f"between {low} and {high}"
    else:
        bounds = f"at least {low}" if low is not None else f"at most {high}"
    return f"{name}={errors[0]['input']}: must be {bounds}"


PIPED_WIDTH = 10_000
"""Columns of the stdout console when stdout is not a terminal (a pipe, a file, a CI log).

Wide enough for any table Almanac prints: Rich fits a table into the console's width by cutting
cells (``2026-1…``), so a narrower fixed width would cut the instants of a table with a long
occurrenceId. A Rich table is only as wide as its cells and plain text is not padded, so this
width never shows; only a renderable that expands to the full width would (none is used)."""


def out(*, markup: bool = True) -> Console:
    """The stdout console; a pipe or a file gets every table whole (:data:`PIPED_WIDTH`)."""
    from rich.console import Console

    width = None if sys.stdout.isatty() else PIPED_WIDTH
    return Console(highlight=False, markup=markup, width=width)


def err() -> Console:
    """The stderr console (progress, summaries beside ``--json``, errors)."""
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def plural(count: int, noun: str, plural_noun: str | None = None) -> str:
    """``1 occurrence``, ``0 occurrences``, ``2 occurrences`` (``plural_noun`` when irregular)."""
    return f"{count} {noun if count == 1 else (plural_noun or noun + 's')}"


def escape(text: str) -> str:
    """``text`` for a Rich renderable: :func:`terminal_text`, then Rich markup escaped."""
    from rich.markup import escape as rich_escape

    return rich_escape(terminal_text(text))


def terminal_table(title: str, **options: Any) -> Table:
    """A Rich table (title left) whose string cells pass through :func:`terminal_text`."""
    return _terminal_table_class()(title=terminal_text(title), title_justify="left", **options)


@functools.cache
def _terminal_table_class() -> type[Table]:
    from rich.table import Table

    class TerminalTable(Table):
        def add_row(self, *renderables: Any, **options: Any) -> None:
            shown = (terminal_text(r) if isinstance(r, str) else r for r in renderables)
            super().add_row(*shown, **options)

    return TerminalTable


_ANSI = {"red": "31", "green": "32", "yellow": "33"}


def _wants_color(stream: Any) -> bool:
    return not os.environ.get("NO_COLOR") and bool(getattr(stream, "isatty", lambda: False)())


def _colored_text(text: str, color: str) -> str:
    return f"\x1b[{_ANSI[color]}m{text}\x1b[0m"


def _colored(stream: Any, text: str, color: str) -> str:
    """``text`` in an ANSI ``color`` when ``stream`` is a terminal (and NO_COLOR is unset)."""
    return _colored_text(text, color) if _wants_color(stream) else text


def say(text: str, *, mark: str = "", color: str = "green", stderr: bool = False) -> None:
    """Print one plain line (no Rich, no markup): ``mark`` colored on a terminal, then ``text``.

    For the light commands (``validate``) that print lines, not tables: printing through Rich
    would load it. ``text`` is printed verbatim (brackets included), its control characters
    escaped (:func:`terminal_text`).
    """
    stream = sys.stderr if stderr else sys.stdout
    prefix = f"{_colored(stream, mark, color)} " if mark else ""
    stream.write(f"{prefix}{terminal_text(text)}\n")


def warn(text: str) -> None:
    """Print ``warning: <text>`` as one line on stderr (the exit code is not changed)."""
    say(text, mark="warning:", color="yellow", stderr=True)


class PlainTable:
    """A text table for the light commands (``preview``): aligned columns, no Rich import.

    Rows may carry a color (``red``, ``yellow``, ``green``), shown on a terminal only. Cells are
    printed verbatim. :meth:`render` returns the text; :meth:`print` writes it to stdout.
    """

    def __init__(self, title: str, columns: list[str], caption: str = "") -> None:
        """A table with a title line, column headers and an optional caption under it."""
        self.title = title
        self.columns = columns
        self.caption = caption
        self.rows: list[tuple[list[str], str]] = []

    def add_row(self, *cells: str, color: str = "") -> None:
        """Append a row (one cell per column), colored on a terminal when ``color`` is set."""
        self.rows.append(([terminal_text(c) for c in cells], color))

    def render(self, *, colors: bool = False) -> str:
        """The table as text lines; ``colors``: wrap colored rows in ANSI codes."""
        widths = [len(c) for c in self.columns]
        for cells, _ in self.rows:
            widths = [max(w, len(c)) for w, c in zip(widths, cells, strict=True)]

        def line(cells: list[str]) -> str:
            return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

        lines = [self.title, line(self.columns), line(["─" * w for w in widths])]
        for cells, color in self.rows:
            text = line(cells)
            lines.append(_colored_text(text, color) if colors and color else text)
        if self.caption:
            lines.append(self.caption)
        return "\n".join(lines) + "\n"

    def print(self) -> None:
        """Write the table to stdout (colors on a terminal unless NO_COLOR is set)."""
        sys.stdout.write(self.render(colors=_wants_color(sys.stdout)))


def fail(message: str, code: int = EXIT_INVALID) -> NoReturn:
    """Print ``error: <message>`` as one line on stderr and end the command with ``code``.

    Args:
        message: names the field and the value (``--to='x': before --from``); printed verbatim,
            never read as Rich markup.
        code: :data:`EXIT_INVALID` (default) or :data:`EXIT_OPERATIONAL`.

    Raises:
        typer.Exit: always, with ``code``.
    """
    say(message, mark="error:", color="red", stderr=True)
    raise typer.Exit(code)


def print_json(data: Any) -> None:
    """Print ``data`` as indented JSON on stdout.

    Datetimes become UTC ``…Z`` strings; a dataclass becomes an object whose keys are its field
    names in camelCase (:func:`json_key`). The keys of plain dicts are data (states, parameter
    names) and are printed as they are: build camelCase keys yourself in hand-made objects.
    """
    sys.stdout.write(json.dumps(data, indent=2, default=_json_default) + "\n")


def json_key(name: str) -> str:
    """A field name as a ``--json`` key: camelCase, a ``_utc`` suffix dropped.

    ``cutover_at_utc`` → ``cutoverAt``, ``counts_by_state`` → ``countsByState``, ``fold`` →
    ``fold`` (the spec's and the other commands' convention: instants end in ``Z`` instead).
    """
    first, *rest = name.removesuffix("_utc").split("_")
    return first + "".join(part[:1].upper() + part[1:] for part in rest)


def json_object(value: Any) -> dict[str, Any]:
    """A dataclass instance as a ``--json`` object: its fields under :func:`json_key` names.

    One level only (not ``dataclasses.asdict``, which would turn nested dataclasses into
    snake_case dicts): :func:`print_json` converts the nested ones the same way.
    """
    return {json_key(f.name): getattr(value, f.name) for f in fields(value)}


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        from timecontract import format_instant

        return format_instant(value)
    if is_dataclass(value) and not isinstance(value, type):
        return json_object(value)
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def parse_instant(name: str, value: str) -> datetime:
    """Parse an instant option (``--from``, ``--to``, ``--now`` …): ISO 8601 with an offset.

    Returns:
        The instant, aware, in UTC.

    Raises:
        typer.Exit: code 2, naming the option and the value, when it does not parse or has no
            offset; a date (``2037-01-01`` or ``2037-01-01Z``, no instant in ISO 8601) is told
            the instant at its midnight (``timecontract.iso8601.read_instant``, which the
            console's forms share). RFC 3339's lower-case ``t`` and ``z`` are accepted. An
            empty value (``--to ''``) is refused as such, never read as the option left out.
    """
    from timecontract.iso8601 import read_instant

    if not value.strip():
        fail(f"{name}={value!r}: is empty; give an instant like 2026-11-01T00:00:00Z")
    try:
        return read_instant(value)
    except ValueError as exc:
        fail(f"{name}={value!r}: {exc}")


def setting_problem(exc: ValidationError, *models: type[BaseSettings]) -> str:
    """One line for a settings model's first problem: ``<VARIABLE>=<value>: <why>``.

    ``models``: the settings classes the failed construction may have built (a root and the
    nested ones its fields default to); the variable is named with the prefix of the one that
    raised (``exc.title``), so ``ALMANAC_TEMPORAL_TLS`` and not ``ALMANAC_TLS``. The why is in
    the spec's words (:func:`timecontract.spec_problems.problem_words`). A secret's value (a
    field typed ``SecretStr`` or ``SecretBytes``, optional or not) is never printed: it shows
    as ``<redacted>``.
    """
    from timecontract.spec_problems import problem_words

    problem = exc.errors()[0]
    model = next(m for m in models if m.__name__ == exc.title)
    prefix = model.model_config.get("env_prefix", "")
    name = prefix + "_".join(str(p) for p in problem["loc"]).upper()
    message = problem_words(problem, name)
    if message.startswith("ALMANAC_"):
        return message
    shown = "<redacted>" if _is_secret(model, problem["loc"]) else repr(problem.get("input"))
    return f"{name}={shown}: {message}"


def _is_secret(model: type[BaseSettings], loc: tuple[int | str, ...]) -> bool:
    """Whether the field at ``loc`` in ``model`` is typed a secret (alone or in a union)."""
    from typing import get_args

    from pydantic import SecretBytes, SecretStr

    field = model.model_fields.get(str(loc[0])) if loc else None
    if field is None:
        return False
    annotation = field.annotation
    return any(t in (SecretStr, SecretBytes) for t in (annotation, *get_args(annotation)))


def almanac_settings() -> AlmanacSettings:
    """The settings from the environment (``ALMANAC_*``).

    Raises:
        typer.Exit: code 2 after one line naming the variable and its value, for a bad value.
    """
    from pydantic import ValidationError

    from almanac.settings import AlmanacSettings, TemporalSettings

    try:
        return AlmanacSettings()
    except ValidationError as exc:
        fail(setting_problem(exc, AlmanacSettings, TemporalSettings))


def run_async(work: Coroutine[Any, Any, T]) -> T:
    """Run a command's coroutine; turn what it raises into one error line and an exit code.

    Invalid input (a ``ValueError``: a bad spec, a refused revision; an ``AlmanacError`` that is
    a ``LookupError``: a schedule that is not running) exits 2; Temporal unreachable, no worker
    answering and anything unforeseen exit 1; an error with an ``exit_code`` attribute (the tz
    store, the dev stack) exits with it; Ctrl-C exits 130.

    Raises:
        typer.Exit: on every failure, after printing its line.
    """
    import asyncio

    from timecontract.errors import AlmanacError

    try:
        return asyncio.run(work)
    except typer.Exit:
        raise
    except KeyboardInterrupt:
        raise typer.Exit(EXIT_INTERRUPTED) from None
    except AlmanacError as exc:
        code = getattr(exc, "exit_code", None)
        if code is None:
            code = EXIT_INVALID if isinstance(exc, ValueError | LookupError) else EXIT_OPERATIONAL
        fail(str(exc), code)
    except ValueError as exc:
        fail(str(exc))
    except Exception as exc:  # an operational failure nobody foresaw: still one line
        first = str(exc).splitlines()[0] if str(exc) else ""
        fail(f"{type(exc).__name__}: {first}", EXIT_OPERATIONAL)


def exit_now(code: int) -> NoReturn:
    """Flush stdout and stderr and end the process with ``code``, skipping interpreter teardown."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def run(app: typer.Typer, args: list[str] | None = None, prog_name: str | None = None) -> NoReturn:
    """Run ``app`` as the process's command line and exit with its code (see the module doc)."""
    try:
        app(args=args, prog_name=prog_name)
        code = EXIT_OK
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if isinstance(exc.code, str):
            sys.stderr.write(exc.code + "\n")
    exit_now(code)
