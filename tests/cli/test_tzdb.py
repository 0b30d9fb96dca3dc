"""``almanac tzdb list | add | diff``: the pinned tz database release store.

The tzdata wheels of releases 2022a and 2022b are downloaded once (pip, from the package index)
into pytest's cache directory; the tests then add them offline with ``--from-wheel``. One test
exercises the real download path of ``almanac tzdb add 2022b``.

Golden expectations for the diff come from the tz change itself, not from this code: tz release
2022b's NEWS says "Iran no longer observes DST after 2022". In 2022a, Asia/Tehran (+03:30) kept
its rule for 2023: DST (+04:30) from Farvardin 2 00:00 (2023-03-22 00:00 → 01:00) to Shahrivar 31
00:00 DST (2023-09-22 00:00 +04:30 → 2023-09-21 23:00 +03:30); 2022 itself has the same DST
(2022-03-22 … 2022-09-21) in both releases.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import zipfile
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from almanac import tzdb
from almanac.cli import app
from timecontract import zones

WINDOW = ["--from", "2022-01-01T00:00:00Z", "--until", "2024-01-01T00:00:00Z"]


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "data"
    monkeypatch.setenv("ALMANAC_DATA_DIR", str(folder))
    monkeypatch.delenv("ALMANAC_TZDB_DIR", raising=False)
    return folder


@pytest.fixture
def store(data_dir: Path) -> Path:
    return data_dir / "tzdb"


@pytest.fixture(scope="session")
def wheels(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """{"2022a": Path, "2022b": Path}: tzdata wheels, downloaded once (kept in pytest's cache)."""
    cache = getattr(request.config, "cache", None)
    base = cache.mkdir("tzdata-wheels") if cache else tmp_path_factory.mktemp("tzdata-wheels")
    found = {}
    for release in ("2022a", "2022b"):
        folder = Path(base) / release
        folder.mkdir(exist_ok=True)
        existing = sorted(folder.glob("tzdata-*.whl"))
        found[release] = existing[0] if existing else tzdb.download_wheel(release, folder)
    return found


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def add_from_wheel(release: str, wheel: Path) -> None:
    result = run("tzdb", "add", release, "--from-wheel", str(wheel))
    assert result.exit_code == 0, result.output


# --- release names -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("release", "version"),
    [("2026a", "2026.1"), ("2022b", "2022.2"), ("2022g", "2022.7"), ("2021z", "2021.26")],
)
def test_release_maps_to_tzdata_distribution_version(release: str, version: str) -> None:
    assert tzdb.distribution_version(release) == version
    assert tzdb.requirement(release) == f"tzdata=={version}.*"  # post releases match too


# --- list --------------------------------------------------------------------------------------


def test_list_marks_the_installed_release(store: Path) -> None:
    result = run("tzdb", "list", "--json")
    assert result.exit_code == 0, result.output
    entries = json.loads(result.stdout)
    assert [(e["release"], e["source"], e["installed"]) for e in entries] == [
        ("2026a", "installed", True)
    ]
    assert entries[0]["distributionVersion"] == "2026.1"
    table = run("tzdb", "list")
    assert table.exit_code == 0
    assert "2026a" in table.stdout and "installed" in table.stdout


def test_list_shows_store_releases_and_flags_broken_entries(store: Path, wheels: dict) -> None:
    add_from_wheel("2022b", wheels["2022b"])
    (store / "2021e").mkdir()  # no RELEASE file: the loader ignores it, list says why
    entries = json.loads(run("tzdb", "list", "--json").stdout)
    by_release = {e["release"]: e for e in entries}
    assert by_release["2022b"]["source"] == "store"
    assert by_release["2022b"]["distributionVersion"] == "2022.2"
    assert by_release["2022b"]["problem"] is None
    assert by_release["2021e"]["problem"] == "no RELEASE file"
    assert zones.available_releases(store) == ["2022b", "2026a"]


# --- add ---------------------------------------------------------------------------------------


def test_add_from_wheel_stores_the_layout_zones_reads(store: Path, wheels: dict) -> None:
    result = run("tzdb", "add", "2022b", "--from-wheel", str(wheels["2022b"]))
    assert result.exit_code == 0, result.output
    assert "added" in result.stdout
    assert (store / "2022b" / "RELEASE").read_text().strip() == "2022b"
    assert (store / "2022b" / "tzdata" / "zones").is_file()
    source = json.loads((store / "2022b" / "SOURCE.json").read_text())
    assert source["distributionVersion"] == "2022.2"
    assert [p.name for p in store.iterdir()] == ["2022b"]  # no temporary left behind
    tehran = zones.load("Asia/Tehran", "2022b", store)
    # 2023-07-01 12:00 in Tehran: +03:30 in 2022b (no DST after 2022).
    assert datetime(2023, 7, 1, 12, tzinfo=tehran).utcoffset() == timedelta(hours=3, minutes=30)


