"""What the crawler may fetch: the blocklist first (no request at all), then
robots.txt. ``CrawlPolicy.check(url)`` raises a ``RecordError`` whose status
ends the record (``skip-url-blocklist``, ``robots-disallowed``, or
``fetch-error`` when the host does not answer even for its robots.txt); the crawler
calls it for the base URL, every redirect hop (``HttpFetcher.open(check=...)``)
and every link it follows."""

from __future__ import annotations

from sandcrawler.core.errors import RecordError
from sandcrawler.records.statuses import IngestFileStatus
from sandcrawler.web.archive.captures import WarcSession
from sandcrawler.web.blocklist import UrlBlocklist
from sandcrawler.web.robots import RobotsRules


class CrawlPolicy:
    def __init__(self, blocklist: UrlBlocklist, robots: RobotsRules | None = None) -> None:
        """``robots``: None when robots.txt is not consulted (``crawl.robots`` false)."""
        self.blocklist = blocklist
        self.robots = robots

    def check_listed(self, url: str) -> None:
        """The blocklist alone: what is never crawled, not even from the archive
        (a capture replayed needs no robots.txt: nothing is fetched)."""
        why = self.blocklist.reason(url)
        if why is not None:
            raise RecordError(f"{url} is not fetched: {why}",
                              status=IngestFileStatus.SKIP_URL_BLOCKLIST)

    def check(self, url: str, session: WarcSession | None = None) -> None:
        """Return when ``url`` may be fetched; RecordError with the status that
        says why not. A robots.txt fetched to decide is archived in ``session``
        (the crawl's WARC file), if given."""
        self.check_listed(url)
        if self.robots is not None:
            refusal = self.robots.refusal(url, session)
            if refusal is not None:
                raise RecordError(f"{url} is not fetched: {refusal.reason}",
                                  status=refusal.status)
