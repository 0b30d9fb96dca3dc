"""Reading a spec file into plain data, within bounds: bytes, nesting, aliases, values and text.

A spec file is JSON (``.json``, read by ``spec_json``) or YAML (anything else) holding JSON data
only. YAML is read with a safe loader that keeps timestamps as text (the spec's own fields parse
them), refuses a key given twice (YAML and JSON keep the last one silently) and a non-string key,
and counts alias uses, so a small file cannot expand into a huge document. Every refusal is an
:class:`~timecontract.errors.InvalidSpec` naming the file, and a value is shown only as the
secret rule allows at its path (``timecontract.secrets``).
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from timecontract.errors import InvalidSpec, SpecError, SpecFileUnreadable
from timecontract.secrets import quiet_parser_message, redact_at
from timecontract.spec_json import NotJsonNumber, json_syntax, load_json

MAX_SPEC_BYTES = 64 * 1024
"""The largest spec file read (a spec is a page of settings; its ``action.parameters.data`` too)."""
MAX_SPEC_DEPTH = 32
"""How deeply a spec file's lists and mappings may nest (a spec needs about 6)."""
MAX_YAML_ALIASES = 20
"""The most YAML alias uses (``*name``) in one spec file: enough to share a block, too few to
build an exponential "billion laughs" document."""
MAX_SPEC_VALUES = 10_000
"""The most values (mapping keys and items, list items, scalars) in spec data, counted after
alias expansion."""
MAX_SPEC_TEXT = 256 * 1024
"""The most characters of text (keys and strings) in spec data, counted after alias expansion."""
MERGE_TAG = "tag:yaml.org,2002:merge"
"""The tag of YAML's merge key, ``<<``."""


def _unreadable_reason(exc: OSError) -> str:
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    if isinstance(exc, IsADirectoryError):
        return "is a directory, not a spec file"
    if isinstance(exc, PermissionError):
        return "permission denied"
    return (exc.strerror or type(exc).__name__).lower()


