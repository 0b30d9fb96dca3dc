"""Add a tz release from an IANA source tarball (``tzdata2019c.tar.gz``), compiled with ``zic``.

The package index's ``tzdata`` distribution starts at 2020a, so an older release (or one the
index does not carry) comes from the source tarball IANA publishes, which the user supplies
(``almanac tzdb add --from-tarball tzdata2019c.tar.gz``; nothing is downloaded). It is stored
exactly like a release from a wheel (``almanac.tzdb``'s layout), so ``timecontract.zones`` reads
it the same way::

    <store>/2019c/RELEASE        -> "2019c"
    <store>/2019c/SOURCE.json    -> provenance: tarball name, its sha256, zic used
    <store>/2019c/tzdata/zones   -> the zone (and link) names, one a line
    <store>/2019c/tzdata/zoneinfo/<Area>/<Location>  -> TZif files compiled by zic

Checks, before anything is stored:

- the tarball is at most :data:`MAX_TARBALL_BYTES`, has at most :data:`MAX_MEMBERS` members whose
  sizes add up to at most :data:`MAX_SOURCE_BYTES`; every member is a regular file or directory
  (no links, devices, FIFOs) with a safe relative name (no absolute path, no ``..``); members are
  read one by one into a private temporary folder, never ``extractall``-ed;
- its ``version`` file names a release (``YYYYx``) equal to the one asked for, if one was;
- ``zic`` compiles the release's data files (:data:`DATA_FILES`, those present), with a timeout;
  no shell is involved and the files are passed by path;
- every compiled file is a TZif file ZoneInfo can read, and there is at least one.

Storing is atomic (a hidden staging folder renamed into place); adding a release twice is a no-op.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path, PurePosixPath
from zoneinfo import ZoneInfo

from almanac.tzdb import (
    AddResult,
    AddStatus,
    TzdbError,
    VerificationFailed,
    check_release,
    installed_entry,
    present_release,
    publish_staged,
)
from timecontract.zones import INSTALLED_RELEASE, RELEASE_PATTERN

MAX_TARBALL_BYTES = 16 * 1024 * 1024
"""Largest tarball read (an IANA data tarball is about 0.5 MB)."""
MAX_SOURCE_BYTES = 64 * 1024 * 1024
"""Largest total uncompressed size of its members."""
MAX_MEMBERS = 1000
"""Most members (an IANA data tarball has about 30)."""
ZIC_TIMEOUT_SECONDS = 120
DATA_FILES = (
    "africa",
    "antarctica",
    "asia",
    "australasia",
    "europe",
    "northamerica",
    "southamerica",
    "etcetera",
    "backward",
    "factory",
    "systemv",
    "pacificnew",
)
"""The tz data files compiled, when present: the primary set plus ``backward`` (links from old
names) and files older releases carry (``systemv``, ``pacificnew``); ``backzone`` is not used,
as in the default IANA build."""
ZIC_CANDIDATES = ("/usr/sbin/zic", "/usr/bin/zic", "/usr/local/sbin/zic", "/usr/local/bin/zic")


class TarballUnreadable(VerificationFailed, ValueError):
    """The file given is missing, unreadable or no tar archive at all: bad input (exit 2)."""

    exit_code = 2


class ZicNotFound(TzdbError):
    """No ``zic`` (the tz compiler; Debian ships it in libc-bin) was found."""


def find_zic() -> str | None:
    """``zic`` on ``PATH`` or in the usual system folders (``/usr/sbin`` is not on every PATH)."""
    found = shutil.which("zic")
    if found:
        return found
    return next((c for c in ZIC_CANDIDATES if os.access(c, os.X_OK)), None)


def add_release_from_tarball(
    tarball: Path, store: Path, *, release: str | None = None, zic: str | None = None
) -> AddResult:
    """Verify an IANA source tarball, compile it with ``zic`` and store the release.

    Args:
        tarball: an IANA ``tzdataYYYYx.tar.gz`` (any tar compression Python reads).
        store: the release store (created if missing).
        release: the release asked for; ``None`` takes the tarball's ``version`` file.
        zic: the ``zic`` binary (default: :func:`find_zic`).

    Returns:
        ``ADDED``; ``ALREADY_PRESENT`` when the store holds the release; ``INSTALLED`` when the
        installed ``tzdata`` carries it (in both cases nothing is compiled).

    Raises:
        MalformedRelease: ``release`` is not ``YYYYx``.
        TarballUnreadable: the file is missing, unreadable or no tar archive (exit 2).
        VerificationFailed: the tarball breaks a check above, or ``zic`` refuses it.
        ZicNotFound: no ``zic``.
        StoreConflict: the store's folder for the release holds something else.

    """
    if release is not None:
        check_release(release)
    raw = _read_bounded(tarball)
    digest = hashlib.sha256(raw).hexdigest()
    with tempfile.TemporaryDirectory(prefix="almanac-tzsource-") as work:
        source = Path(work) / "source"
        _unpack(tarball.name, raw, source)
        found = _version(tarball.name, source)
        if release is not None and found != release:
            raise VerificationFailed(
                f"{tarball.name} holds tz release {found}, not {release}; nothing stored"
            )
        if found == INSTALLED_RELEASE:
            entry = installed_entry()
            return AddResult(found, AddStatus.INSTALLED, entry.path, entry.distribution_version)
        present = present_release(store / found)
        if present is not None:
            return present
        compiled = Path(work) / "zoneinfo"
        zic_path = zic or find_zic()
        if zic_path is None:
            raise ZicNotFound(
                "zic (the tz compiler) was not found; install it (Debian: libc-bin) or put it "
                "on PATH"
            )
        _compile(tarball.name, zic_path, source, compiled)
        names = _zone_files(tarball.name, compiled)
        return _store(found, store, compiled, names, tarball.name, digest, zic_path)


def _read_bounded(tarball: Path) -> bytes:
    try:
        with tarball.open("rb") as handle:
            raw = handle.read(MAX_TARBALL_BYTES + 1)
    except FileNotFoundError as exc:
        raise TarballUnreadable(f"{tarball}: no such file") from exc
    except IsADirectoryError as exc:
        raise TarballUnreadable(f"{tarball}: is a directory, not a tarball") from exc
    except OSError as exc:
        raise TarballUnreadable(f"{tarball}: cannot read it ({exc.strerror})") from exc
    if len(raw) > MAX_TARBALL_BYTES:
        raise VerificationFailed(f"{tarball.name}: larger than {MAX_TARBALL_BYTES} bytes")
    return raw


def _unpack(name: str, raw: bytes, dest: Path) -> None:
    """Read each member into ``dest`` after checking its kind, name and the running totals."""
    dest.mkdir()
    try:
        with tarfile.open(fileobj=io.BytesIO(raw), mode="r:*") as archive:
            _read_members(name, archive, dest)
    except (tarfile.TarError, EOFError) as exc:
        # tarfile's message lists every method it tried, one per line: the line says it all.
        raise TarballUnreadable(
            f"{name}: not a readable tar archive (gzip, bzip2, xz or uncompressed)"
        ) from exc


def _read_members(name: str, archive: tarfile.TarFile, dest: Path) -> None:
    total = 0
    for count, member in enumerate(archive, start=1):
        if count > MAX_MEMBERS:
            raise VerificationFailed(f"{name}: more than {MAX_MEMBERS} members")
        path = _safe_member_path(name, member)
        if member.isdir():
            continue
        total += member.size
        if total > MAX_SOURCE_BYTES:
            raise VerificationFailed(f"{name}: members exceed {MAX_SOURCE_BYTES} bytes")
        handle = archive.extractfile(member)
        if handle is None:  # pragma: no cover (regular files always have data)
            raise VerificationFailed(f"{name}: member {member.name!r} has no data")
        target = dest.joinpath(*path.parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(handle.read(member.size))


def _safe_member_path(name: str, member: tarfile.TarInfo) -> PurePosixPath:
    if not (member.isfile() or member.isdir()):
        raise VerificationFailed(
            f"{name}: member {member.name!r} is not a regular file or folder (links, devices "
            "and FIFOs are refused)"
        )
    path = PurePosixPath(member.name)
    if (
        path.is_absolute()
        or ".." in path.parts
        or "\x00" in member.name
        or "\\" in member.name
        or not path.parts
    ):
        raise VerificationFailed(f"{name}: member {member.name!r} has an unsafe path")
    return PurePosixPath(*[part for part in path.parts if part != "."])


def _version(name: str, source: Path) -> str:
    """The release the ``version`` file names (at the top, or one folder down)."""
    candidates = [source / "version", *sorted(source.glob("*/version"))]
    for candidate in candidates:
        if candidate.is_file():
            text = candidate.read_text(encoding="utf-8", errors="replace").strip()
            if not RELEASE_PATTERN.fullmatch(text):
                raise VerificationFailed(f"{name}: version file says {text[:40]!r}, not YYYYx")
            return text
    raise VerificationFailed(f"{name}: no version file (is it an IANA tzdata tarball?)")


def _data_root(source: Path) -> Path:
    if (source / "version").is_file():
        return source
    return next(p.parent for p in sorted(source.glob("*/version")))


def _compile(name: str, zic: str, source: Path, output: Path) -> None:
    root = _data_root(source)
    files = [str(root / f) for f in DATA_FILES if (root / f).is_file()]
    if not files:
        raise VerificationFailed(f"{name}: none of the tz data files ({', '.join(DATA_FILES)})")
    output.mkdir()
    try:
        completed = subprocess.run(
            [zic, "-d", str(output), *files],
            capture_output=True,
            text=True,
            timeout=ZIC_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise VerificationFailed(f"{name}: zic could not run ({exc})") from exc
    if completed.returncode != 0:
        detail = (completed.stderr or completed.stdout).strip().splitlines()[-1:] or ["?"]
        raise VerificationFailed(f"{name}: zic refused the data: {detail[0][:200]}")


def _zone_files(name: str, compiled: Path) -> list[str]:
    names: list[str] = []
    for path in sorted(compiled.rglob("*")):
        if path.is_dir():
            continue
        relative = path.relative_to(compiled).as_posix()
        with path.open("rb") as handle:
            if handle.read(4) != b"TZif":
                continue  # zic writes only TZif files; anything else is not a zone
            handle.seek(0)
            try:
                ZoneInfo.from_file(handle, key=relative)
            except ValueError as exc:
                raise VerificationFailed(f"{name}: zone {relative} is unreadable ({exc})") from exc
        names.append(relative)
    if not names:
        raise VerificationFailed(f"{name}: zic produced no zones")
    return names


def _store(
    release: str,
    store: Path,
    compiled: Path,
    names: list[str],
    tarball_name: str,
    digest: str,
    zic: str,
) -> AddResult:
    store.mkdir(parents=True, exist_ok=True)
    target = store / release
    staging = Path(tempfile.mkdtemp(prefix=f".add-{release}-", dir=store))
    try:
        zoneinfo = staging / "tzdata" / "zoneinfo"
        for zone in names:
            path = zoneinfo.joinpath(*zone.split("/"))
            path.parent.mkdir(parents=True, exist_ok=True)
            # Read and written (not copied) so zic's hard or symbolic links become plain files.
            path.write_bytes(compiled.joinpath(*zone.split("/")).read_bytes())
        (staging / "tzdata" / "zones").write_text("\n".join(names) + "\n", encoding="utf-8")
        source = {
            "release": release,
            "source": "tarball",
            "tarball": tarball_name,
            "sha256": digest,
            "zic": zic,
            "distributionVersion": None,
        }
        return publish_staged(staging, target, source, None)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
