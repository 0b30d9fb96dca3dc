"""Issue 27 §3: a secret disguised as something else is refused at validate, never repeated.

The corpus holds one case (at least) per class the issue's attack got through, and the classes
around them. Each parameter set, inside the seed's spec with its action, must be refused by
``load_spec`` (the check ``validate``, ``apply``, the Python client and the schedule workflow
share: ``timecontract.secrets.secret_problems``), naming a field under ``action.parameters``,
and no problem may repeat the canary. Expectations come from the shapes' definitions — RFC 9110
§11 (authentication schemes), RFC 3986 §3.2.1 (userinfo) and §3.4–3.5 (query, fragment), RFC 7519
(JWT), RFC 7617 (Basic), UTS #39 confusables, Unicode NFKC and category Cf — not from the code.

The look-alikes must still pass, so the rule is not "refuse everything".
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from specdata import SEED_SPEC

from timecontract import InvalidSpec, load_spec
from timecontract.secrets import secret_problems

CANARY = "Zq8canaryX4v2k9"
"""The secret part of every case: it must appear in no problem."""
REF = {"secretRef": {"env": "ALMANAC_SECRET_OPS"}}
HOOK = "https://hooks.example.test/e"


def b64url(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


JWT = f"{b64url({'alg': 'HS256', 'typ': 'JWT'})}.{b64url({'sub': CANARY})}.c2lnbmF0dXJlX3h5eg"
BASIC = "Basic " + base64.b64encode(f"ops:{CANARY}".encode()).decode()


def http(**parameters: Any) -> tuple[str, dict[str, Any]]:
    return "http", {"url": HOOK, **parameters}


def data(value: Any) -> tuple[str, dict[str, Any]]:
    return http(data=value)


def header(name: str, value: Any) -> tuple[str, dict[str, Any]]:
    return http(headers={name: value})


SMTP = {"host": "smtp.example.test", "from": "a@example.test", "to": "b@example.test"}


def smtp(**parameters: Any) -> tuple[str, dict[str, Any]]:
    return "smtp", {**SMTP, "subject": "daily", **parameters}


def temporal(value: Any) -> tuple[str, dict[str, Any]]:
    return "temporal", {"workflowType": "Report", "taskQueue": "reports", "input": value}


DISGUISED: dict[str, tuple[str, dict[str, Any]]] = {
    # Names not on the old list, and names the old list missed through their spelling.
    "x-authorization": header("X-Authorization", CANARY),
    "proxy-authorization": header("Proxy-Authorization", CANARY),
    "set-cookie header": header("Set-Cookie", f"id={CANARY}"),
    "cookie header": header("Cookie", CANARY),
    "set-cookie in data": data({"Set-Cookie": CANARY}),
    "auth": header("auth", CANARY),
    "auth in data": data({"auth": CANARY}),
    "pwd": data({"pwd": CANARY}),
    "db_pwd": data({"db_pwd": CANARY}),
    "key": data({"key": CANARY}),
    "x-key": header("X-Key", CANARY),
    "pass": data({"pass": CANARY}),
    "x-session": header("X-Session", CANARY),
    "sessionId": data({"sessionId": CANARY}),
    "x-jwt": header("X-JWT", CANARY),
    "otp": data({"otp": CANARY}),
    "passphrase": data({"passphrase": CANARY}),
    "x-auth-token": header("X-Auth-Token", CANARY),
    "clientSecret camelCase": data({"clientSecret": CANARY}),
    "privateKey": data({"privateKey": CANARY}),
    "accessKey": data({"accessKey": CANARY}),
    "PASSWORD upper case": data({"PASSWORD": CANARY}),
    # Separators: dots, spaces, mixed.
    "pass.word": data({"pass.word": CANARY}),
    "pass word with a space": data({"pass word": CANARY}),
    "x-api.key header": header("X-Api.Key", CANARY),
    "api.key in data": data({"api.key": CANARY}),
    "to_ken": data({"to-ken": CANARY}),
    # Unicode: format characters, compatibility forms, look-alike letters.
    "zero-width space in a name": data({"pass\u200bword": CANARY}),
    "zero-width joiner in a header": header("X-Api\u200dKey", CANARY),
    "soft hyphen in a name": data({"pass\u00adword": CANARY}),
    "BOM in a name": data({"\ufefftoken": CANARY}),
    "fullwidth letters": data({"\uff50\uff41\uff53\uff53\uff57\uff4f\uff52\uff44": CANARY}),
    "cyrillic a in password": data({"p\u0430ssword": CANARY}),
    "cyrillic o in token": data({"t\u043eken": CANARY}),
    "greek omicron in token": data({"t\u03bfken": CANARY}),
    "cyrillic A in Authorization": header("\u0410uthorization", CANARY),
    "mathematical bold letters": data(
        {"\U0001d42d\U0001d428\U0001d424\U0001d41e\U0001d427": CANARY}
    ),
    # URL query and fragment parameters, percent-encoded names included.
    "query token": http(url=f"{HOOK}?token={CANARY}"),
    "percent-encoded query name": http(url=f"{HOOK}?%74oken={CANARY}"),
    "percent-encoded api_key": http(url=f"{HOOK}?api%5Fkey={CANARY}"),
    "fragment access_token": http(url=f"{HOOK}#access_token={CANARY}"),
    "percent-encoded fragment name": http(url=f"{HOOK}#%61ccess_token={CANARY}"),
    "query sig": http(url=f"{HOOK}?v=1&sig={CANARY}"),
    "query X-Amz-Signature": http(url=f"{HOOK}?X-Amz-Signature={CANARY}"),
    "query auth in resultUrl": http(resultUrl=f"{HOOK}/{{idempotencyKey}}?auth={CANARY}"),
    "query token inside a data URL": data({"callback": f"{HOOK}?token={CANARY}"}),
    "fragment token inside a data URL": data({"next": f"{HOOK}#id_token={CANARY}"}),
    # URL userinfo anywhere.
    "userinfo in url": http(url=f"https://ops:{CANARY}@hooks.example.test/e"),
    "userinfo in resultUrl": http(
        resultUrl=f"https://ops:{CANARY}@h.example.test/{{idempotencyKey}}"
    ),
    "userinfo in a data field": data({"callback": f"https://ops:{CANARY}@h.example.test/cb"}),
    "userinfo in a data list": data(
        {"mirrors": ["https://ok.example.test", f"ftp://u:{CANARY}@f.example.test"]}
    ),
    "token as the URL user": data({"repo": f"https://{CANARY}@git.example.test/r.git"}),
    "userinfo inside prose": data(
        {"note": f"fetch from sftp://ops:{CANARY}@files.example.test today"}
    ),
    "scheme-relative userinfo": data({"link": f"//ops:{CANARY}@h.example.test/x"}),
    "percent-encoded userinfo": data({"link": f"https://ops%3A{CANARY}@h.example.test/"}),
    "userinfo in a temporal input": temporal(
        {"source": f"postgresql://app:{CANARY}@db.example.test/x"}
    ),
    "userinfo in an smtp body": smtp(body=f"see https://ops:{CANARY}@h.example.test/r"),
    # Authorization schemes under any name.
    "bearer under X-Upstream": header("X-Upstream", f"Bearer {CANARY}"),
    "lower-case bearer": header("X-Forward", f"bearer {CANARY}"),
    "basic under X-Custom": header("X-Custom", BASIC),
    "token scheme": header("X-Thing", f"Token {CANARY}"),
    "digest": header("X-D", f'Digest username="ops", response="{CANARY}"'),
    "bearer with a zero-width space": header("X-Up", f"Bea\u200brer {CANARY}"),
    "fullwidth bearer": header("X-Up", f"\uff22earer {CANARY}"),
    "bearer in a data string": data({"note": f"Bearer {CANARY}"}),
    "bearer in an smtp subject": smtp(subject=f"Bearer {CANARY}"),
    "bearer in a noop note": ("noop", {"note": f"Bearer {CANARY}"}),
    # Name/value pairs and header lines inside text.
    "name/value pair": data({"headers": [{"name": "Authorization", "value": CANARY}]}),
    "key/value pair": data([{"key": "X-Api-Key", "value": CANARY}]),
    "header/value pair": data({"h": {"header": "Cookie", "value": CANARY}}),
    "pasted header line": data({"curl": f"Authorization: {CANARY}"}),
    "pasted cookie line": data({"raw": f"Cookie: sid={CANARY}"}),
    "connection string": data({"dsn": f"Server=db;User Id=app;Password={CANARY};"}),
    "password= in a temporal input": temporal(f"user=ops password={CANARY}"),
    "token: in a noop note": ("noop", {"note": f"token: {CANARY}"}),
    "json text with a secret key": data({"blob": json.dumps({"api_key": CANARY})}),
    # JWT-shaped strings, anywhere.
    "jwt in data": data({"id": JWT}),
    "jwt under a harmless header": header("X-Identity", JWT),
    "jwt in a query value": http(url=f"{HOOK}?id={JWT}"),
    "jwt in a temporal input": temporal([JWT]),
    # Other credential shapes.
    "pem private key": data({"k": f"-----BEGIN RSA PRIVATE KEY-----\n{CANARY}\n"}),
    "github token": data({"note": "ghp_" + CANARY * 3}),
    "slack token": data({"note": f"xoxb-1234-{CANARY}"}),
    "aws access key id": data({"id": "AKIA" + "Z" * 16}),
    "stripe key": data({"s": "sk_live_" + CANARY * 2}),
    "standard webhooks key": data({"s": "whsec_" + CANARY * 2}),
    "a key that is a credential": data({f"Bearer {CANARY}": 1}),
    # A fresh trial's misses: names percent-encoded or accented, options, argv, XML, k/v.
    "percent-encoded pair name in text": data({"note": f"%70assword={CANARY}"}),
    "cyrillic pair name in text": data({"note": f"p\u0430ssword={CANARY}"}),
    "an option with =": data({"cmd": f"deploy --password={CANARY}"}),
    "an option and its value": data({"cmd": f"deploy --token {CANARY}"}),
    "an argument vector": data({"args": ["--password", CANARY]}),
    "an xml element": data({"x": f"<password>{CANARY}</password>"}),
    "a k/v pair": data({"k": "password", "v": CANARY}),
    "an accented header name": header("To\u0301ken", CANARY),
    "a dotless-i header name": header("s\u0131d", CANARY),
    # Fake reference shapes.
    "secretRef holding a string": smtp(
        username="ops", starttls=True, password={"secretRef": CANARY}
    ),
    "secretRef with a value key": header(
        "Authorization", {"secretRef": {"env": "ALMANAC_SECRET_X", "value": CANARY}}
    ),
    "secretRef string in data": data({"password": {"secretRef": CANARY}}),
    "value beside a reference": data(
        {"token": {"secretRef": {"env": "ALMANAC_SECRET_X"}, "value": CANARY}}
    ),
    "secretRef env holding a token": header("X-Api-Key", {"secretRef": {"env": f"ghp-{CANARY}"}}),
    "secretRef as a number": data({"pin": {"secretRef": 4711_0815}}),
    "signingSecret as a string": http(signingSecret=CANARY),
    "smtp password as a string": smtp(username="ops", starttls=True, password=CANARY),
    # Numbers are secrets too under a secret-bearing name.
    "numeric pwd": data({"pwd": 48151623}),
}

LOOK_ALIKES: dict[str, tuple[str, dict[str, Any]]] = {
    "keyboard": data({"keyboard": "qwerty"}),
    "monkey": data({"monkey": "banana"}),
    "sortKey and keyId": data({"sortKey": "name", "keyId": "k1", "primaryKey": "id"}),
    "passThrough": data({"passThrough": "yes", "passenger": "ops"}),
    "author": data({"author": "ops", "authority": "ops team"}),
    "quantities": data({"tokenCount": 3, "maxTokens": 500, "sessionTtl": 60}),
    "booleans and null": data({"passwordless": True, "apiKey": None}),
    "request id header": header("X-Request-Id", "abc-123"),
    "ordinary headers": http(headers={"Accept": "application/json", "User-Agent": "almanac/1"}),
    "url without userinfo": http(url="https://hooks.example.test/e?page=2&sort=asc#top"),
    "email address": data({"contact": "ops@example.test"}),
    "url in data": data({"docs": "https://example.test/docs?page=2#section-3"}),
    "host names with dots": data({"host": "api.example.test", "version": "v1.2.3"}),
    "plain prose": data({"note": "Basic plan; token ring; ratio a:b; at 10:30 the key meeting"}),
    "a reference": header("Authorization", REF),
    "smtp with a referenced password": smtp(username="ops", starttls=True, password=REF),
    "temporal input": temporal({"report": "daily", "session": None}),
    "noop note": ("noop", {"note": "takes over the ops summary"}),
    "empty query value": http(url=f"{HOOK}?token="),
}


def spec_with(action: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    name, parameters = action
    return {**SEED_SPEC, "action": {"name": name, "parameters": parameters}}


def test_the_corpus_covers_the_issue_classes() -> None:
    assert len(DISGUISED) >= 77
    assert len(LOOK_ALIKES) >= 15


@pytest.mark.parametrize("case", sorted(DISGUISED))
def test_a_disguised_secret_is_refused_at_validate_never_repeated(case: str) -> None:
    data = spec_with(DISGUISED[case])
    with pytest.raises(InvalidSpec) as raised:
        load_spec(data)
    problems = [p for p in raised.value.problems if p.field.startswith("action.parameters")]
    assert problems, raised.value
    assert CANARY not in str(raised.value)
    assert all(CANARY not in repr(p.value) for p in raised.value.problems)
    # The workflow's validator runs this very check on the raw data.
    assert secret_problems(data)


@pytest.mark.parametrize("case", sorted(LOOK_ALIKES))
def test_a_look_alike_is_no_secret(case: str) -> None:
    assert secret_problems(spec_with(LOOK_ALIKES[case])) == []
    assert load_spec(spec_with(LOOK_ALIKES[case])).schedule_id == SEED_SPEC["scheduleId"]


def test_a_refusal_carries_no_chained_error_that_repeats_the_secret() -> None:
    # A chained cause travels in tracebacks (logs) and in Temporal failures: pydantic's own
    # error quotes input values (here: no action name, so its "missing" error quotes the action).
    import traceback

    from activities.actions.catalog import check_action

    nameless = {**SEED_SPEC, "action": {"parameters": {"x": f"Bearer {CANARY}"}}}
    parameters = {"url": HOOK, "headers": {"X-Up": f"Bearer {CANARY}"}}
    for attempt in (lambda: load_spec(nameless), lambda: check_action("http", parameters)):
        with pytest.raises(ValueError) as raised:
            attempt()
        assert CANARY not in "".join(traceback.format_exception(raised.value))


@pytest.mark.parametrize(
    "headers",
    [
        {"\u0422\u043e\u043a\u0435\u043d": CANARY},  # Cyrillic: not an HTTP header name
        {"X-Foo": 5, "Bad Name": CANARY},
        {"X-Foo": [CANARY]},
        {"X-Foo": f"ok\r\nX-Injected: {CANARY}"},
    ],
)
def test_a_header_problem_never_shows_a_header_value(headers: dict[str, Any]) -> None:
    from activities.actions.catalog import check_action

    with pytest.raises(ValueError) as raised:
        check_action("http", {"url": HOOK, "headers": headers})
    assert CANARY not in str(raised.value)


@pytest.mark.parametrize("rule", [f"Bearer {CANARY}", f"FREQ=HOURLY;Bearer {CANARY}"])
def test_a_problem_never_quotes_a_credential_it_stumbled_on(rule: str) -> None:
    with pytest.raises(InvalidSpec) as raised:
        load_spec({**SEED_SPEC, "rule": rule})
    assert CANARY not in str(raised.value)
