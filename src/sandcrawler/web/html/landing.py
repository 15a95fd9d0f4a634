"""A landing page analysed: its metadata, where its full text is, and whether it is a
wall (cookie consent, "enable JavaScript", a bot challenge) rather than the page.

``parse_html(body, url, content_type)`` reads whatever a server sends (wrong
charsets, broken markup, the first ``MAX_PARSE_BYTES``) in a child process under
``PARSE_TIMEOUT`` and ``PARSE_MEMORY`` (``html-too-complex`` otherwise). Its result,
``HtmlPage``, is plain data; ``fulltext_links(kind)`` returns the links the rule
table found, best first (docs/ingest.md, "Finding the full text").
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple
from urllib.parse import unquote

from selectolax.lexbor import LexborHTMLParser, LexborNode

from sandcrawler.records.html_biblio import HtmlBiblio
from sandcrawler.records.statuses import IngestFileStatus
from sandcrawler.web.html.biblio import base_href, collect_meta, extract_biblio, jsonld_media
from sandcrawler.web.html.biblio import jsonld_objects as _jsonld_objects
from sandcrawler.web.html.bounded import shared_work
from sandcrawler.web.html.link_rules import (
    ANCHOR_RULES,
    KINDS,
    META_RULES,
    PLATFORM_RULES,
    Find,
    Rule,
)
from sandcrawler.web.http.urls import absolute_url, host_of, registered_domain, without_fragment

#: only this much of a page is parsed; article pages are far smaller
MAX_PARSE_BYTES = 8 * 2**20
#: at most this many elements are looked at per selector (a page of a million links)
MAX_NODES = 20_000
#: a wall has fewer visible words than this and no scholarly metadata
WALL_MAX_WORDS = 250
#: the most one page's analysis may take, in seconds and bytes of address space. Real
#: pages take milliseconds and tens of MB (the largest read, 8 MB of PeerJ's article
#: over and over, 0.5 s); a page built against the parser costs minutes and GBs
#: (web/html/bounded.py), so the limits are what such a page costs a worker
PARSE_TIMEOUT = 10.0
PARSE_MEMORY = 2**30



@dataclass(frozen=True)
class FulltextLink:
    url: str
    kind: str  # "pdf", "xml" or "html"
    rule: str  # what found it: "citation_pdf_url", "platform:plos", "anchor:download-pdf"


@dataclass(frozen=True)
class HtmlPage:
    url: str
    biblio: HtmlBiblio | None
    meta_refresh: str | None = None
    blocked: str | None = None
    references: list[str] = field(default_factory=list)
    links: tuple[FulltextLink, ...] = ()
    encoding: str = "utf-8"

    def fulltext_links(self, kind: str) -> list[FulltextLink]:
        """Links to the full text as ``kind`` (pdf, xml, html), best first, no duplicates."""
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
        return [link for link in self.links if link.kind == kind]


def parse_html(body: bytes, url: str, content_type: str | None = None) -> HtmlPage:
    """Analyse a landing page fetched from ``url`` (its final URL, after redirects);
    ``RecordError`` ``html-too-complex`` when that is stopped at the limits."""
    work = shared_work(IngestFileStatus.HTML_TOO_COMPLEX, memory_limit=PARSE_MEMORY)
    return work.run(_analyse, body[:MAX_PARSE_BYTES], url, content_type,
                    timeout=PARSE_TIMEOUT, page=url)


class PageMeta(NamedTuple):
    """A page parsed, and what its head says: its meta tags by name, the base its
    links resolve against, its ``html_biblio``."""

    tree: LexborHTMLParser
    encoding: str
    base: str
    meta: dict[str, list[str]]
    biblio: HtmlBiblio | None


def read_meta(body: bytes, url: str, content_type: str | None = None) -> PageMeta:
    """The page's metadata, read as a landing page's is (its charset, its
    ``<base href>``); in the caller's process: call it where a page's parse is
    bounded (``parse_html``'s child, a processor's)."""
    text, encoding = decode_html(body, content_type)
    tree = LexborHTMLParser(text)
    base = base_href(tree, url)
    meta = collect_meta(tree)
    return PageMeta(tree, encoding, base, meta, extract_biblio(tree, meta, base))


def _analyse(body: bytes, url: str, content_type: str | None) -> HtmlPage:
    """``parse_html``'s work, in the child process."""
    tree, encoding, base, meta, biblio = read_meta(body, url, content_type)
    links = _find_links(tree, meta, url, base)
    refresh = _meta_refresh(tree, base)
    references = list(meta.get("citation_reference", ()))
    blocked = _blocked(tree, biblio, meta)
    return HtmlPage(url=url, biblio=biblio, meta_refresh=refresh, blocked=blocked,
                    references=references, links=tuple(links), encoding=encoding)


# --- decoding ----------------------------------------------------------------------------

_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"),
         (codecs.BOM_UTF16_BE, "utf-16-be"))
_CT_CHARSET = re.compile(r"charset\s*=\s*[\"']?([\w.:-]+)", re.IGNORECASE)
_META_CHARSET = re.compile(rb"<meta[^>]{0,200}?charset\s*=\s*[\"']?\s*([\w.:-]+)", re.IGNORECASE)


