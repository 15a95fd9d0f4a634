"""Builders of the matching workers."""

from __future__ import annotations

from sandcrawler.app.services import Services
from sandcrawler.match.worker import MatchBiblioWorker
from sandcrawler.work import Worker


def match_biblio(services: Services) -> Worker:
    return MatchBiblioWorker(services.matcher)
