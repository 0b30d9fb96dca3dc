"""Issue 10: a bad header value is told what is wrong with it, at the path the spec writes.

An ``http`` header's value is a string or a secret reference. The rule: a mapping is checked as
a reference only, anything else as a string only, and a problem's field is the path as written
in the spec (``action.parameters.headers.<name>…``), with no union branch label in it. Values
follow ``timecontract.secrets``: a reference's ``env``/``file`` is a name and shown; other strings
below a secret-bearing name are ``<redacted>``.
"""

from __future__ import annotations

from typing import Any

from activities.actions.catalog import action_problems
from activities.actions.parameters import SECRET_ENV_PATTERN, HttpParameters, SecretRef

URL = "https://example.com/hook"
CANARY = "canary-51c3e8"
HEADERS = "action.parameters.headers"


def problems(headers: dict[str, Any]) -> list[tuple[str, Any, str]]:
    found = action_problems("http", {"url": URL, "headers": headers})
    assert CANARY not in "".join(str(p) for p in found)
    return [(p.field, p.value, p.problem) for p in found]


def test_a_malformed_reference_gets_only_the_reference_problems_naming_the_env_name() -> None:
    found = problems({"Authorization": {"secretRef": {"env": "MY_TOKEN_ENV", "extra": 1}}})
    assert [(field, value) for field, value, _ in found] == [
        (f"{HEADERS}.Authorization.secretRef.env", "MY_TOKEN_ENV"),
        # a number inside a reference under a secret-bearing header is never repeated either
        (f"{HEADERS}.Authorization.secretRef.extra", "<redacted>"),
    ]
    assert SECRET_ENV_PATTERN in found[0][2]
    assert not any("string" in problem for _, _, problem in found)


def test_a_reference_without_its_secret_ref_key_is_told_it_is_missing() -> None:
    # `env` directly under a secret-bearing header: not a reference's location, so redacted.
    found = problems({"X-Api-Key": {"env": "ALMANAC_SECRET_OPS"}})
    assert [(field, value) for field, value, _ in found] == [
        (f"{HEADERS}.X-Api-Key.secretRef", None),
        (f"{HEADERS}.X-Api-Key.env", "<redacted>"),
    ]


def test_a_literal_beside_a_reference_is_refused_and_never_repeated() -> None:
    ref = {"secretRef": {"env": "ALMANAC_SECRET_OPS", "value": CANARY}}
    assert [(f, v) for f, v, _ in problems({"Authorization": ref})] == [
        (f"{HEADERS}.Authorization.secretRef.value", "<redacted>"),
    ]
    ref = {"secretRef": {"env": "ALMANAC_SECRET_OPS"}, "token": CANARY}
    assert [(f, v) for f, v, _ in problems({"Authorization": ref})] == [
        (f"{HEADERS}.Authorization.token", "<redacted>"),
    ]


def test_a_value_that_is_not_a_mapping_gets_only_the_string_problem() -> None:
    assert problems({"X-Count": 3}) == [
        (f"{HEADERS}.X-Count", "<redacted>", "must be a string"),
    ]
    assert problems({"Authorization": [f"Bearer {CANARY}"]}) == [
        (f"{HEADERS}.Authorization", ["<redacted>"], "must be a string"),
    ]


def test_strings_and_references_still_validate_to_their_own_types() -> None:
    headers = {"Authorization": {"secretRef": {"env": "ALMANAC_SECRET_OPS"}}, "X-Team": "ops"}
    parsed = HttpParameters.model_validate({"url": URL, "headers": headers}).headers
    assert parsed == {"Authorization": SecretRef.model_validate(headers["Authorization"])} | {
        "X-Team": "ops"
    }
    again = HttpParameters.model_validate({"url": URL, "headers": parsed}).headers
    assert again == parsed
    dumped = HttpParameters.model_validate({"url": URL, "headers": headers}).model_dump(
        by_alias=True, exclude_none=True
    )
    assert dumped["headers"] == headers


def test_header_lines_pasted_as_text_are_refused_and_never_repeated() -> None:
    # Second trial: `curl -H` lines pasted as the bag itself, a string or a list of strings.
    for bag in (f"Authorization: Bearer {CANARY}", [f"Authorization: Bearer {CANARY}"]):
        found = action_problems("http", {"url": URL, "headers": bag})
        assert [(p.field, p.value) for p in found] == [(HEADERS, "<redacted>")]
        assert CANARY not in "".join(str(p) for p in found)
