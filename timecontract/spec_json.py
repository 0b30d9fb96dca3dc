"""Reading a JSON spec file's text: RFC 8259 JSON only, a key given twice found with its line.

Python's ``json`` accepts ``NaN``, ``Infinity`` and ``-Infinity``, which RFC 8259 §6 does not,
and keeps the last of a key given twice silently; here the first is refused naming its line and
column, the second is reported with its path and line (``spec_file`` makes both problems).
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass, field
from typing import Any

from timecontract.secrets import quiet_parser_message, redact_at


class NotJsonNumber(ValueError):
    """``NaN``, ``Infinity`` or ``-Infinity`` at ``line``, ``column`` (both from 1)."""

    def __init__(self, word: str, line: int, column: int) -> None:
        super().__init__(word, line, column)
        self.word = word
        self.line = line
        self.column = column


@dataclass(frozen=True, slots=True)
class JsonKeyGivenTwice:
    """The first key given twice in a JSON document."""

    key: str
    value: Any
    """The key's later value, shown only as the secret rule allows at its path."""
    line: int
    """The line (from 1) of the later value."""
    given_twice: frozenset[str]
    """Every key given twice at the document's top (such a field has no one value)."""


class _Duplicated(dict[str, Any]):
    """A JSON object in which a key was given twice: the first such key and its later value."""

    duplicate: tuple[str, Any]
    given_twice: set[str]
    """Every key given twice in this object."""
    closed: int
    """Its place (from 1) among the document's objects in the order their ``}`` come: ``json``
    builds each object at its closing brace, so the order of the hook's calls."""


def _refuse_duplicate_keys(pairs: list[tuple[str, Any]], closed: int) -> dict[str, Any]:
    """``json`` object hook: mark an object whose key is given twice (JSON keeps the last).

    ``closed``: the call's number (:attr:`_Duplicated.closed`). Objects are built innermost
    first, so the path above is not known yet: the object is marked here and
    :func:`_first_duplicate` finds it, with its path, once the document is read.
    """
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data and not isinstance(data, _Duplicated):
            data = _Duplicated(data)
            data.duplicate, data.given_twice, data.closed = (key, value), set(), closed
        if isinstance(data, _Duplicated) and key in data:
            data.given_twice.add(key)
        data[key] = value
    return data


def _first_duplicate(document: Any) -> tuple[list[str], _Duplicated] | None:
    """The first marked object and its path (keys and list indices); else ``None``."""
    stack: list[tuple[list[str], Any]] = [([], document)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, _Duplicated):
            return path, value
        if isinstance(value, dict):
            stack.extend(([*path, str(k)], v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend(([*path, str(i)], v) for i, v in enumerate(value))
    return None


_STRING = r'"(?:[^"\\]|\\.)*"'
"""A JSON string, escapes included."""
_BRACE_OR_KEY = re.compile(rf"[{{}}]|({_STRING})\s*:\s*|{_STRING}")
"""A brace, an object's key (a string followed by ``:``; the match ends where its value
starts), or another string (skipped: it may hold braces)."""


@dataclass(slots=True)
class _OpenObject:
    """An object open in :func:`_repeat_line`'s scan."""

    keys: set[str] = field(default_factory=set)
    repeat_line: int = 0
    """The line of its first repeated key's value (0: none yet)."""


def _repeat_line(text: str, closed: int) -> int:
    """The line (from 1) of the first repeated key's value in the ``closed``-th object to close.

    ``text`` is JSON already read; objects are counted in the order their ``}`` come.
    """
    opened: list[_OpenObject] = []
    ends = 0
    for token in _BRACE_OR_KEY.finditer(text):
        if token[0] == "{":
            opened.append(_OpenObject())
        elif token[0] == "}":
            ends += 1
            if ends == closed:
                return opened[-1].repeat_line
            opened.pop()
        elif token[1] is not None:
            key, inner = json.loads(token[1]), opened[-1]
            if key in inner.keys and not inner.repeat_line:
                inner.repeat_line = text.count("\n", 0, token.end()) + 1
            inner.keys.add(key)
    raise ValueError(f"no object closes {closed}-th in the JSON text")


_STRING_OR_CONSTANT = re.compile(rf"{_STRING}|(NaN|-?Infinity)")
"""A JSON string (skipped) or one of the constants JSON lacks."""


def load_json(text: str) -> tuple[Any, JsonKeyGivenTwice | None]:
    """Read JSON text: the document, and the first key given twice in it (``None``: none).

    A key given twice is found by ``json``'s object hook; its line by a scan of the text's
    braces and keys (:func:`_repeat_line`), done only then.

    Raises:
        json.JSONDecodeError: not JSON (``lineno``, ``colno`` and ``msg`` say where and why).
        NotJsonNumber: a ``NaN``, ``Infinity`` or ``-Infinity`` literal.
        RecursionError: nested too deeply to read.

    """

    def refuse(word: str) -> Any:
        found = next(m for m in _STRING_OR_CONSTANT.finditer(text) if m[1] == word)
        raise NotJsonNumber(word, *_line_and_column(text, found.start()))

    closing = itertools.count(1)
    document = json.loads(
        text,
        object_pairs_hook=lambda pairs: _refuse_duplicate_keys(pairs, next(closing)),
        parse_constant=refuse,
    )
    found = _first_duplicate(document)
    if found is None:
        return document, None
    path, marked = found
    key, given = marked.duplicate
    top = document.given_twice if isinstance(document, _Duplicated) else set()
    shown = redact_at([*path, key], given)
    return document, JsonKeyGivenTwice(
        key, shown, _repeat_line(text, marked.closed), frozenset(top)
    )


def json_syntax(exc: json.JSONDecodeError) -> str:
    """Where and why a JSON text is invalid: ``line L, column C: <why>`` (both from 1).

    A comma before ``}`` or ``]`` is named at the comma, which is the mistake: RFC 8259 §4 and §5
    allow none there (YAML's flow collections and JavaScript do), and the parser's own message
    points at the bracket after it with a complaint about what it expected instead.
    """
    text, at = exc.doc, exc.pos
    before = text[:at].rstrip()
    if before.endswith(",") and text[at : at + 1] in ("}", "]"):
        line, column = _line_and_column(text, len(before) - 1)
        return (
            f"line {line}, column {column}: a comma before '{text[at]}': JSON allows no "
            "trailing comma (RFC 8259)"
        )
    return f"line {exc.lineno}, column {exc.colno}: {quiet_parser_message(exc.msg)}"


def _line_and_column(text: str, at: int) -> tuple[int, int]:
    """The line and column (both from 1) of the character at index ``at`` of ``text``."""
    return text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)
