"""Builders of file ingest's processors, one per ingest type (``PROCESSORS`` in
``app.services``)."""

from __future__ import annotations

from sandcrawler.app.services import Services
from sandcrawler.ingest.found import Processor
from sandcrawler.ingest.html_fulltext import HtmlProcessor
from sandcrawler.ingest.jats import JatsProcessor
from sandcrawler.ingest.pdf import PdfIngestProcessor
from sandcrawler.refs.reading import RefsWriter


def pdf(services: Services) -> Processor:
    return PdfIngestProcessor(services.pdf_processor(), RefsWriter(services.engine))


def xml(services: Services) -> Processor:
    return JatsProcessor(services.catalogue, RefsWriter(services.engine),
                         documents=services.document_matcher())


def html(services: Services) -> Processor:
    return HtmlProcessor(services.catalogue, services.pdftable, RefsWriter(services.engine),
                         documents=services.document_matcher())