def test_add_is_idempotent(store: Path, wheels: dict) -> None:
    add_from_wheel("2022b", wheels["2022b"])
    before = (store / "2022b" / "SOURCE.json").stat().st_mtime_ns
    again = run("tzdb", "add", "2022b", "--from-wheel", str(wheels["2022b"]))
    assert again.exit_code == 0, again.output
    assert "already" in again.stdout
    assert (store / "2022b" / "SOURCE.json").stat().st_mtime_ns == before


def test_add_installed_release_is_a_no_op(store: Path) -> None:
    result = run("tzdb", "add", "2026a")
    assert result.exit_code == 0, result.output
    assert "already available" in result.stdout
    assert not store.exists()


def test_add_rejects_a_wheel_of_another_release(store: Path, wheels: dict) -> None:
    result = run("tzdb", "add", "2022a", "--from-wheel", str(wheels["2022b"]))
    assert result.exit_code == 1
    assert "2022b" in result.stderr and "2022a" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (store / "2022a").exists()
    assert not store.exists() or list(store.iterdir()) == []


def _rewrite(source: Path, dest: Path, changes: dict[str, bytes], fix_record: bool) -> Path:
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(dest, "w") as new:
        for info in old.infolist():
            content = changes.get(info.filename, old.read(info))
            if fix_record and info.filename.endswith(".dist-info/RECORD"):
                lines = []
                for line in content.decode().splitlines():
                    name = line.split(",")[0]
                    if name in changes:
                        digest = hashlib.sha256(changes[name]).digest()
                        b64 = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
                        line = f"{name},sha256={b64},{len(changes[name])}"
                    lines.append(line)
                content = ("\n".join(lines) + "\n").encode()
            new.writestr(info, content)
    return dest


def _relabelled_init(wheel: Path) -> bytes:
    with zipfile.ZipFile(wheel) as archive:
        text = archive.read("tzdata/__init__.py").decode()
    return re.sub(r'IANA_VERSION = "2022b"', 'IANA_VERSION = "2022a"', text).encode()


def test_add_rejects_a_wheel_whose_files_do_not_match_record(
    store: Path, wheels: dict, tmp_path: Path
) -> None:
    forged = _rewrite(
        wheels["2022b"],
        tmp_path / "tzdata-2022.1-py2.py3-none-any.whl",
        {"tzdata/__init__.py": _relabelled_init(wheels["2022b"])},
        fix_record=False,
    )
    result = run("tzdb", "add", "2022a", "--from-wheel", str(forged))
    assert result.exit_code == 1
    assert "RECORD" in result.stderr
    assert not (store / "2022a").exists()


def test_add_rejects_a_wheel_whose_two_version_marks_disagree(
    store: Path, wheels: dict, tmp_path: Path
) -> None:
    # __init__.py relabelled (RECORD fixed up to match), but tzdata.zi still says 2022b.
    forged = _rewrite(
        wheels["2022b"],
        tmp_path / "tzdata-2022.1-py2.py3-none-any.whl",
        {"tzdata/__init__.py": _relabelled_init(wheels["2022b"])},
        fix_record=True,
    )
    result = run("tzdb", "add", "2022a", "--from-wheel", str(forged))
    assert result.exit_code == 1
    assert "tzdata.zi says 2022b" in result.stderr
    assert not (store / "2022a").exists()


def test_add_rejects_a_file_that_is_not_a_wheel(store: Path, tmp_path: Path) -> None:
    junk = tmp_path / "tzdata-2022.2-py2.py3-none-any.whl"
    junk.write_bytes(b"not a zip")
    result = run("tzdb", "add", "2022b", "--from-wheel", str(junk))
    assert result.exit_code == 1
    assert "not a wheel" in result.stderr


@pytest.mark.parametrize("name", ["2022", "22b", "2022B", "2022bb", "latest", "../2022b"])
def test_add_malformed_release_exits_2_with_one_line(name: str) -> None:
    result = run("tzdb", "add", name)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "not an IANA tz release name" in result.stderr


def test_add_existing_folder_that_is_not_a_release_is_a_conflict(store: Path) -> None:
    (store / "2022b").mkdir(parents=True)
    result = run("tzdb", "add", "2022b")
    assert result.exit_code == 1
    assert "not a stored release" in result.stderr


