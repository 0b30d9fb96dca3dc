"""``almanac tzdb add --from-tarball``: an IANA source tarball, compiled with zic (issue 13).

The tarballs are built here: a ``version`` file and a tiny zone source in the tz data format
(zic(8)). Expected offsets come from the rule written in the source, computed by hand: DST
(+02:00) from the last Sunday of March 01:00 UTC to the last Sunday of October 01:00 UTC, i.e.
in 2019 from 2019-03-31T01:00Z to 2019-10-27T01:00Z, else +01:00.
"""

from __future__ import annotations

import io
import json
import tarfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from almanac import tzdb_tarball
from almanac.cli import app
from almanac.tzdb import AddStatus, VerificationFailed
from almanac.tzdb_tarball import add_release_from_tarball, find_zic
from timecontract import load_spec, occurrences, zones

pytestmark = pytest.mark.skipif(find_zic() is None, reason="zic (libc-bin) is not installed")

EUROPE = """\
# Rule	NAME	FROM	TO	-	IN	ON	AT	SAVE	LETTER/S
Rule	Tv	2000	max	-	Mar	lastSun	1:00u	1:00	S
Rule	Tv	2000	max	-	Oct	lastSun	1:00u	0	-
# Zone	NAME	STDOFF	RULES	FORMAT
Zone	Europe/Testville	1:00	Tv	CE%sT
"""
BACKWARD = "Link\tEurope/Testville\tEurope/Oldville\n"


def tarball(
    path: Path,
    files: dict[str, str] | None = None,
    *,
    extra: list[tarfile.TarInfo] | None = None,
) -> Path:
    files = (
        {"version": "2019c\n", "europe": EUROPE, "backward": BACKWARD} if files is None else files
    )
    with tarfile.open(path, "w:gz") as archive:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        for info in extra or []:
            archive.addfile(info, io.BytesIO(b"x" * info.size) if info.isfile() else None)
    return path


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "data"
    monkeypatch.setenv("ALMANAC_DATA_DIR", str(folder))
    monkeypatch.delenv("ALMANAC_TZDB_DIR", raising=False)
    return folder / "tzdb"


def offset_at(zone: str, text: str, store: Path) -> timedelta | None:
    instant = datetime.fromisoformat(text).replace(tzinfo=UTC)
    return instant.astimezone(zones.load(zone, "2019c", store)).utcoffset()


