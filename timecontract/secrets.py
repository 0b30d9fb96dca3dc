"""Secrets in specs: only by reference, never as a literal value (DESIGN §10).

A spec is data that reaches the ledger's revision JSON, Temporal history and the Web UI, so it must
never hold a secret. Where an action needs one (an ``Authorization`` header, an SMTP password, a
signing key) the spec names it instead::

    headers:
      Authorization: {secretRef: {env: ALMANAC_SECRET_OPS_TOKEN}}
    signingSecret: {secretRef: {file: ops-webhook.key}}

and the worker resolves the reference when it makes the call (``activities.actions.secrets``).

The rule, checked on every mapping key and every string inside ``action.parameters`` (header
names included; :func:`literal_secret_problems`): every string or number at or below a
secret-bearing key — directly, in a list, in a nested mapping — is a literal secret and refused,
naming its field, unless it is inside a reference; so is a credential-shaped string or key under
any name (a ``Bearer …`` value, ``user:pw@`` in a URL inside a data string, a JWT), and a mapping
with a ``secretRef`` key that is not exactly ``{secretRef: {env|file: <string>}}``. Which names are
secret-bearing and which values credential-shaped, after Unicode, percent and separator
normalisation, is :mod:`timecontract.credentials`. The value is never repeated in the error (it
shows as ``<redacted>``). Booleans and ``null`` are no secrets, nor is a number whose own key
names a quantity (``maxTokens: 500``, ``tokenCount``, ``passwordMinLength``: it contains
``count``, ``max``, ``min``, ``limit``, ``length``, ``size``, ``ttl``, ``expir`` or ``timeout``).

What an error may repeat (:func:`redact_at`): every string or number at or below a
secret-bearing key is ``<redacted>`` (``secretRef`` is such a key), except the ``env`` or
``file`` of a reference — the name of where the secret is, not the secret; an ``env`` string only
when it is written like a variable's name — and no URL's ``user:password@`` nor a
credential-shaped string is ever repeated. A ``headers`` value that is not a mapping (header
lines pasted as a string or a list) is never repeated either.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from timecontract.credentials import (
    URL_PARAMETER,
    credential_shape,
    is_secret_name,
    names_a_quantity,
)
from timecontract.errors import SpecError

SECRET_REF_KEY = "secretRef"
SECRET_LOCATIONS = ("env", "file")
"""A reference's location keys: exactly one, holding a string (the name of where the secret is)."""
HEADERS_KEY = "headers"
"""A header bag's key: its value must be a mapping; anything else is redacted whole in errors."""
REDACTED = "<redacted>"
_PAIR_NAME_KEYS = frozenset({"name", "key", "k", "header", "field", "param", "parameter"})
"""In a ``{name: …, value: …}`` pair (a header list), the keys that hold the name."""
_PAIR_VALUE_KEYS = frozenset({"value", "values", "content", "val", "v"})
"""In such a pair, the keys that hold the value."""
REFERENCE_HINT = (
    "name it instead: {secretRef: {env: ALMANAC_SECRET_<NAME>}} or {secretRef: {file: <name>}}"
)


def is_secret_ref(value: Any) -> bool:
    """Whether ``value`` is a reference: ``{secretRef: {env: <string>}}`` or ``{… file: …}``.

    Exactly that shape: a ``secretRef`` holding a string, or a location with another key (a
    ``value`` beside the ``env``), is no reference, and whatever it holds is a literal; so is an
    ``env`` not written like a variable's name or a credential-shaped name (a pasted token).
    """
    if not (isinstance(value, Mapping) and set(value) == {SECRET_REF_KEY}):
        return False
    location = value[SECRET_REF_KEY]
    if not (isinstance(location, Mapping) and len(location) == 1):
        return False
    [(key, name)] = location.items()
    return key in SECRET_LOCATIONS and isinstance(name, str) and _is_location_name(key, name)


