#!/usr/bin/env python3
"""Render the offline demo's documents from real articles' CC-BY metadata.

    python scripts/make_demo.py            # (re)write src/sandcrawler/demo/site/
    python scripts/make_demo.py --out DIR  # somewhere else (the test compares the two)

Reads ``src/sandcrawler/demo/articles.json``: five open-access articles, each
under CC BY 4.0 (``SOURCES.md`` beside it cites each one), with their title,
authors, affiliations, date, journal, volume, issue, pages, DOI, abstract and
reference list. For each it writes what its publisher serves, in that
publisher's markup: the landing page (the ``citation_*``/``DC.*`` meta tags, the
link layouts and URL shapes that ``sandcrawler.web.html.link_rules`` follows for that
platform), and the full text behind it: a PDF (PLOS ONE, PeerJ, eLife), an HTML
full text (First Monday, an OJS journal) or SciELO's JATS XML. Every full text
says that it is a demonstration rendering of the article's metadata, not the
publisher's file. ``pages.json`` maps each URL (and the DOI resolver's
redirects) to its file; ``sandcrawler.demo.DemoSite`` serves it.

The output is a pure function of ``articles.json``: no dates, no randomness, no
compression, so that it is reproduced byte for byte (tests/demo/test_demo.py).
Standard library; the PDFs are written by ``demo_pdf.py`` beside it.
"""

from __future__ import annotations

import argparse
import html
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from demo_pdf import PdfLayout, Run, write_pdf  # beside this script

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "src" / "sandcrawler" / "demo"
ARTICLES = DEMO / "articles.json"
SITE = DEMO / "site"
RESOLVER = "https://doi.org/"
EN_DASH = "\u2013"  # page ranges, as the publishers print them

Article = dict[str, Any]


# --- text helpers ------------------------------------------------------------------------


def esc(text: str) -> str:
    return html.escape(text, quote=True)


def long_date(iso: str) -> str:
    """``2019-04-22`` -> ``April 22, 2019``."""
    months = ("January", "February", "March", "April", "May", "June", "July", "August",
              "September", "October", "November", "December")
    year, month, day = iso.split("-")
    return f"{months[int(month) - 1]} {int(day)}, {year}"


def ref_text(ref: dict[str, Any]) -> str:
    """A reference as one citation string (the article's own wording when known)."""
    if "text" in ref:
        return str(ref["text"])
    parts = []
    if ref.get("authors"):
        parts.append(", ".join(ref["authors"]) + (f" ({ref['year']})." if ref.get("year") else "."))
    elif ref.get("year"):
        parts.append(f"({ref['year']}).")
    if ref.get("title"):
        parts.append(ref["title"].rstrip(".") + ".")
    if ref.get("origin"):
        parts.append(ref["origin"])
    elif ref.get("container"):
        where = ref["container"]
        if ref.get("volume"):
            where += f" {ref['volume']}"
            if ref.get("issue"):
                where += f"({ref['issue']})"
        pages = ref.get("pages") or EN_DASH.join(
            p for p in (ref.get("first_page"), ref.get("last_page")) if p)
        if pages:
            where += f": {pages}"
        parts.append(where + ".")
    if ref.get("doi"):
        parts.append(f"https://doi.org/{ref['doi']}")
    return " ".join(parts)


def affiliations(article: Article) -> tuple[list[str], list[list[int]]]:
    """The distinct affiliations in order, and each author's numbers (from 1)."""
    distinct: list[str] = []
    numbers: list[list[int]] = []
    for author in article["authors"]:
        mine = []
        for aff in author["affiliations"]:
            if aff not in distinct:
                distinct.append(aff)
            mine.append(distinct.index(aff) + 1)
        numbers.append(mine)
    return distinct, numbers


def pages_of(article: Article) -> str:
    return EN_DASH.join(p for p in (article.get("first_page"), article.get("last_page")) if p)


def citation(article: Article) -> str:
    """``PLOS ONE 14(4): e0213978 (April 22, 2019)``."""
    where = f"{article['journal']} {article['volume']}"
    if article.get("issue"):
        where += f"({article['issue']})"
    return f"{where}: {pages_of(article)} ({long_date(article['date'])})"


