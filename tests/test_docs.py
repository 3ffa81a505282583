"""README.md stays a page read in ten minutes, and every relative link of the documentation resolves.

The detail lives on linked pages (docs/*.md, notebooks/<paper>/README.md); a link to a file or a
heading that moved is caught here, anchors included (GitHub's heading slugs and <a id> anchors).
"""

import re
from pathlib import Path

import pytest

from conftest import REPO

MAX_LINES = 400
MAX_LINE_CHARS = 400

PAGES = sorted([REPO / "README.md", *(REPO / "docs").glob("*.md"), *(REPO / "notebooks").glob("*/README.md")])

_FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.S | re.M)
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)
_HTML_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")


def _prose(text):
    """The text without fenced code blocks and code spans, where a bracket is not a link."""
    return _CODE_SPAN.sub("", _FENCE.sub("", text))


def _slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading anchors on its text
    return re.sub(r"[^\w\- ]", "", text.replace("`", "").strip().lower()).replace(" ", "-")


def anchors(path):
    """Every anchor a Markdown page defines: its headings' slugs (repeats numbered -1, -2, …) and <a id>s."""
    text = _FENCE.sub("", path.read_text())
    found, seen = set(_HTML_ANCHOR.findall(text)), {}
    for heading in _HEADING.findall(text):
        slug = _slug(heading)
        found.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return found


def broken_links(page, root=REPO):
    """The relative links of `page` whose file is absent (or outside `root`) or whose anchor is undefined."""
    root = Path(root).resolve()
    broken = []
    for target in _LINK.findall(_prose(page.read_text())):
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        dest = (page.parent / file_part).resolve() if file_part else page.resolve()
        if not dest.is_relative_to(root) or not dest.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target} (no such anchor in {dest.relative_to(root)})")
    return broken


def test_readme_is_read_in_ten_minutes():
    lines = (REPO / "README.md").read_text().splitlines()
    assert len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines (at most {MAX_LINES}): move detail to docs/"
    long = [(i, len(line)) for i, line in enumerate(lines, 1) if len(line) > MAX_LINE_CHARS]
    assert not long, f"README.md lines over {MAX_LINE_CHARS} characters (line, length): {long}"


def test_readme_holds_the_claims_block_before_the_set_up():
    readme = (REPO / "README.md").read_text()
    assert readme.count("<!-- claims:begin -->") == 1 and readme.count("<!-- claims:end -->") == 1
    assert readme.index("<!-- claims:begin -->") < readme.index("<!-- claims:end -->") < readme.index("## Set up and go")


def test_the_pages_are_all_found():
    names = {p.relative_to(REPO).as_posix() for p in PAGES}
    assert {"README.md", "docs/parameters.md", "notebooks/fedlc/README.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_relative_link_resolves(page):
    assert not broken_links(page), f"{page.relative_to(REPO)}: broken links {broken_links(page)}"


def test_a_broken_link_or_anchor_is_caught(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "other.md").write_text("# Other page\n\n## What the GPU did\n\n<a id=\"record\"></a>text\n")
    page = tmp_path / "docs" / "page.md"
    page.write_text(
        "# Page\n\n## Set up\n\n"
        "[ok](other.md) [ok](other.md#what-the-gpu-did) [ok](other.md#record) [ok](#set-up) [web](https://x.org/a)\n"
        "`[in code](absent.md)`\n\n```\n[fenced](absent.md)\n```\n\n"
        "[gone](absent.md) [bad anchor](other.md#nowhere) [outside](../../elsewhere.md) [self](#nope)\n")
    assert broken_links(page, root=tmp_path) == [
        "absent.md (no such file)", "other.md#nowhere (no such anchor in docs/other.md)",
        "../../elsewhere.md (no such file)", "#nope (no such anchor in docs/page.md)"]


def test_heading_slugs_follow_github():
    assert _slug("Committed at the paper's scale") == "committed-at-the-papers-scale"
    assert _slug("Cells on a GPU: `python -m fedlib.repro.gpu_cells`") == "cells-on-a-gpu-python--m-fedlibreprogpu_cells"
    assert _slug('What "reproducible" means here') == "what-reproducible-means-here"
