"""The document's own identifiers from its first pages (docparse/assembly/
identifiers.py): repaired where typesetting broke them, and never a cited work's.
The lines follow real first pages: Elsevier's and Springer's running feet,
PLOS's citation line, arXiv's margin stamp, PubMed Central's header."""

from __future__ import annotations

import pytest
from grobid_tei_xml.types import GrobidBiblio

from sandcrawler.docparse.assembly.cascade import _own_identifiers
from sandcrawler.docparse.assembly.identifiers import PageIdentifiers, page_identifiers
from sandcrawler.docparse.layout.elements import Line, Token

Spec = tuple[str, str, int]  # zone, text, page


def page(*spec: Spec) -> tuple[list[Line], list[str]]:
    lines, zones = [], []
    for n, (zone, text, number) in enumerate(spec):
        words = text.split(" ")
        lines.append(Line([Token(w, "Times", 9, False, False, 50.0 + 40 * i, 40.0 + 11 * n,
                                 36.0, 9, number, space_after=i + 1 < len(words))
                           for i, w in enumerate(words)]))
        zones.append(zone)
    return lines, zones


def ids(*spec: Spec, metadata: str | None = None) -> PageIdentifiers:
    lines, zones = page(*spec)
    return page_identifiers(lines, zones, metadata)


TITLE = ("<header>", "A Study of Things", 0)
BODY = ("<body>", "We studied things in the usual way.", 0)


@pytest.mark.parametrize(("printed", "zone", "doi"), [
    # Elsevier's first-page foot
    ("doi:10.1016/j.jmb.2004.01.002", "<footnote>", "10.1016/j.jmb.2004.01.002"),
    ("0022-2836/$ - see front matter © 2004 Elsevier Ltd. All rights reserved. "
     "doi:10.1016/j.jmb.2004.01.002", "<footnote>", "10.1016/j.jmb.2004.01.002"),
    ("http://dx.doi.org/10.1016/j.cell.2013.05.039", "<page>", "10.1016/j.cell.2013.05.039"),
    ("https://doi.org/10.1038/s41586-020-2649-2", "<headnote>", "10.1038/s41586-020-2649-2"),
    # Springer's header line, a space after the slash
    ("DOI 10.1007/ s00134-004-2177-2", "<header>", "10.1007/s00134-004-2177-2"),
    # a soft hyphen the typesetter left in
    ("doi:10.1371/jour\u00adnal.pone.0001234", "<header>", "10.1371/journal.pone.0001234"),
    # a DOI in the header with no label
    ("10.1093/nar/gkh123", "<header>", "10.1093/nar/gkh123"),
    # PLOS's citation line: its own reference, with "et al."
    ("Citation: Smith J, Doe A, et al. (2008) A Study of Things. PLoS ONE 3(1): e1234. "
     "doi:10.1371/journal.pone.0001234", "<footnote>", "10.1371/journal.pone.0001234"),
])
def test_the_printed_doi_is_found_wherever_the_first_page_prints_it(
        printed: str, zone: str, doi: str) -> None:
    assert ids(TITLE, BODY, (zone, printed, 0)).doi == doi


def test_a_doi_cut_at_the_end_of_its_line_is_joined() -> None:
    found = ids(TITLE, ("<footnote>", "http://dx.doi.org/10.1016/j.cell.", 0),
                ("<footnote>", "2004.01.002 Copyright 2004 Cell Press", 0))
    assert found.doi == "10.1016/j.cell.2004.01.002"
    # the label at the end of the line before
    assert ids(TITLE, ("<header>", "DOI:", 0), ("<header>", "10.1002/anie.200460123", 0)) \
        .doi == "10.1002/anie.200460123"


def test_a_cited_works_doi_is_not_the_documents() -> None:
    cited = ("<footnote>", "1 Smith J, et al. (2001) Nature 409:860. doi:10.1038/35057062", 0)
    assert ids(TITLE, BODY, cited).doi is None
    # in the body's text: a cited work, whatever its label
    assert ids(TITLE, ("<body>", "as shown before (doi:10.1038/35057062).", 0)).doi is None
    # the references are never read
    assert ids(TITLE, ("<references>", "doi:10.1038/35057062", 0)).doi is None
    # the document's own, beside a cited one
    own = ("<header>", "doi:10.1371/journal.pbio.0020001", 0)
    assert ids(TITLE, own, BODY, cited).doi == "10.1371/journal.pbio.0020001"