def is_literal_scalar(value: Any) -> bool:
    """Whether ``value`` is a scalar that could be a secret: a string or a number (not a bool).

    ``true``/``false`` and ``null`` carry no secret (``passwordless: true``); a token pasted
    without quotes is a number in YAML (``apiToken: 1234567890``), so numbers count.
    """
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def could_be_secret(key: str, value: Any) -> bool:
    """Whether ``value``, found under ``key`` at or below a secret-bearing key, is refused.

    Any string; any number (a numeric key or PIN pasted without quotes, ``apiToken: 1234567890``)
    unless ``key`` itself names a quantity (``maxTokens``, ``tokenCount``: counts, not keys).
    Booleans and ``null`` never.
    """
    if isinstance(value, str):
        return True
    return is_literal_scalar(value) and not names_a_quantity(key)


def _pair_names_a_secret(value: Mapping[Any, Any]) -> bool:
    """Whether a mapping is a ``{name: <secret-bearing name>, value: …}`` pair."""
    return any(
        str(key).casefold() in _PAIR_NAME_KEYS and isinstance(item, str) and is_secret_name(item)
        for key, item in value.items()
    ) and any(str(key).casefold() in _PAIR_VALUE_KEYS for key in value)


def _literal(where: str, why: str = "holds a literal secret") -> SpecError:
    return SpecError(where, REDACTED, f"{why}; {REFERENCE_HINT}")


def literal_secret_problems(
    value: Any, where: str, *, under_secret: bool = False, key: str = ""
) -> list[SpecError]:
    """Every literal secret under ``value``, one problem each, named by its dotted path.

    A literal secret is: a string or number (:func:`could_be_secret`) at any depth below a
    secret-bearing key (``timecontract.credentials.is_secret_name``) or below the ``value`` of a
    ``{name: <secret-bearing name>, value: …}`` pair, unless it is inside a reference
    (:func:`is_secret_ref`); a mapping with a ``secretRef`` key that is not exactly a reference
    (a fake reference); and any string — or mapping key — that is credential-shaped
    (``timecontract.credentials.credential_shape``), under whatever key. Every problem's value is
    ``<redacted>``.

    Args:
        value: JSON data (an action's parameters).
        where: the dotted path of ``value`` in the spec (``action.parameters``).
        under_secret: ``value`` is itself at or below a secret-bearing key.
        key: the mapping key ``value`` sits under (a list item keeps its list's key).
    """
    problems: list[SpecError] = []
    if isinstance(value, Mapping):
        if is_secret_ref(value):
            return problems
        if SECRET_REF_KEY in value:
            return _fake_reference_problems(value, where)
        paired = _pair_names_a_secret(value)
        for name, item in value.items():
            text = str(name)
            shape = credential_shape(text)
            if shape is not None:
                problems.append(
                    _literal(f"{where}.{REDACTED}", f"a key holds a literal secret ({shape})")
                )
                continue
            problems.extend(
                literal_secret_problems(
                    item,
                    f"{where}.{text}",
                    under_secret=under_secret
                    or is_secret_name(text)
                    or (paired and text.casefold() in _PAIR_VALUE_KEYS),
                    key=text,
                )
            )
    elif isinstance(value, list):
        for index, item in enumerate(value):
            problems.extend(
                literal_secret_problems(
                    item, f"{where}.{index}", under_secret=under_secret, key=key
                )
            )
        # An argument vector splits an option from its value (``["--password", "…"]``).
        words = " ".join(item for item in value if isinstance(item, str))
        if not problems and (shape := credential_shape(words)) is not None:
            problems.append(_literal(where, f"holds a literal secret ({shape})"))
    elif under_secret and could_be_secret(key, value):
        problems.append(_literal(where))
    elif isinstance(value, str) and (shape := credential_shape(value)) is not None:
        problems.append(_literal(where, f"holds a literal secret ({shape})"))
    return problems


