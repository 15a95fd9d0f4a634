"""The offline demo of file ingest: five real open-access articles' pages, served
on loopback at their publishers' own URLs.

The documents are in the package (``site/``), rendered by ``scripts/make_demo.py``
from five CC BY articles (``articles.json``; ``SOURCES.md`` cites each).
``DemoSite`` answers for every demo host on one loopback port by the ``Host``
header; the crawler reaches it through ``http.routes``, so what is archived is
what a crawl of the real sites would record (docs/ingest.md, "The demo site").
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import urlsplit

from sandcrawler.records.ingest import IngestRequest
from sandcrawler.records.statuses import IngestFileStatus
from sandcrawler.web.http.loopback import LoopbackHTTPServer

#: the generated documents, and ``pages.json``
SITE = Path(__file__).resolve().parent / "site"


@dataclass(frozen=True, slots=True)
class DemoPage:
    url: str
    #: the file served, relative to the site's directory
    file: str | None
    content_type: str = "text/html; charset=utf-8"
    #: a redirect instead of a body
    location: str | None = None


@cache
def site_pages() -> tuple[DemoPage, ...]:
    """The packaged demo's pages (``site/pages.json``)."""
    manifest = json.loads((SITE / "pages.json").read_text(encoding="utf-8"))
    return tuple(DemoPage(p["url"], p.get("file"), p.get("content_type", "text/html"),
                          p.get("location")) for p in manifest["pages"])


PLOS = "https://journals.plos.org/plosone/article?id=10.1371/journal.pone.0213978"
PLOS_PDF = ("https://journals.plos.org/plosone/article/file"
            "?id=10.1371/journal.pone.0213978&type=printable")
PEERJ = "https://peerj.com/articles/4375"
ELIFE = "https://elifesciences.org/articles/44753"
OJS = "https://firstmonday.org/ojs/index.php/fm/article/view/10274"
OJS_HTML = f"{OJS}/9729"
SCIELO = ("http://scielo.iics.una.py/scielo.php?script=sci_arttext"
          "&pid=S1683-98032015000200002&lng=en&nrm=iso")
SCIELO_XML = ("http://scielo.iics.una.py/scieloOrg/php/articleXML.php"
              "?pid=S1683-98032015000200002&lang=en")


def _doi(ingest_type: str, doi: str) -> IngestRequest:
    return IngestRequest(ingest_type=ingest_type, base_url=f"https://doi.org/{doi}",
                         link_source="doi", link_source_id=doi, ext_ids={"doi": doi})


#: what the demo ingests: every file type, and one honest miss (First Monday
#: publishes this article as HTML only: no-pdf-link)
REQUESTS: tuple[IngestRequest, ...] = (
    _doi("pdf", "10.1371/journal.pone.0213978"),
    _doi("pdf", "10.7717/peerj.4375"),
    _doi("pdf", "10.7554/elife.44753"),
    _doi("html", "10.5210/fm.v25i10.10274"),
    IngestRequest(ingest_type="xml", base_url=SCIELO, link_source="scielo",
                  link_source_id="S1683-98032015000200002",
                  ext_ids={"doi": "10.18004/ped.2015.agosto.102-107"}),
    _doi("pdf", "10.5210/fm.v25i10.10274"),
)

#: the status each demo request ends with on a first run
EXPECTED = (IngestFileStatus.SUCCESS,) * 5 + (IngestFileStatus.NO_PDF_LINK,)


def _key(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return parts.netloc.lower(), target


class DemoSite(LoopbackHTTPServer):
    """Demo pages on one loopback HTTP server, answered by Host and path.

    ``DemoSite()`` serves the packaged demo; ``DemoSite(root, pages)`` serves
    other files (``DemoPage.file`` relative to ``root``) the same way."""

    def __init__(self, root: Path | str | None = None,
                 pages: tuple[DemoPage, ...] | None = None) -> None:
        super().__init__()
        if (root is None) != (pages is None):
            raise ValueError("DemoSite takes both a root and its pages, or neither")
        self.root = SITE if root is None else Path(root)
        pages = site_pages() if pages is None else pages
        missing = [p.file for p in pages if p.file and not (self.root / p.file).is_file()]
        if missing:
            raise FileNotFoundError(f"the demo's pages are not in {self.root}: "
                                    f"{', '.join(missing[:3])} missing")
        self.pages = {_key(p.url): p for p in pages}
        self.requests: list[str] = []

    @property
    def origins(self) -> list[str]:
        """Every origin the demo answers for (``https://peerj.com``)."""
        return sorted({f"{urlsplit(p.url).scheme}://{urlsplit(p.url).netloc}"
                       for p in self.pages.values()})

    def routes(self) -> dict[str, str]:
        """``http.routes`` sending every demo origin to this server."""
        return dict.fromkeys(self.origins, self.url)

    def content(self, url: str) -> bytes:
        """The body served at ``url`` (KeyError: not a demo URL with a body)."""
        page = self.pages[_key(url)]
        if page.file is None:
            raise KeyError(url)
        return (self.root / page.file).read_bytes()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go in separate writes

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                host = (self.headers.get("Host") or "").lower()
                site.requests.append(f"{host}{self.path}")
                page = site.pages.get((host, self.path))
                if self.path == "/robots.txt":
                    self._send(200, b"User-agent: *\nAllow: /\n", "text/plain")
                elif page is None:
                    self._send(404, b"<html><body>Not Found</body></html>", "text/html")
                elif page.location:
                    self._send(302, b"", "text/html", {"Location": page.location})
                else:
                    assert page.file is not None
                    self._send(200, (site.root / page.file).read_bytes(), page.content_type)

            def _send(self, status: int, body: bytes, content_type: str,
                      headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

        return Handler