def decode_html(body: bytes, content_type: str | None = None) -> tuple[str, str]:
    """The page as text and the encoding used: a BOM first, then the HTTP charset, then
    ``<meta charset>`` (in the first 4 KiB), then UTF-8. When the bytes do not decode in
    the declared charset: UTF-8 if they are (nearly) UTF-8, else windows-1252."""
    data = body[:MAX_PARSE_BYTES]
    for bom, name in _BOMS:
        if data.startswith(bom):
            return data[len(bom):].decode(name, errors="replace"), name
    declared = []
    if content_type:
        match = _CT_CHARSET.search(content_type)
        if match:
            declared.append(match.group(1))
    meta = _META_CHARSET.search(data[:4096])
    if meta:
        declared.append(meta.group(1).decode("ascii", "replace"))
    for name in declared:
        codec = _codec(name)
        if codec is None:
            continue
        try:
            return _strict(data, codec), codec
        except UnicodeDecodeError:
            break  # the declaration is wrong: guess below
    try:
        return _strict(data, "utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    loose = data.decode("utf-8", errors="replace")
    high = sum(1 for b in data if b >= 0x80)
    if loose.count("\ufffd") * 20 <= high:  # a few stray bytes in UTF-8
        return loose, "utf-8"
    return data.decode("cp1252", errors="replace"), "cp1252"


def _codec(name: str) -> str | None:
    try:
        codec = codecs.lookup(name.strip().lower()).name
    except LookupError:
        return None
    # as browsers do (WHATWG encoding standard): Latin-1 labels mean windows-1252, and a
    # page cannot declare itself UTF-16 in its own (ASCII) meta tag
    if codec in ("latin-1", "iso8859-1", "ascii"):
        return "cp1252"
    if codec.startswith("utf-16") or codec.startswith("utf-32"):
        return "utf-8"
    return codec


def _strict(data: bytes, codec: str) -> str:
    try:
        return data.decode(codec)
    except UnicodeDecodeError as exc:
        # a multi-byte character cut by the size cap is not a wrong charset
        if len(data) >= MAX_PARSE_BYTES and exc.start >= len(data) - 4:
            return data[:exc.start].decode(codec)
        raise


# --- links -------------------------------------------------------------------------------

def _find_links(tree: LexborHTMLParser, meta: dict[str, list[str]], url: str,
                base: str) -> list[FulltextLink]:
    page = without_fragment(absolute_url(url, "") or url)
    host = host_of(url)
    seen: set[tuple[str, str]] = set()
    out: list[FulltextLink] = []

    def add(link: str | None, kind: str, rule: str, self_ok: bool = False) -> None:
        if link is None:
            return
        key = (kind, without_fragment(link))
        if key in seen or (key[1] == page and not self_ok):
            return
        seen.add(key)
        out.append(FulltextLink(link, kind, rule))

    texts: dict[int, str] = {}  # an element's text, read once for every rule asking
    for rule in META_RULES:
        _apply(rule, tree, meta, url, base, add, texts)
    for obj in _jsonld_objects(tree):
        for kind, link in jsonld_media(obj, base):
            add(link, kind, "json-ld")
    for rule in PLATFORM_RULES:
        matches = rule.when is not None and tree.css_first(rule.when) is not None
        if rule.applies_to(url, host, matches):
            _apply(rule, tree, meta, url, base, add, texts)
    for rule in ANCHOR_RULES:
        _apply(rule, tree, meta, url, base, add, texts)
    return out


def _apply(rule: Rule, tree: LexborHTMLParser, meta: dict[str, list[str]], url: str,
           base: str, add: Any, texts: dict[int, str]) -> None:
    for find in rule.finds:
        name = find.name or rule.name
        for value, is_text in _values(find, tree, meta, url, texts):
            link = _link(find, value, is_text, url, base)
            add(link, find.kind, name, self_ok=find.from_page_url)


def _values(find: Find, tree: LexborHTMLParser, meta: dict[str, list[str]],
            url: str, texts: dict[int, str]) -> list[tuple[str, bool]]:
    """The raw values a find looks at, and whether each is an element's text."""
    if find.meta is not None:
        return [(v, False) for v in meta.get(find.meta.lower(), ())]
    if find.selector is None:
        return [(url, False)]
    text_re = re.compile(find.text) if find.text else None
    values = []
    for node in tree.css(find.selector)[:MAX_NODES]:
        if text_re is not None and not _text_matches(node, text_re, texts):
            continue
        if find.attr is None:
            values.append((node.text() or "", True))
        else:
            value = node.attributes.get(find.attr)
            if value:
                values.append((value, False))
    return values


def _text_matches(node: LexborNode, text_re: re.Pattern[str], texts: dict[int, str]) -> bool:
    text = texts.get(node.mem_id)
    if text is None:
        text = texts[node.mem_id] = " ".join((node.text(deep=True) or "").split())
    if text and len(text) < 200 and text_re.search(text):
        return True
    title = node.attributes.get("title") or node.attributes.get("aria-label") or ""
    return bool(title) and text_re.search(" ".join(title.split())) is not None


_NO_TABS = str.maketrans("", "", "\t\n\r")


def _link(find: Find, value: str, is_text: bool, url: str, base: str) -> str | None:
    if is_text:  # a URL inside a script: only what the pattern takes out of it
        if find.pattern is None:
            return None
        match = re.search(find.pattern, value)
        if match is None:
            return None
        value = match.expand(find.template) if find.template else match.group(0)
        return _finish(find, value, url, base)
    if find.needs is not None:
        raw = value.translate(_NO_TABS).strip().lower()
        if find.needs not in raw and not raw.startswith("?"):
            return None  # the pattern cannot match: not worth resolving
    link = absolute_url(value, base)
    if link is None:
        return None
    if find.pattern is not None:
        match = re.search(find.pattern, link)
        if match is None:
            return None
        if find.template is not None:
            link = match.expand(find.template)
    return _finish(find, link, url, base)


def _finish(find: Find, value: str, url: str, base: str) -> str | None:
    if find.unquote:
        value = unquote(value)
    link = absolute_url(value.replace("&amp;", "&"), base)
    if link is not None and find.same_site and registered_domain(link) != registered_domain(url):
        return None
    return link


# --- meta refresh and walls --------------------------------------------------------------

_REFRESH_URL = re.compile(r"""(?i)^\s*\d*(?:\.\d+)?\s*[;,]?\s*(?:url\s*=\s*)?['"]?([^'"]+)""")


def _meta_refresh(tree: LexborHTMLParser, base: str) -> str | None:
    for node in tree.css('meta[http-equiv="refresh" i]'):
        content = node.attributes.get("content") or ""
        if not re.search(r"(?i)url\s*=|[;,]\s*\S", content):
            continue  # a plain reload timer
        match = _REFRESH_URL.match(content)
        if match:
            link = absolute_url(match.group(1).strip(), base)
            if link is not None:
                return link
    return None


_CHALLENGE_TITLE = re.compile(r"(?i)^\s*(just a moment|attention required|please wait|"
                              r"one more step|ddos-guard|security check|are you a robot|"
                              r"access denied|checking your browser)")
_CHALLENGE_MARKERS = ("cf-browser-verification", "challenge-platform", "cf_chl_opt",
                      "cf-challenge", "__cf_chl", "captcha-delivery.com", "ddos-guard")
_CHALLENGE_NODES = ("#challenge-form, #challenge-running, #cf-challenge-running, "
                    "#cf-wrapper, .cf-browser-verification, #challenge-stage")
_WALL_TEXT: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("bot-challenge", re.compile(r"(?i)checking (if the site connection is secure|your "
                                 r"browser)|verify(ing)? (that )?you are (a )?human|"
                                 r"are you a robot|complete the security check")),
    ("cookies-required", re.compile(r"(?i)(enable|accept|allow)\s+(all\s+)?cookies|"
                                    r"cookies\s+(are\s+)?(disabled|required|blocked)")),
    ("javascript-required", re.compile(r"(?i)(enable|turn on|activate)\s+javascript|"
                                       r"javascript\s+(is\s+)?(disabled|required|"
                                       r"must be enabled|is not enabled)")),
)