def _fake_reference_problems(value: Mapping[Any, Any], where: str) -> list[SpecError]:
    """A mapping with a ``secretRef`` key that is not a reference: what in it may be a secret.

    A location's ``env``/``file`` string written like a name is a name (the reference's own
    model says what else is wrong with it); a ``secretRef`` that is no mapping, any other key's
    scalar (``value``), a sibling of ``secretRef``, or an ``env`` that is not written like a
    variable's name (a pasted token) is a literal.
    """
    problems: list[SpecError] = []
    for name, item in value.items():
        here = f"{where}.{name}"
        if str(name) != SECRET_REF_KEY:
            problems.extend(literal_secret_problems(item, here, under_secret=True, key=str(name)))
        elif not isinstance(item, Mapping):
            why = "is not a secret reference: secretRef holds {env: …} or {file: …}"
            problems.extend([_literal(here, why)] if could_be_secret(SECRET_REF_KEY, item) else [])
        else:
            for key, where_to in item.items():
                if isinstance(where_to, str) and _redact_location(key, where_to) == where_to:
                    continue  # a name: shown, and checked by the reference's model
                problems.extend(
                    literal_secret_problems(
                        where_to, f"{here}.{key}", under_secret=True, key=str(key)
                    )
                )
    return problems


def secret_problems(data: Any) -> list[SpecError]:
    """The literal secrets in spec data: :func:`literal_secret_problems` of its actions' parameters.

    The actions are ``action`` and ``failureStreak.action``.

    The one check every entry point makes (``load_spec``, the Python client, the schedule
    workflow's update validator and publish signal); pure, so a workflow may run it.
    """
    if not isinstance(data, Mapping):
        return []
    streak = data.get("failureStreak")
    actions = {
        "action": data.get("action"),
        "failureStreak.action": streak.get("action") if isinstance(streak, Mapping) else None,
    }
    return [
        problem
        for field, action in actions.items()
        if isinstance(action, Mapping)
        for problem in literal_secret_problems(action.get("parameters"), f"{field}.parameters")
    ]


def secret_query_names(url: str) -> list[str]:
    """The query or fragment parameters of ``url`` whose names are secret-bearing, as written.

    A literal secret in a URL is a literal secret in the spec, and it would travel in access logs.
    """
    return [m.group(2) for m in URL_PARAMETER.finditer(url) if is_secret_name(m.group(2))]


def redact_url(text: str) -> str:
    """``text`` with every URL's ``user:password@`` and secret-bearing parameter values hidden."""

    def hide(match: re.Match[str]) -> str:
        lead, name, value = match.groups()
        return f"{lead}{name}={REDACTED}" if is_secret_name(name) and value else match.group(0)

    return URL_PARAMETER.sub(hide, _URL_CREDENTIALS.sub("//<redacted>@", text))


_URL_CREDENTIALS = re.compile(r"//[^/@\s]+@")
"""The ``user:password@`` of a URL (RFC 3986 userinfo), which a message must never repeat."""


_ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]{0,127}")
"""A reference's location keys: a string under one is a name (``ALMANAC_SECRET_X``)."""


