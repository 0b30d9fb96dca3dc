"""Secrets in specs: only by reference, never as a literal value (DESIGN §10).

A spec is data that reaches the ledger's revision JSON, Temporal history and the Web UI, so it must
never hold a secret. Where an action needs one (an ``Authorization`` header, an SMTP password, a
signing key) the spec names it instead::

    headers:
      Authorization: {secretRef: {env: ALMANAC_SECRET_OPS_TOKEN}}
    signingSecret: {secretRef: {file: ops-webhook.key}}

and the worker resolves the reference when it makes the call (``activities.actions.secrets``).

The rule for what counts as secret-bearing, checked on every mapping key inside
``action.parameters`` (header names included): the key, lowercased with ``-``, ``_`` and spaces
removed, is ``authorization``, ``proxyauthorization`` or ``cookie``, or contains one of
``token``, ``secret``, ``password``, ``passwd``, ``apikey``, ``accesskey``, ``privatekey``,
``credential``. Every string or number at or below such a key — directly, in a list, in a nested
mapping — is a literal secret and refused, naming its field, unless it is inside a reference;
its value is never repeated in the error (it shows as ``<redacted>``). Booleans and ``null`` are
no secrets, nor is a number whose own key names a quantity (``maxTokens: 500``, ``tokenCount``,
``passwordMinLength``: it contains ``count``, ``max``, ``min``, ``limit``, ``length``, ``size``,
``ttl``, ``expir`` or ``timeout``).

What an error may repeat (:func:`redact_at`): every string or number at or below a
secret-bearing key is ``<redacted>`` (``secretRef`` is such a key), except the ``env`` or
``file`` of a reference — the name of where the secret is, not the secret; an ``env`` string only
when it is written like a variable's name — and no URL's ``user:password@`` is ever repeated. A
``headers`` value that is not a mapping (header lines pasted as a string or a list) is never
repeated either.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from timecontract.errors import SpecError

SECRET_REF_KEY = "secretRef"
HEADERS_KEY = "headers"
"""A header bag's key: its value must be a mapping; anything else is redacted whole in errors."""
REDACTED = "<redacted>"
_SECRET_NAMES = frozenset({"authorization", "proxyauthorization", "cookie"})
_SECRET_PARTS = (
    "token",
    "secret",
    "password",
    "passwd",
    "apikey",
    "accesskey",
    "privatekey",
    "credential",
)


def is_secret_name(name: str) -> bool:
    """Whether a parameter or header named ``name`` carries a secret (see the module docstring)."""
    folded = name.lower().replace("-", "").replace("_", "").replace(" ", "")
    return folded in _SECRET_NAMES or any(part in folded for part in _SECRET_PARTS)


def is_secret_ref(value: Any) -> bool:
    """Whether ``value`` has the shape of a reference: a mapping whose only key is ``secretRef``."""
    return isinstance(value, Mapping) and set(value) == {SECRET_REF_KEY}


def is_literal_scalar(value: Any) -> bool:
    """Whether ``value`` is a scalar that could be a secret: a string or a number (not a bool).

    ``true``/``false`` and ``null`` carry no secret (``passwordless: true``); a token pasted
    without quotes is a number in YAML (``apiToken: 1234567890``), so numbers count.
    """
    return isinstance(value, str | int | float) and not isinstance(value, bool)


_QUANTITY_PARTS = ("count", "max", "min", "limit", "length", "size", "ttl", "expir", "timeout")


def could_be_secret(key: str, value: Any) -> bool:
    """Whether ``value``, found under ``key`` at or below a secret-bearing key, is refused.

    Any string; any number (a numeric key or PIN pasted without quotes, ``apiToken: 1234567890``)
    unless ``key`` itself names a quantity (``maxTokens``, ``tokenCount``: counts, not keys).
    Booleans and ``null`` never.
    """
    if isinstance(value, str):
        return True
    folded = key.lower()
    return is_literal_scalar(value) and not any(part in folded for part in _QUANTITY_PARTS)


