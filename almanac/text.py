"""User text made safe for a terminal: control characters shown as escapes, nothing else changed.

Shared by the command line (``almanac.cli.output``) and the dev stack's live view
(``almanac.stack.live``): every place that writes reasons, notes, events or a downstream's answer.
"""

from __future__ import annotations

_SHOWN = {"\t": "\t", "\n": "\n"}
"""Control characters user text may keep (a tab, a line break); every other one is escaped."""
_BIDI = frozenset(range(0x202A, 0x202F)) | frozenset(range(0x2066, 0x206A))
"""Unicode bidirectional embeddings, overrides and isolates: they reorder what follows."""


def terminal_text(text: str) -> str:
    r"""``text`` safe for a terminal: control characters shown as escapes (``\x1b``, ``\r``).

    User text reaches the terminal in reasons, notes, events, errors and a downstream's answer:
    an escape sequence in it could recolour, move the cursor, clear the screen or hide what
    follows, and a carriage return or a bidirectional override could make a line read as
    another. C0 controls (but tab and line feed), DEL, C1 controls and the bidirectional
    controls are written as Python escapes, so they are visible and nothing else changes.
    """
    if text.isprintable():
        return text
    return "".join(_shown(c) for c in text)


def _shown(c: str) -> str:
    if c in _SHOWN or (c.isprintable() and ord(c) not in _BIDI):
        return c
    return repr(c)[1:-1] if ord(c) < 0xA0 else f"\\u{ord(c):04x}"
