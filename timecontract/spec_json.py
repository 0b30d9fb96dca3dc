"""Reading a JSON spec file's text: RFC 8259 JSON only, a key given twice found with its line.

Python's ``json`` accepts ``NaN``, ``Infinity`` and ``-Infinity``, which RFC 8259 §6 does not,
and keeps the last of a key given twice silently; here the first is refused naming its line and
column, the second is reported with its path and line (``spec_file`` makes both problems).
"""

from __future__ import annotations

import json
import json.scanner
import re
from dataclasses import dataclass
from json.decoder import JSONObject  # type: ignore[attr-defined]  # CPython's, untyped
from typing import Any

from timecontract.secrets import redact_at


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
    duplicate_pair: int
    """The later pair's index among the object's pairs."""
    line: int = 0
    """The line of the later pair's value (:func:`_located_object`)."""
    given_twice: set[str]
    """Every key given twice in this object."""


def _refuse_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json`` object hook: mark an object whose key is given twice (JSON keeps the last).

    Objects are built innermost first, so the path above is not known yet: the object is marked
    here and :func:`_first_duplicate` finds it, with its path, once the document is read.
    """
    data: dict[str, Any] = {}
    for index, (key, value) in enumerate(pairs):
        if key in data and not isinstance(data, _Duplicated):
            data = _Duplicated(data)
            data.duplicate, data.given_twice = (key, value), set()
            data.duplicate_pair = index
        if isinstance(data, _Duplicated) and key in data:
            data.given_twice.add(key)
        data[key] = value
    return data


def _located_object(s_and_end: tuple[str, int], strict: bool, scan_once: Any, *rest: Any) -> Any:
    """CPython's ``json.decoder.JSONObject``, noting the line of a key given twice (its value's).

    The object parser hands each value's start to ``scan_once``; the object hook
    (:func:`_refuse_duplicate_keys`) says which pair repeats a key.
    """
    text, _ = s_and_end
    starts: list[int] = []

    def scan_value(string: str, index: int) -> Any:
        starts.append(index)
        return scan_once(string, index)

    data, end = JSONObject(s_and_end, strict, scan_value, *rest)
    if isinstance(data, _Duplicated) and not data.line:
        data.line = text.count("\n", 0, starts[data.duplicate_pair]) + 1
    return data, end


def _first_duplicate(document: Any) -> JsonKeyGivenTwice | None:
    """The first marked object's key given twice, its value redacted at its path; else ``None``."""
    stack: list[tuple[list[str], Any]] = [([], document)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, _Duplicated):
            key, given = value.duplicate
            top = document.given_twice if isinstance(document, _Duplicated) else set()
            shown = redact_at([*path, key], given)
            return JsonKeyGivenTwice(key, shown, value.line, frozenset(top))
        if isinstance(value, dict):
            stack.extend(([*path, str(k)], v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend(([*path, str(i)], v) for i, v in enumerate(value))
    return None


_STRING_OR_CONSTANT = re.compile(r'"(?:[^"\\]|\\.)*"|(NaN|-?Infinity)')
"""A JSON string (skipped) or one of the constants JSON lacks."""


def load_json(text: str) -> tuple[Any, JsonKeyGivenTwice | None]:
    """Read JSON text: the document, and the first key given twice in it (``None``: none).

    The pure-Python scanner, since it calls the decoder's ``parse_object`` (the C scanner parses
    objects itself); a spec file is small (``spec_file.MAX_SPEC_BYTES``).

    Raises:
        json.JSONDecodeError: not JSON (``lineno``, ``colno`` and ``msg`` say where and why).
        NotJsonNumber: a ``NaN``, ``Infinity`` or ``-Infinity`` literal.
        RecursionError: nested too deeply to read.

    """

    def refuse(word: str) -> Any:
        found = next(m for m in _STRING_OR_CONSTANT.finditer(text) if m[1] == word)
        line = text.count("\n", 0, found.start()) + 1
        raise NotJsonNumber(word, line, found.start() - text.rfind("\n", 0, found.start()))

    decoder = json.JSONDecoder(object_pairs_hook=_refuse_duplicate_keys, parse_constant=refuse)
    decoder.parse_object = _located_object  # type: ignore[attr-defined]
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    document = decoder.decode(text)
    return document, _first_duplicate(document)
