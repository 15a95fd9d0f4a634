"""Ingest requests made from identifiers: a DOI list through a DOI resolver."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import quote

from sandcrawler.errors import RecordError
from sandcrawler.identifiers import normalize_doi
from sandcrawler.models.ingest import IngestRequest


def doi_request(doi: str, *, ingest_type: str = "pdf", resolver: str = "https://doi.org/",
                source: str = "sandcrawler-cli") -> dict[str, Any]:
    """The request for one DOI (normalised; RecordError when it is not one)."""
    doi = normalize_doi(doi)
    # a DOI may hold any printable character: '#', '?', '%' must not end its path
    base_url = resolver.rstrip("/") + "/" + quote(doi, safe="/:;()[]<>,.-_+~=@!$&'*")
    request = IngestRequest(ingest_type=ingest_type, base_url=base_url, link_source="doi",
                            link_source_id=doi, ingest_request_source=source,
                            ext_ids={"doi": doi})
    return request.to_json()


def doi_requests(lines: Iterable[bytes], **options: str
                 ) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """(line number, request) for each DOI line, (line number, why not) for a
    line that is not a DOI; blank lines and ``#`` comments are skipped."""
    for number, raw in enumerate(lines, 1):
        text = raw.decode("utf-8", errors="replace").strip()
        if not text or text.startswith("#"):
            continue
        try:
            yield number, doi_request(text, **options)
        except RecordError as e:
            yield number, str(e)
