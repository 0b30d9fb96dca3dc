"""``almanac dev --reset`` starts from empty state: the old state is moved aside, never deleted."""

from __future__ import annotations

from pathlib import Path

import pytest

from almanac.settings import AlmanacSettings
from almanac.stack.dev import DevError, DevOptions, reset_state


def options(data_dir: Path, **settings: object) -> DevOptions:
    return DevOptions(
        data_dir=data_dir,
        examples=Path("examples"),
        reset=True,
        settings=AlmanacSettings(data_dir=data_dir, **settings),  # type: ignore[arg-type]
    )


def test_reset_moves_every_state_file_aside_and_keeps_the_rest(tmp_path: Path) -> None:
    state = [
        "temporal.sqlite3",
        "temporal.sqlite3-wal",
        "ledger.sqlite3",
        "ledger.sqlite3-shm",
        "sink.sqlite3",
        "temporal.log",
    ]
    for name in [*state, "tzdb-notes.txt"]:
        (tmp_path / name).write_text(name)
    moved = reset_state(options(tmp_path))
    assert moved == tmp_path / "reset-1"
    assert sorted(p.name for p in moved.iterdir()) == sorted(state)
    assert (moved / "ledger.sqlite3").read_text() == "ledger.sqlite3"  # kept, not deleted
    assert sorted(p.name for p in tmp_path.iterdir()) == ["reset-1", "tzdb-notes.txt"]
    assert reset_state(options(tmp_path)) is None  # nothing left to move
    (tmp_path / "ledger.sqlite3").write_text("again")
    assert reset_state(options(tmp_path)) == tmp_path / "reset-2"


def test_reset_refuses_a_ledger_that_is_not_the_embedded_one(tmp_path: Path) -> None:
    (tmp_path / "temporal.sqlite3").write_text("x")
    url = "postgresql+psycopg://almanac:secret@db.example.com/almanac"
    with pytest.raises(DevError, match="ALMANAC_LEDGER_URL") as refused:
        reset_state(options(tmp_path, ledger_url=url))
    assert refused.value.exit_code == 2 and "secret" not in str(refused.value)
    assert (tmp_path / "temporal.sqlite3").exists()
