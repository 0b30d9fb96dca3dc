"""Business calendars as pinned data: holidays, weekend days, and the roll conventions.

A holiday list is data that changes between releases, exactly like the tz database (DESIGN §12).
A spec names a calendar and the release of its data (``calendar.release``), and the dates come
from exactly that release, found in one of two places:

- the installed ``holidays`` distribution, when ``release`` is ``holidays-<its version>``
  (Almanac pins ``holidays==0.108``: release ``holidays-0.108``); or
- the local *calendar store*, beside the tz releases in the tz store::

      <tz store>/calendars/<name>/<release>.json   -> the calendar's dates, one release

  ``almanac calendar add NAME`` writes the installed library's dates for a name there (and
  ``almanac apply`` does it for every calendar it publishes), and ``almanac calendar add-file
  FILE`` a user's calendar file, whose release is its ``sha256-<hex>`` digest. A worker whose
  library was upgraded since keeps reading the release its revisions pinned, from the store.

A missing release raises :class:`CalendarReleaseNotFound`; there is no fallback to another release.
Names: a financial market of the ``holidays`` library (``NYSE``/``XNYS``, ``XECB`` — the ECB's
TARGET closing days —, ``XLON``, …), a country as ISO 3166-1 alpha-2 with an optional subdivision
(``US``, ``US-NY``, ``DE-BY``), or the name of a user calendar file in the store.

Weekend days are part of the calendar (``calendar.weekend``, default Saturday and Sunday): a day
is a *business day* when it is neither a weekend day nor a holiday.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import json
import re
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from enum import StrEnum
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from timecontract.errors import SpecError

if TYPE_CHECKING:
    from holidays import HolidayBase

CALENDAR_FIRST_YEAR, CALENDAR_LAST_YEAR = 1970, 2200
"""Years a library release is materialized for (a store file holds exactly these years)."""
MAX_ROLL_DAYS = 31
"""A holiday move looks at most this many days away for a business day (else it skips)."""
MAX_CALENDAR_FILE_BYTES = 256 * 1024
"""The largest user calendar file read."""
MAX_CALENDAR_DATES = 10_000
"""The most dates a user calendar file may list."""
NAME_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,31}(-[A-Za-z0-9_]{1,32})?$")
"""A calendar name: a market or country code, optionally ``-SUBDIVISION``, or a file's name."""
RELEASE_PATTERN = re.compile(r"^(holidays-\d+\.\d+(\.\d+)?|sha256-[0-9a-f]{64})$")
"""A calendar release: ``holidays-<library version>`` or a calendar file's ``sha256-<hex>``."""
WEEKDAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
"""RFC 5545 weekday codes, in ``date.weekday()`` order."""
WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


class CalendarYearsNotCovered(SpecError):
    """A day outside the years a pinned calendar's data covers (on ``calendar.release``).

    Its own type so that a look-ahead that is only advice (``timecontract.advisories``) can stop
    at the data's last year instead of failing the spec.
    """


class HolidayPolicy(StrEnum):
    """What to do with a nominal time whose local date is not a business day of the calendar.

    ``SKIP`` records a ``SKIPPED_HOLIDAY`` fact naming the holiday (or the weekend day) and runs
    nothing. The three moves keep the occurrence's nominal identity (its ID) and run at the same
    local time on another day, recording the moved-to instant and the holiday (ISDA 2006
    §4.12 business day conventions): ``FOLLOWING`` the next business day, ``PRECEDING`` the
    previous one, ``MODIFIED_FOLLOWING`` the next one unless it lies in another month, then the
    previous one. A move finding no business day within :data:`MAX_ROLL_DAYS` days skips.
    """

    SKIP = "SKIP"
    FOLLOWING = "FOLLOWING"
    PRECEDING = "PRECEDING"
    MODIFIED_FOLLOWING = "MODIFIED_FOLLOWING"


class CalendarReleaseNotFound(SpecError, LookupError):
    """The pinned calendar release is neither the installed library's nor in the store."""

    def __init__(self, name: str, release: str, available: list[str]) -> None:
        shown = ", ".join(available) or "none"
        hint = (
            f"add it with `almanac calendar add {name}` on a machine with that library release"
            if release.startswith("holidays-")
            else f"add the file with `almanac calendar add-file FILE --name {name}`"
        )
        super().__init__(
            "calendar.release",
            release,
            f"calendar {name} release not in the store (available: {shown}); {hint}",
        )
        self.name = name
        self.release = release


