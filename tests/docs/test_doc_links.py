"""Every relative link in README.md, docs/ and bench/*.md resolves to a file and, with a
``#fragment``, to a heading of that file (GitHub's anchors). External links are not fetched.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from doc_markdown import ROOT, Link, anchors, documentation_files, links


def problem(link: Link, root: Path = ROOT) -> str | None:
    """Why a link does not resolve within ``root``, or None."""
    parts = urlsplit(link.target)
    if parts.scheme or parts.netloc:
        return None  # external: not checked here
    target = link.source if not parts.path else (link.source.parent / unquote(parts.path))
    target = target.resolve()
    if not target.exists():
        return f"no file {parts.path}"
    if not target.is_relative_to(root):
        return f"{parts.path} leaves the repository"
    if parts.fragment:
        if target.suffix != ".md" or target.is_dir():
            return f"#{parts.fragment}: only Markdown headings have anchors here"
        if unquote(parts.fragment) not in anchors(target.read_text(encoding="utf-8")):
            return f"no heading #{parts.fragment} in {target.relative_to(root)}"
    return None


@pytest.mark.parametrize("page", documentation_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = [
        f"{link.source.relative_to(ROOT)}:{link.line}: ({link.target}) {why}"
        for link in links(page)
        if (why := problem(link))
    ]
    assert broken == []


def test_the_reader_finds_links_and_anchors() -> None:
    # Guards the test above against reading nothing.
    readme = list(links(ROOT / "README.md"))
    assert any(link.target == "docs/README.md" for link in readme)
    assert "the-preview-contract" in anchors((ROOT / "docs/reference/cli.md").read_text())
    assert "almanac---version" in anchors((ROOT / "docs/reference/cli.md").read_text())


def test_a_broken_link_or_anchor_is_reported(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n## A `code` heading\n\n```sh\n# not a heading\n```\n")
    assert anchors(page.read_text()) == {"title", "a-code-heading"}
    assert problem(Link(page, 1, "#a-code-heading"), tmp_path) is None
    assert problem(Link(page, 1, "page.md#title"), tmp_path) is None
    assert problem(Link(page, 1, "#not-a-heading"), tmp_path) is not None
    assert problem(Link(page, 1, "missing.md"), tmp_path) is not None
    assert problem(Link(page, 1, "../outside.md"), tmp_path) is not None
    assert problem(Link(page, 1, "https://example.com/missing"), tmp_path) is None