def test_add_downloads_verifies_and_stores_2022b(store: Path) -> None:
    result = run("tzdb", "add", "2022b")
    assert result.exit_code == 0, result.output
    assert "added from tzdata 2022.2" in result.stdout
    assert zones.available_releases(store) == ["2022b", "2026a"]
    source = json.loads((store / "2022b" / "SOURCE.json").read_text())
    assert source["wheel"].startswith("tzdata-2022.2")


def test_add_release_not_on_the_index_is_bad_input_exit_2() -> None:
    result = run("tzdb", "add", "2022z")  # there were 7 releases in 2022 (a–g)
    assert result.exit_code == 2
    assert "2022z is not published" in result.stderr
    assert result.stderr.count("\n") == 1


def test_a_downloaded_release_records_the_index_sha256_it_matched(store: Path) -> None:
    published = tzdb.resolve_on_index("2022b")
    result = run("tzdb", "add", "2022b")
    assert result.exit_code == 0, result.output
    source = json.loads((store / "2022b" / "SOURCE.json").read_text())
    assert source["indexSha256"] == published.sha256 == source["sha256"]
    assert source["wheel"] == published.filename


def _served(wheel: Path, published_sha256: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake the index: it publishes ``published_sha256``, the download serves ``wheel``."""
    indexed = tzdb.IndexedWheel("2022.2", wheel.name, published_sha256)
    monkeypatch.setattr(tzdb, "resolve_on_index", lambda release, **kw: indexed)

    def fetch(indexed: tzdb.IndexedWheel, release: str, dest: Path, **kw: object) -> Path:
        copy = dest / wheel.name
        copy.write_bytes(wheel.read_bytes())
        return copy

    monkeypatch.setattr(tzdb, "fetch_wheel", fetch)


def test_a_download_that_is_not_what_the_index_published_is_not_stored(
    store: Path, wheels: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    _served(wheels["2022b"], "0" * 64, monkeypatch)  # a mirror serving another file
    result = run("tzdb", "add", "2022b")
    assert result.exit_code == 1
    assert "the package index published" in result.stderr
    assert result.stderr.count("\n") == 1
    assert not (store / "2022b").exists()


def test_a_download_matching_the_published_sha256_is_stored(
    store: Path, wheels: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    digest = hashlib.sha256(wheels["2022b"].read_bytes()).hexdigest()
    _served(wheels["2022b"], digest, monkeypatch)
    result = run("tzdb", "add", "2022b")
    assert result.exit_code == 0, result.output
    assert json.loads((store / "2022b" / "SOURCE.json").read_text())["indexSha256"] == digest


def test_the_client_download_is_pinned_to_the_published_sha256(tmp_path: Path) -> None:
    # The real client, told a hash the index never published: it refuses to hand the file over.
    real = tzdb.resolve_on_index("2022b")
    forged = tzdb.IndexedWheel(real.version, real.filename, "f" * 64)
    with pytest.raises(tzdb.DownloadFailed):
        tzdb.fetch_wheel(forged, "2022b", tmp_path)
    assert list(tmp_path.glob("**/*.whl")) == []


def test_check_published_sha256_refuses_a_tampered_wheel(wheels: dict, tmp_path: Path) -> None:
    original = wheels["2022b"]
    published = hashlib.sha256(original.read_bytes()).hexdigest()
    tampered = tmp_path / original.name
    tampered.write_bytes(original.read_bytes() + b"\0")
    tzdb.check_published_sha256(original, published)
    with pytest.raises(tzdb.VerificationFailed, match="package index published"):
        tzdb.check_published_sha256(tampered, published)


@pytest.mark.parametrize(
    "member",
    ["tzdata/../../escape.txt", "tzdata/zoneinfo/../../../escape.txt", "tzdata/..\\\\escape.txt"],
)
def test_a_wheel_with_a_path_escaping_its_tree_is_refused(
    store: Path, wheels: dict, tmp_path: Path, member: str
) -> None:
    forged = tmp_path / "tzdata-2022.2-py2.py3-none-any.whl"
    with zipfile.ZipFile(wheels["2022b"]) as old, zipfile.ZipFile(forged, "w") as new:
        for info in old.infolist():
            new.writestr(info, old.read(info))
        new.writestr(member, b"planted")
    result = run("tzdb", "add", "2022b", "--from-wheel", str(forged))
    assert result.exit_code == 1
    assert "unsafe member path" in result.stderr
    assert not (store / "2022b").exists()
    assert list(tmp_path.parent.glob("**/escape.txt")) == []


def test_a_wheel_whose_tree_exceeds_the_size_bound_is_refused(
    store: Path, wheels: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tzdb, "MAX_WHEEL_CONTENT_BYTES", 100_000)  # the real tree is ~2 MB
    result = run("tzdb", "add", "2022b", "--from-wheel", str(wheels["2022b"]))
    assert result.exit_code == 1
    assert "implausibly large" in result.stderr
    assert not (store / "2022b").exists()


# --- diff --------------------------------------------------------------------------------------


def _tehran_spec(tmp_path: Path, hour: int, minute: int, gap_policy: str = "SKIP") -> Path:
    path = tmp_path / f"tehran-{hour:02d}{minute:02d}.yaml"
    path.write_text(
        "schema: scheduleSpec.v1\n"
        "scheduleId: tehran-daily\n"
        "revision: 1\n"
        "timeZone: Asia/Tehran\n"
        "tzdbVersion: 2022a\n"
        f'rule: "FREQ=DAILY;BYHOUR={hour};BYMINUTE={minute}"\n'
        f"gapPolicy: {gap_policy}\n"
        "cutoverAt: 2022-01-01T00:00:00Z\n"
    )
    return path


def _days(first: date, last: date) -> list[date]:
    return [first + timedelta(days=n) for n in range((last - first).days + 1)]


@pytest.fixture
def both_releases(wheels: dict) -> None:
    add_from_wheel("2022a", wheels["2022a"])
    add_from_wheel("2022b", wheels["2022b"])


@pytest.mark.usefixtures("both_releases")
def test_diff_tehran_noon_2022a_to_2022b_lists_the_abolished_2023_dst(tmp_path: Path) -> None:
    spec = _tehran_spec(tmp_path, 12, 0)
    result = run("tzdb", "diff", str(spec), "--to", "2022b", *WINDOW, "--json")
    assert result.exit_code == 0, result.output
    changes = json.loads(result.stdout)
    # 12:00 is DST under 2022a on 2023-03-22 … 2023-09-21 (184 days), standard time under 2022b.
    expected_days = _days(date(2023, 3, 22), date(2023, 9, 21))
    assert len(expected_days) == 184
    assert [c["nominalLocal"] for c in changes] == [f"{d}T12:00:00" for d in expected_days]
    for change, day in zip(changes, expected_days, strict=True):
        assert change["occurrenceId"] == f"tehran-daily.r1.{day:%Y%m%d}T120000.f0"
        assert change["fold"] == 0
        assert change["changed"] == ["instant", "utcOffset"]
        assert change["from"]["instant"] == f"{day}T07:30:00Z"
        assert change["from"]["utcOffset"] == "+04:30"
        assert change["from"]["tzdbVersion"] == "2022a"
        assert change["to"]["instant"] == f"{day}T08:30:00Z"
        assert change["to"]["utcOffset"] == "+03:30"
        assert change["to"]["tzdbVersion"] == "2022b"
        assert change["from"]["disposition"] == change["to"]["disposition"] == "PLANNED"
    assert "184 occurrences" in result.stderr


@pytest.mark.usefixtures("both_releases")
def test_diff_tehran_gap_time_changes_disposition(tmp_path: Path) -> None:
    # 00:30 is in 2022a's 2023-03-22 gap (00:00 → 01:00): SKIPPED_GAP there, a plain run in 2022b.
    spec = _tehran_spec(tmp_path, 0, 30, gap_policy="SKIP")
    changes = json.loads(run("tzdb", "diff", str(spec), "--to", "2022b", *WINDOW, "--json").stdout)
    first = changes[0]
    assert first["nominalLocal"] == "2023-03-22T00:30:00"
    assert first["from"]["disposition"] == "SKIPPED_GAP"
    assert first["from"]["instant"] is None
    assert first["from"]["gapAt"] == "2023-03-21T20:30:00Z"  # 00:00 at +03:30
    assert first["to"]["disposition"] == "PLANNED"
    assert first["to"]["instant"] == "2023-03-21T21:00:00Z"
    assert first["to"]["utcOffset"] == "+03:30"
    # Then 00:30 is at +04:30 under 2022a on 2023-03-23 … 2023-09-21; 2023-09-22 00:30 is after
    # the fall-back (which happens at 00:00 DST) in both releases.
    rest = _days(date(2023, 3, 23), date(2023, 9, 21))
    assert [c["nominalLocal"] for c in changes[1:]] == [f"{d}T00:30:00" for d in rest]
    assert all(c["changed"] == ["instant", "utcOffset"] for c in changes[1:])
    # 2022's gap (2022-03-22 00:30) is the same in both releases: not a change.
    assert all(not c["nominalLocal"].startswith("2022") for c in changes)


@pytest.mark.usefixtures("both_releases")
def test_diff_table_and_zero_changes_exit_0(tmp_path: Path) -> None:
    spec = _tehran_spec(tmp_path, 12, 0)
    table = run("tzdb", "diff", str(spec), "--to", "2022b", *WINDOW)
    assert table.exit_code == 0, table.output
    assert "2023-03-22T12:00:00" in table.stdout and "+04:30" in table.stdout
    assert "184 occurrences of tehran-daily r1 change from 2022a to 2022b" in table.stdout
    # 2022 only: both releases agree.
    same = run(
        "tzdb", "diff", str(spec), "--to", "2022b",
        "--from", "2022-01-01T00:00:00Z", "--until", "2023-01-01T00:00:00Z",
    )  # fmt: skip
    assert same.exit_code == 0, same.output
    assert "0 occurrences" in same.stdout


@pytest.mark.usefixtures("both_releases")
def test_diff_default_window_is_cutover_plus_366_days(tmp_path: Path) -> None:
    spec = _tehran_spec(tmp_path, 12, 0)
    result = run("tzdb", "diff", str(spec), "--to", "2022b", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == []  # 2022-01-01 … 2023-01-02: no change yet
    assert "2022-01-01T00:00:00Z → 2023-01-02T00:00:00Z" in result.stderr


def test_diff_errors(tmp_path: Path, wheels: dict) -> None:
    add_from_wheel("2022a", wheels["2022a"])
    spec = _tehran_spec(tmp_path, 12, 0)
    missing = run("tzdb", "diff", str(spec), "--to", "2022b")
    assert missing.exit_code == 2
    assert "tzdb add 2022b" in missing.stderr
    malformed = run("tzdb", "diff", str(spec), "--to", "2022")
    assert malformed.exit_code == 2
    assert "not an IANA tz release name" in malformed.stderr
    naive = run("tzdb", "diff", str(spec), "--to", "2026a", "--from", "2023-01-01T00:00:00")
    assert naive.exit_code == 2
    assert "UTC offset" in naive.stderr


def test_diff_api_matches_by_nominal_time_and_fold(store: Path, wheels: dict) -> None:
    add_from_wheel("2022a", wheels["2022a"])
    add_from_wheel("2022b", wheels["2022b"])
    from timecontract import parse_spec

    spec = parse_spec(
        {
            "schema": "scheduleSpec.v1",
            "scheduleId": "tehran-fold",
            "revision": 1,
            "timeZone": "Asia/Tehran",
            "tzdbVersion": "2022a",
            "rule": "FREQ=DAILY;BYHOUR=23;BYMINUTE=30",
            "foldPolicy": "BOTH",
            "cutoverAt": "2023-09-01T00:00:00Z",
        }
    )
    start = datetime(2023, 9, 20, tzinfo=UTC)
    changes = tzdb.diff_releases(spec, "2022b", start, start + timedelta(days=3), store=store)
    # 2023-09-20 23:30 is +04:30 under 2022a, +03:30 under 2022b. 2023-09-21 23:30 occurs twice
    # under 2022a (fold), once (+03:30) under 2022b: its fold-0 instant moves, and the fold-1
    # record exists only under 2022a. 2023-09-22 23:30 is +03:30 in both.
    assert [(c.nominal_local.isoformat(), c.fold) for c in changes] == [
        ("2023-09-20T23:30:00", 0),
        ("2023-09-21T23:30:00", 0),
        ("2023-09-21T23:30:00", 1),
    ]
    _, fold0, fold1 = changes
    assert fold0.to_json()["from"]["instant"] == "2023-09-21T19:00:00Z"  # type: ignore[index]
    assert fold0.to_json()["to"]["instant"] == "2023-09-21T20:00:00Z"  # type: ignore[index]
    assert fold1.after is None
    assert fold1.to_json()["from"]["instant"] == "2023-09-21T20:00:00Z"  # type: ignore[index]


def test_add_release_older_than_the_index_points_to_the_tarball(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Said without the index: with none reachable, still the pointer (exit 2), not exit 1.
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:1/simple")
    monkeypatch.setenv("PIP_RETRIES", "0")
    result = run("tzdb", "add", "2019c")  # tzdata wheels start at 2020.1 (2020a)
    assert result.exit_code == 2
    assert "2019c is not published" in result.stderr
    assert "--from-tarball tzdata2019c.tar.gz" in result.stderr
    assert result.stderr.count("\n") == 1
