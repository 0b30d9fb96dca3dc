"""Reading the project's Markdown as GitHub renders it: links, headings and their anchors.

Only what the documentation tests need: fenced code blocks and inline code are not Markdown (a
``# comment`` in a shell block is no heading, a ``[x](y)`` in backticks no link), and a heading's
anchor is GitHub's slug of its text (lower case; punctuation but ``-`` and ``_`` dropped; spaces
to ``-``; a repeated slug gets ``-1``, ``-2``, …).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_INLINE_CODE = re.compile(r"(`+)(.+?)\1")
_LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def documentation_files() -> list[Path]:
    """README.md, every Markdown file under docs/, and the benches' guide and results."""
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    files += sorted((ROOT / "bench").glob("*.md"))
    return files


def prose_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) for every line outside fenced code blocks."""
    fenced = False
    for number, line in enumerate(text.splitlines(), start=1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text (before de-duplication)."""
    text = _LINK.sub(lambda m: m.group(0)[1 : m.group(0).index("](")], heading)
    text = _INLINE_CODE.sub(lambda m: m.group(2), text)
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading anchor of a Markdown text, duplicates numbered as GitHub numbers them."""
    seen: dict[str, int] = {}
    found = set()
    for _, line in prose_lines(text):
        match = _HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


@dataclass(frozen=True, slots=True)
class Link:
    """One link target as written, with where it was written."""

    source: Path
    line: int
    target: str


def links(path: Path) -> Iterator[Link]:
    """Every inline link and image of a Markdown file, outside code."""
    for number, line in prose_lines(path.read_text(encoding="utf-8")):
        for match in _LINK.finditer(_INLINE_CODE.sub("", line)):
            yield Link(path, number, match.group(1))