@dataclass(frozen=True, slots=True)
class BusinessCalendar:
    """One calendar release: its holidays and weekend days.

    Attributes:
        name: the calendar's name (``NYSE``, ``US-NY``, a file's name).
        release: the data release (``holidays-0.108``, ``sha256-…``).
        weekend: the weekend days, as ``date.weekday()`` numbers (Monday 0).
        holidays: holiday date → name (several names on one day joined by ``; ``).
        first_year: the first year the data covers.
        last_year: the last year the data covers (inclusive).

    """

    name: str
    release: str
    weekend: frozenset[int]
    holidays: Mapping[date, str]
    first_year: int
    last_year: int

    @property
    def label(self) -> str:
        """``<name>@<release>``: the evidence recorded with every holiday decision."""
        return f"{self.name}@{self.release}"

    def closed(self, day: date) -> str | None:
        """Why ``day`` is not a business day: the holiday's name, ``Saturday (weekend)``, or None.

        Raises:
            CalendarYearsNotCovered: ``day`` lies outside the data's years.

        """
        if not self.first_year <= day.year <= self.last_year:
            raise CalendarYearsNotCovered(
                "calendar.release",
                self.release,
                f"calendar {self.name} covers {self.first_year}–{self.last_year}, not "
                f"{day.isoformat()}",
            )
        name = self.holidays.get(day)
        if name is not None:
            return name
        if day.weekday() in self.weekend:
            return f"{WEEKDAY_NAMES[day.weekday()]} (weekend)"
        return None

    def is_business_day(self, day: date) -> bool:
        """Whether ``day`` is neither a weekend day nor a holiday."""
        return self.closed(day) is None

    def roll(self, day: date, policy: HolidayPolicy) -> date | None:
        """The business day ``policy`` moves ``day`` to, or None (``SKIP``, or none in reach).

        ``day`` itself is returned when it is a business day. Source: ISDA 2006 Definitions
        §4.12 (Following, Modified Following, Preceding).
        """
        if self.is_business_day(day):
            return day
        if policy is HolidayPolicy.SKIP:
            return None
        if policy is HolidayPolicy.PRECEDING:
            return self._step(day, -1)
        following = self._step(day, 1)
        if policy is HolidayPolicy.MODIFIED_FOLLOWING and (
            following is None or following.month != day.month
        ):
            return self._step(day, -1)
        return following

    def _step(self, day: date, direction: int) -> date | None:
        for k in range(1, MAX_ROLL_DAYS + 1):
            candidate = day + timedelta(days=k * direction)
            if self.is_business_day(candidate):
                return candidate
        return None


def installed_release() -> str:
    """``holidays-<version>`` of the installed ``holidays`` distribution."""
    return f"holidays-{metadata.version('holidays')}"


def weekend_days(codes: Iterable[str]) -> frozenset[int]:
    """``("SA", "SU")`` → ``{5, 6}``; codes are RFC 5545 weekday codes."""
    return frozenset(WEEKDAYS.index(code) for code in codes)


def library_document(name: str) -> dict[str, Any]:
    """The store document of calendar ``name`` computed by the installed ``holidays`` library.

    Covers :data:`CALENDAR_FIRST_YEAR`..:data:`CALENDAR_LAST_YEAR`.

    Raises:
        SpecError: on ``calendar.name`` when the library has no such market or country.

    """
    holidays = LibraryHolidays(name)
    return _document(name, installed_release(), holidays.first_year, holidays.last_year, holidays)