class _NoTimestampLoader(yaml.SafeLoader):
    """YAML safe loader that keeps timestamps as text and allows few aliases.

    Timestamps stay text so the spec's own parsers see them; merge keys (``<<: *base``) merge.
    Each alias use (``*name``) is counted; more than :data:`MAX_YAML_ALIASES` stops the load at
    that alias, and so does an alias inside the very list or mapping its anchor names
    (``a: &x [*x]``: a value holding itself, which JSON data cannot be).
    """

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.alias_uses = 0
        self.open_anchors: list[str] = []
        """The anchors of the lists and mappings being composed, outermost first."""
        self.duplicate: _DuplicateKey | None = None
        """The first key found given twice: the load goes on, so the caller still gets the
        document (to name its schedule), then is refused with this."""
        self.given_twice: set[str] = set()
        """The keys given twice at the document's top."""
        self.checked: set[int] = set()
        """The mappings (by node id) whose own keys are checked (before merging)."""
        self.top: Any = None
        """The document's top node."""
        self.paths: dict[int, list[str]] = {}
        """Each node's path of keys from the document's top (by node id): a duplicate key's
        value is shown only as :func:`~timecontract.secrets.redact_at` allows at its path."""

    def construct_document(self, node: Any) -> Any:
        self.top = node
        return super().construct_document(node)

    def compose_node(self, parent: Any, index: Any) -> Any:
        self.depth = getattr(self, "depth", 0) + 1
        try:
            if self.depth > MAX_SPEC_DEPTH:
                raise _TooDeep(self.peek_event().start_mark.line + 1)  # type: ignore[no-untyped-call]
            return self._compose_counted(parent, index)
        finally:
            self.depth -= 1

    def _compose_counted(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if self.check_event(yaml.AliasEvent):
            self.alias_uses += 1
            if event.anchor in self.open_anchors:
                raise _SelfReference(str(event.anchor), event.start_mark.line + 1)
            if self.alias_uses > MAX_YAML_ALIASES:
                raise _TooManyAliases(str(event.anchor), event.start_mark.line + 1)
        if not self.check_event(yaml.CollectionStartEvent) or event.anchor is None:
            return super().compose_node(parent, index)
        self.open_anchors.append(event.anchor)
        try:
            return super().compose_node(parent, index)
        finally:
            self.open_anchors.pop()

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except yaml.YAMLError:
            raise
        except (ValueError, KeyError, TypeError, AttributeError, OverflowError):
            # A tagged scalar that is no such value (``!!int abc``, ``!!bool x``): the library's
            # own error quotes the value, or is a bare KeyError; say where, never what.
            raise yaml.constructor.ConstructorError(
                None, None, f"the value cannot be read as {node.tag}", node.start_mark
            ) from None

    def flatten_mapping(self, node: Any) -> None:
        """Merge the mappings a merge key (``<<``) names into ``node``, as YAML's merge type says.

        The mapping's own keys override merged ones, and of a list of merged mappings the first
        that has a key gives it (yaml.org/type/merge; PyYAML 6.0.4 lets the last one win, its
        issue 953, hence this copy). Each mapping's own keys are checked once, before it merges
        (merged, it holds others' keys, which are not given twice); each key node is merged at
        most once into one mapping (PyYAML's bound, its issue 897), so a merge costs at most
        the keys the file writes.
        """
        if id(node) in self.checked:
            return  # merged already: it holds no merge key
        self.checked.add(id(node))
        self._check_own_keys(node)
        merged: list[tuple[Any, Any]] = []
        taken: set[int] = set()
        own = [pair for pair in node.value if pair[0].tag != MERGE_TAG]
        for _, value_node in (pair for pair in node.value if pair[0].tag == MERGE_TAG):
            listed = isinstance(value_node, yaml.SequenceNode)
            for source in reversed(value_node.value) if listed else [value_node]:
                if not isinstance(source, yaml.MappingNode):
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping",
                        node.start_mark,
                        f"a merge key (<<) takes mappings, not a {source.id}",
                        source.start_mark,
                    )
                self.flatten_mapping(source)
                # Later pairs win when the dict is built: the first listed mapping comes last.
                merged += [pair for pair in source.value if id(pair[0]) not in taken]
                taken.update(id(pair[0]) for pair in source.value)
        node.value = merged + own

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        self.flatten_mapping(node)
        path = self.paths.get(id(node), [])
        for key_node, value_node in node.value:
            self.paths[id(value_node)] = [*path, self.construct_object(key_node, deep=True)]
        return super().construct_mapping(node, deep)

    def _check_own_keys(self, node: Any) -> None:
        # A key given twice is a mistake the reader cannot see (YAML keeps the last one silently).
        seen: set[Any] = set()
        path = self.paths.get(id(node), [])
        for key_node, value_node in node.value:
            merge = key_node.tag == MERGE_TAG
            key = "<<" if merge else self.construct_object(key_node, deep=True)
            if not isinstance(key, str):
                raise _NonStringKey(type(key).__name__, key_node.start_mark.line + 1)
            self.paths[id(value_node)] = [*path, key]
            if key in seen and node is self.top:
                self.given_twice.add(key)
            if key in seen and self.duplicate is None:
                value = self.construct_object(value_node, deep=True)
                shown = redact_at([*path, str(key)], value)
                self.duplicate = _DuplicateKey(str(key), shown, key_node.start_mark.line + 1)
            seen.add(key)

    def construct_sequence(self, node: Any, deep: bool = False) -> Any:
        path = self.paths.get(id(node), [])
        for index, item in enumerate(node.value):
            self.paths[id(item)] = [*path, str(index)]
        return super().construct_sequence(node, deep)


def _not_json(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    # A spec is JSON data: bytes, sets, ordered pairs and timestamps have no JSON form, and an
    # error about such a value would repeat it (a secret as !!binary).
    tag = node.tag.rpartition(":")[2]
    raise yaml.constructor.ConstructorError(
        None,
        None,
        f"a !!{tag} value is not JSON data (a spec holds JSON values only)",
        node.start_mark,
    )


for _tag in ("binary", "set", "omap", "pairs", "timestamp"):
    _NoTimestampLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _not_json)

_NoTimestampLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _load_yaml(text: str) -> Any:
    """``yaml.load`` with :class:`_NoTimestampLoader`, raising its first key given twice last."""
    loader = _NoTimestampLoader(text)
    try:
        document = loader.get_single_data()
    finally:
        loader.dispose()
    if loader.duplicate is not None:
        loader.duplicate.document = document
        loader.duplicate.given_twice = frozenset(loader.given_twice)
        raise loader.duplicate
    return document


class _DuplicateKey(Exception):
    def __init__(self, key: str, value: Any, line: int | None) -> None:
        super().__init__(key, value, line)
        self.key = key
        self.value = value
        self.line = line
        self.document: Any = None
        self.given_twice: frozenset[str] = frozenset()


