"""A page's numbered contents list reads as its headings read: the same number and title.

The tutorial's list said "2. What `make run` starts" over a heading without a number, while the
headings around it were numbered: a reader looking for section 2 did not find it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from doc_markdown import ROOT, prose_lines

_ENTRY = re.compile(r"^(\d+)\. \[(.+)\]\(#[^)]+\)\s*$")
_SECTION = re.compile(r"^## (.+?)\s*$")


def contents_and_headings(text: str) -> tuple[list[str], list[str]]:
    """The contents list's entries (``N. title``) and the page's ``##`` headings, in order."""
    entries: list[str] = []
    headings: list[str] = []
    for _, line in prose_lines(text):
        if entry := _ENTRY.match(line):
            entries.append(f"{entry.group(1)}. {entry.group(2)}")
        elif section := _SECTION.match(line):
            headings.append(section.group(1))
    return entries, headings


@pytest.mark.parametrize("page", [ROOT / "docs" / "tutorial.md"], ids=lambda p: p.name)
def test_each_contents_entry_is_its_heading(page: Path) -> None:
    entries, headings = contents_and_headings(page.read_text())
    assert len(entries) >= 8
    assert entries == headings


def test_an_unnumbered_heading_under_a_numbered_entry_is_caught() -> None:
    text = "1. [Start](#1-start)\n2. [Look](#look)\n\n## 1. Start\n\n## Look\n"
    entries, headings = contents_and_headings(text)
    assert entries != headings
