"""``did you mean``: the known name closest to a mistyped one, if it is close enough."""

from __future__ import annotations

from collections.abc import Iterable


def nearest(typed: str, known: Iterable[str]) -> str | None:
    """The name in ``known`` closest to ``typed``, or ``None`` when none is close.

    Close: compared case folded and without ``_`` (so ``timezone`` and ``time_zone`` both find
    ``timeZone``), at most one edit (Levenshtein: insert, delete or replace a character) per four
    characters of the longer word, and at least one; the fewest edits win, ``known``'s order
    breaks a tie. A ratio such as ``difflib``'s would let two edits to a short word pass
    (``base`` for ``phase``). ``typed`` itself is never suggested.
    """
    folded = _fold(typed)
    best: tuple[int, str] | None = None
    for name in known:
        if name == typed:
            continue
        key = _fold(name)
        allowed = max(1, max(len(folded), len(key)) // 4)
        if abs(len(folded) - len(key)) > allowed:
            continue  # needs more edits than allowed; skipped so a 60,000-letter name costs nothing
        edits = _edits(folded, key)
        if edits <= allowed and (best is None or edits < best[0]):
            best = (edits, name)
    return best[1] if best else None


def _fold(name: str) -> str:
    return name.casefold().replace("_", "")


def _edits(a: str, b: str) -> int:
    """The Levenshtein distance of ``a`` and ``b``: the fewest single-character edits."""
    row = list(range(len(b) + 1))
    for i, char in enumerate(a, start=1):
        diagonal, row[0] = row[0], i
        for j, other in enumerate(b, start=1):
            diagonal, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, diagonal + (char != other))
    return row[-1]