def literal_secret_problems(
    value: Any, where: str, *, under_secret: bool = False, key: str = ""
) -> list[SpecError]:
    """Every literal scalar at or below a secret-bearing key under ``value``, one problem each.

    A string or number (:func:`could_be_secret`) directly under a secret-bearing key, or at any
    depth below one (in a list, a nested mapping), is a literal secret unless it is inside a
    reference (:func:`is_secret_ref`). The problem names the scalar's dotted path; its value is
    always ``<redacted>``.

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
        for name, item in value.items():
            problems.extend(
                literal_secret_problems(
                    item,
                    f"{where}.{name}",
                    under_secret=under_secret or is_secret_name(str(name)),
                    key=str(name),
                )
            )
    elif isinstance(value, list):
        for index, item in enumerate(value):
            problems.extend(
                literal_secret_problems(
                    item, f"{where}.{index}", under_secret=under_secret, key=key
                )
            )
    elif under_secret and could_be_secret(key, value):
        problems.append(
            SpecError(
                where,
                REDACTED,
                "holds a literal secret; name it instead: "
                "{secretRef: {env: ALMANAC_SECRET_<NAME>}} or {secretRef: {file: <name>}}",
            )
        )
    elif isinstance(value, str) and "://" in value and (names := secret_query_names(value)):
        problems.append(
            SpecError(
                where,
                redact_url(value),
                f"query parameter {names[0]!r} holds a literal secret; send it in a header "
                "with a secretRef instead",
            )
        )
    return problems


_URL_CREDENTIALS = re.compile(r"://[^/@\s]+@")
"""The ``user:password@`` of a URL (RFC 3986 userinfo), which a message must never repeat."""

_QUERY_PARAMETER = re.compile(r"([?&;])([^=&;#\s]+)=([^&;#\s]*)")
"""A URL query's ``name=value`` pair (RFC 3986 §3.4, as forms write it)."""


def secret_query_names(url: str) -> list[str]:
    """The query parameters of ``url`` whose names are secret-bearing (``?token=…``, ``api_key``).

    A literal secret in a URL is a literal secret in the spec, and it would travel in access logs.
    """
    return [m.group(2) for m in _QUERY_PARAMETER.finditer(url) if is_secret_name(m.group(2))]


def redact_url(text: str) -> str:
    """``text`` with every URL's ``user:password@`` and secret-bearing query values hidden."""

    def hide(match: re.Match[str]) -> str:
        lead, name, value = match.groups()
        return f"{lead}{name}={REDACTED}" if is_secret_name(name) and value else match.group(0)

    return _QUERY_PARAMETER.sub(hide, _URL_CREDENTIALS.sub("://<redacted>@", text))


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
            key: _redact_item(key, item, under_secret=under_secret) for key, item in value.items()
        }
    if isinstance(value, list):
        return [redact(item, under_secret=under_secret) for item in value]
    if under_secret and is_literal_scalar(value):
        return REDACTED
    if isinstance(value, str):
        return redact_url(value)
    return value


def _redact_item(key: Any, item: Any, *, under_secret: bool) -> Any:
    if str(key) == SECRET_REF_KEY and isinstance(item, Mapping):
        return {name: _redact_location(name, where) for name, where in item.items()}
    return redact(item, under_secret=under_secret or is_secret_name(str(key)))


def _redact_location(key: Any, value: Any) -> Any:
    """A value inside a reference: a string ``env``/``file`` is a name (shown), the rest is not.

    An ``env`` string is shown only when it is written like an environment variable's name
    (``_ENV_NAME``: upper case, digits, ``_``): a token pasted there by mistake (mixed case,
    ``-``, ``.``, ``=``…) stays redacted.
    """
    is_name = isinstance(value, str) and (
        str(key) == "file" or (str(key) == "env" and _ENV_NAME.fullmatch(value) is not None)
    )
    return redact(value, under_secret=not is_name)


def redact_at(path: Iterable[Any], value: Any) -> Any:
    """:func:`redact` for a value found at ``path`` (its keys from the top of the data).

    A value at or below a secret-bearing key is redacted through and through, except where
    ``path`` ends at a reference's location (``….secretRef.env``): a string there is a name. A
    ``headers`` value that is not a mapping (a string or a list: header lines such as
    ``Authorization: Bearer …`` pasted from ``curl -H``) is redacted whole (second trial).
    """
    parts = [str(part) for part in path]
    if len(parts) >= 2 and parts[-2] == SECRET_REF_KEY:
        return _redact_location(parts[-1], value)
    if parts and parts[-1] == HEADERS_KEY and not isinstance(value, Mapping):
        return REDACTED  # header lines pasted as text (`curl -H 'Authorization: Bearer …'`)
    return redact(value, under_secret=any(is_secret_name(part) for part in parts))
