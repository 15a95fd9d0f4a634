"""Odd input for web/html/landing.py: links of every shape, charsets, broken markup, huge
pages, duplicates, walls."""

from __future__ import annotations

import time

import pytest

from sandcrawler.web.html.landing import MAX_PARSE_BYTES, decode_html, parse_html
from sandcrawler.web.html.metadata import html_biblio
from sandcrawler.web.http.urls import absolute_url

PAGE = "https://journal.example.org/articles/7?lang=en"


def page_with(body: str, head: str = "", url: str = PAGE) -> bytes:
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'>{head}<title>T</title></head>"
            f"<body>{body}</body></html>").encode()


@pytest.mark.parametrize(("raw", "expected"), [
    ("paper.pdf", "https://journal.example.org/articles/paper.pdf"),
    ("/files/paper.pdf", "https://journal.example.org/files/paper.pdf"),
    ("//cdn.example.net/x.pdf", "https://cdn.example.net/x.pdf"),
    ("  https://journal.example.org/a b.pdf\n", "https://journal.example.org/a%20b.pdf"),
    ("/files/résumé.pdf", "https://journal.example.org/files/r%C3%A9sum%C3%A9.pdf"),
    ("/files/already%20encoded.pdf", "https://journal.example.org/files/already%20encoded.pdf"),
    ("https://bücher.example/x.pdf", "https://xn--bcher-kva.example/x.pdf"),
    ("HTTP://Journal.Example.org/X.pdf", "http://journal.example.org/X.pdf"),
    ("javascript:void(0)", None), ("JavaScript:download()", None),
    ("data:application/pdf;base64,JVBERi0=", None), ("mailto:editor@example.org", None),
    ("#section-2", None), ("", None), ("ftp://example.org/x.pdf", None),
    ("http://[::1", None),
])
def test_absolute_url(raw: str, expected: str | None) -> None:
    assert absolute_url(raw, PAGE) == expected


def test_dropped_links_and_self_links() -> None:
    body = "".join(f'<a href="{h}">Download PDF</a>' for h in (
        "javascript:void(0)", "data:application/pdf;base64,JVBERi0=", "mailto:x@example.org",
        "#top", PAGE, PAGE + "#pdf", "/pdfs/7.pdf"))
    page = parse_html(page_with(body), PAGE)
    assert [link.url for link in page.fulltext_links("pdf")] == [
        "https://journal.example.org/pdfs/7.pdf"]


def test_base_href() -> None:
    body = '<a href="7.pdf">PDF</a>'
    page = parse_html(page_with(body, head='<base href="https://files.example.org/v1/">'), PAGE)
    assert [link.url for link in page.fulltext_links("pdf")] == [
        "https://files.example.org/v1/7.pdf"]
    # a base that is no http(s) URL is ignored
    page = parse_html(page_with(body, head='<base href="javascript:x">'), PAGE)
    assert [link.url for link in page.fulltext_links("pdf")] == [
        "https://journal.example.org/articles/7.pdf"]


def test_duplicates_keep_the_best_rule() -> None:
    head = ('<meta name="citation_pdf_url" content="/pdfs/7.pdf">'
            '<meta name="citation_pdf_url" content="https://journal.example.org/pdfs/7.pdf">')
    body = '<a href="/pdfs/7.pdf">Download PDF</a><a href="/pdfs/7.pdf#page=2">PDF</a>'
    links = parse_html(page_with(body, head), PAGE).fulltext_links("pdf")
    assert [(link.url, link.rule) for link in links] == [
        ("https://journal.example.org/pdfs/7.pdf", "citation_pdf_url")]


def test_anchor_rules_by_text_and_href() -> None:
    body = ('<a href="/read/7" title="Full Text">x</a>'
            '<a href="/get?id=7" title="Download PDF"><img alt=""></a>'
            '<a href="/files/7.pdf">the article</a>'
            '<a href="https://elsewhere.example.com/other.pdf">cited report</a>')
    page = parse_html(page_with(body), PAGE)
    assert [(link.url, link.rule) for link in page.fulltext_links("pdf")] == [
        ("https://journal.example.org/get?id=7", "anchor:download-pdf"),
        ("https://journal.example.org/files/7.pdf", "anchor:pdf-href"),
    ]
    assert [(link.url, link.rule) for link in page.fulltext_links("html")] == [
        ("https://journal.example.org/read/7", "anchor:fulltext")]
    with pytest.raises(ValueError, match="kind must be one of"):
        page.fulltext_links("epub")


