"""Where a landing page's full text is: one declarative table, read by ``web/html/landing.py``.

Three groups, tried in order (docs/ingest.md, "Finding the full text"):
``META_RULES`` (what any page declares), ``PLATFORM_RULES`` (per platform) and
``ANCHOR_RULES`` (links whose text or address says what they are). A ``Find`` is
data: where the value is, which values count, how it becomes the link. Adding
a platform is one entry here and one test in ``tests/web/test_landing_pages.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KINDS = ("pdf", "xml", "html")


@dataclass(frozen=True)
class Find:
    """One way to find a link of ``kind``.

    The value is read from ``meta`` (a meta name, any case), or from the ``attr`` of
    each element matching ``selector`` (``attr=None``: the element's text, for links in
    scripts), or, when neither is given, it is the page URL itself. It is resolved
    against the page, then ``pattern`` (a regex searched in the absolute URL, or in the
    raw text when ``attr`` is None) must match; ``template`` (``\\1`` groups) rewrites
    it. ``text`` is a regex the element's text or title must match. ``same_site``
    keeps links on the page's own site only."""

    kind: str
    meta: str | None = None
    selector: str | None = None
    attr: str | None = "href"
    pattern: str | None = None
    template: str | None = None
    text: str | None = None
    unquote: bool = False
    same_site: bool = False
    name: str | None = None  # the rule name links get, when not the rule's own
    #: a shortcut for a ``pattern`` over every link of a page: values that do not contain
    #: this (lower case; tabs and newlines removed) are skipped before being resolved,
    #: unless they are a query only (``?...``, which keeps the page's path). Only for a
    #: pattern that cannot match otherwise: resolving never adds it to a value's path,
    #: query or fragment, and a value with a path replaces the page's last segment.
    needs: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Find.kind must be one of {KINDS}, not {self.kind!r}")
        if self.template is not None and self.pattern is None:
            raise ValueError("Find.template needs a pattern")
        if self.needs is not None and (self.pattern is None or self.needs != self.needs.lower()):
            raise ValueError("Find.needs is a lower-case shortcut for a pattern")
        for regex in (self.pattern, self.text):
            if regex is not None:
                re.compile(regex)

    @property
    def from_page_url(self) -> bool:
        return self.meta is None and self.selector is None


@dataclass(frozen=True)
class Rule:
    """A platform (or a group of generic finds) for pages whose host is one of ``hosts``
    (the host itself or a subdomain; a string starting with ``~`` is a regex searched
    in the host), or whose URL matches the regex ``urls``, or on which the CSS selector
    ``when`` matches; none of the three: every page. Links found are named ``name``
    unless the ``Find`` names its own."""

    name: str
    finds: tuple[Find, ...]
    hosts: tuple[str, ...] = ()
    when: str | None = None
    urls: str | None = None
    title: str = ""
    tested_on: str = "made-up"  # "real" or "made-up" page in tests/ (docs table)

    def applies_to(self, url: str, host: str, page_matches: bool) -> bool:
        """``page_matches``: whether ``when`` matched the page (False without ``when``)."""
        if not self.hosts and self.when is None and self.urls is None:
            return True
        return (page_matches or any(_host_matches(spec, host) for spec in self.hosts)
                or (self.urls is not None and re.search(self.urls, url) is not None))


def _host_matches(spec: str, host: str) -> bool:
    if spec.startswith("~"):
        return re.search(spec[1:], host) is not None
    return host == spec or host.endswith("." + spec)


# (a) generic metadata any page may declare
META_RULES: tuple[Rule, ...] = (
    Rule("meta", (
        Find("pdf", meta="citation_pdf_url", name="citation_pdf_url"),
        Find("pdf", meta="bepress_citation_pdf_url", name="bepress_citation_pdf_url"),
        Find("pdf", meta="eprints.document_url", pattern=r"(?i)\.pdf([?#]|$)",
             name="eprints.document_url"),
        Find("pdf", selector='link[rel="alternate" i][type="application/pdf" i]',
             name="link:alternate"),
        Find("xml", meta="citation_xml_url", name="citation_xml_url"),
        Find("xml", meta="fulltext_xml", name="fulltext_xml"),
        Find("xml", selector='link[rel="alternate" i][type="application/xml" i]',
             name="link:alternate"),
        Find("xml", selector='link[rel="alternate" i][type="text/xml" i]',
             name="link:alternate"),
        Find("html", meta="citation_fulltext_html_url", name="citation_fulltext_html_url"),
    )),
)
# JSON-LD ``encoding``/``associatedMedia`` links (rule "json-ld") come right after these.

