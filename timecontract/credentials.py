"""What a credential looks like: normalised names and credential-shaped values (DESIGN §10).

:mod:`timecontract.secrets` walks a spec's ``action.parameters``; this module answers its two
questions, on text normalised first so that a disguise changes nothing:

- **Is this name secret-bearing?** (:func:`is_secret_name`) The name is percent-decoded (a URL's
  ``%74oken``), put in Unicode compatibility form NFKC (fullwidth ``ｔｏｋｅｎ``), stripped of
  format characters (category ``Cf``: zero-width space and joiners, soft hyphen, BOM), its common
  Cyrillic and Greek look-alike letters mapped to Latin (a subset of Unicode's confusables.txt,
  UTS #39), case-folded, and split into words at ``.``, ``-``, ``_``, spaces, other punctuation
  and camelCase humps. It is secret-bearing when the joined words contain one of
  :data:`SECRET_PARTS` (``X-Api.Key`` → ``xapikey``, ``pass.word`` → ``password``,
  ``Set-Cookie``), when a word is one of :data:`SECRET_WORDS` (``auth``, ``pwd``, ``jwt``), or
  when the whole name, without an ``X-`` prefix, is one of :data:`SECRET_NAMES` (``key``,
  ``pass``: as words inside a longer name, ``sortKey``, ``passThrough``, they are not secrets).
- **Is this text credential-shaped?** (:func:`credential_shape`) Whatever key it sits under: an
  HTTP authentication value (RFC 9110 §11: ``Bearer``, ``Basic``, ``Token``, ``Digest`` … and a
  credential), URL userinfo (``scheme://user:pw@``, RFC 3986 §3.2.1) anywhere in the text, a query
  or fragment parameter with a secret-bearing name (``?%74oken=…``, ``#access_token=…``), a
  ``name: value`` or ``name=value`` pair, a ``--name=value`` / ``--name value`` option or a
  ``<name>value</name>`` element with a secret-bearing (percent-decoded) name inside text (a
  pasted header line, a connection string, a command line), a JWT (RFC 7519: three base64url
  segments whose first decodes to a JSON object), a PEM private key, or a vendor token with a
  published prefix (``ghp_``, ``xoxb-``, ``sk_live_``, ``AKIA``, ``whsec_``).

The answer names the shape, never the text, so a caller can say why it refuses without
repeating what it refuses.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import unicodedata
from urllib.parse import unquote

SECRET_PARTS = (
    "token",
    "secret",
    "password",
    "passwd",
    "passphrase",
    "apikey",
    "accesskey",
    "privatekey",
    "signingkey",
    "clientkey",
    "credential",
    "authorization",
    "cookie",
    "sessionid",
    "sessionkey",
    "bearer",
    "signature",
    "jwt",
)
"""A name whose joined, folded words contain one of these is secret-bearing."""
SECRET_WORDS = frozenset({"auth", "pwd", "pw", "jwt", "sid", "otp", "session", "passwd"})
"""A name with one of these as a whole word is secret-bearing (``X-Session``, ``db_pwd``)."""
SECRET_NAMES = frozenset({"key", "pass", "pin", "auth", "sig"})
"""A name that is exactly one of these, but for an ``X-`` prefix, is secret-bearing."""

# Unicode confusables.txt (UTS #39) maps these Cyrillic and Greek letters to the Latin ones they
# are drawn like; the subset that can spell the words above.
_CONFUSABLES = str.maketrans(
    {
        "а": "a", "А": "A", "в": "B", "В": "B", "е": "e", "Е": "E", "к": "k", "К": "K",
        "м": "M", "М": "M", "н": "H", "Н": "H", "о": "o", "О": "O", "р": "p", "Р": "P",
        "с": "c", "С": "C", "т": "T", "Т": "T", "у": "y", "У": "Y", "х": "x", "Х": "X",
        "ѕ": "s", "Ѕ": "S", "і": "i", "І": "I", "ј": "j", "Ј": "J", "ԁ": "d", "ԛ": "q",
        "ԝ": "w", "ӏ": "l", "α": "a", "Α": "A", "β": "B", "Β": "B", "ε": "e", "Ε": "E",
        "ι": "i", "Ι": "I", "κ": "k", "Κ": "K", "ν": "v", "Ν": "N", "ο": "o", "Ο": "O",
        "ρ": "p", "Ρ": "P", "τ": "t", "Τ": "T", "υ": "u", "Υ": "Y", "χ": "x", "Χ": "X",
        "Ζ": "Z", "Η": "H", "Μ": "M", "ı": "i",
    }
)  # fmt: skip
_WORD_BREAK = re.compile(r"[^0-9A-Za-z]+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_QUANTITY_PARTS = ("count", "max", "min", "limit", "length", "size", "ttl", "expir", "timeout")


def plain(text: str) -> str:
    """``text`` in NFKC, without format characters or combining marks, look-alikes as Latin.

    Combining marks (category ``Mn``, after canonical decomposition) are dropped so that an
    accent laid over a letter (``To\u0301ken``) disguises nothing.
    """
    text = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text))
    text = "".join(ch for ch in text if unicodedata.category(ch) not in {"Cf", "Mn"})
    return unicodedata.normalize("NFC", text).translate(_CONFUSABLES)


def name_words(name: str) -> list[str]:
    """The case-folded words of a parameter, header or query name, after :func:`plain`.

    Percent-decoded first (``%74oken`` → ``token``); split at every character that is not an
    ASCII letter or digit and at camelCase humps (``apiKey`` → ``api``, ``key``).
    """
    text = plain(unquote(plain(name)))
    return [word.casefold() for word in _WORD_BREAK.split(text) if word]


def is_secret_name(name: str) -> bool:
    """Whether a parameter, header or query parameter named ``name`` carries a credential."""
    words = name_words(name)
    if words[:1] == ["x"] and len(words) > 1:
        words = words[1:]
    joined = "".join(words)
    return (
        joined in SECRET_NAMES
        or any(word in SECRET_WORDS for word in words)
        or any(part in joined for part in SECRET_PARTS)
    )


def names_a_quantity(name: str) -> bool:
    """Whether ``name`` names a number of something (``maxTokens``, ``sessionTtl``), not a key."""
    joined = "".join(name_words(name))
    return any(part in joined for part in _QUANTITY_PARTS)


_AUTH_SCHEME = re.compile(
    r"(?i)(?:^|[;,|&\n])\s*[\"']?"
    r"(?:bearer|token|basic|digest|negotiate|ntlm|oauth|apikey|aws4-hmac-sha256)"
    r"\s+([A-Za-z0-9._~+/=:,\"-]{8,})"
)
"""An ``Authorization`` value (RFC 9110 §11.4): a scheme, then a credential of 8+ characters, at
the start of the text or after a separator (``FREQ=HOURLY;Bearer …``)."""
_USERINFO = re.compile(r"(?i)(?:[a-z][a-z0-9+.-]*:)?//[^\s/?#@\"'<>]+@")
"""A URL's userinfo (RFC 3986 §3.2.1), ``user:pw@`` or a token as user, anywhere in text."""
URL_PARAMETER = re.compile(r"([?#&;])([^=&;#?\s]+)=([^&;#\s]*)")
"""A query or fragment ``name=value`` pair (RFC 3986 §3.4–3.5, as forms write it)."""
_TEXT_PAIR = re.compile(
    r"(?:^|[\s,;{(\[|])[\"']?([^\W\d][\w.\-]{0,60})[\"']?\s*[:=]\s*[\"']?([^\s\"',;&})\]]+)"
)
"""A ``name: value`` or ``name=value`` pair inside text (a header line, a connection string)."""
_FLAG = re.compile(r"(?:^|\s)--?([^\W\d][\w.\-]{0,60})(?:=|\s+)[\"']?([^\s\"']{6,})")
"""A command-line option and its value inside text (``--password=…``, ``--token …``)."""
_ELEMENT = re.compile(r"<([^\W\d][\w.\-]{0,60})>\s*([^<\s]{4,})\s*</\1>")
"""An XML element holding a value (``<password>…</password>``)."""
_JWT = re.compile(r"([A-Za-z0-9_-]{4,})\.([A-Za-z0-9_-]{4,})\.([A-Za-z0-9_-]*)")
_PEM_KEY = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")
_VENDOR_TOKEN = re.compile(
    r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}"
    r"|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}|AKIA[0-9A-Z]{16}|whsec_[A-Za-z0-9+/=]{16,})"
)
"""Tokens whose issuers publish a fixed prefix (GitHub, Slack, Stripe, AWS, Standard Webhooks)."""