class KeyGivenTwice(InvalidSpec):
    """A spec file refused for a key given twice, though read whole.

    Attributes:
        data: the document as read (a key given twice holds its last value): a caller that
            holds the spec's model can still name the schedule (``spec.read_spec_file``).
        given_twice: the keys given twice at the document's top (such a field has no one value).

    """

    def __init__(
        self, problems: list[SpecError], source: str, data: Any, given_twice: frozenset[str]
    ) -> None:
        super().__init__(problems, source)
        self.data = data
        self.given_twice = given_twice


def _load_json(text: str) -> Any:
    """:func:`~timecontract.spec_json.load_json`, within :data:`MAX_SPEC_DEPTH`.

    Raises:
        _TooDeep, _DuplicateKey; and as ``load_json`` says.

    """
    try:
        document, twice = load_json(text)
    except RecursionError:
        raise _TooDeep(None) from None
    if _depth(document) > MAX_SPEC_DEPTH:
        raise _TooDeep(None)
    if twice is not None:
        found = _DuplicateKey(twice.key, twice.value, twice.line)
        found.document, found.given_twice = document, twice.given_twice
        raise found
    return document


class _NonStringKey(Exception):
    def __init__(self, kind: str, line: int) -> None:
        super().__init__(kind, line)
        self.kind = kind
        self.line = line


class _TooDeep(Exception):
    def __init__(self, line: int | None) -> None:
        super().__init__(line)
        self.line = line


def _depth(data: Any) -> int:
    """How deeply ``data``'s lists and mappings nest (a scalar: 0), without recursion."""
    deepest, pending = 0, [(data, 1)]
    while pending:
        value, level = pending.pop()
        children = value.values() if isinstance(value, dict) else value
        if isinstance(value, dict | list):
            deepest = max(deepest, level)
            pending.extend((child, level + 1) for child in children)
    return deepest


class _AliasProblem(Exception):
    """A YAML alias (``*anchor``) on ``line`` that stops the load."""

    def __init__(self, anchor: str, line: int) -> None:
        super().__init__(anchor, line)
        self.anchor = anchor
        self.line = line


class _TooManyAliases(_AliasProblem):
    """The alias use beyond :data:`MAX_YAML_ALIASES`."""


class _SelfReference(_AliasProblem):
    """An alias inside the list or mapping its anchor names: a value that holds itself."""