def test_cli_adds_a_compiled_release_the_zone_loader_reads(tmp_path: Path, store: Path) -> None:
    source = tarball(tmp_path / "tzdata2019c.tar.gz")
    result = CliRunner().invoke(app, ["tzdb", "add", "--from-tarball", str(source), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["release"] == "2019c"
    assert json.loads(result.stdout)["status"] == "ADDED"
    hour = timedelta(hours=1)
    assert offset_at("Europe/Testville", "2019-03-31T00:59:59", store) == hour
    assert offset_at("Europe/Testville", "2019-03-31T01:00:00", store) == 2 * hour
    assert offset_at("Europe/Testville", "2019-10-27T00:59:59", store) == 2 * hour
    assert offset_at("Europe/Testville", "2019-10-27T01:00:00", store) == hour
    assert offset_at("Europe/Oldville", "2019-07-01T00:00:00", store) == 2 * hour  # the Link
    listed = CliRunner().invoke(app, ["tzdb", "list", "--json"])
    entry = next(e for e in json.loads(listed.stdout) if e["release"] == "2019c")
    assert entry["problem"] is None
    source_json = json.loads((store / "2019c" / "SOURCE.json").read_text())
    assert (source_json["source"], source_json["tarball"]) == ("tarball", "tzdata2019c.tar.gz")


def test_a_spec_pinned_to_the_compiled_release_previews(tmp_path: Path, store: Path) -> None:
    add_release_from_tarball(tarball(tmp_path / "t.tar.gz"), store)
    spec = load_spec(
        {
            "schema": "scheduleSpec.v1",
            "scheduleId": "old-release",
            "revision": 1,
            "timeZone": "Europe/Testville",
            "tzdbVersion": "2019c",
            "rule": "FREQ=DAILY;BYHOUR=1;BYMINUTE=30",
            "cutoverAt": "2019-01-01T00:00:00Z",
        },
        store,
    )
    window = (datetime(2019, 3, 30, tzinfo=UTC), datetime(2019, 4, 1, tzinfo=UTC))
    got = [(r.instant_utc, r.utc_offset) for r in occurrences(spec, *window, tzdb_store=store)]
    # 01:30 local is before the switch (02:00 local = 01:00Z) on 2019-03-31, after it on 04-01.
    assert got == [
        (datetime(2019, 3, 30, 0, 30, tzinfo=UTC), timedelta(hours=1)),
        (datetime(2019, 3, 31, 0, 30, tzinfo=UTC), timedelta(hours=1)),
        (datetime(2019, 3, 31, 23, 30, tzinfo=UTC), timedelta(hours=2)),
    ]


def test_adding_twice_is_a_no_op_and_the_version_must_match(tmp_path: Path, store: Path) -> None:
    source = tarball(tmp_path / "t.tar.gz")
    assert add_release_from_tarball(source, store, release="2019c").status is AddStatus.ADDED
    assert add_release_from_tarball(source, store).status is AddStatus.ALREADY_PRESENT
    with pytest.raises(VerificationFailed, match="2019c, not 2019b"):
        add_release_from_tarball(source, store, release="2019b")
    assert not (store / "2019b").exists()
    result = CliRunner().invoke(app, ["tzdb", "add", "2019b", "--from-tarball", str(source)])
    assert result.exit_code == 1
    assert "not 2019b" in result.stderr


def test_release_argument_or_tarball_is_required(store: Path) -> None:
    result = CliRunner().invoke(app, ["tzdb", "add"])
    assert result.exit_code == 2
    assert "--from-tarball" in result.stderr


def _refused(source: Path, store: Path, match: str) -> None:
    with pytest.raises(VerificationFailed, match=match):
        add_release_from_tarball(source, store)
    assert not (store / "2019c").exists()
    assert not store.exists() or not any(p.name.startswith(".add-") for p in store.iterdir())


def test_a_member_path_leaving_the_folder_is_refused(tmp_path: Path, store: Path) -> None:
    evil = tarfile.TarInfo("../evil")
    evil.size = 4
    _refused(tarball(tmp_path / "t.tar.gz", extra=[evil]), store, "unsafe path")
    absolute = tarfile.TarInfo("/tmp/evil")
    absolute.size = 4
    _refused(tarball(tmp_path / "u.tar.gz", extra=[absolute]), store, "unsafe path")
    assert not (tmp_path / "evil").exists()


def test_links_and_devices_in_the_tarball_are_refused(tmp_path: Path, store: Path) -> None:
    link = tarfile.TarInfo("europe-link")
    link.type = tarfile.SYMTYPE
    link.linkname = "/etc/passwd"
    _refused(tarball(tmp_path / "t.tar.gz", extra=[link]), store, "not a regular file")
    fifo = tarfile.TarInfo("pipe")
    fifo.type = tarfile.FIFOTYPE
    _refused(tarball(tmp_path / "u.tar.gz", extra=[fifo]), store, "not a regular file")


def test_size_bounds_are_enforced(
    tmp_path: Path, store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tarball(tmp_path / "t.tar.gz")
    monkeypatch.setattr(tzdb_tarball, "MAX_TARBALL_BYTES", 64)
    _refused(source, store, "larger than 64 bytes")
    monkeypatch.setattr(tzdb_tarball, "MAX_TARBALL_BYTES", 1 << 20)
    monkeypatch.setattr(tzdb_tarball, "MAX_SOURCE_BYTES", 100)
    _refused(source, store, "exceed 100 bytes")
    monkeypatch.setattr(tzdb_tarball, "MAX_SOURCE_BYTES", 1 << 20)
    monkeypatch.setattr(tzdb_tarball, "MAX_MEMBERS", 2)
    _refused(source, store, "more than 2 members")


def test_a_tarball_without_a_sound_version_file_is_refused(tmp_path: Path, store: Path) -> None:
    no_version = tarball(tmp_path / "t.tar.gz", {"europe": EUROPE})
    _refused(no_version, store, "no version file")
    bad_version = tarball(tmp_path / "u.tar.gz", {"version": "latest\n", "europe": EUROPE})
    _refused(bad_version, store, "not YYYYx")


def test_data_zic_refuses_is_refused_with_its_message(tmp_path: Path, store: Path) -> None:
    broken = tarball(tmp_path / "t.tar.gz", {"version": "2019c\n", "europe": "Zone Nowhere\n"})
    _refused(broken, store, "zic refused")


def test_not_a_tarball_is_refused(tmp_path: Path, store: Path) -> None:
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"not a tarball at all")
    _refused(junk, store, "not a readable tar archive")


@pytest.mark.parametrize(
    ("name", "reason"),
    [("junk.tar.gz", "not a readable tar archive"), ("missing.tar.gz", "no such file")],
)
def test_a_file_that_is_no_tarball_is_one_line_exit_2(
    tmp_path: Path, store: Path, name: str, reason: str
) -> None:
    # Third trial: tarfile's five-line message and exit 1 for what is bad input.
    source = tmp_path / name
    if name.startswith("junk"):
        source.write_bytes(b"not a tarball at all")
    result = CliRunner().invoke(app, ["tzdb", "add", "--from-tarball", str(source)])
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and reason in result.stderr
