"""The document's citation line from its running heads (docparse/assembly/
locator.py), read by the shipped citation parser: the lines follow real running
heads (Portland Press's, the JBC's Vancouver style, Elsevier's)."""

from __future__ import annotations

import pytest

from sandcrawler.citations.crf.model import CrfModel
from sandcrawler.docparse.assembly.locator import running_locator
from sandcrawler.docparse.layout.elements import Line, Token


@pytest.fixture(scope="module")
def parse():  # type: ignore[no-untyped-def]
    return CrfModel.load().parse


def page(*spec: tuple[str, str, int]) -> tuple[list[Line], list[str]]:
    lines, zones = [], []
    for n, (zone, text, number) in enumerate(spec):
        words = text.split(" ")
        lines.append(Line([Token(w, "Times", 8, False, False, 50.0 + 30 * i, 30.0 + 10 * n,
                                 25.0, 8, number, space_after=i + 1 < len(words))
                           for i, w in enumerate(words)]))
        zones.append(zone)
    return lines, zones


def test_a_running_head_repeated_on_pages_is_the_locator(parse) -> None:  # type: ignore[no-untyped-def]
    lines, zones = page(
        ("<header>", "Methylation of binding sites", 0),
        ("<body>", "Results of 2004, 12: were 3-5 times higher (Smith 2001).", 0),
        ("<page>", "Biochem. J. (2004) 379, 1-10", 0),
        ("<headnote>", "Biochem. J. (2004) 379, 2", 1),
        ("<headnote>", "Biochem. J. (2004) 379, 3", 2))
    found = running_locator(lines, zones, parse)
    assert found is not None
    assert "Biochem" in (found.journal or "") and found.volume == "379"
    assert (found.date or "").startswith("2004")


def test_vancouver_style_foot(parse) -> None:  # type: ignore[no-untyped-def]
    lines, zones = page(("<header>", "A title", 0),
                        ("<page>", "J Biol Chem 2004;279(12):11233-11240", 0))
    found = running_locator(lines, zones, parse)
    assert found is not None and found.volume == "279"
    assert found.first_page == "11233"


def test_no_locator_from_the_body_a_citation_or_a_later_page(parse) -> None:  # type: ignore[no-untyped-def]
    assert running_locator(*page(("<body>", "Biochem. J. (2004) 379, 1-10", 0)), parse) is None
    assert running_locator(*page(("<page>", "Smith et al., Nature (2000) 405, 482-485", 0)),
                           parse) is None
    assert running_locator(*page(("<page>", "Biochem. J. (2004) 379, 1-10", 5)), parse) is None
    # a page number alone, a date without a volume: nothing
    assert running_locator(*page(("<page>", "Received 12 May 2004", 0),
                                 ("<page>", "12", 0)), parse) is None
