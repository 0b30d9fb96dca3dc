"""DESIGN §3: the seed's example must validate as written (YAML text, timestamps and all)."""

from pathlib import Path

from timecontract import FoldPolicy, GapPolicy, MisfirePolicy, load_spec
from timecontract.spec_file import read_spec_data

SEED_YAML = """\
schema: scheduleSpec.v1
scheduleId: daily-ops-summary
revision: 7
timeZone: America/New_York
tzdbVersion: 2026a
rule: "FREQ=DAILY;BYHOUR=2;BYMINUTE=30"
gapPolicy: SKIP
foldPolicy: FIRST_ONLY
misfirePolicy: CATCH_UP_BOUNDED
maxCatchUp: 2
cutoverAt: 2026-11-01T06:00:00Z
"""


def test_seed_example_yaml_validates_as_written(tmp_path: Path) -> None:
    path = tmp_path / "daily-ops-summary.yaml"
    path.write_text(SEED_YAML, encoding="utf-8")

    spec = load_spec(path)

    assert spec.schedule_id == "daily-ops-summary"
    assert spec.revision == 7
    assert spec.time_zone == "America/New_York"
    assert spec.tzdb_version == "2026a"
    assert spec.rule == "FREQ=DAILY;BYHOUR=2;BYMINUTE=30"
    assert spec.gap_policy is GapPolicy.SKIP
    assert spec.fold_policy is FoldPolicy.FIRST_ONLY
    assert spec.misfire_policy is MisfirePolicy.CATCH_UP_BOUNDED
    assert spec.max_catch_up == 2
    assert spec.resolved()["cutoverAt"] == "2026-11-01T06:00:00Z"


def test_seed_example_as_json_validates_to_the_same_spec(tmp_path: Path) -> None:
    yaml_path = tmp_path / "seed.yaml"
    yaml_path.write_text(SEED_YAML, encoding="utf-8")
    json_path = tmp_path / "seed.json"
    json_path.write_text(
        '{"schema": "scheduleSpec.v1", "scheduleId": "daily-ops-summary", "revision": 7,'
        ' "timeZone": "America/New_York", "tzdbVersion": "2026a",'
        ' "rule": "FREQ=DAILY;BYHOUR=2;BYMINUTE=30", "gapPolicy": "SKIP",'
        ' "foldPolicy": "FIRST_ONLY", "misfirePolicy": "CATCH_UP_BOUNDED", "maxCatchUp": 2,'
        ' "cutoverAt": "2026-11-01T06:00:00Z"}',
        encoding="utf-8",
    )

    assert load_spec(json_path).digest() == load_spec(yaml_path).digest()


def test_seed_yaml_keeps_tzdb_version_and_cutover_as_text_not_yaml_types(tmp_path: Path) -> None:
    # 2026a must not become anything else, and the YAML timestamp must reach the spec's parser.
    path = tmp_path / "seed.yaml"
    path.write_text(SEED_YAML, encoding="utf-8")

    data = read_spec_data(path)

    assert data["tzdbVersion"] == "2026a"
    assert data["cutoverAt"] == "2026-11-01T06:00:00Z"