def test_a_doi_repeated_in_the_running_foot_wins_over_one_said_once() -> None:
    foot = "J. Mol. Biol. (2004) 336, 1-10 10.1016/j.jmb.2004.01.002"
    found = ids(TITLE, ("<body>", "Data: doi:10.5061/dryad.abc12", 0),
                ("<page>", foot, 0), ("<page>", foot, 1), ("<page>", foot, 2))
    assert found.doi == "10.1016/j.jmb.2004.01.002"


def test_the_files_metadata_backs_the_candidate_it_names() -> None:
    # two labelled DOIs in the foot: the metadata's is taken, not the first
    found = ids(TITLE, ("<footnote>", "doi:10.1000/first.1", 0),
                ("<footnote>", "doi:10.1000/second.2", 0), metadata="10.1000/SECOND.2")
    assert found.doi == "10.1000/second.2"


def test_arxiv_pmid_and_pmcid() -> None:
    stamp = ("<body>", "arXiv:0807.3577v1 [astro-ph] 23 Jul 2008", 0)
    assert ids(TITLE, stamp).arxiv_id == "0807.3577v1"
    assert ids(TITLE, ("<header>", "arXiv:hep-th/9901001", 0)).arxiv_id == "hep-th/9901001"
    # a preprint cited in the body is not the document
    assert ids(TITLE, ("<body>", "as in Smith et al. arXiv:1234.56789", 0)).arxiv_id is None
    pmc = ids(TITLE, ("<header>", "PMID: 15016395 PMCID: PMC1234567", 0))
    assert (pmc.pmid, pmc.pmcid) == ("15016395", "PMC1234567")


def test_only_the_first_pages_and_the_running_heads_are_read() -> None:
    assert ids(TITLE, ("<body>", "doi:10.1000/late.1", 2)).doi is None
    assert ids(TITLE, ("<footnote>", "doi:10.1000/far.1", 6)).doi is None


def test_the_header_keeps_only_the_documents_own() -> None:
    biblio = GrobidBiblio(authors=[], doi="10.1038/35057062", arxiv_id="0807.3577")
    _own_identifiers(biblio, PageIdentifiers(), None)
    assert (biblio.doi, biblio.arxiv_id) == (None, "0807.3577")
    # nothing printed: the XMP's DOI, normalised; a bad one is no DOI
    _own_identifiers(biblio, PageIdentifiers(), "doi:10.1000/XMP.1")
    assert biblio.doi == "10.1000/xmp.1"
    _own_identifiers(biblio, PageIdentifiers(), "not a doi")
    assert biblio.doi is None
    _own_identifiers(biblio, PageIdentifiers(doi="10.1000/page.1"), "10.1000/xmp.1")
    assert biblio.doi == "10.1000/page.1"


def test_a_space_the_reader_set_where_nothing_is_printed_is_none() -> None:
    # Chromium splits its text run at a soft hyphen ("jour\u00adnal") and pdfalto
    # reads a word break there: the two tokens touch
    def line(gap: float) -> Line:
        words = [("doi:10.5555/jour", 50.0, 72.0), ("nal.jtg.2019.0042", 122.0 + gap, 80.0)]
        return Line([Token(w, "Times", 9, False, False, x, 40.0, width, 9, 0,
                           space_after=k == 0) for k, (w, x, width) in enumerate(words)])

    touching = page_identifiers([line(0.0)], ["<header>"])
    assert touching.doi == "10.5555/journal.jtg.2019.0042"
    # a space that is printed stays one: the DOI ends before it
    assert page_identifiers([line(3.0)], ["<header>"]).doi == "10.5555/jour"


def test_a_footnotes_lines_above_its_doi_say_whose_it_is() -> None:
    # a cited work's reference, its DOI on a line of its own
    cited = ids(TITLE, BODY, ("<footnote>", "1 Bell AC, et al. (2000) Nature 405:482.", 0),
                ("<footnote>", "doi:10.1038/35013100", 0))
    assert cited.doi is None
    # its label is no footnote's start
    assert ids(TITLE, BODY, ("<footnote>", "1 Bell AC, et al. (2000) Nature 405:482.", 0),
               ("<footnote>", "DOI: 10.1038/35013100", 0)).doi is None
    # a volume and its pages read as a reference, with no "et al."
    assert ids(TITLE, BODY, ("<footnote>", "1 Bell AC, Felsenfeld G (2000) Nature "
                             "405:482-485. doi:10.1038/35013100", 0)).doi is None
    # PLOS's citation line over four lines, which the segmentation left in the body
    plos = ids(TITLE, BODY, ("<body>", "Citation: Maurano MT, Wang H, et al. (2019)", 0),
               ("<body>", "Methylation of binding sites shapes transcription", 0),
               ("<body>", "occupancy. PLoS ONE 14(3): e0213978.", 0),
               ("<body>", "https://doi.org/10.1371/journal.pone.0213978", 0))
    assert plos.doi == "10.1371/journal.pone.0213978"
    # Elsevier's copyright line in the first page's foot
    elsevier = ids(TITLE, BODY, ("<body>", "0022-2836/$ - see front matter © 2004 Elsevier", 0),
                   ("<body>", "Ltd. All rights reserved.", 0),
                   ("<body>", "doi:10.1016/j.jmb.2004.01.002", 0))
    assert elsevier.doi == "10.1016/j.jmb.2004.01.002"


