"""Services owns what it builds (issue 24, item 5): what it caches it closes, use
after close raises, ``for_process`` closes (or, in a forked child, abandons) what
it replaces, and sinks never dispose what they did not build."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from sandcrawler.app.services import _BUILT, Services, ServicesClosedError
from sandcrawler.app.settings import load_settings
from sandcrawler.citations.crf.parser import CrfCitationParser
from sandcrawler.citations.grobid_parser import GrobidCitationParser

#: every way to use the services: each raises once they are closed
USES: dict[str, Callable[[Services], Any]] = {
    **{name: (lambda s, n=name: getattr(s, n)) for name in sorted(_BUILT)},
    "engine": lambda s: s.engine,
    "pdftable_name": lambda s: s.pdftable_name,
    "check_schema": lambda s: s.check_schema(),
    "require_grobid": lambda s: s.require_grobid(),
    "database_sink": lambda s: s.database_sink(),
    "file_locator": lambda s: s.file_locator(),
    "pdf_processor": lambda s: s.pdf_processor(),
    "extractor": lambda s: s.extractor(),
    "document_matcher": lambda s: s.document_matcher(),
    "match_index_writer": lambda s: s.match_index_writer(),
    "match_index_reader": lambda s: s.match_index_reader(),
    "sync_match_index": lambda s: s.sync_match_index(),
    "citation_parser": lambda s: s.citation_parser("crf"),
    "check_citation_parser": lambda s: s.check_citation_parser("crf"),
    "platform_helpers": lambda s: s.platform_helpers(),
    "fileset_ingester": lambda s: s.fileset_ingester(),
    "file_ingester": lambda s: s.file_ingester(),
    "topic": lambda s: s.topic("pdf-files"),
    "consumer_config": lambda s: s.consumer_config("group"),
    "producer_config": lambda s: s.producer_config(),
}
#: what is not a service: the lifecycle itself
LIFECYCLE = {"settings", "closed", "close", "abandon", "for_process"}


@pytest.fixture(autouse=True)
def no_process_services() -> Iterator[None]:
    """Each test starts and ends without this process's services."""
    yield
    if Services._current is not None:
        Services._current.close()


def test_every_service_is_in_the_table() -> None:
    public = {name for name in dir(Services) if not name.startswith("_")}
    assert public - LIFECYCLE == set(USES)


@pytest.mark.parametrize("use", sorted(USES))
def test_use_after_close_raises(use: str) -> None:
    services = Services(load_settings(grobid_url="http://127.0.0.1:9", kafka_brokers="x:9092"))
    services.close()
    with pytest.raises(ServicesClosedError, match="these services are closed"):
        USES[use](services)


def test_a_service_built_before_close_is_not_rebuilt_after() -> None:
    """No quiet reconnect: the engine a closed Services disposed stays disposed."""
    services = Services(load_settings())
    engine = services.engine
    services.close()
    with pytest.raises(ServicesClosedError):
        _ = services.engine
    assert "raw_engine" not in vars(services)
    assert engine is not None


def test_close_disposes_the_engine_it_built() -> None:
    services = Services(load_settings())
    engine = services.engine
    with engine.connect() as conn:
        conn.exec_driver_sql("select 1")
    pool = engine.pool
    assert pool.checkedin() == 1
    services.close()
    assert engine.pool is not pool  # disposed: its pool replaced, its connections closed
    assert pool.checkedin() == 0


def test_close_closes_every_owned_service_once_most_recent_first() -> None:
    services = Services(load_settings())
    closed: list[str] = []

    def failing() -> None:
        closed.append("second")
        raise OSError("second failed")

    services._owned("first", lambda: closed.append("first"))
    services._owned("second", failing)
    services._owned("third", lambda: closed.append("third"))
    with pytest.raises(OSError, match="second failed"):
        services.close()
    assert closed == ["third", "second", "first"]
    services.close()  # twice is harmless, and closes nothing again
    assert closed == ["third", "second", "first"]
    assert services.closed


def test_the_database_sink_does_not_dispose_the_services_engine() -> None:
    with Services(load_settings()) as services:
        engine = services.engine
        pool = engine.pool
        sink = services.database_sink()
        assert sink.write([]) == []
        sink.close()
        assert engine.pool is pool
        with services.engine.connect() as conn:  # still the services' own, still usable
            assert conn.exec_driver_sql("select 1").scalar() == 1
    assert engine.pool is not pool  # its owner disposed it


def test_for_process_keeps_one_per_settings_and_closes_what_it_replaces() -> None:
    first = load_settings(env="first")
    services = Services.for_process(first)
    assert Services.for_process(first) is services
    engine = services.engine
    pool = engine.pool
    other = Services.for_process(load_settings(env="second"))
    assert other is not services
    assert services.closed and not other.closed
    assert engine.pool is not pool  # the replaced services' engine was disposed
    assert Services.for_process(load_settings(env="second")) is other


def test_for_process_replaces_closed_services() -> None:
    settings = load_settings()
    services = Services.for_process(settings)
    services.close()
    fresh = Services.for_process(settings)
    assert fresh is not services and not fresh.closed


@pytest.mark.postgres
def test_a_forked_child_abandons_the_parents_services(pg_url: str) -> None:
    """In a child, the parent's pooled connection is forgotten, not closed: the
    parent's session goes on (closing it would have sent PostgreSQL a Terminate on
    the socket both processes share)."""
    settings = load_settings(database_url=pg_url)
    parent = Services.for_process(settings)
    with parent.raw_engine.connect() as conn:
        session = conn.exec_driver_sql("select pg_backend_pid()").scalar()
    child = os.fork()
    if child == 0:  # pragma: no cover (the child's verdict is its exit status)
        code = 1
        try:
            fresh = Services.for_process(settings)
            code = 0 if parent.closed and fresh is not parent and not fresh.closed else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert not parent.closed
    with parent.raw_engine.connect() as conn:
        assert conn.exec_driver_sql("select pg_backend_pid()").scalar() == session


def test_a_parser_builder_gets_only_what_it_names() -> None:
    """The CRF parser's builder asks for the citation section: the GROBID client is
    not built for it; GROBID's asks for the client, and gets the services' own."""
    with Services(load_settings(grobid_url="http://127.0.0.1:9")) as services:
        crf = services.citation_parser("crf")
        assert isinstance(crf, CrfCitationParser)
        assert "grobid" not in vars(services)
        grobid = services.citation_parser("grobid")
        assert isinstance(grobid, GrobidCitationParser)
        assert grobid.client is services.grobid
        assert grobid.max_citations == services.settings.grobid.max_citations
        grobid.close()
        crf.close()


def test_a_file_locator_does_not_close_the_services_fetcher() -> None:
    with Services(load_settings()) as services:
        fetcher = services.fetcher
        closed: list[str] = []
        real_close = fetcher.close
        fetcher.close = lambda: closed.append("fetcher")  # type: ignore[method-assign]
        services.file_locator().close()
        assert closed == []  # the locator was handed it: its owner closes it
        fetcher.close = real_close  # type: ignore[method-assign]


def test_a_file_locator_closes_a_fetcher_it_made() -> None:
    from sandcrawler.web.file_records import FileLocator

    locator = FileLocator()
    closed: list[str] = []
    locator.fetcher.close = lambda: closed.append("fetcher")  # type: ignore[method-assign]
    locator.close()
    assert closed == ["fetcher"]
