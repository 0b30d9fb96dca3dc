"""What keeps ``almanac --help``, ``validate`` and ``preview`` fast (``bench/cli_startup.py``).

The bench measures the time; these tests hold the causes: the light commands load neither Rich,
pydantic-settings, asyncio, the action adapters' httpx, smtplib or temporalio, nor SQLAlchemy,
Starlette, Jinja2 or the ledger; the entry point imports and builds only the typed command's
group; the spec and parameter models never make pydantic scan for plugins; the light path
reading of the data directory agrees with ``AlmanacSettings``; the control path
(``almanac.client``, and the commands that only talk to Temporal) loads no SQLAlchemy, since
``import ledger`` loads the operations' modules only on first use.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from almanac.cli import GROUP_NAMES, OWNERS, build_app, group, groups_for
from almanac.cli.output import PlainTable
from almanac.paths import data_dir_from_environment, tzdb_store_from_environment
from almanac.settings import AlmanacSettings

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(str(p) for p in (REPO / "examples").glob("*.yaml"))
SEED = str(REPO / "examples" / "daily-ops-summary.yaml")
NOT_ON_THE_LIGHT_PATH = {"rich", "pydantic_settings", "asyncio", "markdown_it", "pygments"}
ADAPTER_IMPORTS = {"httpx", "httpcore", "anyio", "h11", "standardwebhooks", "smtplib", "temporalio"}
SERVER_IMPORTS = {"temporalio", "sqlalchemy", "starlette", "jinja2", "ledger", "workflows"}
"""What the commands that talk to Temporal, the ledger or the console load: a light command
checks and prints specs without any of them."""
LIGHT_ALMANAC_MODULES = [
    "almanac",
    "almanac.cli",
    "almanac.cli.output",
    "almanac.cli.spec",
    "almanac.paths",
    "almanac.text",
]
"""Every ``almanac`` module ``validate`` and ``preview`` load: their group's, not the others'."""
"""What the action adapters import: ``validate`` checks actions through the parameter catalog,
so none of it may load (``activities.actions.catalog``)."""

PROBE = """
import json, sys
from almanac.cli import build_app, groups_for
args = sys.argv[1:]
code = None
try:
    if args[0] == "--python":
        exec(args[1])
    else:
        build_app(groups_for(args))(args=args, prog_name="almanac")
except SystemExit as exc:
    code = exc.code
plugins = sys.modules.get("pydantic.plugin._loader")
report = {
    "exit": code,
    "modules": sorted({name.split(".")[0] for name in sys.modules}),
    "almanac": sorted(name for name in sys.modules if name.split(".")[0] == "almanac"),
    "plugins_scanned": plugins is not None and plugins._plugins is not None,
}
sys.stderr.write("\\nREPORT " + json.dumps(report) + "\\n")
"""


def probe(*args: str, env: dict[str, str] | None = None) -> dict[str, object]:
    """Run the entry point's path in a fresh interpreter: exit code, top-level modules, plugins.

    ``probe("--python", code)`` runs ``code`` instead of the entry point; ``env`` is added to the
    environment.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"} | (env or {})
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    line = [x for x in result.stderr.splitlines() if x.startswith("REPORT ")][-1]
    report: dict[str, object] = json.loads(line.removeprefix("REPORT "))
    return report


@pytest.mark.parametrize(
    "args",
    [
        ("--help",),
        ("validate", *EXAMPLES),
        ("preview", SEED, "--from", "2026-11-01T00:00:00Z", "--to", "2026-11-02T00:00:00Z"),
        ("preview", SEED, "--to", "soon"),
    ],
    ids=["help", "validate", "preview", "preview-bad-to"],
)
def test_light_commands_load_no_rich_settings_or_asyncio(args: tuple[str, ...]) -> None:
    report = probe(*args)
    assert report["exit"] in (0, 2)
    modules = set(report["modules"])  # type: ignore[call-overload]
    assert modules & NOT_ON_THE_LIGHT_PATH == set()
    # validate checks each action against its adapter's parameter model (issue 10: no worker
    # needed) without importing the adapters, and the models are built without the plugin scan.
    assert modules & ADAPTER_IMPORTS == set()
    assert report["plugins_scanned"] is False
    assert modules & SERVER_IMPORTS == set()
    if args[0] != "--help":  # help lists every group's commands, so it imports every group
        assert report["almanac"] == LIGHT_ALMANAC_MODULES


@pytest.mark.parametrize(
    ("replace", "by"),
    [("url: http://127.0.0.1:8765/effects", "url: not-a-url"), ("name: http", "name: ftp")],
    ids=["bad-parameter", "unknown-name"],
)
def test_validate_still_refuses_a_bad_action_on_the_light_path(
    replace: str, by: str, tmp_path: Path
) -> None:
    # The test above must not pass because validate stopped checking actions: a bad action is
    # still refused (exit 2), and still without the adapters' imports.
    text = (REPO / "examples" / "month-end.yaml").read_text()
    assert replace in text
    spec = tmp_path / "bad-action.yaml"
    spec.write_text(text.replace(replace, by))
    report = probe("validate", str(spec))
    assert report["exit"] == 2
    assert set(report["modules"]) & ADAPTER_IMPORTS == set()  # type: ignore[call-overload]