def read_spec_data(path: Path) -> Any:
    """Read a spec file (``.json``, else YAML) into plain data.

    Raises:
        SpecFileUnreadable: the file is missing, a directory or not readable (one line).
        KeyGivenTwice: a key is given twice (an :class:`InvalidSpec` holding the data read).
        InvalidSpec: the file is larger than :data:`MAX_SPEC_BYTES`, not UTF-8 (naming another
            encoding's byte-order mark, else the first bad byte), empty (in YAML: nothing but
            comments), not valid YAML/JSON (JSON: also a ``NaN`` or ``Infinity`` literal,
            ``spec_json``),
            nested deeper than :data:`MAX_SPEC_DEPTH`, has a YAML key that is not a string,
            uses more than :data:`MAX_YAML_ALIASES` YAML aliases, or an alias inside the list or
            mapping its anchor names (the value would hold itself).

    """
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_SPEC_BYTES + 1)
    except OSError as exc:
        raise SpecFileUnreadable(path, _unreadable_reason(exc)) from exc
    try:
        if len(raw) > MAX_SPEC_BYTES:
            problem = f"larger than {MAX_SPEC_BYTES} bytes, the most a spec file may hold"
            raise InvalidSpec([SpecError("file", str(path), problem)], str(path))
        text = raw.decode("utf-8")
        if _is_empty(text, json_file=path.suffix.lower() == ".json"):
            problem = "is empty: a spec is a mapping of fields (schema, scheduleId, revision, …)"
            raise InvalidSpec([SpecError("file", str(path), problem)], str(path))
        return _load_json(text) if path.suffix.lower() == ".json" else _load_yaml(text)
    except InvalidSpec:
        raise
    except _TooDeep as exc:
        where = f" (line {exc.line})" if exc.line else ""
        problem = f"lists and mappings nested more than {MAX_SPEC_DEPTH} deep{where}"
        raise InvalidSpec([SpecError("file", str(path), problem)], str(path)) from None
    except _NonStringKey as exc:
        problem = f"a mapping key on line {exc.line} is not a string ({exc.kind}); keys are text"
        raise InvalidSpec([SpecError("yaml key", f"line {exc.line}", problem)], str(path)) from None
    except _DuplicateKey as exc:
        # The value is shown only as the secret rule allows at its path; so is the key.
        where = f" (again on line {exc.line})" if exc.line else ""
        problem = f"given more than once{where}; each key may appear once"
        key = redact_at([], exc.key)
        problems = [SpecError(key, exc.value, problem)]
        raise KeyGivenTwice(problems, str(path), exc.document, exc.given_twice) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        said = quiet_parser_message(exc.problem or exc.context or "cannot be parsed")
        problem = f"not valid YAML: {line}{said}"
        raise InvalidSpec([SpecError("file", str(path), problem)], str(path)) from None
    except json.JSONDecodeError as exc:
        problem = f"not valid JSON: {json_syntax(exc)}"
        raise InvalidSpec([SpecError("file", str(path), problem)], str(path)) from None
    except NotJsonNumber as exc:
        problem = (
            f"not valid JSON: line {exc.line}, column {exc.column}: {exc.word} is no JSON number "
            "(RFC 8259 §6); write a number or null"
        )
        raise InvalidSpec([SpecError("file", str(path), problem)], str(path)) from None
    except _SelfReference as exc:
        problem = (
            f"refers to the list or mapping it is inside of (line {exc.line}): a value cannot "
            "hold itself"
        )
        raise InvalidSpec([SpecError("yaml alias", f"*{exc.anchor}", problem)], str(path)) from None
    except _TooManyAliases as exc:
        problem = (
            f"more than {MAX_YAML_ALIASES} YAML alias uses (this one on line {exc.line}); "
            "write the values out"
        )
        raise InvalidSpec([SpecError("yaml alias", f"*{exc.anchor}", problem)], str(path)) from None
    except UnicodeDecodeError as exc:
        problem = f"not UTF-8 ({_undecodable(raw, exc)}); save it as UTF-8"
        raise InvalidSpec([SpecError("file", str(path), problem)], str(path)) from None
    except (OSError, ValueError, yaml.YAMLError) as exc:
        said = quiet_parser_message(str(exc).splitlines()[0])
        raise InvalidSpec([SpecError("file", str(path), said)], str(path)) from None


def _is_empty(text: str, *, json_file: bool) -> bool:
    """Whether ``text`` holds nothing: only blank lines, in YAML also only ``#`` comments."""
    return all(
        not line.strip() or (not json_file and line.lstrip().startswith("#"))
        for line in text.splitlines()
    )


_BYTE_ORDER_MARKS = [
    (codecs.BOM_UTF32_LE, "UTF-32"),  # before UTF-16: its little-endian mark starts FF FE too
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
]


def _undecodable(raw: bytes, exc: UnicodeDecodeError) -> str:
    """Why ``raw`` is not UTF-8: another encoding's byte-order mark, else the first bad byte."""
    for mark, encoding in _BYTE_ORDER_MARKS:
        if raw.startswith(mark):
            return f"{encoding} byte-order mark found"
    return f"byte 0x{raw[exc.start]:02x} at offset {exc.start}"


def size_problems(data: Any) -> list[SpecError]:
    """Zero or one problem: ``data`` exceeds :data:`MAX_SPEC_VALUES` or :data:`MAX_SPEC_TEXT`.

    Counted as expanded (a value shared through YAML aliases counts at each use); the walk stops
    at the limit, so a huge document costs no more than the limit. The problem names the field
    where the budget ran out.
    """
    budget = {"values": MAX_SPEC_VALUES, "text": MAX_SPEC_TEXT}
    stack: list[tuple[str, Any]] = [("spec", data)]
    while stack:
        where, value = stack.pop()
        budget["values"] -= 1
        if isinstance(value, str):
            budget["text"] -= len(value)
        elif isinstance(value, Mapping):
            for key, item in value.items():
                budget["text"] -= len(str(key))
                stack.append((f"{where}.{key}" if where != "spec" else str(key), item))
        elif isinstance(value, list):
            stack.extend((f"{where}.{i}", item) for i, item in enumerate(value))
        if budget["values"] < 0 or budget["text"] < 0:
            limit = (
                f"{MAX_SPEC_VALUES} values"
                if budget["values"] < 0
                else f"{MAX_SPEC_TEXT} characters of text"
            )
            return [SpecError(where, "<too large to show>", f"the spec holds more than {limit}")]
    return []
