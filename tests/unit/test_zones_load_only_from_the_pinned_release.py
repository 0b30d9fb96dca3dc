"""DESIGN §3: zones come from the pinned release (installed tzdata or a local store), never the OS.

Expected offsets are America/New_York's 2026 transitions worked by hand from the tzdb rule
"Rule US 2007 max - Mar Sun>=8 2:00 1:00 D / Nov Sun>=1 2:00 0 S": 2026-03-08 07:00Z and
2026-11-01 06:00Z.
"""

import importlib.resources
import shutil
import sys
import zoneinfo
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import tzdata
from tcsupport import offset

from timecontract import TzdbReleaseNotFound, ZoneNotFound, zones

_OPENED: list[str] | None = None


def _audit(event: str, args: tuple[object, ...]) -> None:
    if _OPENED is not None and event == "open" and args and isinstance(args[0], str | Path):
        _OPENED.append(str(args[0]))


sys.addaudithook(_audit)


@pytest.fixture
def opened_files() -> Iterator[list[str]]:
    global _OPENED
    _OPENED = []
    try:
        yield _OPENED
    finally:
        _OPENED = None


def offsets_at(zone: zoneinfo.ZoneInfo, *instants: str) -> list[str | None]:
    return [
        offset(datetime.fromisoformat(i).replace(tzinfo=UTC).astimezone(zone).utcoffset())
        for i in instants
    ]


def test_installed_release_is_2026a() -> None:
    assert zones.INSTALLED_RELEASE == "2026a"
    assert tzdata.IANA_VERSION == "2026a"
    assert "2026a" in zones.available_releases()


def test_zone_loads_from_installed_release_with_its_name_as_key() -> None:
    zone = zones.load("America/New_York", "2026a")
    assert zone.key == "America/New_York"
    assert offsets_at(
        zone,
        "2026-03-08T06:59:59",
        "2026-03-08T07:00:00",
        "2026-11-01T05:59:59",
        "2026-11-01T06:00:00",
    ) == ["-05:00", "-04:00", "-04:00", "-05:00"]


@pytest.mark.parametrize("release", ["1999z", "2022b", "2099a"])
def test_missing_release_raises_tzdb_release_not_found_without_fallback(release: str) -> None:
    with pytest.raises(TzdbReleaseNotFound) as caught:
        zones.load("America/New_York", release)
    assert caught.value.field == "tzdbVersion"
    assert caught.value.value == release
    assert caught.value.available == ["2026a"]


def test_missing_release_is_not_found_in_an_empty_store(tmp_path: Path) -> None:
    with pytest.raises(TzdbReleaseNotFound):
        zones.load("America/New_York", "2022b", tmp_path)


def test_store_folder_whose_release_file_disagrees_is_not_that_release(tmp_path: Path) -> None:
    folder = tmp_path / "2022b"
    (folder / "tzdata").mkdir(parents=True)
    (folder / "RELEASE").write_text("2022c\n")
    with pytest.raises(TzdbReleaseNotFound):
        zones.load("Europe/London", "2022b", tmp_path)


def _fake_store_release(store: Path, release: str, zone_name: str) -> None:
    root = store / release / "tzdata"
    source = importlib.resources.files("tzdata").joinpath("zoneinfo", *zone_name.split("/"))
    target = root / "zoneinfo" / zone_name
    target.parent.mkdir(parents=True)
    with importlib.resources.as_file(source) as path:
        shutil.copyfile(path, target)
    (root / "zones").write_text(zone_name + "\n")
    (store / release / "RELEASE").write_text(release + "\n")


def test_release_in_the_local_store_loads_only_its_own_zones(tmp_path: Path) -> None:
    _fake_store_release(tmp_path, "2022b", "Europe/London")

    assert zones.available_releases(tmp_path) == ["2022b", "2026a"]
    london = zones.load("Europe/London", "2022b", tmp_path)
    assert offsets_at(london, "2026-03-29T00:59:59", "2026-03-29T01:00:00") == [
        "+00:00",
        "+01:00",
    ]
    with pytest.raises(ZoneNotFound):
        zones.load("America/New_York", "2022b", tmp_path)


@pytest.mark.parametrize(
    "name", ["Mars/Olympus_Mons", "america/new_york", "America/New_York ", "", "Nowhere"]
)
def test_unknown_zone_raises_zone_not_found(name: str) -> None:
    with pytest.raises(ZoneNotFound) as caught:
        zones.load(name, "2026a")
    assert (caught.value.field, caught.value.value) == ("timeZone", name)


@pytest.mark.parametrize(
    ("name", "meant"),
    [
        ("Europe/Berln", "Europe/Berlin"),  # a letter left out
        ("america/new_york", "America/New_York"),  # case only
        ("America/New York", "America/New_York"),  # a space for the underscore
        ("Mars/Olympus_Mons", None),  # nothing in the IANA list is close
        ("Nowhere", None),
    ],
)
def test_an_unknown_zone_names_the_closest_zone_of_the_release(
    name: str, meant: str | None
) -> None:
    with pytest.raises(ZoneNotFound) as caught:
        zones.load(name, "2026a")
    message = str(caught.value)
    if meant is None:
        assert "did you mean" not in message, message
    else:
        assert message.endswith(f"release 2026a; did you mean {meant}?"), message


@pytest.mark.parametrize(
    "name",
    [
        "../../../../etc/passwd",
        "../zones",
        "America/../../__init__.py",
        "/usr/share/zoneinfo/America/New_York",
        "America/New_York/../New_York",
        "..",
        "zoneinfo/../zones",
    ],
)
def test_path_traversal_names_are_rejected_as_unknown_zones(name: str) -> None:
    with pytest.raises(ZoneNotFound):
        zones.load(name, "2026a")


def test_loading_never_opens_the_system_zone_directory(
    tmp_path: Path, opened_files: list[str]
) -> None:
    # A fresh store key defeats the cache, so the zone file is really read now.
    zone = zones.load("Europe/Dublin", "2026a", tmp_path / "fresh-cache-key")

    assert zone.key == "Europe/Dublin"
    tzdata_root = str(Path(tzdata.__file__).parent)
    zone_files = [p for p in opened_files if "zoneinfo" in p or p.endswith("zones")]
    assert zone_files, "the zone file was not read at all"
    assert all(p.startswith(tzdata_root) for p in zone_files), zone_files
    assert not [p for p in opened_files if p.startswith("/usr/share/zoneinfo")]


def test_loading_works_with_a_bogus_tzpath(tmp_path: Path) -> None:
    zoneinfo.reset_tzpath(to=[str(tmp_path / "no-such-zoneinfo")])
    try:
        zone = zones.load("Australia/Lord_Howe", "2026a", tmp_path / "fresh-cache-key")
    finally:
        zoneinfo.reset_tzpath()
    # Lord Howe 2026: +11:00 until 2026-04-04 15:00Z, then +10:30.
    assert offsets_at(zone, "2026-04-04T14:59:59", "2026-04-04T15:00:00") == ["+11:00", "+10:30"]


def test_zone_names_lists_the_release_and_includes_the_test_zones() -> None:
    names = zones.zone_names("2026a")
    assert {"America/New_York", "Pacific/Apia", "Antarctica/Troll", "Asia/Tehran"} <= names
    assert all(".." not in name and not name.startswith("/") for name in names)