def test_the_probe_sees_the_adapters_when_the_registry_is_built() -> None:
    # The probe's module list shows the adapters' imports when they happen (the worker's path).
    report = probe("--python", "from activities.actions import ActionRegistry as R; R.default()")
    assert ADAPTER_IMPORTS - {"temporalio"} <= set(report["modules"])  # type: ignore[operator]


def test_the_probe_sees_rich_when_a_command_loads_it() -> None:
    # `tzdb list` prints a Rich table: the probe must see it, or the test above proves nothing.
    report = probe("tzdb", "list")
    assert "rich" in set(report["modules"])  # type: ignore[call-overload]


def test_the_python_client_loads_no_sqlalchemy() -> None:
    # almanac.client imports almanac.manual, which imports the ledger package for its manual
    # occurrence IDs: the package must not load the operations' SQL (and SQLAlchemy) with it.
    report = probe("--python", "import almanac.client")
    assert "sqlalchemy" not in set(report["modules"])  # type: ignore[call-overload]


UNREACHABLE = "127.0.0.1:1"
"""A Temporal address nothing listens on: the command fails with exit 1 after it connects."""


@pytest.mark.parametrize(
    "args",
    [
        ("disable", "some-id", "--reason", "maintenance"),
        ("enable", "some-id"),
        ("delete", "some-id", "--reason", "retired"),
        ("apply", str(REPO / "examples" / "every-10-seconds.yaml")),  # a spec with an action
    ],
    ids=["disable", "enable", "delete", "apply"],
)
def test_control_commands_without_the_ledger_load_no_sqlalchemy(
    args: tuple[str, ...], tmp_path: Path
) -> None:
    # These commands only talk to Temporal: the worker's activities write the ledger. (`status`
    # and `upcoming` read the ledger itself, so they load SQLAlchemy when Temporal answers.)
    env = {"ALMANAC_TEMPORAL_ADDRESS": UNREACHABLE, "ALMANAC_DATA_DIR": str(tmp_path)}
    report = probe(*args, env=env)
    assert report["exit"] == 1  # the operational failure: Temporal unreachable
    assert "sqlalchemy" not in set(report["modules"])  # type: ignore[call-overload]


def test_the_probe_sees_sqlalchemy_when_a_command_reads_the_ledger(tmp_path: Path) -> None:
    # `ledger list` reads a SQLite ledger: the probe must see SQLAlchemy, or the tests above prove
    # nothing.
    url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    report = probe(
        "ledger", "list", "some-id", "--url", url, env={"ALMANAC_DATA_DIR": str(tmp_path)}
    )
    assert "sqlalchemy" in set(report["modules"])  # type: ignore[call-overload]


def test_the_command_map_names_what_each_group_mounts() -> None:
    mounted: dict[str, str] = {}
    for name in GROUP_NAMES:
        app = build_app([group(name)])
        command = typer.main.get_group(app)
        for command_name in command.commands:
            assert command_name not in mounted, f"{command_name} mounted by two groups"
            mounted[command_name] = name
    assert mounted == OWNERS


def test_groups_for_builds_the_typed_group_or_all_of_them() -> None:
    every = tuple(f"almanac.cli.{name}" for name in GROUP_NAMES)
    assert [g.__name__ for g in groups_for(["validate", "x.yaml"])] == ["almanac.cli.spec"]
    assert [g.__name__ for g in groups_for(["ledger", "show", "x"])] == ["almanac.cli.ledger"]
    for args in ([], ["--help"], ["no-such-command"]):
        assert tuple(g.__name__ for g in groups_for(args)) == every


def test_a_group_with_one_command_still_takes_the_command_name() -> None:
    # With only `gates` built the app must stay a group: `almanac gates --help` is the
    # command's help, not "unexpected extra argument (gates)".
    from typer.testing import CliRunner

    result = CliRunner().invoke(build_app(groups_for(["gates"])), ["gates", "--help"])
    assert result.exit_code == 0 and "Usage: almanac gates" in result.output


@pytest.mark.parametrize(
    "environ",
    [
        {},
        {"ALMANAC_DATA_DIR": "/srv/almanac"},
        {"ALMANAC_DATA_DIR": "/srv/almanac", "ALMANAC_TZDB_DIR": "/opt/tz"},
        {"almanac_tzdb_dir": "/opt/lower"},
        {"XDG_DATA_HOME": "/xdg"},
        {"XDG_DATA_HOME": "/xdg", "ALMANAC_DATA_DIR": "/d"},
    ],
)
def test_light_paths_agree_with_the_settings(
    environ: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in list(os.environ):
        if name.upper().startswith("ALMANAC_") or name == "XDG_DATA_HOME":
            monkeypatch.delenv(name)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    settings = AlmanacSettings()
    assert data_dir_from_environment() == settings.data_dir
    assert tzdb_store_from_environment() == settings.tzdb_store


def test_plain_table_aligns_columns_and_colors_only_when_asked() -> None:
    table = PlainTable("title", ["a", "long header"], caption="2 rows")
    table.add_row("wide cell", "x")
    table.add_row("y", "z", color="red")
    assert table.render() == (
        "title\n"
        "a          long header\n"
        "─────────  ───────────\n"
        "wide cell  x\n"
        "y          z\n"
        "2 rows\n"
    )
    assert "\x1b[31my          z\x1b[0m" in table.render(colors=True)
