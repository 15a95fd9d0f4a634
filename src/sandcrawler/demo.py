"""The offline demo of file ingest: real publishers' pages served on loopback.

The pages are real article landing pages and full texts saved from PLOS ONE,
eLife, PeerJ, First Monday (OJS), D-Lib Magazine and SciELO (the test files of
the original system, in ``../shared/data/sandcrawler-fixtures``), each at the
URL it was published under; the PDFs their links point to are real scholarly
PDFs (``../shared/data/pdfs``), though not the articles' own. A DOI resolver
redirects the demo DOIs to their landing pages.

``DemoSite`` answers for every demo host on one loopback port by the request's
``Host`` header; the crawler reaches it through ``http.routes`` (which keeps
the original URLs in every record), so what is archived and reported is what a
crawl of the real sites would record.
"""

from __future__ import annotations

from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from sandcrawler.loopback import LoopbackHTTPServer

FIXTURES = "sandcrawler-fixtures"
PDFS = "pdfs"


@dataclass(frozen=True, slots=True)
class DemoPage:
    url: str
    #: the file served, relative to the shared data directory
    file: str | None
    content_type: str = "text/html; charset=utf-8"
    #: a redirect instead of a body
    location: str | None = None


_PDF = "application/pdf"
PLOS = "https://journals.plos.org/plosone/article?id=10.1371/journal.pone.0213978"
PEERJ = "https://peerj.com/articles/4375"
ELIFE = "https://elifesciences.org/articles/44753"
OJS = "https://firstmonday.org/ojs/index.php/fm/article/view/10274"
DLIB = "http://www.dlib.org/dlib/may17/vanhyning/05vanhyning.html"
SCIELO_XML = ("http://scielo.iics.una.py/scieloOrg/php/articleXML.php"
              "?pid=S1683-98032015000200002&lang=en")
ELIFE_PDF = ("https://elifesciences.org/download/aHR0cHM6Ly9jZG4uZWxpZmVzY2llbmNlcy5vcmcvYXJ0"
             "aWNsZXMvNDQ3NTMvZWxpZmUtNDQ3NTMtdjIucGRm/elife-44753-v2.pdf"
             "?_hash=CfyqOqVryCR4OjcMTfcdpeIWAGZznmh9jXksYKYChCw%3D")

PAGES: tuple[DemoPage, ...] = (
    DemoPage(PLOS, f"{FIXTURES}/plos_one_article.html"),
    DemoPage("https://journals.plos.org/plosone/article/file"
             "?id=10.1371/journal.pone.0213978&type=printable", f"{PDFS}/0807.3577.pdf", _PDF),
    DemoPage(PEERJ, f"{FIXTURES}/peerj_oa_article.html"),
    DemoPage("https://peerj.com/articles/4375.pdf", f"{PDFS}/Wang-paperAVE2008.pdf", _PDF),
    DemoPage(ELIFE, f"{FIXTURES}/elife_article.html"),
    DemoPage(ELIFE_PDF, f"{PDFS}/1001._0908.0054.pdf", _PDF),
    DemoPage(OJS, f"{FIXTURES}/first_monday_ojs3_landingpage.html"),
    DemoPage(f"{OJS}/9729", f"{FIXTURES}/first_monday_ojs3_fulltext.html"),
    DemoPage(DLIB, f"{FIXTURES}/dlib_05vanhyning.html"),
    DemoPage(SCIELO_XML, f"{FIXTURES}/scielo_article.jats.xml",
             "text/xml; charset=ISO-8859-1"),
    DemoPage("https://doi.org/10.1371/journal.pone.0213978", None, location=PLOS),
    DemoPage("https://doi.org/10.7717/peerj.4375", None, location=PEERJ),
    DemoPage("https://doi.org/10.7554/elife.44753", None, location=ELIFE),
    DemoPage("https://doi.org/10.5210/fm.v25i10.10274", None, location=OJS),
    DemoPage("https://doi.org/10.1045/may2017-vanhyning", None, location=DLIB),
)

#: what the demo ingests: every type, and one honest miss (First Monday
#: publishes this article as HTML only: no-pdf-link)
REQUESTS: tuple[dict[str, Any], ...] = (
    {"ingest_type": "pdf", "base_url": "https://doi.org/10.1371/journal.pone.0213978",
     "link_source": "doi", "link_source_id": "10.1371/journal.pone.0213978",
     "ext_ids": {"doi": "10.1371/journal.pone.0213978"}},
    {"ingest_type": "pdf", "base_url": "https://doi.org/10.7717/peerj.4375",
     "link_source": "doi", "link_source_id": "10.7717/peerj.4375",
     "ext_ids": {"doi": "10.7717/peerj.4375"}},
    {"ingest_type": "pdf", "base_url": "https://doi.org/10.7554/elife.44753",
     "link_source": "doi", "link_source_id": "10.7554/elife.44753",
     "ext_ids": {"doi": "10.7554/elife.44753"}},
    {"ingest_type": "html", "base_url": "https://doi.org/10.5210/fm.v25i10.10274",
     "link_source": "doi", "link_source_id": "10.5210/fm.v25i10.10274",
     "ext_ids": {"doi": "10.5210/fm.v25i10.10274"}},
    {"ingest_type": "html", "base_url": "https://doi.org/10.1045/may2017-vanhyning",
     "link_source": "doi", "link_source_id": "10.1045/may2017-vanhyning",
     "ext_ids": {"doi": "10.1045/may2017-vanhyning"}},
    {"ingest_type": "xml", "base_url": SCIELO_XML, "link_source": "scielo",
     "link_source_id": "S1683-98032015000200002",
     "ext_ids": {"doi": "10.18004/ped.2015.agosto.102-107"}},
    {"ingest_type": "pdf", "base_url": "https://doi.org/10.5210/fm.v25i10.10274",
     "link_source": "doi", "link_source_id": "10.5210/fm.v25i10.10274",
     "ext_ids": {"doi": "10.5210/fm.v25i10.10274"}},
)

#: the status each demo request ends with on a first run
EXPECTED = ("success",) * 6 + ("no-pdf-link",)


def _key(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return parts.netloc.lower(), target


class DemoSite(LoopbackHTTPServer):
    """The demo pages on one loopback HTTP server, answered by Host and path."""

    def __init__(self, data_dir: Path | str, pages: tuple[DemoPage, ...] = PAGES) -> None:
        super().__init__()
        self.data_dir = Path(data_dir)
        missing = [p.file for p in pages if p.file and not (self.data_dir / p.file).is_file()]
        if missing:
            raise FileNotFoundError(f"the demo's pages are not in {self.data_dir}: "
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
                    body = (site.data_dir / page.file).read_bytes()
                    self._send(200, body, page.content_type)

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
