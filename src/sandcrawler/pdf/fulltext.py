"""GROBID full text (``processFulltextDocument``) into the ``grobid0`` family.

Quality, from what the TEI contains (docs/pdf.md):

    good      a title, at least one author, and an abstract or at least 500
              characters of body text, and at least one reference
    marginal  a title or an author, but not all of the above
    bad       neither a title nor an author (GROBID found no header), or no TEI
"""

from __future__ import annotations

from typing import Any

import grobid_tei_xml

from sandcrawler.config import GrobidSettings
from sandcrawler.errors import GrobidRecordError
from sandcrawler.grobid_client import GrobidClient
from sandcrawler.models.statuses import FulltextStatus

MIN_BODY_CHARS = 500


def fulltext_options(grobid: GrobidSettings) -> list[tuple[str, str]]:
    """The form fields sent with every ``processFulltextDocument`` request."""
    options = [
        ("consolidateHeader", str(grobid.consolidate_header)),
        ("includeRawCitations", "1" if grobid.include_raw_citations else "0"),
        ("includeRawAffiliations", "1" if grobid.include_raw_affiliations else "0"),
        ("segmentSentences", "1" if grobid.segment_sentences else "0"),
    ]
    options += [("teiCoordinates", name.strip())
                for name in grobid.tei_coordinates.split(",") if name.strip()]
    return options


def quality(doc: Any) -> str:
    header = doc.header
    has_title, has_author = bool(header.title), bool(header.authors)
    if not (has_title or has_author):
        return "bad"
    has_text = bool(doc.abstract) or len(doc.body or "") >= MIN_BODY_CHARS
    if has_title and has_author and has_text and doc.citations:
        return "good"
    return "marginal"


def not_run(reason: str) -> dict[str, Any]:
    """The grobid0 cells of a file GROBID was not asked about."""
    return {"status": {"status": FulltextStatus.NOT_RUN, "reason": reason}}


def grobid_fulltext(client: GrobidClient, pdf: bytes,
                    options: list[tuple[str, str]]) -> tuple[dict[str, Any], str | None]:
    """(grobid0 cells, TEI or None) for one PDF; GROBID's record-level failures are
    recorded in the cells rather than raised."""
    try:
        code, tei = client.process_fulltext(pdf, options=options)
    except GrobidRecordError as e:
        return {"status": {"status": e.status, "error": str(e)}, "quality": "bad"}, None
    if tei is None:
        return ({"status_code": code, "status": {"status": FulltextStatus.EMPTY},
                 "quality": "bad"}, None)
    try:
        doc = grobid_tei_xml.parse_document_xml(tei)
    except Exception as e:  # grobid_tei_xml raises various parser errors
        return {"status_code": code,
                "status": {"status": FulltextStatus.BAD_TEI, "error": str(e)[:500]},
                "tei_xml": tei, "quality": "bad"}, tei
    header = doc.header
    tei_json = doc.to_dict()
    metadata = {
        "title": " ".join(header.title.split()) if header.title else None,
        "authors": tei_json.get("header", {}).get("authors", []),
        "date": header.date,
        "doi": header.doi,
        "abstract": doc.abstract,
        "references": len(doc.citations or []),
        "language": doc.language_code,
        "grobid_version": doc.grobid_version,
    }
    cells = {
        "status_code": code,
        "status": {"status": FulltextStatus.SUCCESS, "grobid_version": doc.grobid_version},
        "tei_xml": tei,
        "tei_json": tei_json,
        "metadata": metadata,
        "quality": quality(doc),
    }
    return cells, tei
