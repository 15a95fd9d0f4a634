"""Builders of the matching workers, and the sink of resolved references."""

from __future__ import annotations

from sandcrawler.app.services import Services
from sandcrawler.core.work import Worker
from sandcrawler.match.resolve_worker import MatchRefsWorker, write_citations
from sandcrawler.match.worker import MatchBiblioWorker
from sandcrawler.pipeline.db_sink import DatabaseSink


def match_biblio(services: Services) -> Worker:
    return MatchBiblioWorker(services.matcher)


def match_refs(services: Services) -> Worker:
    return MatchRefsWorker(services.matcher)


def citation_sink(services: Services) -> DatabaseSink:
    """The database sink of ``match-refs``: its writer also deletes the positions
    past a work's list (``write_citations``); the schema is checked at the first
    write, so a worker waits out a database that is down when it starts."""
    return DatabaseSink(services.raw_engine, write_citations, prepare=services.check_schema)