def _scholarly(biblio: HtmlBiblio) -> bool:
    """Does the page name the work (an identifier, its authors, its journal) or its
    full text, and not only a title or a description?"""
    return any(value is not None for value in (
        biblio.doi, biblio.contrib_raw_names, biblio.pdf_fulltext_url, biblio.container_name,
        biblio.pmid, biblio.arxiv_id))


def _blocked(tree: LexborHTMLParser, biblio: HtmlBiblio | None,
             meta: dict[str, list[str]]) -> str | None:
    """Why the page is a wall instead of the article, or None.

    A wall has no scholarly metadata and little visible text, and says it (or looks
    like a bot challenge). Article pages with a ``<noscript>`` notice are not walls."""
    if biblio is not None and _scholarly(biblio):
        return None
    if any(name.startswith(("citation_", "bepress_", "eprints.", "prism.")) for name in meta):
        return None
    title_node = tree.css_first("title")
    title = title_node.text() if title_node is not None else ""
    scripts = " ".join((n.text() or "")[:20_000] for n in tree.css("script")[:50])
    challenge = (_CHALLENGE_TITLE.search(title) is not None
                 or tree.css_first(_CHALLENGE_NODES) is not None
                 or any(marker in scripts for marker in _CHALLENGE_MARKERS))
    noscript = " ".join(n.text() or "" for n in tree.css("noscript")[:20])
    body = tree.body
    if body is not None:
        for node in body.css("script, style, noscript, template")[:MAX_NODES]:
            node.decompose()
    visible = " ".join((body.text(separator=" ") if body is not None else "").split())
    if len(visible.split()) >= WALL_MAX_WORDS:
        return None
    if challenge:
        return "bot-challenge"
    said = f"{title} {visible} {noscript}"
    for reason, pattern in _WALL_TEXT:
        if pattern.search(said):
            return reason
    return None