def redact(value: Any, *, under_secret: bool = False) -> Any:
    """``value`` with every literal secret it holds replaced by ``<redacted>``.

    Every string or number at or below a secret-bearing key (or anywhere, with
    ``under_secret``) except a reference's ``env``/``file`` name, and the credentials of a URL in
    any string (``https://user:pw@host``). For error messages that repeat what was given (a
    problem's value may be a whole mapping).
    """
    if isinstance(value, Mapping):
        return {
            (REDACTED if credential_shape(str(key)) else key): _redact_item(
                key, item, under_secret=under_secret
            )
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [redact(item, under_secret=under_secret) for item in value]
    if under_secret and is_literal_scalar(value):
        return REDACTED
    if isinstance(value, bytes | bytearray | set | frozenset | tuple):
        return REDACTED  # not JSON data (a !!binary's bytes, a set): nothing to show safely
    if isinstance(value, str):
        shown = redact_url(value)  # a URL keeps its shape, without its credentials
        return REDACTED if credential_shape(shown.replace(REDACTED, "")) is not None else shown
    return value


def _redact_item(key: Any, item: Any, *, under_secret: bool) -> Any:
    if str(key) == SECRET_REF_KEY and isinstance(item, Mapping):
        return {name: _redact_location(name, where) for name, where in item.items()}
    return redact(item, under_secret=under_secret or is_secret_name(str(key)))


def _is_location_name(key: Any, value: str) -> bool:
    """Whether ``value``, a reference's ``env`` or ``file`` string, is written like a name."""
    if credential_shape(value) is not None:
        return False
    return str(key) == "file" or (str(key) == "env" and _ENV_NAME.fullmatch(value) is not None)


def _redact_location(key: Any, value: Any) -> Any:
    """A value inside a reference: a string ``env``/``file`` is a name (shown), the rest is not.

    An ``env`` string is shown only when it is written like an environment variable's name
    (``_ENV_NAME``: upper case, digits, ``_``): a token pasted there by mistake (mixed case,
    ``-``, ``.``, ``=``…) stays redacted.
    """
    is_name = isinstance(value, str) and _is_location_name(key, value)
    return redact(value, under_secret=not is_name)


def redact_at(path: Iterable[Any], value: Any) -> Any:
    """:func:`redact` for a value found at ``path`` (its keys from the top of the data).

    A value at or below a secret-bearing key is redacted through and through, except where
    ``path`` ends at a reference's location (``….secretRef.env``): a string there is a name. A
    ``headers`` value that is not a mapping (a string or a list: header lines such as
    ``Authorization: Bearer …`` pasted from ``curl -H``) is redacted whole, and a header's
    literal value is never shown.
    """
    parts = [str(part) for part in path]
    if len(parts) >= 2 and parts[-2] == SECRET_REF_KEY:
        return _redact_location(parts[-1], value)
    if parts and parts[-1] == HEADERS_KEY and not isinstance(value, Mapping):
        return REDACTED  # header lines pasted as text (`curl -H 'Authorization: Bearer …'`)
    # A header's value is where a credential goes: a literal one is never shown, whatever its
    # name (a name the check could not read, ``To\u0301ken``, must not expose its value).
    under_secret = HEADERS_KEY in parts or any(is_secret_name(part) for part in parts)
    return redact(value, under_secret=under_secret)


_QUOTED = re.compile(r"'([^']*)'")
_STANDARD_TAG = re.compile(r"tag:yaml\.org,2002:[a-z]{1,12}")


def quiet_credentials(message: str) -> str:
    """``message`` with every quoted fragment that is credential-shaped shown as ``'<redacted>'``.

    For a problem's wording, which may quote what it stumbled on (``part 'Bearer …' is not
    NAME=VALUE``): the value is redacted where it is shown, and so is any quote of it.
    """
    return _QUOTED.sub(
        lambda match: f"'{REDACTED}'" if credential_shape(match.group(1)) else match.group(0),
        message,
    )


def quiet_parser_message(message: str) -> str:
    """A YAML/JSON parser's message without any text it quotes from the document.

    Parsers quote what they stumbled on (``found undefined alias 'ghp_…'``, ``invalid literal for
    int() with base 10: '…'``), which may be a secret. A quoted fragment stays only when it is
    at most three characters (a comma, a tab), a parser's own token (``'<stream end>'``) or a
    standard YAML tag (``'tag:yaml.org,2002:int'``); any other becomes ``'<not shown>'``.
    """

    def keep(match: re.Match[str]) -> str:
        text = match.group(1)
        shown = len(text) <= 3 or _STANDARD_TAG.fullmatch(text) or text in {"<stream end>", "utf-8"}
        return match.group(0) if shown else "'<not shown>'"

    return _QUOTED.sub(keep, message)
