"""Builder of the citation worker (apart from the Crossref ones: `citations parse`
needs neither their reference selection nor its text cleaning)."""

from __future__ import annotations

from sandcrawler.app.services import Services
from sandcrawler.citations.worker import ParseCitationsWorker
from sandcrawler.core.work import Worker


def parse_citations(services: Services, parser: str | None = None) -> Worker:
    return ParseCitationsWorker(services.citation_parser(parser))