def demo_note(article: Article) -> str:
    """What every full text says about itself."""
    licence = article["licence"]
    held = f" {article['copyright']}" if article.get("copyright") else ""
    return (f"This is a demonstration rendering, not the publisher's file. sandcrawler's "
            f"scripts/make_demo.py generated it for the offline demo from the metadata of the "
            f"article published in {citation(article)}, {RESOLVER}{article['doi']}, under "
            f"the Creative Commons Attribution licence ({licence['name']}, {licence['url']})."
            f"{held} The title, authors, affiliations, abstract and references are the "
            f"article's; the article's own text is at {RESOLVER}{article['doi']}.")


def citing_note(article: Article) -> list[str]:
    """Paragraphs of ours that cite the article's references by number, so that
    the demo's full texts have sections and callouts to link (nothing of the
    article's own text is used)."""
    last = len(article["references"])
    return [
        f"The reference list below is the article's own, numbered as printed here. This "
        f"rendering cites three of its {last} entries to show how a reader links callouts to "
        f"references. The first entry of the list is cited here [1], and so is the second "
        f"entry [2]. The last entry of the list, number {last}, is cited at the end of this "
        f"sentence [{last}].",
        "Each callout points at the entry with its number. A reader of the full text finds "
        "the callouts in their paragraphs and links each one to its entry, so that the "
        "document's page can show, beside every reference, the sentences that cite it.",
    ]


WHAT_IT_SHOWS = [
    "The offline demonstration serves this file, its landing page and the pages of four "
    "other articles on loopback, at the addresses their publishers use. The crawler "
    "follows each landing page to its full text, archives every fetch in a WARC file, "
    "and stores the document with its metadata.",
    "Without a GROBID server, the embedded extraction reads the header, the body and the "
    "references of each PDF, writes them as TEI in GROBID's layout, and matches the "
    "document and its references against the demonstration's catalog of works.",
]


def render_pdf(article: Article) -> bytes:
    doc = PdfLayout(f"{article['journal']} | {RESOLVER}{article['doi']} | "
                    f"{long_date(article['date'])}")
    distinct, numbers = affiliations(article)
    doc.paragraph([Run(article.get("article_type", "RESEARCH ARTICLE").upper(), "F2", 9)], 12)
    doc.space(10)
    doc.paragraph([Run(article["title"], "F2", 20)], 24)
    doc.space(10)
    runs: list[Run] = []
    for i, (author, mine) in enumerate(zip(article["authors"], numbers, strict=True)):
        runs.append(Run(("" if i == 0 else ", ") + author["name"], "F1", 11))
        if mine:
            runs.append(Run(",".join(map(str, mine)), "F1", 7, 4))
    doc.paragraph(runs, 15)
    doc.space(6)
    for number, aff in enumerate(distinct, 1):
        doc.paragraph([Run(str(number), "F1", 6, 3), Run(" " + aff, "F1", 8.5)], 11)
    doc.space(14)
    doc.paragraph([Run("Abstract" if "abstract_kind" not in article
                       else article["abstract_kind"].capitalize(), "F2", 11)], 14, keep=24)
    doc.space(2)
    doc.paragraph([Run(article["abstract"], "F1", 9.5)], 12.5)
    if article.get("keywords"):
        doc.space(6)
        doc.paragraph([Run("Keywords: ", "F2", 9.5),
                       Run("; ".join(article["keywords"]), "F1", 9.5)], 12.5)
    # the body on a page of its own, in numbered sections, as an article's is
    doc.page_break()
    doc.paragraph([Run("1 About this document", "F2", 11)], 14, keep=24)
    doc.space(2)
    doc.paragraph([Run(demo_note(article), "F1", 9.5)], 12.5)
    for number, (head, paragraphs) in enumerate(
            (("How this rendering cites", citing_note(article)),
             ("What the demonstration shows", WHAT_IT_SHOWS)), 2):
        doc.space(14)
        doc.paragraph([Run(f"{number} {head}", "F2", 11)], 14, keep=24)
        for text in paragraphs:
            doc.space(2)
            doc.paragraph([Run(text, "F1", 9.5)], 12.5, indent=12)
    doc.space(14)
    doc.paragraph([Run("References", "F2", 11)], 14, keep=24)
    doc.space(2)
    for number, ref in enumerate(article["references"], 1):
        doc.paragraph([Run(f"{number}. {ref_text(ref)}", "F1", 8.5)], 10.5, hanging=14)
        doc.space(2)
    info = {
        "Title": article["title"],
        "Author": ", ".join(a["name"] for a in article["authors"]),
        "Subject": f"{citation(article)}. doi:{article['doi']}",
        "Keywords": "; ".join(article.get("keywords", [])) or article["journal"],
        "Creator": "sandcrawler scripts/make_demo.py (a demonstration rendering of CC BY "
                   "metadata)",
        "Producer": "sandcrawler scripts/make_demo.py",
    }
    return write_pdf(doc.streams(), info)


