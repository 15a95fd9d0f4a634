"""``sandcrawler extract --header-only`` finds the DOI a PDF prints as its own
wherever publishers print it, and never a cited work's: articles typeset by
headless Chromium with the DOI in each placement (sandcrawler_testkit.
doi_placements), rendered once for the module and extracted in one run."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

import orjson
import pypdfium2 as pdfium
import pytest

from sandcrawler_testkit.doi_placements import CITED_DOI, Placement, placements
from tests.helpers.cli import invoke
from tests.helpers.skips import unavailable

CHROMIUM = os.environ.get("SANDCRAWLER_TEST_CHROMIUM", "/usr/bin/chromium")

#: the variants rendered here (bench/eval/printed_dois.py runs them all)
NAMES = ("header-doi-label", "split-after-dot", "running-foot-https", "elsevier-footnote",
         "soft-hyphen", "soft-hyphen-break", "plos-citation", "stamp-every-page", "cited-only",
         "cited-only-no-et-al", "xmp-only")
VARIANTS = {p.name: p for p in placements() if p.name in NAMES}

#: each variant's PDF and its extract line
Extracted = dict[str, tuple[Path, dict[str, Any]]]


@pytest.fixture(scope="module")
def extracted(tmp_path_factory: pytest.TempPathFactory) -> Extracted:
    if not shutil.which(CHROMIUM):
        unavailable(f"no Chromium at {CHROMIUM} to typeset the test articles", "BROWSER")
    where = tmp_path_factory.mktemp("printed-dois")
    paths = {name: p.render(where, CHROMIUM) for name, p in VARIANTS.items()}
    result = invoke(["extract", "--header-only", *map(str, paths.values())])
    assert result.exit_code == 0, result.stderr
    lines = {Path(line["path"]).name: line for line in
             map(orjson.loads, result.stdout.splitlines())}
    return {name: (path, lines[path.name]) for name, path in paths.items()}


def _pages(path: Path) -> list[str]:
    doc = pdfium.PdfDocument(path)
    try:
        return [doc[i].get_textpage().get_text_range() for i in range(len(doc))]
    finally:
        doc.close()


def _compact(text: str) -> str:
    """The text without its whitespace (a DOI broken across lines reads whole)."""
    return re.sub(r"\s", "", text)


def test_every_variant_is_here() -> None:
    assert set(VARIANTS) == set(NAMES)


@pytest.mark.parametrize("name", [n for n in NAMES if VARIANTS[n].expected is not None])
def test_the_documents_own_doi_is_found(extracted: Extracted, name: str) -> None:
    placement: Placement = VARIANTS[name]
    line = extracted[name][1]
    assert line["status"] == "success", line
    assert line["header"].get("doi") == placement.expected


@pytest.mark.parametrize("name", ["cited-only", "cited-only-no-et-al"])
def test_a_cited_works_doi_is_not_taken(extracted: Extracted, name: str) -> None:
    path, line = extracted[name]
    # the page does print the cited work's DOI, in its footnote and in the body
    assert _compact(_pages(path)[0]).count(CITED_DOI) == 2
    assert line["status"] == "success", line
    assert line["header"].get("doi") is None


def test_the_variants_print_what_they_say(extracted: Extracted) -> None:
    def pages(name: str) -> list[str]:
        return [_compact(text) for text in _pages(extracted[name][0])]

    own = VARIANTS["running-foot-https"].expected
    assert [f"https://doi.org/{own}" in page for page in pages("running-foot-https")] \
        == [True, True]
    # the long DOI really is broken across two lines
    split = _pages(extracted["split-after-dot"][0])[0]
    long = VARIANTS["split-after-dot"].expected
    assert long and long not in split and long in _compact(split)
    # the XMP variant prints no DOI at all
    assert "10.5555" not in "".join(pages("xmp-only"))
    assert "10.1371/journal.pone" in pages("plos-citation")[0]
