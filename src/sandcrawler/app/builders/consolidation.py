"""Consolidation against the catalog (the match index over a ``crossref``
table that holds works), for every command that offers it: ``grobid-serve``'s
consolidateHeader / consolidateCitations and ``extract --consolidate``."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from sqlalchemy import select

from sandcrawler.app.services import Services
from sandcrawler.core.errors import InfrastructureError
from sandcrawler.db.schema import crossref
from sandcrawler.match.consolidate import Consolidator
from sandcrawler.match.index import IndexMissing

log = logging.getLogger(__name__)


def consolidator(services: Services) -> Consolidator | None:
    """Consolidation on our catalog; None (consolidation answered as 0) when the
    crossref table holds no work, the match index is missing or empty, or the
    database cannot be reached now (said in the log)."""
    try:
        with services.engine.connect() as conn:
            if conn.execute(select(crossref.c.doi).limit(1)).first() is None:
                return None
        matcher = services.matcher
        if matcher.catalog_empty():
            return None
    except IndexMissing:
        return None
    except InfrastructureError as e:
        log.warning("no consolidation (the catalog cannot be read: %s)", e)
        return None
    reader = services.reader

    def work(doi: str) -> Mapping[str, Any] | None:
        row = reader.crossref_with_refs(doi)
        return None if row is None else row["record"]

    return Consolidator(matcher, work)