# --- landing pages, one renderer per platform --------------------------------------------


def meta(name: str, content: str, attr: str = "name") -> str:
    return f'<meta {attr}="{esc(name)}" content="{esc(content)}">'


def citation_meta(article: Article, *, date: str, institutions: bool = True) -> list[str]:
    """The Highwire Press ``citation_*`` tags, as publishers write them."""
    tags = [meta("citation_title", article["title"])]
    for author in article["authors"]:
        tags.append(meta("citation_author", author["name"]))
        if institutions:
            tags += [meta("citation_author_institution", a) for a in author["affiliations"]]
    tags += [meta("citation_date", date), meta("citation_doi", article["doi"]),
             meta("citation_journal_title", article["journal"])]
    for field, key in (("citation_journal_abbrev", "journal_abbrev"),
                       ("citation_issn", "issn"), ("citation_publisher", "publisher"),
                       ("citation_volume", "volume"), ("citation_issue", "issue"),
                       ("citation_firstpage", "first_page"), ("citation_lastpage", "last_page")):
        if article.get(key):
            tags.append(meta(field, article[key]))
    tags.append(meta("citation_language", article["lang"]))
    return tags


def og_meta(article: Article, site: str) -> list[str]:
    return [meta("og:type", "article", "property"),
            meta("og:site_name", site, "property"),
            meta("og:url", article["urls"]["landing"], "property"),
            meta("og:title", article["title"], "property"),
            meta("og:description", article["abstract"][:300], "property")]


def page(head: list[str], body: str, *, charset: str = "utf-8", title: str) -> str:
    lines = ["<!DOCTYPE html>", '<html lang="en">', "<head>",
             f'<meta http-equiv="Content-Type" content="text/html; charset={charset}">',
             f"<title>{esc(title)}</title>", *head,
             "<!-- a demonstration page generated by sandcrawler's scripts/make_demo.py from "
             "the article's CC BY metadata, in its publisher's markup -->",
             "</head>", "<body>", body.strip(), "</body>", "</html>", ""]
    return "\n".join(lines)


def licence_html(article: Article) -> str:
    licence = article["licence"]
    held = f"{esc(article['copyright'])}. " if article.get("copyright") else ""
    return (f'{held}This is an open access article distributed under the terms of the '
            f'<a rel="license" href="{esc(licence["url"])}">Creative Commons Attribution '
            f'License</a> ({esc(licence["name"])}).')


def doi_link(article: Article) -> str:
    url = esc(RESOLVER + article["doi"])
    return f'<a href="{url}">{url}</a>'


def note_html(article: Article) -> str:
    return f'<p class="demo-note">{esc(demo_note(article))}</p>'


def ref_items(article: Article, tag: str = "li", cls: str = "") -> str:
    attr = f' class="{cls}"' if cls else ""
    return "\n".join(f"<{tag}{attr}>{esc(ref_text(r))}</{tag}>" for r in article["references"])


