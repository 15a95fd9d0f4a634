"""Titles and names readable whatever charset they went through (issue 23: a title
shown with a missing-glyph box, cp1252's 0x92 read as ISO-8859-1): the repair
itself, and each place titles are made (XML text, HTML meta tags, PDF info)."""

from __future__ import annotations

import pytest
from selectolax.lexbor import LexborHTMLParser

from sandcrawler.core.safexml import parse_xml, text_of
from sandcrawler.core.textfix import readable
from sandcrawler.pdf.info import extract_pdf
from sandcrawler.web.html.biblio import collect_meta
from sandcrawler_testkit.pdfs import make_pdf


@pytest.mark.parametrize(("text", "shown"), [
    ("Azote\x92y, 2011", "Azote\u2019y, 2011"),  # cp1252 read as ISO-8859-1
    ("\x93quoted\x94 \x96 dash", "\u201cquoted\u201d \u2013 dash"),
    ("CafÃ© crÃ¨me", "Café crème"),  # UTF-8 read as Latin-1
    # correct text is never touched
    ("Café crème", "Café crème"), ("Pediatría (Asunción)", "Pediatría (Asunción)"),
    ("Ångström, Müller & Söhne", "Ångström, Müller & Söhne"), ("Ã", "Ã"),
    ("naïve — “quoted” ’", "naïve — “quoted” ’"), ("", ""), ("plain", "plain"),
])
def test_readable(text: str, shown: str) -> None:
    assert readable(text) == shown


def test_xml_declared_iso_8859_1_holding_cp1252() -> None:
    """SciELO's JATS: ``encoding="ISO-8859-1"``, the apostrophe of Azote'y as 0x92."""
    data = ('<?xml version="1.0" encoding="ISO-8859-1"?><article><article-title>'
            "Comunidades ind\xedgenas de Yby Yau y Azote\x92y</article-title></article>"
            ).encode("latin-1")
    root = parse_xml(data)
    assert text_of(root.find("article-title")) == (
        "Comunidades indígenas de Yby Yau y Azote\u2019y")


def test_html_meta_tags_read_with_the_wrong_charset() -> None:
    tree = LexborHTMLParser('<meta name="citation_title" content="A community\x92s health">'
                            '<meta name="citation_author" content="JosÃ© Silva">')
    meta = collect_meta(tree)
    assert meta["citation_title"] == ["A community\u2019s health"]
    assert meta["citation_author"] == ["José Silva"]


def test_pdf_info_title_in_utf8_bytes() -> None:
    """A writer put UTF-8 where PDFDocEncoding belongs: PDFium reads ``CafÃ©``."""
    pdf = make_pdf(["text"], title="Caf\xc3\xa9 au lait")  # the bytes C3 A9 in the file
    assert extract_pdf(pdf).info["title"] == "Café au lait"
