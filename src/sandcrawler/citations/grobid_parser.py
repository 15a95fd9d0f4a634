"""The ``grobid`` citation parser: reference strings sent in batches to a GROBID
server's ``processCitationList`` and its TEI read back into biblios, for
deployments that run GROBID beside us."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from grobid_tei_xml import GrobidBiblio

from sandcrawler.citations.base import check_alignment
from sandcrawler.citations.tei import parse_citation_list
from sandcrawler.config import GrobidSettings
from sandcrawler.core.errors import CitationParseError, GrobidRecordError, GrobidUnavailable
from sandcrawler.grobid.client import GrobidClient
from sandcrawler.records.statuses import ParserStatus


class GrobidCitationParser:
    """Splits long lists into requests of at most ``max_citations`` and keeps
    ``concurrency`` requests in flight across all the lists of a batch."""

    def __init__(self, client: GrobidClient, *, max_citations: int = 500, concurrency: int = 4):
        self.client = client
        self.max_citations = max_citations
        self.concurrency = concurrency
        self._pool = ThreadPoolExecutor(concurrency, thread_name_prefix="grobid")

    def close(self) -> None:
        # The client belongs to whoever made it (the composition root shares one).
        self._pool.shutdown(wait=True)

    def check(self) -> None:
        if not self.client.isalive():
            raise GrobidUnavailable(f"GROBID at {self.client.base_url} is not reachable (isalive)")

    def parse_chunk(self, citations: Sequence[str]) -> list[GrobidBiblio]:
        tei = self.client.process_citation_list(list(citations))
        if tei is None:  # 204: GROBID found no structure in any of them
            return [GrobidBiblio(authors=[], unstructured=c) for c in citations]
        try:
            biblios = parse_citation_list(tei)
        except ET.ParseError as e:
            raise GrobidRecordError(
                f"GROBID returned XML that does not parse: {e}", status=ParserStatus.GROBID_BAD_XML
            ) from e
        check_alignment(citations, biblios, "GROBID")
        for i, (biblio, sent) in enumerate(zip(biblios, citations, strict=True)):
            # GROBID numbers its answers b0, b1, ... in input order; any other id
            # means we cannot trust the order either.
            if biblio.id is not None and biblio.id != f"b{i}":
                raise CitationParseError(
                    f"GROBID answer {i} has id {biblio.id!r}, expected 'b{i}'",
                    status=ParserStatus.REF_COUNT_MISMATCH,
                )
            if not biblio.unstructured:
                biblio.unstructured = sent
        return biblios

    def parse_lists(
        self, lists: Sequence[Sequence[str]]
    ) -> list[list[GrobidBiblio] | CitationParseError]:
        step = self.max_citations
        tasks = [
            (n, self._pool.submit(self.parse_chunk, strings[i : i + step]))
            for n, strings in enumerate(lists)
            for i in range(0, len(strings), step)
        ]
        results: list[list[GrobidBiblio] | CitationParseError] = [[] for _ in lists]
        first_infra: BaseException | None = None
        for n, fut in tasks:
            try:
                chunk = fut.result()
            except CitationParseError as e:
                results[n] = e
                continue
            except Exception as e:  # infrastructure: remember, but drain the other futures
                first_infra = first_infra or e
                continue
            current = results[n]
            if not isinstance(current, CitationParseError):
                current.extend(chunk)
        if first_infra is not None:
            raise first_infra
        return results


def build(grobid: GrobidSettings, grobid_client: GrobidClient) -> GrobidCitationParser:
    """The registry's builder: requests of ``grobid.max_citations``, ``grobid.concurrency``
    in flight, on the composition root's client."""
    return GrobidCitationParser(grobid_client, max_citations=grobid.max_citations,
                                concurrency=grobid.concurrency)