def plos_landing(article: Article) -> str:
    """journals.plos.org (Ambra): ``citation_pdf_url`` and ``a#downloadPdf`` to
    ``article/file?id=<doi>&type=printable``; structured ``citation_reference``s."""
    pdf = article["urls"]["pdf"]
    year, month, day = article["date"].split("-")
    months = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
              "Dec")
    head = [meta("citation_abstract", article["abstract"]),
            *citation_meta(article, date=f"{months[int(month) - 1]} {int(day)}, {year}"),
            meta("citation_pdf_url", pdf), meta("citation_article_type", "Research Article"),
            meta("dc.identifier", article["doi"]), *og_meta(article, "PLOS ONE")]
    for ref in article["references"]:
        fields = [("citation_title", ref.get("title")),
                  *(("citation_author", a) for a in ref.get("authors", [])),
                  ("citation_journal_title", ref.get("container")),
                  ("citation_volume", ref.get("volume")), ("citation_issue", ref.get("issue")),
                  ("citation_first_page", ref.get("first_page")),
                  ("citation_last_page", ref.get("last_page")),
                  ("citation_publication_date", ref.get("year"))]
        head.append(meta("citation_reference",
                         "".join(f"{k}={v};" for k, v in fields if v)))
    authors = "\n".join(f'<li><a class="author-name">{esc(a["name"])}</a></li>'
                        for a in article["authors"])
    path = urlsplit(pdf).path + "?" + urlsplit(pdf).query
    body = f"""
<header class="title-block"><div class="article-type">Research Article</div>
<h1 id="artTitle">{esc(article['title'])}</h1>
<ul class="author-list" id="author-list">
{authors}
</ul>
<ul class="date-doi"><li id="artPubDate">Published: {long_date(article['date'])}</li>
<li id="artDoi">{doi_link(article)}</li></ul>
</header>
<div class="dload-menu">
  <div class="dload-pdf">
    <a href="{esc(path)}"
       id="downloadPdf" target="_blank">Download PDF</a>
  </div>
</div>
<div class="article-text" id="artText">
<div class="abstract toc-section"><h2>Abstract</h2>
<p>{esc(article['abstract'])}</p></div>
<div class="articleinfo"><p><strong>Citation: </strong>{esc(citation(article))}.
<a href="{RESOLVER}{esc(article['doi'])}">{RESOLVER}{esc(article['doi'])}</a></p>
<p><strong>Copyright: </strong>{licence_html(article)}</p></div>
{note_html(article)}
<div class="toc-section"><h2>References</h2>
<ol class="references">
{ref_items(article)}
</ol></div>
</div>"""
    return page(head, body, title=f"{article['title']} | PLOS ONE")


def peerj_landing(article: Article) -> str:
    """peerj.com: ``citation_pdf_url`` and the download buttons
    (``a.js-download-btn[data-format=PDF]``) to ``/articles/<n>.pdf``; the page
    is the HTML full text (``citation_fulltext_html_url`` is itself)."""
    pdf = article["urls"]["pdf"]
    head = [*citation_meta(article, date=article["date"]), meta("citation_pdf_url", pdf),
            meta("citation_fulltext_html_url", article["urls"]["landing"]),
            meta("citation_keywords", "; ".join(article.get("keywords", []))),
            *og_meta(article, "PeerJ")]
    authors = ", ".join(f'<span class="contrib"><span class="name">{esc(a["name"])}</span></span>'
                        for a in article["authors"])
    refs = "\n".join(f'<li class="ref"><div class="citation" id="ref-{n}">{esc(ref_text(r))}'
                     f"</div></li>" for n, r in enumerate(article["references"], 1))
    body = f"""
<div class="article-download-buttons">
<a target="_blank" download data-format="PDF" data-download-confirm-text="PDF downloaded"
 href="{esc(pdf)}" class="btn btn-primary js-download-btn btn-block btn-large mb-2 ">PDF</a>
</div>
<article itemscope itemtype="http://schema.org/ScholarlyArticle">
<header class="article-meta">
<h1 class="article-title" itemprop="name headline">{esc(article['title'])}</h1>
<div class="article-authors">{authors}</div>
<div class="self-citation"><span class="article-doi">DOI {doi_link(article)}</span>
<time datetime="{article['date']}">Published {long_date(article['date'])}</time></div>
</header>
<div class="abstract" itemprop="description"><h2>Abstract</h2>
<p>{esc(article['abstract'])}</p></div>
<div class="article-license"><p>{licence_html(article)}</p></div>
<section class="demo">{note_html(article)}</section>
<section class="ref-list-container" id="references"><h2>References</h2>
<ul class="references">
{refs}
</ul></section>
</article>"""
    return page(head, body, title=f"{article['title']} [PeerJ]")