def test_a_doi_after_another_entry_is_not_read_with_it() -> None:
    # the reference above ends in its own DOI: the running foot's DOI below is
    # another entry, and the document's
    found = ids(TITLE, BODY, ("<footnote>", "1 Bell AC, et al. (2000) Nature 405:482.", 0),
                ("<footnote>", "doi:10.1038/35013100", 0),
                ("<footnote>", "http://dx.doi.org/10.5555/jtg.2019.0042", 0))
    assert found.doi == "10.5555/jtg.2019.0042"
    # a line that starts a footnote ends the entry above it
    found = ids(TITLE, ("<footnote>", "1 Bell AC, et al. (2000) Nature 405:482.", 0),
                ("<footnote>", "* Corresponding author: doi:10.5555/jtg.2019.0042", 0))
    assert found.doi == "10.5555/jtg.2019.0042"
    # lines far apart on the page are not one entry
    lines, zones = page(TITLE, ("<footnote>", "1 Bell AC, et al. (2000) Nature 405:482.", 0),
                        ("<footnote>", "doi:10.5555/jtg.2019.0042", 0))
    for token in lines[2].tokens:
        token.y += 200
    assert page_identifiers(lines, zones).doi == "10.5555/jtg.2019.0042"


def test_a_doi_broken_inside_a_word_goes_on_on_a_line_of_its_own() -> None:
    """A box too narrow for the DOI: the browser breaks it anywhere, and its rest
    is a line of its own; a line of prose after a DOI is never taken for a rest."""
    found = ids(TITLE, ("<header>", "DOI: 10.5555/jtg.2019.suppleme", 0),
                ("<header>", "ntary.material.0042", 0))
    assert found.doi == "10.5555/jtg.2019.supplementary.material.0042"
    prose = ids(TITLE, ("<header>", "DOI: 10.5555/jtg.2019.42", 0),
                ("<header>", "2.5 mm of rain fell.", 0))
    assert prose.doi == "10.5555/jtg.2019.42"
    number = ids(TITLE, ("<header>", "DOI: 10.5555/jtg.2019.42", 0), ("<page>", "12", 0))
    assert number.doi == "10.5555/jtg.2019.42"


def test_a_hyphen_that_broke_a_word_at_the_lines_end_is_no_part_of_the_doi() -> None:
    """A soft hyphen where the line broke: Chromium prints U+2010 there, and the
    reader's tokens make every dash "-" (bench/eval/printed_dois.py,
    soft-hyphen-break). Letters on both sides: hyphenation; a digit or a capital
    on one side: the DOI's own hyphen, kept."""
    assert ids(TITLE, ("<header>", "DOI: 10.5555/jtg.2019.supple-", 0),
               ("<header>", "mentary.material.0042", 0)).doi \
        == "10.5555/jtg.2019.supplementary.material.0042"
    assert ids(TITLE, ("<header>", "doi:10.1111/j.1365-", 0),
               ("<header>", "2648.2009.01234.x", 0)).doi == "10.1111/j.1365-2648.2009.01234.x"
    assert ids(TITLE, ("<header>", "doi:10.1175/jcli-", 0),
               ("<header>", "D-11-00123.1", 0)).doi == "10.1175/jcli-d-11-00123.1"

    # the hyphen a token of its own, set against the word (pdfalto's reading)
    def line(gap: float) -> list[Line]:
        words = [("DOI:", 50.0, 20.0), ("10.5555/jtg.2019.supple", 75.0, 111.0),
                 ("-", 186.0 + gap, 3.0)]
        first = Line([Token(w, "Times", 9, False, False, x, 40.0, width, 9, 0,
                            space_after=k < 2) for k, (w, x, width) in enumerate(words)])
        second = Line([Token("mentary.material.0042", "Times", 9, False, False, 50.0, 51.0,
                             100.0, 9, 0)])
        return [first, second]

    assert page_identifiers(line(0.0), ["<header>"] * 2).doi \
        == "10.5555/jtg.2019.supplementary.material.0042"
