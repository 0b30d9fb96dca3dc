"""``--json`` on the commands that gained it: validate, db upgrade, tzdb add (no server needed)."""

from __future__ import annotations

import json
from pathlib import Path

from timecontract.zones import INSTALLED_RELEASE

SEED = Path(__file__).parents[2] / "examples" / "daily-ops-summary.yaml"


def test_validate_json_lists_each_file_with_its_problems_and_exits_2(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "bad.yaml"
    bad.write_text(SEED.read_text().replace("gapPolicy: SKIP", "gapPolicy: SOMETIMES"))
    result = run("validate", "--json", str(SEED), str(bad))
    assert result.exit_code == 2
    good, wrong = json.loads(result.stdout)
    assert good == {
        "file": str(SEED),
        "valid": True,
        "scheduleId": "daily-ops-summary",
        "revision": 7,
        "applicable": False,  # the seed's example names no action
        "problems": [],
        "warnings": [],
    }
    assert wrong["valid"] is False and wrong["file"] == str(bad)
    assert [(p["field"], p["value"]) for p in wrong["problems"]] == [("gapPolicy", "SOMETIMES")]


def test_validate_json_tells_a_missing_field_from_an_explicit_null(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # A field not given has no value, as its text line has none (cutoverAt: is required); a
    # null the file writes is "value": null (cutoverAt=null: ...).
    cutover = next(line for line in SEED.read_text().splitlines() if line.startswith("cutoverAt:"))
    missing, null = tmp_path / "missing.yaml", tmp_path / "null.yaml"
    missing.write_text(SEED.read_text().replace(cutover + "\n", ""))
    null.write_text(SEED.read_text().replace(cutover, "cutoverAt: null"))
    result = run("validate", "--json", str(missing), str(null))
    assert result.exit_code == 2
    absent, given = (report["problems"] for report in json.loads(result.stdout))
    assert absent == [{"field": "cutoverAt", "problem": "is required"}]
    assert [(p["field"], p["value"]) for p in given] == [("cutoverAt", None)]


BAD_REFERENCE = """\
action:
  name: http
  parameters:
    url: https://example.com/hook
    headers:
      Authorization:
        secretRef: {env: MY_TOKEN_ENV, extra: 1}
"""


def test_validate_names_a_bad_reference_by_its_path_and_the_schedule_it_belongs_to(  # type: ignore[no-untyped-def]
    run, tmp_path: Path
) -> None:
    # Issue 10: the field is the path as the spec writes it, the env name is shown (a name is not
    # a secret), only the reference's own problems are listed, and the valid scheduleId and
    # revision of the file (the seed's) are reported although the file is invalid.
    bad = tmp_path / "bad.yaml"
    bad.write_text(SEED.read_text() + BAD_REFERENCE)
    env = "action.parameters.headers.Authorization.secretRef.env"
    result = run("validate", "--json", str(bad))
    assert result.exit_code == 2
    [report] = json.loads(result.stdout)
    assert (report["valid"], report["scheduleId"], report["revision"]) == (
        False,
        "daily-ops-summary",
        7,
    )
    # The extra key is refused twice over (a reference holds only env or file; the secret rule
    # refuses a scalar in a fake reference), reported once, in either order.
    assert sorted((p["field"], p["value"]) for p in report["problems"]) == [
        (env, "MY_TOKEN_ENV"),
        ("action.parameters.headers.Authorization.secretRef.extra", "<redacted>"),
    ]
    human = run("validate", str(bad))
    assert human.exit_code == 2
    assert f"{env}='MY_TOKEN_ENV': String should match pattern '^ALMANAC_SECRET_" in human.stderr
    # The stray key's number is <redacted> like any number below a secret-bearing key.
    assert "valid string" not in human.stderr
    assert "secretRef.extra='<redacted>'" in human.stderr


def test_validate_json_names_no_schedule_when_its_own_fields_are_invalid(  # type: ignore[no-untyped-def]
    run, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.yaml"
    text = SEED.read_text().replace("scheduleId: daily-ops-summary", "scheduleId: Daily_Ops")
    bad.write_text(text.replace("revision: 7", "revision: 0"))
    result = run("validate", "--json", str(bad))
    assert result.exit_code == 2
    [report] = json.loads(result.stdout)
    assert (report["scheduleId"], report["revision"]) == (None, None)
    assert [(p["field"], p["value"]) for p in report["problems"]] == [
        ("scheduleId", "Daily_Ops"),
        ("revision", 0),
    ]


def test_db_upgrade_json_names_the_revision_and_the_redacted_url(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from ledger.migrate import head

    url = f"sqlite:///{tmp_path / 'l' / 'ledger.sqlite3'}"
    result = run("db", "upgrade", "--url", url, "--json")
    assert result.exit_code == 0, result.output
    # A new ledger: no revision before ("from" null).
    assert json.loads(result.stdout) == {"revision": head(), "from": None, "url": url}


def test_tzdb_add_json_of_the_installed_release_adds_nothing(run) -> None:  # type: ignore[no-untyped-def]
    result = run("tzdb", "add", INSTALLED_RELEASE, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["release"] == INSTALLED_RELEASE and report["status"] == "INSTALLED"
