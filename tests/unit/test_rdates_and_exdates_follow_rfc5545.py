"""RFC 5545 §3.8.5.1 EXDATE and §3.8.5.2 RDATE as spec fields: extra and one-off local times go
through gap and fold resolution; an excluded time is an EXCLUDED fact, never a missing row.
New York: 2027-03-14 02:00 → 03:00 (gap at 07:00Z); EST is -05:00."""

from calsupport import records, row, spec


def test_a_spec_with_one_rdate_and_no_rule_runs_once() -> None:
    found = records(
        {"rdates": ["2027-01-04T08:00:00"]}, "2020-01-01T00:00:00", "2030-01-01T00:00:00"
    )
    assert [row(r) for r in found] == [
        ("2027-01-04T08:00:00", "2027-01-04T13:00:00Z", "PLANNED", "UNAMBIGUOUS", None)
    ]
    assert found[0].occurrence_id == "cal.r1.20270104T080000.f0"


def test_an_rdate_in_a_gap_is_shifted_by_the_gap_policy() -> None:
    found = records(
        {"rdates": ["2027-03-14T02:30:00"]}, "2027-03-01T00:00:00", "2027-04-01T00:00:00"
    )
    assert [row(r) for r in found] == [
        ("2027-03-14T02:30:00", "2027-03-14T07:30:00Z", "PLANNED", "GAP_SHIFTED_FORWARD", None)
    ]


def test_an_rdate_equal_to_a_rule_time_is_one_occurrence() -> None:
    found = records(
        {"rule": "FREQ=DAILY;BYHOUR=9", "rdates": ["2027-01-05T09:00:00", "2027-01-05T12:00:00"]},
        "2027-01-05T00:00:00",
        "2027-01-06T00:00:00",
    )
    assert [r.nominal_local.hour for r in found] == [9, 12]


def test_exdate_times_and_days_are_recorded_excluded_with_the_instant_they_would_have_had() -> None:
    found = records(
        {
            "rule": "FREQ=DAILY;BYHOUR=9,17",
            "exdates": ["2026-12-24", "2026-12-31T17:00:00"],
        },
        "2026-12-24T00:00:00",
        "2027-01-01T00:00:00",
    )
    rows = [row(r) for r in found if r.nominal_local.day in (24, 31)]
    assert rows == [
        ("2026-12-24T09:00:00", "2026-12-24T14:00:00Z", "EXCLUDED", "EXDATE_EXCLUDED", None),
        ("2026-12-24T17:00:00", "2026-12-24T22:00:00Z", "EXCLUDED", "EXDATE_EXCLUDED", None),
        ("2026-12-31T09:00:00", "2026-12-31T14:00:00Z", "PLANNED", "UNAMBIGUOUS", None),
        ("2026-12-31T17:00:00", "2026-12-31T22:00:00Z", "EXCLUDED", "EXDATE_EXCLUDED", None),
    ]
    assert all(r.logical_slot_id is None for r in found if r.disposition.value == "EXCLUDED")


def test_count_counts_rule_instances_before_exclusion() -> None:
    # RFC 5545: the set is RRULE ∪ RDATE, then EXDATE removes; COUNT belongs to the RRULE.
    found = records(
        {
            "rule": "FREQ=DAILY;COUNT=3;BYHOUR=9",
            "start": "2027-01-01T09:00:00",
            "exdates": ["2027-01-02"],
        },
        "2027-01-01T00:00:00",
        "2027-02-01T00:00:00",
    )
    assert [(r.nominal_local.day, r.disposition.value) for r in found] == [
        (1, "PLANNED"),
        (2, "EXCLUDED"),
        (3, "PLANNED"),
    ]


def test_specs_without_calendar_fields_keep_their_digest() -> None:
    # The digest of the seed-shaped spec before the calendar fields existed (commit 34eedc2).
    plain = spec(rule="FREQ=DAILY;BYHOUR=2;BYMINUTE=30")
    explicit = spec(
        rule="FREQ=DAILY;BYHOUR=2;BYMINUTE=30", rdates=[], exdates=[], businessDaysOnly=False
    )
    assert plain.digest() == explicit.digest()
    assert "rdates" not in plain.resolved() and "calendar" not in plain.resolved()