def credential_shape(text: str) -> str | None:
    """What credential ``text`` holds or looks like, in words, or ``None``; never the text.

    See the module docstring for the shapes recognised.
    """
    flat = plain(text)
    if _AUTH_SCHEME.search(flat):
        return "an authorization scheme and credential (Bearer/Basic/Token/Digest …)"
    if _USERINFO.search(flat):
        return "URL credentials (user:password@)"
    for match in URL_PARAMETER.finditer(flat):
        if match.group(3) and is_secret_name(match.group(2)):
            return f"a secret-bearing URL parameter ({_shown_name(match.group(2))})"
    decoded = plain(unquote(flat))  # a pair's name may be percent-encoded (``%70assword=``)
    for pattern in (_TEXT_PAIR, _FLAG, _ELEMENT):
        for match in pattern.finditer(decoded):
            name = match.group(1)
            if is_secret_name(name) and not names_a_quantity(name):
                return f"a secret-bearing {_shown_name(name)}: value pair"
    if any(_is_jwt(match) for match in _JWT.finditer(flat)):
        return "a JSON Web Token"
    if _PEM_KEY.search(flat):
        return "a PEM private key"
    if _VENDOR_TOKEN.search(flat):
        return "a token with an issuer's published prefix"
    return None


def _shown_name(name: str) -> str:
    """A found name, as it may be repeated: its folded words (a name, not a value)."""
    return "-".join(name_words(name))[:60]


def _is_jwt(match: re.Match[str]) -> bool:
    """RFC 7519 §7.2: the first segment is the base64url of a JSON object (the JOSE header)."""
    segment = match.group(1)
    try:
        header = json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))
    except (binascii.Error, ValueError):
        return False
    return isinstance(header, dict)
