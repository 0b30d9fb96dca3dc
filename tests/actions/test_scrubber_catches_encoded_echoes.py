"""Issue 27 §3: a downstream's echo of a secret, encoded, never reaches an outcome (the ledger).

A downstream may answer with what it received, encoded: base64 or base64url (RFC 4648 §4–5) of
a text holding the secret at any byte offset, percent-encoding (RFC 3986 §2.1, also ``+`` for
spaces), a JSON string (RFC 8259 §7: escaped quotes, backslashes, ``\\u`` escapes, ``\\/``), or
hex. The secret has characters each encoding treats specially (``/``, ``"``, a space, ``+``,
``\\``, a non-ASCII letter). The oracle decodes each echoed field with the standard library, the
way it was encoded, and looks for the secret in what comes out: it never asks the scrubber.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, quote_plus, unquote, unquote_plus

import httpx
import pytest

from activities.actions import ActionContext, HttpAction, OutcomeKind, SecretResolver
from activities.actions.secrets import Scrubber

pytestmark = pytest.mark.anyio

SECRET = 'canary/"pa ss+wörd"\\tok-9f3a'
TOKEN = f"Bearer {SECRET}"
HEADER_SECRET = 'canary/"pa ss+word"\\tok-9f3a'
"""The secret as an HTTP header carries it: ASCII (RFC 9110 §5.5)."""
USERPASS = "ops:canary-basic-77e1"
BASIC = "Basic " + base64.b64encode(USERPASS.encode()).decode()


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def b64url(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def b64_decoded(text: str) -> str:
    try:
        return base64.b64decode(text + "===", validate=False).decode(errors="replace")
    except (binascii.Error, ValueError):
        return ""


def b64url_decoded(text: str) -> str:
    kept = "".join(ch for ch in text if ch.isalnum() or ch in "-_")
    try:
        return base64.urlsafe_b64decode(kept + "=" * (-len(kept) % 4)).decode(errors="replace")
    except (binascii.Error, ValueError):
        return ""


def hex_decoded(text: str) -> str:
    kept = "".join(ch for ch in text if ch in "0123456789abcdefABCDEF")
    try:
        return bytes.fromhex(kept[: len(kept) // 2 * 2]).decode(errors="replace")
    except ValueError:
        return ""


def json_decoded(text: str) -> str:
    try:
        return str(json.loads(f'"{text}"'))
    except ValueError:
        return text


# name → (encode, decode): each echo is encode(prefix + secret + suffix).
ENCODINGS: dict[str, tuple[Callable[[str], str], Callable[[str], str]]] = {
    "base64": (b64, b64_decoded),
    "base64url": (b64url, b64url_decoded),
    "percent": (lambda t: quote(t, safe=""), unquote),
    "form": (quote_plus, unquote_plus),
    "json": (lambda t: json.dumps(t)[1:-1], json_decoded),
    "json-slash": (lambda t: json.dumps(t)[1:-1].replace("/", "\\/"), json_decoded),
    "hex": (lambda t: t.encode().hex(), hex_decoded),
    "HEX": (lambda t: t.encode().hex().upper(), hex_decoded),
}
PREFIXES = ["", "a", "ab", "token=", 'received: {"authorization": "']


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_an_encoded_echo_at_any_offset_is_scrubbed(encoding: str, prefix: str) -> None:
    encode, decode = ENCODINGS[encoding]
    echoed = encode(prefix + TOKEN + '", "next": 1}')
    scrubbed = Scrubber([TOKEN])(echoed)
    assert SECRET not in decode(scrubbed), (encoding, prefix, scrubbed)
    assert SECRET in decode(echoed)  # non-vacuous: the echo did hold it


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_a_basic_credentials_user_and_password_are_scrubbed_decoded_too(encoding: str) -> None:
    encode, decode = ENCODINGS[encoding]
    scrub = Scrubber([BASIC])
    assert USERPASS not in decode(scrub(encode(f"user {USERPASS} logged in")))
    assert USERPASS not in scrub(f"user {USERPASS} logged in")


def test_short_encoded_runs_of_ordinary_text_are_left_alone() -> None:
    scrub = Scrubber(["abc"])  # a secret too short for its encodings to be told from text
    assert scrub("YWJj 616263 ok") == "YWJj 616263 ok"
    assert scrub("xabcx") == "x<secret>x"


def echo(request: httpx.Request, status: int) -> httpx.Response:
    """A downstream that answers with the Authorization header it got, in every encoding."""
    got = request.headers["Authorization"]
    fields = {
        f"{name}{index}": encode(prefix + got)
        for name, (encode, _) in ENCODINGS.items()
        for index, prefix in enumerate(PREFIXES)
    }
    return httpx.Response(status, json=fields)


def leaked(value: Any, secret: str = HEADER_SECRET) -> list[str]:
    """Fields of an outcome from which a standard decoder recovers ``secret``."""
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    found = [name for name, (_, decode) in ENCODINGS.items() if secret in decode(text)]
    if isinstance(value, dict):
        for key, item in value.items():
            found += [
                f"{key}:{name}"
                for name, (_, decode) in ENCODINGS.items()
                if isinstance(item, str) and secret in decode(item)
            ]
    return found + (["plain"] if secret in text else [])


@pytest.mark.parametrize("status", [200, 422])
async def test_the_http_outcome_holds_no_encoded_echo(status: int) -> None:
    action = HttpAction(
        httpx.MockTransport(lambda request: echo(request, status)),
        secrets=SecretResolver(environ={"ALMANAC_SECRET_TOKEN": f"Bearer {HEADER_SECRET}"}),
    )
    ctx = ActionContext(
        occurrence_id="s.r1.20261101T013000.f0",
        schedule_id="s",
        revision=1,
        nominal_local="2026-11-01T01:30:00",
        instant_utc="2026-11-01T05:30:00Z",
        attempt=1,
        parameters={
            "url": "https://hooks.example.test/e",
            "headers": {"Authorization": {"secretRef": {"env": "ALMANAC_SECRET_TOKEN"}}},
        },
    )
    outcome = await action.invoke(ctx)
    expected = OutcomeKind.CONFIRMED if status == 200 else OutcomeKind.NON_RETRYABLE_FAILURE
    assert outcome.kind is expected
    if status == 200:
        assert outcome.result is not None and len(outcome.result) == len(ENCODINGS) * len(PREFIXES)
    assert leaked(outcome.result) == []
    assert leaked(outcome.detail) == []
