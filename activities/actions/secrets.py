"""Secret references, resolved by the worker at call time (DESIGN §10).

A spec names a secret; it never holds one (``timecontract.secrets`` refuses literals)::

    {secretRef: {env: ALMANAC_SECRET_OPS_TOKEN}}    an environment variable of the worker
    {secretRef: {file: ops-webhook.key}}            a file in the worker's secrets directory

Only what the operator set aside for specs can be named: environment variables whose names start
with ``ALMANAC_SECRET_`` (so a spec cannot send the worker's Temporal API key or ledger URL to its
webhook), and files directly inside the secrets directory (``ALMANAC_SECRETS_DIR``, default
``<data dir>/secrets``; a name with a path separator or ``..``, or a symlink leading out of the
directory, is refused).
A file's content is the secret, without its trailing newline; at most 64 KiB.

The value exists only inside the adapter's call: it is sent, then scrubbed from every text the
adapter returns (:class:`Scrubber`), so it never reaches an outcome, the ledger, a Temporal
payload, a log or a metric. Errors name the reference, never the value.

The reference's model, :class:`SecretRef`, is declared with the parameter models that use it
(:mod:`activities.actions.parameters`, which the edge checks without loading the adapters).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

from activities.actions.base import ActionError
from activities.actions.parameters import SecretRef  # the reference a spec writes

SECRET_ENV_PREFIX = "ALMANAC_SECRET_"
MAX_SECRET_BYTES = 64 * 1024
SCRUBBED = "<secret>"


class SecretUnavailable(ActionError):
    """A referenced secret cannot be read: unset variable, missing or oversized file."""


class SecretResolver:
    """Reads referenced secrets from the worker's environment and secrets directory."""

    def __init__(
        self, secrets_dir: Path | None = None, environ: Mapping[str, str] | None = None
    ) -> None:
        """Build a resolver.

        Args:
            secrets_dir: where ``file`` references are read (``None``: they are refused).
            environ: where ``env`` references are read (default ``os.environ``).
        """
        self._dir = secrets_dir
        self._environ = os.environ if environ is None else environ

    def resolve(self, ref: SecretRef) -> str:
        """The secret's value.

        Raises:
            SecretUnavailable: naming the reference, never a value.
        """
        location = ref.secret_ref
        if location.env is not None:
            value = self._environ.get(location.env)
            if not value:
                raise SecretUnavailable(f"{ref.describe()}: not set in the worker's environment")
            return value
        assert location.file is not None
        if self._dir is None:
            raise SecretUnavailable(f"{ref.describe()}: the worker has no secrets directory")
        base = self._dir.resolve()
        path = (base / location.file).resolve()
        if not path.is_relative_to(base) or path == base:
            raise SecretUnavailable(f"{ref.describe()}: outside the secrets directory")
        try:
            with path.open("rb") as file:
                raw = file.read(MAX_SECRET_BYTES + 1)
        except OSError as exc:
            raise SecretUnavailable(f"{ref.describe()}: {exc.strerror or 'cannot read'}") from None
        if len(raw) > MAX_SECRET_BYTES:
            raise SecretUnavailable(f"{ref.describe()}: larger than {MAX_SECRET_BYTES} bytes")
        try:
            value = raw.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError:
            raise SecretUnavailable(f"{ref.describe()}: not UTF-8 text") from None
        if not value:
            raise SecretUnavailable(f"{ref.describe()}: empty")
        return value


MIN_ENCODED_CHARS = 8
"""The shortest encoded form of a secret the :class:`Scrubber` replaces: a shorter run of base64
or hex would match unrelated text, and says little of the secret."""


def encoded_forms(secret: str) -> set[str]:
    """The texts a downstream may echo ``secret`` as, each found inside a longer encoding too.

    The secret itself; percent-encoded (RFC 3986 §2.1, ``quote`` and the form encoding's
    ``quote_plus``); JSON-escaped (RFC 8259 §7, ASCII-only and not, and with an escaped slash);
    hex, lower and upper case; and base64 and base64url (RFC 4648 §4–5) at each of the three
    byte offsets the secret can sit at inside a longer encoded text — for each, the characters
    that depend on the secret's bytes alone (a secret at byte offset ``k`` fills characters
    ``ceil(8k/6)`` to ``floor(8(k+n)/6)`` of the encoding, whatever surrounds it).
    """
    raw = secret.encode()
    forms = {
        secret,
        quote(secret, safe=""),
        quote_plus(secret, safe=""),
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
        json.dumps(secret)[1:-1].replace("/", "\\/"),
        raw.hex(),
        raw.hex().upper(),
    }
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        for offset in range(3):
            text = encode(b"\0" * offset + raw).decode()
            forms.add(text[-(-8 * offset // 6) : 8 * (offset + len(raw)) // 6])
    return {form for form in forms if form == secret or len(form) >= MIN_ENCODED_CHARS}


def _decoded_credential(word: str) -> str | None:
    """The text a base64 credential stands for (``Basic dXNlcjpwdw==`` → ``user:pw``), if any."""
    try:
        text = base64.b64decode(word, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    return text if len(text) >= MIN_ENCODED_CHARS and text.isprintable() else None


class Scrubber:
    """Replaces the secrets one call used with ``<secret>`` in any text it returns.

    Each secret is found as written and in the encodings a downstream may echo it in
    (:func:`encoded_forms`), as is each part after a scheme word (``Bearer …``) and the text a
    base64 part stands for (a ``Basic`` credential's ``user:password``).
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        """Scrub each of ``secrets``, its parts of 8+ characters, and their encodings."""
        words: set[str] = set()
        for secret in secrets:
            if not secret:
                continue
            parts = {secret} | {part for part in secret.split() if len(part) >= 8}
            parts |= {text for part in list(parts) if (text := _decoded_credential(part))}
            for part in parts:
                words |= encoded_forms(part)
        ordered = sorted((w for w in words if w), key=len, reverse=True)
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    def __call__(self, text: str) -> str:
        """``text`` with every secret replaced."""
        return self._pattern.sub(SCRUBBED, text) if self._pattern is not None else text

    def data(self, value: Any) -> Any:
        """JSON data with every string scrubbed."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {self(str(k)): self.data(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.data(v) for v in value]
        return value