class LibraryHolidays(Mapping[date, str]):
    """The installed library's holidays of calendar ``name``, each year computed on first use.

    Equal to the library's answer for every year of :data:`CALENDAR_FIRST_YEAR`..
    :data:`CALENDAR_LAST_YEAR` at once: the library populates a year only with dates of that
    year (``HolidayBase._add_holiday``), so one year's dates need no other year. Why: a spec is
    checked or previewed over a few years, not 231. Thread-safe (a worker's activities share it).

    Raises:
        SpecError: on ``calendar.name`` (at construction) when the library has no such market or
            country.

    """

    first_year, last_year = CALENDAR_FIRST_YEAR, CALENDAR_LAST_YEAR

    def __init__(self, name: str) -> None:
        country, _, subdivision = name.partition("-")
        market = _library_entity("financial", name)
        entity = _library_entity("countries", country) if market is None else None
        if market is not None:
            self._compute: Callable[..., Mapping[date, str]] = market
        elif entity is not None and (not subdivision or subdivision in entity.subdivisions):
            self._compute = functools.partial(entity, subdiv=subdivision or None)
        else:
            raise SpecError(
                "calendar.name",
                name,
                "no such market or country in the holidays library (markets such as NYSE, XECB, "
                "XLON; countries as ISO codes with an optional subdivision, e.g. US, US-NY, DE-BY)",
            )
        self._years: dict[int, dict[date, str]] = {}
        self._lock = threading.Lock()

    def _year(self, year: int) -> dict[date, str]:
        found = self._years.get(year)
        if found is None:
            with self._lock:
                found = self._years.get(year)
                if found is None:
                    found = self._years[year] = dict(self._compute(years=year))
        return found

    def _all_years(self) -> range:
        years = range(self.first_year, self.last_year + 1)
        if len(self._years) < len(years):
            with self._lock:  # one library call for every year: far cheaper than 231 calls
                everything = self._compute(years=years)
                by_year: dict[int, dict[date, str]] = {year: {} for year in years}
                for day, title in everything.items():
                    by_year[day.year][day] = title
                self._years = by_year
        return years

    def __getitem__(self, day: date) -> str:
        if not self.first_year <= day.year <= self.last_year:
            raise KeyError(day)
        return self._year(day.year)[day]

    def __iter__(self) -> Iterator[date]:
        for year in self._all_years():
            yield from sorted(self._years[year])

    def __len__(self) -> int:
        return sum(len(self._years[year]) for year in self._all_years())


_PACKAGES = re.compile(r"\bholidays\.(countries|financial)\b")
"""A module naming these packages imports through one of them: it cannot be imported alone."""