def elife_landing(article: Article) -> str:
    """elifesciences.org: ``dc.*`` meta (no ``citation_*``), and the download list's
    ``a[data-download-type="pdf-article"]`` to ``/download/<base64>/elife-<n>-v2.pdf``."""
    pdf = article["urls"]["pdf"]
    head = [meta("dc.format", "text/html"), meta("dc.language", "en"),
            meta("dc.publisher", article["publisher"]), meta("dc.title", article["title"]),
            meta("dc.identifier", f"doi:{article['doi']}"), meta("dc.date", article["date"]),
            meta("dc.rights", f"{article.get('copyright', '')}. This article is distributed "
                 "under the terms of the Creative Commons Attribution License, which permits "
                 "unrestricted use and redistribution provided that the original author and "
                 "source are credited."),
            *(meta("dc.contributor", a["name"]) for a in article["authors"]),
            meta("description", article["abstract"]), *og_meta(article, "eLife")]
    authors = "\n".join(f'<li class="content-header__author_list_item"><span '
                        f'class="content-header__author">{esc(a["name"])}</span></li>'
                        for a in article["authors"])
    distinct, _ = affiliations(article)
    institutions = "\n".join(f'<li class="content-header__institution_list_item"><span '
                             f'class="content-header__institution">{esc(i)}</span></li>'
                             for i in distinct)
    heading = article.get("abstract_kind", "abstract").capitalize()
    refs = "\n".join(f'<li class="reference-list__item"><span '
                     f'class="reference-list__ordinal_number">{n}</span><div class="reference" '
                     f'id="bib{n}">{esc(ref_text(r))}</div></li>'
                     for n, r in enumerate(article["references"], 1))
    body = f"""
<header class="content-header">
<h1 class="content-header__title">{esc(article['title'])}</h1>
<ol class="content-header__author_list" aria-label="Authors of this article">
{authors}
</ol>
<ol class="content-header__institution_list" aria-label="Author institutions">
{institutions}
</ol>
<div class="meta"><a class="meta__type" href="/articles/research-article">Research Article</a>
<time datetime="{article['date']}">{long_date(article['date'])}</time></div>
</header>
<section class="article-section" id="abstract">
<h2 class="article-section__header_text">{esc(heading)}</h2>
<div class="article-section__body">
<p class="paragraph">{esc(article['abstract'])}</p></div></section>
<section class="article-section" id="demo">
<div class="article-section__body">{note_html(article)}</div></section>
<section class="article-section" id="references">
<h2 class="article-section__header_text">References</h2>
<ol class="reference-list">
{refs}
</ol></section>
<section class="article-section" id="downloads">
<h2 class="article-section__header_text">Download links</h2>
<ul class="article-download-list">
<li><a href="{esc(pdf)}" class="article-download-links-list__link"
  data-article-identifier="{esc(article['doi'])}"
  data-download-type="pdf-article"
>Article PDF</a></li>
</ul></section>
<div class="site-smallprint"><p>{licence_html(article)}</p></div>"""
    return page(head, body, title=f"{article['title']} | eLife")