_OJS_VIEW = r"^(https?://.+)/article/view/(\d+/\d+(?:/\d+)?)(?:[?#].*)?$"
_OJS_DOWNLOAD = r"\1/article/download/\2"

# (b) platforms
PLATFORM_RULES: tuple[Rule, ...] = (
    Rule("platform:ojs", title="Open Journal Systems (PKP)", tested_on="real",
         when='meta[name="generator" i][content^="Open Journal Systems"]',
         urls=r"/article/view/\d+", finds=(
        # OJS 3 galley links on the landing page; the view page becomes the download
        Find("pdf", selector="a.obj_galley_link.pdf", pattern=_OJS_VIEW,
             template=_OJS_DOWNLOAD),
        Find("pdf", selector="a.obj_galley_link", text=r"(?i)\bpdf\b", pattern=_OJS_VIEW,
             template=_OJS_DOWNLOAD),
        # the galley's own viewer page: the download button and pdf.js's file=
        Find("pdf", selector="a.download", pattern=r"/article/download/"),
        Find("pdf", selector="iframe[src]", attr="src", pattern=r"[?&]file=([^&#]+)",
             template=r"\1", unquote=True),
        Find("pdf", selector="a#pdfDownloadLink"),  # OJS 2 interstitial
        Find("xml", selector="a.obj_galley_link", text=r"(?i)\b(jats\s+)?xml\b",
             pattern=_OJS_VIEW, template=_OJS_DOWNLOAD),
        Find("html", selector="a.obj_galley_link", text=r"(?i)\bhtml\b", pattern=_OJS_VIEW,
             template=_OJS_DOWNLOAD),
        Find("html", selector='iframe[name="htmlFrame"]', attr="src"),  # OJS 2
    )),
    Rule("platform:plos", hosts=("plos.org",), title="PLOS", tested_on="real", finds=(
        Find("pdf", selector="a#downloadPdf"),
        Find("xml", selector="a#downloadXml"),
        Find("pdf", pattern=r"^(https?://journals\.plos\.org/\w+)/article\?id=([^&#]+)",
             template=r"\1/article/file?id=\2&type=printable"),
        Find("xml", pattern=r"^(https?://journals\.plos\.org/\w+)/article\?id=([^&#]+)",
             template=r"\1/article/file?id=\2&type=manuscript"),
    )),
    Rule("platform:elife", hosts=("elifesciences.org",), title="eLife", tested_on="real",
         finds=(
        Find("pdf", selector='a[data-download-type="pdf-article"]'),
        Find("xml", pattern=r"^(https?://elifesciences\.org/articles/\d+)(?:[?#].*)?$",
             template=r"\1.xml"),
    )),
    Rule("platform:peerj", hosts=("peerj.com",), title="PeerJ", tested_on="real", finds=(
        Find("pdf", selector='a.js-download-btn[data-format="PDF"]'),
        Find("xml", selector='a.js-download-btn[data-format="XML"]'),
        Find("pdf", pattern=r"^(https?://peerj\.com/(?:articles|preprints)/\d+)/?(?:[?#].*)?$",
             template=r"\1.pdf"),
    )),
    Rule("platform:springer", hosts=("link.springer.com",), title="Springer Link", finds=(
        Find("pdf", selector="a.c-pdf-download__link"),
        Find("pdf", selector='a[data-track-action="download pdf"]'),
        Find("pdf", pattern=r"^(https?://link\.springer\.com)/(?:article|chapter)/"
                            r"(10\.\d+/[^?#]+?)/?(?:[?#].*)?$",
             template=r"\1/content/pdf/\2.pdf"),
    )),
    Rule("platform:nature", hosts=("nature.com",), title="Nature", tested_on="real", finds=(
        # no URL guess: news and comment pieces (d41586-...) have no PDF
        Find("pdf", selector="a.c-pdf-download__link"),
        Find("pdf", selector='a[data-article-pdf="true"]'),
    )),
    Rule("platform:elsevier", hosts=("linkinghub.elsevier.com", "sciencedirect.com"),
         title="Elsevier (linkinghub, ScienceDirect)", finds=(
        Find("html", pattern=r"^https?://linkinghub\.elsevier\.com/retrieve/pii/(\w+)",
             template=r"https://www.sciencedirect.com/science/article/pii/\1"),
        Find("pdf", selector='script[type="application/json"]', attr=None,
             pattern=r'"pdfDownload":\{.*?"md5":"(\w+)","pid":"([^"]+)"\}.*?"pii":"(\w+)"',
             template=r"https://www.sciencedirect.com/science/article/pii/\3/pdfft"
                      r"?md5=\1&pid=\2"),
        Find("pdf", selector='script[type="application/json"]', attr=None,
             pattern=r'"linkToPdf":"(/science/article/pii/[^"]+)"',
             template=r"https://www.sciencedirect.com\1"),
        Find("pdf", selector=".PdfEmbed a.anchor, a.pdf-download-btn-link"),
        # the pdfft page bounces to the signed PDF on its CDN
        Find("pdf", selector="script", attr=None,
             pattern=r"window\.location\s*=\s*'(https://pdf\.sciencedirectassets\.com/[^']+)'",
             template=r"\1"),
    )),
    Rule("platform:wiley", hosts=("onlinelibrary.wiley.com",), title="Wiley Online Library",
         finds=(
        Find("pdf", pattern=r"^(https?://onlinelibrary\.wiley\.com)/doi/"
                            r"(?:(?:abs|full|epdf|pdf|book)/)?(10\.[^?#]+)",
             template=r"\1/doi/pdfdirect/\2"),
        Find("pdf", selector="a.pdf-download"),
    )),
    Rule("platform:mdpi", hosts=("mdpi.com",), title="MDPI", finds=(
        Find("pdf", selector="a.UD_ArticlePDF"),
        Find("pdf", pattern=r"^(https?://www\.mdpi\.com/\d{4}-\d{3}[\dXx]/\d+/\d+/\d+)"
                            r"(?:/htm)?/?(?:[?#].*)?$",
             template=r"\1/pdf"),
    )),
    Rule("platform:frontiers", hosts=("frontiersin.org",), title="Frontiers", finds=(
        Find("pdf", selector="a.download-files-pdf"),
        Find("xml", selector="a.download-files-nlm"),
        Find("pdf", pattern=r"^(https?://www\.frontiersin\.org/(?:journals/[\w-]+/)?articles/"
                            r"10\.\d+/[^/?#]+)/(?:full|abstract)",
             template=r"\1/pdf"),
    )),
    Rule("platform:arxiv", hosts=("arxiv.org",), title="arXiv", finds=(
        Find("pdf", pattern=r"^https?://(?:www\.|export\.)?arxiv\.org/abs/([^?#]+?)/?(?:[?#].*)?$",
             template=r"https://arxiv.org/pdf/\1"),
    )),
    Rule("platform:biorxiv", hosts=("biorxiv.org", "medrxiv.org"), title="bioRxiv, medRxiv",
         finds=(
        Find("pdf", selector="a.article-dl-pdf-link"),
        Find("pdf", pattern=r"^(https?://(?:www\.)?(?:bio|med)rxiv\.org/content/10\.1101/"
                            r"[^?#]+?v\d+)(?:\.full|\.abstract|\.full-text)?/?(?:[?#].*)?$",
             template=r"\1.full.pdf"),
    )),
    Rule("platform:scielo", hosts=(r"~(^|\.)scielo\.",), title="SciELO", finds=(
        Find("xml", selector='a[target="xml"]', pattern=r"articleXML"),
        Find("xml", selector='a[href*="format=xml"]'),
        Find("xml", pattern=r"^(https?://[^/]+)/scielo\.php\?script=sci_arttext&pid=([^&#]+)",
             template=r"\1/scieloOrg/php/articleXML.php?pid=\2"),
        Find("pdf", selector='a[href*="format=pdf"]'),
        Find("pdf", selector='a[href*="script=sci_pdf"]'),
        Find("pdf", selector='a[href*="/pdf/"]', pattern=r"(?i)\.pdf([?#]|$)"),
        Find("pdf", pattern=r"^(https?://[^/]+)/scielo\.php\?script=sci_arttext&pid=([^&#]+)",
             template=r"\1/scielo.php?script=sci_pdf&pid=\2"),
    )),
    Rule("platform:pmc", hosts=("pmc.ncbi.nlm.nih.gov", "~^(www\\.)?ncbi\\.nlm\\.nih\\.gov$"),
         title="PubMed Central", finds=(
        # the article's formats menu; the JATS is not linked (citation_xml_url only)
        Find("pdf", selector='.format-menu a[href*=".pdf"]'),
        Find("pdf", selector='.pdf-link a[href*=".pdf"]'),
        Find("pdf", selector='a[data-ga-label^="pdf_download"][href*=".pdf"]'),
        Find("pdf", selector='section.pmc-sidenav a[href*=".pdf"]'),
    )),
    Rule("platform:ieee", hosts=("ieeexplore.ieee.org",), title="IEEE Xplore", finds=(
        Find("pdf", selector='iframe[src*=".pdf"]', attr="src"),
        Find("pdf", selector="script", attr=None, pattern=r'"pdfPath":"(/[^"]+?\.pdf)"',
             template=r"https://ieeexplore.ieee.org\1"),
        Find("pdf", pattern=r"^https?://ieeexplore\.ieee\.org/(?:abstract/)?document/(\d+)",
             template=r"https://ieeexplore.ieee.org/stamp/stamp.jsp?tp=&arnumber=\1"),
    )),
    Rule("platform:osf", hosts=("osf.io",), title="OSF Preprints", finds=(
        Find("pdf", pattern=r"^https?://osf\.io/(?:preprints/[\w-]+/)?([a-z0-9]{5,6})"
                            r"(?:_v\d+)?/?(?:[?#].*)?$",
             template=r"https://osf.io/\1/download"),
    )),
    Rule("platform:dspace", title="DSpace repositories",
         when='meta[name="generator" i][content^="DSpace"]', finds=(
        Find("pdf", selector='a[href*="/bitstream"]',
             pattern=r"(?i)/bitstream/.*\.pdf([?#]|$)|/bitstreams/[\w-]+/download"),
    )),
    Rule("platform:eprints", title="EPrints repositories",
         when='meta[name="eprints.eprintid" i], meta[name="generator" i][content^="EPrints"]',
         finds=(
        Find("pdf", selector="a.ep_document_link", pattern=r"(?i)\.pdf([?#]|$)"),
    )),
    Rule("platform:dlib", hosts=("dlib.org",), title="D-Lib Magazine", tested_on="real",
         finds=(
        # an article page is itself the full text
        Find("html", pattern=r"^https?://(?:www\.)?dlib\.org/dlib/\w+/[\w-]+/[\w.-]+\.html?$",
             template=r"\g<0>"),
    )),
)