def _library_entity(kind: str, code: str) -> type[HolidayBase] | None:
    """The ``holidays`` class of market (``kind="financial"``) or country ``code``, or None.

    The same class, for the same codes (aliases included), as ``holidays.financial_holidays``
    and ``holidays.country_holidays`` instantiate — ``code in list_supported_financial()`` (or
    ``…_countries()``) — found in the library's registry. Its module is imported by itself:
    importing it as ``holidays.financial.<module>`` first runs the ``holidays.financial``
    package, which imports every market's module and, through one of them, every country's:
    several times the work of the one needed (``bench/cli_startup.py``). A module imported alone
    is the one ``sys.modules`` holds under its name, where the library's loader finds it; it is
    not bound as an attribute of its package if that is imported later. A module that imports
    another entity through a package is imported the library's way.
    """
    import holidays
    from holidays.registry import COUNTRIES, FINANCIAL, IMPORT_LOCK, EntityLoader

    if kind == "financial":
        registry, codes = FINANCIAL, set(EntityLoader.get_financial_codes())
    else:
        registry, codes = COUNTRIES, set(EntityLoader.get_country_codes())
    if code not in codes:
        return None
    # The library binds each code to the last registry entry listing it (EntityLoader.load).
    module_name = [module for module, entry in registry.items() if code in entry[1:]][-1]
    qualified = f"holidays.{kind}.{module_name}"
    path = Path(holidays.__file__).parent / kind / f"{module_name}.py"
    with IMPORT_LOCK:  # the lock the library's own lazy entity loader imports under
        module = sys.modules.get(qualified)
        if module is None and _PACKAGES.search(path.read_text(encoding="utf-8")):
            # It imports another entity through a package: import it as the library does.
            module = importlib.import_module(qualified)
        elif module is None:
            spec = importlib.util.spec_from_file_location(qualified, path)
            if spec is None or spec.loader is None:
                raise ImportError(f"no module {qualified} at {path}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[qualified] = module
            try:
                spec.loader.exec_module(module)
            except BaseException:
                del sys.modules[qualified]
                raise
    entity: type[HolidayBase] = getattr(module, code)
    return entity


def _document(
    name: str, release: str, first: int, last: int, found: Mapping[date, str]
) -> dict[str, Any]:
    return {
        "name": name,
        "release": release,
        "firstYear": first,
        "lastYear": last,
        "holidays": {day.isoformat(): found[day] for day in sorted(found)},
    }


def parse_calendar_file(raw: bytes, source: str) -> dict[str, Any]:
    """Read a user calendar file into a store document; its release is its ``sha256-<hex>``.

    The file is YAML or JSON: ``{name: acme, holidays: [{date: 2027-01-04, name: "…"}, …]}``.

    Raises:
        SpecError: on ``calendar file`` naming ``source`` when the file is larger than
            :data:`MAX_CALENDAR_FILE_BYTES`, lists more than :data:`MAX_CALENDAR_DATES` dates,
            is not YAML, or has an entry without a valid date or name.

    """
    import yaml

    def bad(problem: str) -> SpecError:
        return SpecError("calendar file", source, problem)

    if len(raw) > MAX_CALENDAR_FILE_BYTES:
        raise bad(f"larger than {MAX_CALENDAR_FILE_BYTES} bytes, the most a calendar file holds")

    class _TextDates(yaml.SafeLoader):
        """Dates stay text, so a bad one is reported by its entry (not as a YAML error)."""

    _TextDates.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    try:
        data = yaml.load(raw.decode("utf-8"), Loader=_TextDates)
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise bad(f"not valid YAML or JSON: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict) or set(data) != {"name", "holidays"}:
        raise bad("must be a mapping with exactly the keys name and holidays")
    name, entries = data["name"], data["holidays"]
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise bad(f"name {name!r} must be letters, digits and _ (optionally -SUFFIX)")
    if not isinstance(entries, list) or len(entries) > MAX_CALENDAR_DATES:
        raise bad(f"holidays must be a list of at most {MAX_CALENDAR_DATES} entries")
    found: dict[date, str] = {}
    for index, entry in enumerate(entries):
        day = entry.get("date") if isinstance(entry, dict) else None
        title = entry.get("name") if isinstance(entry, dict) else None
        if isinstance(day, str):
            try:
                day = date.fromisoformat(day)
            except ValueError:
                day = None
        if not isinstance(day, date) or not isinstance(title, str) or not title.strip():
            raise bad(f"holidays[{index}] must be {{date: YYYY-MM-DD, name: text}}, got {entry!r}")
        found[day] = f"{found[day]}; {title}" if day in found else title
    if not found:
        raise bad("holidays lists no date")
    release = "sha256-" + hashlib.sha256(raw).hexdigest()
    years = [day.year for day in found]
    return _document(name, release, min(years), max(years), found)


def store_path(store: Path, name: str, release: str) -> Path:
    """Where release ``release`` of calendar ``name`` lives in the tz store ``store``."""
    return store / "calendars" / name / f"{release}.json"


def available_releases(name: str, store: Path | None) -> list[str]:
    """The releases of calendar ``name``: the store's, and the installed library's."""
    found = {installed_release()}
    folder = None if store is None else store / "calendars" / name
    if folder is not None and folder.is_dir():
        found.update(path.stem for path in folder.glob("*.json"))
    return sorted(found)


def load_calendar(
    name: str, release: str, weekend: Iterable[str], store: Path | None
) -> BusinessCalendar:
    """Load calendar ``name`` at ``release`` with the given weekend days.

    Args:
        name: see the module docstring.
        release: ``holidays-<version>`` or ``sha256-<hex>``.
        weekend: RFC 5545 weekday codes (``SA``, ``SU``).
        store: the tz store (calendars live in its ``calendars/`` folder); ``None``: only the
            installed library's release.

    Raises:
        CalendarReleaseNotFound: the release is neither in the store nor the installed one.
        SpecError: an unknown name (``calendar.name``) for the installed release.

    """
    holidays, first, last = _dates(name, release, None if store is None else str(store))
    return BusinessCalendar(name, release, weekend_days(weekend), holidays, first, last)


@functools.lru_cache(maxsize=64)
def _dates(name: str, release: str, store: str | None) -> tuple[Mapping[date, str], int, int]:
    if not NAME_PATTERN.fullmatch(name):
        raise SpecError("calendar.name", name, "not a calendar name (e.g. NYSE, US-NY, acme)")
    path = None if store is None else store_path(Path(store), name, release)
    if path is not None and path.is_file():
        document = json.loads(path.read_text(encoding="utf-8"))
    elif release == installed_release():
        library = LibraryHolidays(name)
        return library, library.first_year, library.last_year
    else:
        raise CalendarReleaseNotFound(
            name, release, available_releases(name, None if store is None else Path(store))
        )
    found = {date.fromisoformat(day): title for day, title in document["holidays"].items()}
    return found, int(document["firstYear"]), int(document["lastYear"])
