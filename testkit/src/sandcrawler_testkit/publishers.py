"""A loopback web of made-up publisher sites, for the crawler's odd cases: the
``SiteServer`` addressed by absolute URLs, HTML pages by default.

    web.add("https://a.example/article/1", page("<html>..."))
    web.add("https://a.example/old", redirect("/article/1"))
    settings: http_routes=web.routes()

Unknown URLs answer 404; ``requests`` and ``headers_seen`` record what came.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from sandcrawler_testkit.sites import Answer, SiteServer

__all__ = ["Answer", "WebSite", "page", "redirect"]

HTML = "text/html; charset=utf-8"


def page(html: str | bytes, status: int = 200, **kwargs: Any) -> Answer:
    body = html.encode("utf-8") if isinstance(html, str) else html
    return Answer(status, body, **{"content_type": HTML, **kwargs})


def redirect(location: str, status: int = 302) -> Answer:
    return Answer(status, b"", {"Location": location}, content_type=HTML)


class WebSite(SiteServer):
    def __init__(self) -> None:
        super().__init__()
        self._origins: set[str] = set()

    def add(self, url: str, answer: Answer) -> str:
        """Answer ``url`` (absolute, as the crawler sees it) with ``answer``."""
        parts = urlsplit(url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self.answer(parts.hostname or "", target, answer)
        self._origins.update(f"{scheme}://{parts.netloc.lower()}" for scheme in ("http", "https"))
        return url

    def _begin(self, host: str, target: str, headers: dict[str, str]) -> Any:
        seen, answer = super()._begin(host, target, headers)
        if (host, target) not in self._answers and (host, seen.path) not in self._answers \
                and seen.path != "/robots.txt":
            answer = Answer(404, b"<html><body>Not Found</body></html>", content_type=HTML)
        return seen, answer

    def origins(self) -> list[str]:
        return sorted(self._origins)

    def routes(self, *hosts: str, scheme: str = "https") -> dict[str, str]:
        """Every added origin sent here (or, as ``SiteServer``, the given hosts)."""
        if hosts:
            return super().routes(*hosts, scheme=scheme)
        return dict.fromkeys(self._origins, self.url)

    @property
    def requests(self) -> list[str]:
        return [s.host + s.target for s in self.seen()]

    @property
    def headers_seen(self) -> list[dict[str, str]]:
        return [s.headers for s in self.seen()]
