"""Zones from a pinned IANA tz database release — never from the operating system.

A spec pins ``tzdbVersion`` (an IANA release such as ``2026a``). Zones are loaded from exactly that
release, found in one of two places:

- the installed ``tzdata`` distribution (``tzdata.IANA_VERSION``; Almanac pins ``tzdata==2026.1``,
  which carries release 2026a), or
- a local *release store*: a directory holding one folder per release, each the ``tzdata`` package
  tree of that release plus a ``RELEASE`` file naming it::

      <store>/2022b/RELEASE            -> "2022b"
      <store>/2022b/tzdata/zones       -> one zone name a line
      <store>/2022b/tzdata/zoneinfo/…  -> TZif files

  ``almanac tzdb add RELEASE`` fills it (see ``almanac.tzdb``).

A missing release raises :class:`TzdbReleaseNotFound` and an unknown zone :class:`ZoneNotFound`;
there is no fallback to another release, to ``/usr/share/zoneinfo`` or to the local zone
(DESIGN §3: the system's release is unknown). Loading reads files; it never reads the clock.
"""

from __future__ import annotations

import functools
import importlib.resources
import io
import re
from pathlib import Path
from zoneinfo import ZoneInfo

import tzdata

from timecontract import transitions as _transitions
from timecontract.errors import SpecError, TzdbReleaseNotFound, ZoneNotFound
from timecontract.nearest import nearest

RELEASE_PATTERN = re.compile(r"^(19|20)\d{2}[a-z]$")
"""IANA release names: a four-digit year and one lowercase letter (``2026a``)."""

INSTALLED_RELEASE: str = tzdata.IANA_VERSION
"""The release the installed ``tzdata`` distribution carries (2026a with the pinned 2026.1)."""


def check_release_name(release: str) -> str:
    """Return ``release`` if it is a well-formed IANA release name.

    Raises:
        SpecError: on ``tzdbVersion`` when the name is not ``YYYYx`` (e.g. ``2026a``).

    """
    if not RELEASE_PATTERN.fullmatch(release):
        raise SpecError("tzdbVersion", release, "not an IANA release name like 2026a")
    return release


def available_releases(store: Path | None = None) -> list[str]:
    """List the releases that can be loaded: the installed one and every release in ``store``.

    Returns:
        Release names, sorted oldest first, without duplicates.

    """
    found = {INSTALLED_RELEASE}
    if store is not None and store.is_dir():
        for child in store.iterdir():
            marker = child / "RELEASE"
            if marker.is_file() and marker.read_text().strip() == child.name:
                found.add(child.name)
    return sorted(found)


def zone_names(release: str, store: Path | None = None) -> frozenset[str]:
    """Return the IANA zone names that ``release`` defines.

    Raises:
        TzdbReleaseNotFound: the release is neither installed nor in ``store``.

    """
    return _zone_names(check_release_name(release), _store_key(store))


def load(name: str, release: str, store: Path | None = None) -> ZoneInfo:
    """Load zone ``name`` from tz database ``release``.

    Args:
        name: an IANA zone name (``America/New_York``), as listed by the release.
        release: an IANA release name (``2026a``).
        store: the local release store; ``None`` means only the installed ``tzdata``.

    Returns:
        A ``ZoneInfo`` built from that release's TZif file (cached per release and store). Its
        ``key`` is ``name``.

    Raises:
        TzdbReleaseNotFound: the release is not available (no fallback, DESIGN §3).
        ZoneNotFound: the release has no such zone.

    """
    return _load(name, check_release_name(release), _store_key(store))


def transitions(
    name: str, release: str, store: Path | None = None
) -> _transitions.ZoneTransitions | None:
    """The transitions of the TZif file :func:`load` builds zone ``name`` from (same release).

    Returns:
        The file's table (``timecontract.transitions``), or ``None`` for a file that module does
        not read (callers then ask the zone for both offsets of every time).

    Raises:
        TzdbReleaseNotFound: the release is not available (no fallback, DESIGN §3).
        ZoneNotFound: the release has no such zone.

    """
    return _table(name, check_release_name(release), _store_key(store))


def _store_key(store: Path | None) -> str | None:
    return None if store is None else str(store.resolve())


def _release_root(release: str, store: str | None) -> importlib.resources.abc.Traversable:
    if release == INSTALLED_RELEASE:
        return importlib.resources.files("tzdata")
    if store is not None:
        folder = Path(store) / release
        marker = folder / "RELEASE"
        if marker.is_file() and marker.read_text().strip() == release:
            return folder / "tzdata"
    raise TzdbReleaseNotFound(release, available_releases(None if store is None else Path(store)))


@functools.lru_cache(maxsize=64)
def _zone_names(release: str, store: str | None) -> frozenset[str]:
    text = _release_root(release, store).joinpath("zones").read_text(encoding="utf-8")
    return frozenset(line.strip() for line in text.splitlines() if line.strip())


@functools.lru_cache(maxsize=1024)
def _load(name: str, release: str, store: str | None) -> ZoneInfo:
    return ZoneInfo.from_file(io.BytesIO(_tzif(name, release, store)), key=name)


@functools.lru_cache(maxsize=1024)
def _table(name: str, release: str, store: str | None) -> _transitions.ZoneTransitions | None:
    return _transitions.parse(_tzif(name, release, store))


@functools.lru_cache(maxsize=1024)
def _tzif(name: str, release: str, store: str | None) -> bytes:
    # The name is checked against the release's own list before it becomes a path, so a name
    # like "../../etc/passwd" can never reach the file system.
    known = _zone_names(release, store)
    if name not in known:
        raise ZoneNotFound(name, release, nearest(name, sorted(known)))
    resource = _release_root(release, store).joinpath("zoneinfo", *name.split("/"))
    with resource.open("rb") as handle:
        return handle.read()
