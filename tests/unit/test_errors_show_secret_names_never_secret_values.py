"""Issue 10: an error repeats what was given, except a secret; a reference's name is no secret.

The rule (``timecontract.secrets``): every string at or below a secret-bearing key is
``<redacted>`` (``secretRef`` is such a key), except the ``env`` or ``file`` string of a reference,
which names where the secret is (an ``env`` string only when written like a variable's name:
upper case, digits, ``_``); and no URL's ``user:password@`` is ever repeated.
"""

from __future__ import annotations

from typing import Any

import pytest

from timecontract.secrets import REDACTED, redact_at

CANARY = "canary-7d2f0a"
REF_NAME = {"secretRef": {"env": "MY_TOKEN_ENV"}}


@pytest.mark.parametrize(
    ("path", "value", "shown"),
    [
        # A reference's location is a name: shown, whatever the key above it.
        (("headers", "Authorization", "secretRef", "env"), "MY_TOKEN_ENV", "MY_TOKEN_ENV"),
        (("signingSecret", "secretRef", "file"), "../ops.key", "../ops.key"),
        (("password", "secretRef", "env"), "HOME", "HOME"),
        # ... an env string that is not written like a variable's name may be a pasted token.
        (("headers", "Authorization", "secretRef", "env"), "ghp_" + CANARY, REDACTED),
        (("headers", "Authorization", "secretRef", "env"), "Bearer TOKEN", REDACTED),
        (("headers", "Authorization"), REF_NAME, REF_NAME),
        # Anything else inside a reference, or below a secret-bearing key, is not.
        (("headers", "Authorization", "secretRef", "value"), CANARY, REDACTED),
        (("headers", "Authorization", "secretRef", "env"), {"x": CANARY}, {"x": REDACTED}),
        (("headers", "Authorization", "other"), CANARY, REDACTED),
        (("headers", "Authorization"), [f"Bearer {CANARY}"], [REDACTED]),
        (
            ("headers", "Authorization"),
            {"secretRef": {"env": "MY_TOKEN_ENV", "value": CANARY}, "other": {"deep": CANARY}},
            {"secretRef": {"env": "MY_TOKEN_ENV", "value": REDACTED}, "other": {"deep": REDACTED}},
        ),
        (("data",), {"note": "ok", "apiKey": CANARY}, {"note": "ok", "apiKey": REDACTED}),
        # A number below a secret-bearing key is a secret too (a token YAML read as a number);
        # booleans and null are not; harmless names are shown as given.
        (("headers", "X-Api-Key"), 839201938, REDACTED),
        (
            ("data", "apiToken"),
            {"n": 12.5, "on": True, "off": None},
            {"n": REDACTED, "on": True, "off": None},
        ),
        (("data", "count"), 3, 3),
        # A header's value is where a credential goes: a literal one is never shown, whatever
        # the name (a trial hid one under a name the check could not read).
        (("headers", "X-Team"), "ops", REDACTED),
        # Data that is not JSON (bytes, a set: from Python, or YAML's !!binary and !!set) and a
        # credential-shaped string under a harmless name are never shown.
        (("data",), CANARY.encode(), REDACTED),
        (("data", "tags"), {CANARY}, REDACTED),
        (("data", "note"), f"Bearer {CANARY}", REDACTED),
        # A URL's credentials, wherever it is.
        (("url",), f"https://ops:{CANARY}@example.com/h", "https://<redacted>@example.com/h"),
        # A secret-bearing query parameter's value; other parameters are shown.
        (
            ("resultUrl",),
            f"https://example.com/r?page=2&api_key={CANARY}&token=",
            "https://example.com/r?page=2&api_key=<redacted>&token=",
        ),
    ],
)
def test_an_error_value_hides_secret_values_and_shows_secret_names(
    path: tuple[str, ...], value: Any, shown: Any
) -> None:
    assert redact_at(path, value) == shown
