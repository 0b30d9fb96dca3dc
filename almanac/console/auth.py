"""Sessions, CSRF tokens and operator sign-in for the console.

A session is a signed cookie (HMAC-SHA256; no server state) holding a random CSRF token, the
signed-in operator's name (if any) and an expiry. Every form carries the CSRF token and every
POST must present the session's: a page on another site can neither read it nor set the cookie
(``SameSite=Strict``, ``HttpOnly``). Tokens are compared in constant time and never rendered,
logged or stored.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from almanac.console.config import OPERATOR_NAME, TokenRef

COOKIE = "almanac_console"


@dataclass(frozen=True, slots=True)
class Session:
    """One browser's session: its CSRF token, operator (``None``: reading only) and expiry."""

    csrf: str
    operator: str | None
    expires_utc: datetime


class Sessions:
    """Issues and verifies signed session cookies."""

    def __init__(self, key: bytes, lifetime: timedelta, clock: Callable[[], datetime]) -> None:
        """Sign with ``key``; a session lasts ``lifetime`` from issue by ``clock`` (aware UTC)."""
        self._key = key
        self._lifetime = lifetime
        self._clock = clock

    def new(self, operator: str | None = None) -> Session:
        """A fresh session (a new CSRF token)."""
        return Session(secrets.token_urlsafe(24), operator, self._clock() + self._lifetime)

    def signed_in(self, operator: str) -> Session:
        """The session after ``operator`` signed in: a new CSRF token (fixation) and expiry."""
        return self.new(operator)

    def dump(self, session: Session) -> str:
        """The cookie value: ``payload.signature``, both URL-safe base64."""
        payload = json.dumps(
            {"c": session.csrf, "o": session.operator, "e": session.expires_utc.isoformat()},
            separators=(",", ":"),
        ).encode()
        body = base64.urlsafe_b64encode(payload).decode().rstrip("=")
        return f"{body}.{self._sign(body)}"

    def load(self, cookie: str | None) -> Session | None:
        """The session a cookie holds, or ``None`` if absent, forged, malformed or expired."""
        if not cookie or len(cookie) > 4096 or "." not in cookie:
            return None
        body, _, signature = cookie.rpartition(".")
        if not hmac.compare_digest(signature, self._sign(body)):
            return None
        try:
            data = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
            session = Session(str(data["c"]), data["o"], datetime.fromisoformat(data["e"]))
        except (ValueError, KeyError, TypeError):
            return None
        return session if session.expires_utc > self._clock() else None

    def _sign(self, body: str) -> str:
        digest = hmac.new(self._key, body.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def csrf_ok(session: Session | None, presented: str | None) -> bool:
    """Whether a form's CSRF token is its session's (constant-time)."""
    if session is None or not presented:
        return False
    return hmac.compare_digest(session.csrf.encode(), presented.encode())


class Operators:
    """Checks an operator's name and token against the configured secret references."""

    def __init__(self, operators: Mapping[str, TokenRef], secrets_dir: Path) -> None:
        """Tokens are read from ``secrets_dir`` (``file``) or the environment (``env``)."""
        self._operators = dict(operators)
        self._secrets_dir = secrets_dir

    @property
    def configured(self) -> bool:
        """Whether anyone may sign in with a token."""
        return bool(self._operators)

    def verify(self, name: str, token: str) -> bool:
        """Whether ``token`` is ``name``'s (an unknown name or unreadable token: ``False``)."""
        ref = self._operators.get(name)
        if ref is None or not token:
            return False
        from activities.actions import SecretResolver, SecretUnavailable
        from activities.actions.parameters import SecretRef

        try:
            expected = SecretResolver(self._secrets_dir).resolve(
                SecretRef.model_validate(ref.as_secret_ref())
            )
        except SecretUnavailable:
            return False
        return hmac.compare_digest(expected.encode(), token.encode())


def proxy_user(value: str | None) -> str | None:
    """A trusted proxy header's user name, if it is a well-formed operator name."""
    if value is None or not OPERATOR_NAME.match(value):
        return None
    return value