# (c) generic links, any page
_PDF_TEXT = (r"(?i)^\s*(download\s+(the\s+)?(full[\s-]*text\s+|article\s+)?pdf|"
             r"(full[\s-]*text|article|view|get|open)\s+pdf|pdf(\s+full[\s-]*text)?)"
             r"\s*(\(.{0,30}\))?\s*$")
_HTML_TEXT = (r"(?i)^\s*((view\s+|read\s+(the\s+)?)?full[\s-]*text(\s+(html|article))?|"
              r"html(\s+full[\s-]*text)?|read\s+(the\s+)?(full\s+)?article)\s*$")
ANCHOR_RULES: tuple[Rule, ...] = (
    Rule("anchor", (
        Find("pdf", selector="a[href]", text=_PDF_TEXT, name="anchor:download-pdf"),
        # a .pdf on the page's own site, not a figures or supplement file
        Find("pdf", selector="a[href]", pattern=r"(?i)^(?!.*(figure|suppl)).*\.pdf([?#]|$)",
             same_site=True, name="anchor:pdf-href", needs="pdf"),
        Find("html", selector="a[href]", text=_HTML_TEXT, pattern=r"(?i)^(?!.*\.pdf([?#]|$))",
             name="anchor:fulltext"),
        # a PDF viewer page: the PDF is embedded (pdf.js iframes, <embed>, <object>);
        # pdf.js's viewer names the file in its query (viewer.html?file=/x.pdf)
        Find("pdf", selector="iframe[src]", attr="src", pattern=r"(?i)[?&]file=([^&#]+)",
             template=r"\1", unquote=True, name="embed:pdf-viewer"),
        Find("pdf", selector='embed[type="application/pdf"][src]', attr="src",
             name="embed:pdf"),
        Find("pdf", selector='object[type="application/pdf"][data]', attr="data",
             name="embed:pdf"),
        Find("pdf", selector="iframe[src], embed[src], object[data]", attr="src",
             pattern=r"(?i)\.pdf([?#]|$)", name="embed:pdf", needs="pdf"),
    )),
)

ALL_RULES: tuple[Rule, ...] = META_RULES + PLATFORM_RULES + ANCHOR_RULES