def ojs_landing(article: Article) -> str:
    """An Open Journal Systems 3 article page (First Monday): the ``generator`` meta,
    ``DC.*`` and ``citation_*`` meta, ``citation_fulltext_html_url``, and the
    galley link ``a.obj_galley_link`` to ``article/view/<article>/<galley>``.
    It has no PDF galley: a pdf request ends ``no-pdf-link``."""
    html_url = article["urls"]["html"]
    head = [meta("generator", "Open Journal Systems 3.1.2.0"),
            *(meta("DC.Creator.PersonalName", a["name"]) for a in article["authors"]),
            meta("DC.Date.issued", article["date"]),
            meta("DC.Description", article["abstract"]),
            meta("DC.Identifier.DOI", article["doi"]),
            meta("DC.Identifier.URI", article["urls"]["landing"]),
            meta("DC.Rights", article.get("copyright", "")),
            meta("DC.Source", article["journal"]), meta("DC.Source.ISSN", article["issn"]),
            meta("DC.Title", article["title"]), meta("DC.Type", "Text.Serial.Journal"),
            *citation_meta(article, date=article["date"].replace("-", "/")),
            meta("citation_abstract_html_url", article["urls"]["landing"]),
            *(meta("citation_keywords", k) for k in article.get("keywords", [])),
            meta("citation_fulltext_html_url", html_url)]
    authors = "\n".join(f'<li><span class="name">{esc(a["name"])}</span>'
                        + "".join(f'<span class="affiliation">{esc(x)}</span>'
                                  for x in a["affiliations"]) + "</li>"
                        for a in article["authors"])
    body = f"""
<div class="pkp_structure_page"><div class="pkp_structure_main" role="main">
<article class="obj_article_details">
<h1 class="page_title">{esc(article['title'])}</h1>
<div class="row"><div class="main_entry">
<ul class="item authors">
{authors}
</ul>
<div class="item doi"><span class="label">DOI:</span>
<span class="value">{doi_link(article)}</span></div>
<div class="item keywords"><span class="label">Keywords:</span>
<span class="value">{esc(', '.join(article.get('keywords', [])))}</span></div>
<div class="item abstract"><h3 class="label">Abstract</h3><p>{esc(article['abstract'])}</p></div>
</div>
<div class="entry_details">
<div class="item galleys"><ul class="value galleys_links">
<li><a class="obj_galley_link file" href="{esc(html_url)}">HTML</a></li>
</ul></div>
<div class="item published"><div class="label">Published</div>
<div class="value">{article['date']}</div></div>
<div class="item issue"><div class="sub_item"><div class="label">Issue</div>
<div class="value"><a class="title">Volume {article['volume']}, Number {article['issue']}</a>
</div></div></div>
<div class="item copyright"><p>Authors retain copyright to their work published in
<em>{esc(article['journal'])}</em>. Please see the footer of each article for details.</p></div>
</div></div>
</article></div></div>"""
    return page(head, body, title=f"{article['title']} | {article['journal']}")


def ojs_fulltext(article: Article) -> str:
    """The article's HTML galley: First Monday's own article HTML (title, authors,
    abstract, contents, references, the licence in the footer)."""
    authors = ", ".join(esc(a["name"]) for a in article["authors"])
    refs = "\n".join(f"<p>{esc(ref_text(r))}</p>" for r in article["references"])
    licence = esc(article["licence"]["url"])
    body = f"""
<h1>{esc(article['title'])}</h1>
<p><strong>{authors}</strong></p>
<hr>
<p><strong>Abstract</strong><br>{esc(article['abstract'])}</p>
<p><strong>Contents</strong></p>
<p><a href="#p1">About this document</a><br><a href="#p2">References</a></p>
<p><a name="p1"></a><strong>About this document</strong></p>
{note_html(article)}
<p><a name="p2"></a><strong>References</strong></p>
{refs}
<hr>
<p><strong>Editorial history</strong><br>Published {esc(long_date(article['date']))}.</p>
<p><a href="{licence}">Creative Commons License</a><br>This paper is licensed under a
<a href="{licence}">Creative Commons Attribution 4.0 International License</a>.</p>
<p>{esc(article['title'])}<br>by {authors}.<br><em>{esc(article['journal'])}</em>,
Volume {article['volume']}, Number {article['issue']} - {long_date(article['date'])}<br>
{doi_link(article)}</p>"""
    return page([], body, title=article["title"])


