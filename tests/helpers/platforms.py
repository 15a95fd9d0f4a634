"""What the platform tests (``test_platform_*.py``) share: the loopback platform
server with every recorded answer, one platform's helper asked over real HTTP to
it, whole ingests routed to it, and invented JSON answers added to it.

The server itself is the ``srv`` fixture of ``tests/fileset/conftest.py``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sandcrawler.app.settings import load_settings, platform_sections
from sandcrawler.config import CoreSettings
from sandcrawler.core.errors import RecordError
from sandcrawler.fileset.ingest import IngestOutcome
from sandcrawler.fileset.platforms import platform_helpers
from sandcrawler.fileset.platforms.base import LandingPage, PlatformHelper
from sandcrawler.records.fileset import FilesetPlatformItem, IngestRequest
from sandcrawler.web.http.fetch import HttpFetcher
from sandcrawler_testkit.platforms import PlatformServer
from tests.helpers.fileset import open_ingester


def routed_settings(srv: PlatformServer, **overrides: Any) -> CoreSettings:
    """Settings whose HTTP goes to ``srv``, with a short fetch timeout."""
    return load_settings(http_routes=srv.routes(), fetch_timeout=2, **overrides)


def _matching(settings: CoreSettings, page: LandingPage,
              fetcher: HttpFetcher) -> list[PlatformHelper[Any]]:
    request = IngestRequest(ingest_type="dataset", base_url=page.url)
    return [h for h in platform_helpers(platform_sections(settings), fetcher, settings.fileset)
            if h.match_request(request, page, None)]


def matching(srv: PlatformServer, page: LandingPage, fetcher: HttpFetcher,
             **overrides: Any) -> list[PlatformHelper[Any]]:
    """Every helper that takes ``page`` (asked for as a dataset), in registry order."""
    return _matching(routed_settings(srv, **overrides), page, fetcher)


def process_page(srv: PlatformServer, page: LandingPage, platform: str,
                 **overrides: Any) -> FilesetPlatformItem:
    """The item of the one helper that takes ``page``, which must be ``platform``'s."""
    settings = routed_settings(srv, **overrides)
    fetcher = HttpFetcher(timeout=settings.http.timeout, routes=settings.http.routes, retries=0)
    try:
        (helper,) = _matching(settings, page, fetcher)
        assert helper.name == platform
        return helper.process_request(IngestRequest(ingest_type="dataset", base_url=page.url),
                                      page, None)
    finally:
        fetcher.close()


def process(srv: PlatformServer, url: str, platform: str,
            **overrides: Any) -> FilesetPlatformItem:
    """``platform``'s item for ``url`` (the page as the request and its only URL)."""
    return process_page(srv, LandingPage(url=url, terminal_url=url), platform, **overrides)


def status(srv: PlatformServer, url: str, platform: str, **overrides: Any) -> str:
    """The record status ``process`` fails with."""
    with pytest.raises(RecordError) as caught:
        process(srv, url, platform, **overrides)
    return caught.value.status


def ingest(srv: PlatformServer, url: str, **overrides: Any) -> IngestOutcome:
    """A whole dataset ingest of ``url``, on its own services, routed to ``srv``."""
    ingester = open_ingester(routed_settings(srv, **overrides))
    try:
        return ingester.ingest(IngestRequest(ingest_type="dataset", base_url=url))
    finally:
        ingester.close()


def ingest_result(srv: PlatformServer, url: str, **overrides: Any) -> dict[str, Any]:
    """The JSON of ``ingest``'s fileset result."""
    return ingest(srv, url, **overrides).result.to_json()


def page_json(srv: PlatformServer, host: str, path: str, obj: object, status: int = 200,
              content_type: str = "application/json") -> None:
    """An invented answer: ``obj`` as the JSON body of ``host``'s ``path``."""
    srv.add_page(host, path, json.dumps(obj).encode(), status=status, content_type=content_type)


def paths(srv: PlatformServer) -> list[str]:
    """The paths ``srv`` was asked for, in order."""
    return [p for _, _, p in srv.requests]