def test_nature_article_pdf_link() -> None:
    body = ('<a class="u-button c-pdf-download__link" data-article-pdf="true" '
            'href="/articles/s41467-020-18000-0.pdf">Download PDF</a>')
    page = parse_html(page_with(body), "https://www.nature.com/articles/s41467-020-18000-0")
    first = page.fulltext_links("pdf")[0]
    assert (first.url, first.rule) == (
        "https://www.nature.com/articles/s41467-020-18000-0.pdf", "platform:nature")


def test_eprints_document_link_without_meta() -> None:
    head = '<meta name="eprints.eprintid" content="9">'
    body = ('<a class="ep_document_link" href="/9/1/thesis.pdf">Text</a>'
            '<a class="ep_document_link" href="/9/2/data.zip">Data</a>')
    page = parse_html(page_with(body, head), "https://eprints.example.ac.uk/9/")
    assert [(link.url, link.rule) for link in page.fulltext_links("pdf")] == [
        ("https://eprints.example.ac.uk/9/1/thesis.pdf", "platform:eprints")]


def test_meta_refresh() -> None:
    head = '<meta http-equiv="Refresh" content="0; URL=\'/article/download/1/2\'">'
    assert parse_html(page_with("", head), PAGE).meta_refresh == (
        "https://journal.example.org/article/download/1/2")
    timer = '<meta http-equiv="refresh" content="300">'
    assert parse_html(page_with("", timer), PAGE).meta_refresh is None
    bad = '<meta http-equiv="refresh" content="0; url=javascript:alert(1)">'
    assert parse_html(page_with("", bad), PAGE).meta_refresh is None


# --- charsets ----------------------------------------------------------------------------

def test_cp1252_page_declaring_utf8() -> None:
    html = ('<html><head><meta charset="utf-8"><meta name="citation_title" '
            'content="Caf\u00e9 \u201cquotes\u201d \u2013 na\u00efve"></head><body></body></html>')
    page = parse_html(html.encode("cp1252"), PAGE)
    assert page.biblio is not None
    assert page.biblio.to_json() == {"title": "Café “quotes” – naïve"}
    assert page.encoding == "cp1252"


def test_http_charset_beats_meta_and_bom_beats_both() -> None:
    html = '<html><head><meta charset="utf-8"><title>Ĺódź</title></head></html>'
    assert decode_html(html.encode("iso-8859-2"), "text/html; charset=ISO-8859-2")[0] == html
    assert decode_html(b"\xef\xbb\xbf" + html.encode(), "text/html; charset=cp1252")[0] == html
    utf16 = b"\xff\xfe" + html.encode("utf-16-le")
    assert decode_html(utf16)[0] == html


def test_unknown_charset_and_a_few_stray_bytes() -> None:
    html = '<title>Ünïcode</title>'.encode() + b"\xff" + "more é text".encode() * 20
    text, encoding = decode_html(html, "text/html; charset=x-no-such-charset")
    assert encoding == "utf-8" and text.startswith("<title>Ünïcode</title>\ufffd")


def test_html_biblio_keeps_its_keys_and_url_makes_links_absolute() -> None:
    html = (b'<meta name="citation_title" content="T"><meta name="citation_doi" '
            b'content="https://doi.org/10.1234/ABC"><meta name="citation_pdf_url" '
            b'content="/x.pdf"><meta name="dc.creator" content="A">')
    biblio = html_biblio(html)
    assert biblio is not None
    assert biblio.to_json() == {"contrib_raw_names": ["A"], "title": "T", "doi": "10.1234/abc"}
    with_url = html_biblio(html, url=PAGE)
    assert with_url is not None
    assert with_url.pdf_fulltext_url == "https://journal.example.org/x.pdf"
    assert html_biblio(b"") is None


# --- broken and huge pages ---------------------------------------------------------------

@pytest.mark.parametrize("body", [
    b"<html><head><meta name='citation_title' content='Unclosed'><title>x<body><div><a href=",
    b"\x00\x01\x02\xff\xfe<meta name=citation_title content=Garbage>\x00<a href='x.pdf'>PDF",
    b"<<<<>>>></meta><meta content><meta name><script>var a = '</script>",
    b'<script type="application/ld+json">{"@type": "ScholarlyArticle", "name": [}</script>',
    b'<script type="application/ld+json">[[[[[[[[{"@type": "Article"}]]]]]]]]</script>',
    b'<script type="application/ld+json">{"@type": "Article", "author": 5, "encoding": 3}'
    b"</script>",
    b"",
])
def test_broken_markup_never_raises(body: bytes) -> None:
    page = parse_html(body, PAGE)
    assert page.url == PAGE
    for kind in ("pdf", "xml", "html"):
        page.fulltext_links(kind)