def scielo_landing(article: Article) -> str:
    """A classic SciELO ``sci_arttext`` page, in ISO-8859-1: ``citation_*`` meta
    and the "Article in XML format" link (``a[target=xml]``) to
    ``scieloOrg/php/articleXML.php?pid=<pid>&lang=en``."""
    xml = article["urls"]["xml"]
    head = [*citation_meta(article, date=article["date"].replace("-", "/"))]
    authors = "<br>\n".join(f"{esc(a['name'])}<sup>{n}</sup>"
                            for n, a in enumerate(article["authors"], 1))
    affs = "<br>\n".join(f"<sup>{n}</sup>{esc(x)}" for n, a in enumerate(article["authors"], 1)
                         for x in a["affiliations"])
    refs = "\n".join(f"<p>{n}. {esc(ref_text(r))}</p>"
                     for n, r in enumerate(article["references"], 1))
    body = f"""
<div class="content">
<div id="toolBox"><ul>
<li><a href="{esc(xml)}" rel="nofollow" target="xml">
<img src="/img/en/iconXMLDocument.gif">Article in xml format</a></li>
</ul></div>
<h2 id="printISSN">{esc(article['journal'])}
<i>vol.{article['volume']} no.{article['issue']}</i></h2>
<h3>On-line version ISSN {article['issn']}</h3>
<div class="index,en">
<p class="title">{esc(article['title'])}</p>
<p class="trans-title">{esc(article['other_titles']['en'])}</p>
<p class="author">{authors}</p>
<p class="aff">{affs}</p>
<p>{doi_link(article)}</p>
<p class="sec"><b>ABSTRACT</b></p><p>{esc(article['abstract'])}</p>
{note_html(article)}
<p class="sec"><b>REFERENCES</b></p>
{refs}
<p class="license">{licence_html(article)}</p>
</div></div>"""
    # SciELO's classic pages are Latin-1; what it cannot hold becomes a character reference
    return page(head, body, charset="ISO-8859-1", title=article["title"])


# --- SciELO's JATS ------------------------------------------------------------------------


def cdata(text: str) -> str:
    """SciELO's articleXML wraps text in CDATA; text that Latin-1 cannot hold (a
    CDATA section cannot use references) is escaped instead."""
    try:
        text.encode("iso-8859-1")
    except UnicodeEncodeError:
        return html.escape(text, quote=False)
    return f"<![CDATA[{text}]]>" if "]]>" not in text else html.escape(text, quote=False)


def scielo_jats(article: Article) -> bytes:
    """The JATS of SciELO's classic ``articleXML.php``: ISO-8859-1, CDATA text,
    ``numero``, ``nlm-citation`` references."""
    year, month, day = article["date"].split("-")
    pid = article["pid"]
    lines = ['<?xml version="1.0" encoding="ISO-8859-1"?><article '
             'xmlns:mml="http://www.w3.org/1998/Math/MathML" '
             'xmlns:xlink="http://www.w3.org/1999/xlink" '
             'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
             f'article-type="research-article" xml:lang="{article["lang"]}">',
             "<front>", "<journal-meta>", f"<journal-id>{article['issn']}</journal-id>",
             f"<journal-title>{cdata(article['journal'])}</journal-title>",
             f"<abbrev-journal-title>{cdata(article['journal_abbrev'])}</abbrev-journal-title>",
             f"<issn>{article['issn']}</issn>",
             f"<publisher><publisher-name>{cdata(article['publisher'])}</publisher-name>"
             "</publisher>", "</journal-meta>", "<article-meta>",
             f"<article-id>{pid}</article-id>",
             f'<article-id pub-id-type="doi">{article["doi"]}</article-id>', "<title-group>",
             f'<article-title xml:lang="{article["lang"]}">{cdata(article["title"])}'
             "</article-title>",
             *(f'<article-title xml:lang="{lang}">{cdata(t)}</article-title>'
               for lang, t in article.get("other_titles", {}).items()),
             "</title-group>", "<contrib-group>"]
    distinct, numbers = affiliations(article)
    for author, mine in zip(article["authors"], numbers, strict=True):
        lines += ['<contrib contrib-type="author">', "<name>",
                  f"<surname>{cdata(author['surname'])}</surname>",
                  f"<given-names>{cdata(author['given'])}</given-names>", "</name>",
                  *(f'<xref ref-type="aff" rid="A{n:02d}"/>' for n in mine), "</contrib>"]
    lines.append("</contrib-group>")
    for number, aff in enumerate(distinct, 1):
        lines += [f'<aff id="A{number:02d}">', f"<institution>{cdata(aff)}</institution>",
                  "</aff>"]
    lines += [f'<pub-date pub-type="pub"><day>{day}</day><month>{month}</month>'
              f"<year>{year}</year></pub-date>",
              f"<volume>{article['volume']}</volume>", f"<numero>{article['issue']}</numero>",
              f"<fpage>{article['first_page']}</fpage>", f"<lpage>{article['last_page']}</lpage>",
              f'<self-uri xlink:href="{html.escape(article["urls"]["landing"])}"></self-uri>',
              f'<abstract abstract-type="short" xml:lang="en"><p>{cdata(article["abstract"])}'
              "</p></abstract>", "</article-meta>", "</front>",
              f"<body>{cdata('<p>' + html.escape(demo_note(article)) + '</p>')}</body>",
              "<back>", "<ref-list>"]
    for number, ref in enumerate(article["references"], 1):
        names = "".join(f"<name><surname>{cdata(n.split(' ', 1)[-1])}</surname>"
                        f"<given-names>{cdata(n.split(' ', 1)[0])}</given-names></name>"
                        for n in ref.get("authors", []))
        fields = [("article-title" if ref.get("kind") == "journal" else "chapter-title",
                   ref.get("title")), ("source", ref.get("container")),
                  ("year", ref.get("year")), ("volume", ref.get("volume")),
                  ("issue", ref.get("issue")), ("page-range", ref.get("pages"))]
        body = "".join(f"<{tag}>{cdata(value)}</{tag}>" for tag, value in fields if value)
        group = f'<person-group person-group-type="author">{names}</person-group>' if names else ""
        lines.append(f'<ref id="B{number}"><label>{number}</label><nlm-citation '
                     f'citation-type="{ref.get("kind", "journal")}">{group}{body}'
                     "</nlm-citation></ref>")
    lines += ["</ref-list>", "</back>", "</article>", ""]
    return "\n".join(lines).encode("iso-8859-1", errors="xmlcharrefreplace")


