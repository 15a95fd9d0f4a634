"""Ingest requests made from identifiers: a DOI list through a DOI resolver."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import quote

import orjson

from sandcrawler.core.errors import RecordError
from sandcrawler.core.identifiers import normalize_doi
from sandcrawler.ingest.worker import parse_request
from sandcrawler.records.ingest import IngestRequest
from sandcrawler.records.statuses import IngestFileStatus
from sandcrawler.web.http.hosts import host_of
from sandcrawler.web.http.urls import request_url


def doi_request(doi: str, *, ingest_type: str = "pdf", resolver: str = "https://doi.org/",
                source: str = "sandcrawler-cli") -> IngestRequest:
    """The request for one DOI (normalised; RecordError when it is not one)."""
    doi = normalize_doi(doi)
    # a DOI may hold any printable character: '#', '?', '%' must not end its path
    base_url = resolver.rstrip("/") + "/" + quote(doi, safe="/:;()[]<>,.-_+~=@!$&'*")
    return IngestRequest(ingest_type=ingest_type, base_url=base_url, link_source="doi",
                         link_source_id=doi, ingest_request_source=source,
                         ext_ids={"doi": doi})


def argument_request(text: str, *, source: str, **fields: Any) -> IngestRequest:
    """The request one argument names (``ingest file``'s): a DOI (``10.…``,
    ``doi:10.…``, a doi.org URL) is the request ``doi_request`` makes, anything
    else must be an http(s) URL; ``fields`` (None: not given) complete it.
    RecordError when it is neither, or the request does not validate."""
    text = text.strip()
    given = {k: v for k, v in fields.items() if v is not None}
    if _names_a_doi(text):
        made = doi_request(text, ingest_type=given.pop("ingest_type", "pdf"), source=source)
        # through JSON like any request: ``given`` may name fields the model keeps as extras
        raw = {**made.to_json(), **given}
    elif (url := request_url(text)) is None:
        raise RecordError("not an http(s) URL or a DOI", status=IngestFileStatus.BAD_REQUEST)
    else:
        # the URL as typed; one with bytes that are not UTF-8 (decoded with
        # surrogateescape) as it will be sent, %FF, since JSON cannot hold it
        raw = {"base_url": text if _is_utf8(text) else url, **given}
    return parse_request(orjson.dumps(raw))


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _names_a_doi(text: str) -> bool:
    return (text.lower().startswith(("10.", "doi:"))
            or host_of(text) in ("doi.org", "dx.doi.org"))


def doi_requests(lines: Iterable[bytes], **options: str
                 ) -> Iterator[tuple[int, IngestRequest | str]]:
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