def test_unclosed_tags_still_give_metadata_and_links() -> None:
    page = parse_html(b"<html><head><meta name='citation_title' content='Unclosed'>"
                      b"<body><div><p><a href='/x.pdf'>Download PDF<div>", PAGE)
    assert page.biblio is not None and page.biblio.to_json() == {"title": "Unclosed"}
    assert [link.url for link in page.fulltext_links("pdf")] == [
        "https://journal.example.org/x.pdf"]


def test_huge_page_is_capped_and_fast() -> None:
    head = b"<html><head><meta name='citation_title' content='Big'></head><body>"
    filler = b"<p>" + b"word " * 200 + b"</p>\n"
    body = head + filler * (20 * 2**20 // len(filler)) + b"<a href='/late.pdf'>PDF</a>"
    assert len(body) > 20 * 2**20
    start = time.monotonic()
    page = parse_html(body, PAGE)
    elapsed = time.monotonic() - start
    assert page.biblio is not None and page.biblio.title == "Big"
    assert page.fulltext_links("pdf") == []  # beyond the first MAX_PARSE_BYTES
    assert elapsed < 5, f"{elapsed:.1f} s for a 20 MB page"
    assert len(body) > MAX_PARSE_BYTES


def test_cap_does_not_split_a_character_into_a_wrong_charset() -> None:
    body = ("<title>x</title>" + "é" * MAX_PARSE_BYTES).encode()
    assert decode_html(body)[1] == "utf-8"


# --- walls -------------------------------------------------------------------------------

CLOUDFLARE = b"""<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title>
<meta http-equiv="refresh" content="390"></head><body>
<div class="main-wrapper" role="main"><div class="main-content">
<h1 class="zone-name-title h1">journal.example.org</h1>
<h2 class="h2" id="challenge-running">Checking if the site connection is secure</h2>
<noscript><div id="challenge-error-title">Enable JavaScript and cookies to continue</div>
</noscript></div></div>
<script>(function(){window._cf_chl_opt={cvId: '2',cType: 'managed'};})();</script>
</body></html>"""
COOKIE_WALL = b"""<html><head><title>Example Publishing</title></head><body>
<div class="consent"><h1>We value your privacy</h1><p>Please accept cookies to continue
to this site.</p><button>Accept all cookies</button></div></body></html>"""
JS_WALL = b"""<html><head><title>Example</title><script src="/app.js"></script></head>
<body><noscript>You need to enable JavaScript to run this app.</noscript>
<div id="root"></div></body></html>"""


@pytest.mark.parametrize(("body", "reason"), [
    (CLOUDFLARE, "bot-challenge"), (COOKIE_WALL, "cookies-required"),
    (JS_WALL, "javascript-required"),
])
def test_walls(body: bytes, reason: str) -> None:
    assert parse_html(body, PAGE).blocked == reason


def test_article_with_a_noscript_notice_is_not_a_wall() -> None:
    short_article = JS_WALL.replace(
        b"<title>Example</title>",
        b"<title>Example</title><meta name='citation_title' content='A real article'>"
        b"<meta name='citation_doi' content='10.1234/x'>")
    assert parse_html(short_article, PAGE).blocked is None
    long_page = JS_WALL.replace(b'<div id="root"></div>', b"<p>" + b"text " * 400 + b"</p>")
    assert parse_html(long_page, PAGE).blocked is None


@pytest.mark.parametrize(("body", "want"), [
    (b'<iframe src="/files/x.pdf"></iframe>', "https://x.example/files/x.pdf"),
    (b'<embed type="application/pdf" src="/view?id=3">', "https://x.example/view?id=3"),
    (b'<object type="application/pdf" data="/o?id=3"></object>', "https://x.example/o?id=3"),
    (b'<iframe src="/pdfjs/web/viewer.html?file=%2Fdownload%2F7.pdf&zoom=1"></iframe>',
     "https://x.example/download/7.pdf"),
])
def test_a_pdf_viewer_page_gives_the_embedded_pdf(body: bytes, want: str) -> None:
    page = parse_html(b"<html><body>" + body + b"</body></html>", "https://x.example/a/5")
    assert page.fulltext_links("pdf")[0].url == want