# --- the site ------------------------------------------------------------------------------

HTML = "text/html; charset=utf-8"
RENDERERS = {"plos": plos_landing, "peerj": peerj_landing, "elife": elife_landing,
             "ojs": ojs_landing, "scielo": scielo_landing}


def render(articles: list[Article]) -> Iterator[tuple[str, bytes]]:
    """Every file of the demo site: (name, bytes), ``pages.json`` last."""
    pages: list[dict[str, str]] = []
    for article in articles:
        key, urls = article["key"], article["urls"]
        landing = RENDERERS[article["platform"]](article)
        if article["platform"] == "scielo":
            yield f"{key}.landing.html", landing.encode("iso-8859-1", errors="xmlcharrefreplace")
            pages.append({"url": urls["landing"], "file": f"{key}.landing.html",
                          "content_type": "text/html; charset=ISO-8859-1"})
        else:
            yield f"{key}.landing.html", landing.encode()
            pages.append({"url": urls["landing"], "file": f"{key}.landing.html",
                          "content_type": HTML})
        if "pdf" in urls:
            yield f"{key}.pdf", render_pdf(article)
            pages.append({"url": urls["pdf"], "file": f"{key}.pdf",
                          "content_type": "application/pdf"})
        if "html" in urls:
            yield f"{key}.fulltext.html", ojs_fulltext(article).encode()
            pages.append({"url": urls["html"], "file": f"{key}.fulltext.html",
                          "content_type": HTML})
        if "xml" in urls:
            yield f"{key}.xml", scielo_jats(article)
            pages.append({"url": urls["xml"], "file": f"{key}.xml",
                          "content_type": "text/xml; charset=ISO-8859-1"})
        if article.get("doi_resolves_to_landing"):
            pages.append({"url": RESOLVER + article["doi"], "location": urls["landing"]})
    manifest = {"generated_by": "scripts/make_demo.py from articles.json", "pages": pages}
    yield "pages.json", (json.dumps(manifest, indent=1, ensure_ascii=False) + "\n").encode()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=SITE,
                        help=f"where to write the files [default: {SITE.relative_to(REPO)}]")
    args = parser.parse_args(argv)
    articles = json.loads(ARTICLES.read_text(encoding="utf-8"))["articles"]
    args.out.mkdir(parents=True, exist_ok=True)
    written = dict(render(articles))
    for name, data in written.items():
        (args.out / name).write_bytes(data)
    total = sum(len(d) for d in written.values())
    print(f"{len(written)} files, {total:,} bytes in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
