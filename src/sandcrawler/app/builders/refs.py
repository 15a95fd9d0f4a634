"""Builders of the Crossref reference workers."""

from __future__ import annotations

from sandcrawler.app.services import Services
from sandcrawler.refs.worker import (
    ParseCrossrefRefsWorker,
    PersistCrossrefWorker,
    PersistGrobidRefsWorker,
)
from sandcrawler.work import Worker


def parse_crossref_refs(services: Services, parser: str | None = None) -> Worker:
    return ParseCrossrefRefsWorker(services.citation_parser(parser))


def persist_crossref(services: Services, parse_refs: bool = False,
                     parser: str | None = None) -> Worker:
    return PersistCrossrefWorker(services.citation_parser(parser) if parse_refs else None)


def persist_grobid_refs(_services: Services) -> Worker:
    return PersistGrobidRefsWorker()

