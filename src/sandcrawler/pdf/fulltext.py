"""GROBID full text (``processFulltextDocument``) into the ``grobid0`` family.

Quality, from what the TEI contains (docs/pdf.md):

    good      a title, at least one author, and an abstract or at least 500
              characters of body text, and at least one reference
    marginal  a title or an author, but not all of the above
    bad       neither a title nor an author (GROBID found no header), or no TEI
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import grobid_tei_xml

from sandcrawler.config import GrobidSettings
from sandcrawler.core.errors import GrobidRecordError
from sandcrawler.grobid.client import GrobidClient
from sandcrawler.records.statuses import FulltextStatus, ParserStatus

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


Quality = Literal["good", "marginal", "bad"]


def quality(doc: Any) -> Quality:
    header = doc.header
    has_title, has_author = bool(header.title), bool(header.authors)
    if not (has_title or has_author):
        return "bad"
    has_text = bool(doc.abstract) or len(doc.body or "") >= MIN_BODY_CHARS
    if has_title and has_author and has_text and doc.citations:
        return "good"
    return "marginal"


#: why GROBID gave no usable document: its own statuses, or a request that failed
FulltextOutcome = FulltextStatus | ParserStatus


@dataclass(frozen=True, slots=True)
class Fulltext:
    """What GROBID made of one PDF. ``cells()`` is the ``grobid0`` family (the
    PDF table's JSON); processing reads the status, quality and header here."""

    status: FulltextOutcome
    #: what went wrong (GROBID's answer, our limit); ``reason``: why it was not asked
    error: str | None = None
    reason: str | None = None
    status_code: int | None = None
    grobid_version: str | None = None
    tei: str | None = None
    #: grobid_tei_xml's ``to_dict()`` of the document: its JSON, stored as it is
    tei_json: dict[str, Any] | None = None
    metadata: FulltextHeader | None = None
    quality: Quality | None = None
    #: who made the TEI: "grobid", or "sandcrawler" (the embedded cascade's full
    #: text, stored in the same family when no GROBID server is configured)
    engine: str = "grobid"

    def cells(self) -> dict[str, Any]:
        """The ``grobid0`` cells: only those a step that ran gave (docs/pdf.md)."""
        status: dict[str, Any] = {"status": self.status}
        if self.reason is not None:
            status["reason"] = self.reason
        if self.error is not None:
            status["error"] = self.error
        if self.status == FulltextStatus.SUCCESS:  # said even when the TEI does not
            status["grobid_version"] = self.grobid_version
        if self.engine != "grobid":
            status["engine"] = self.engine
        cells: dict[str, Any] = {}
        if self.status_code is not None:
            cells["status_code"] = self.status_code
        cells["status"] = status
        if self.tei is not None:
            cells["tei_xml"] = self.tei
        if self.tei_json is not None:
            cells["tei_json"] = self.tei_json
        if self.metadata is not None:
            cells["metadata"] = self.metadata.cell()
        if self.quality is not None:
            cells["quality"] = self.quality
        return cells


@dataclass(frozen=True, slots=True)
class FulltextHeader:
    """The ``grobid0:metadata`` cell: GROBID's header of the document."""

    title: str | None
    #: the header's authors as grobid_tei_xml's ``to_dict()`` has them (JSON)
    authors: list[dict[str, Any]]
    date: str | None
    doi: str | None
    abstract: str | None
    references: int
    language: str | None
    grobid_version: str | None

    def cell(self) -> dict[str, Any]:
        return {"title": self.title, "authors": self.authors, "date": self.date,
                "doi": self.doi, "abstract": self.abstract, "references": self.references,
                "language": self.language, "grobid_version": self.grobid_version}


def not_run(reason: str) -> Fulltext:
    """A file GROBID was not asked about."""
    return Fulltext(FulltextStatus.NOT_RUN, reason=reason)


def grobid_fulltext(client: GrobidClient, pdf: bytes,
                    options: list[tuple[str, str]]) -> Fulltext:
    """GROBID's full text of one PDF; its record-level failures are a status in the
    result rather than raised."""
    try:
        code, tei = client.process_fulltext(pdf, options=options)
    except GrobidRecordError as e:
        return Fulltext(e.status, error=str(e), quality="bad")
    if tei is None:
        return Fulltext(FulltextStatus.EMPTY, status_code=code, quality="bad")
    return fulltext_from_tei(tei, code)


def cascade_fulltext(tei: bytes) -> Fulltext:
    """The embedded cascade's full-text TEI (``docparse.assembly.tei``) as the
    ``grobid0`` family stores GROBID's: the same TEI, JSON and metadata, with
    ``engine`` saying whose it is and no HTTP status."""
    return fulltext_from_tei(tei.decode("utf-8"), None, engine="sandcrawler")


def fulltext_from_tei(tei: str, code: int | None, engine: str = "grobid") -> Fulltext:
    try:
        doc = grobid_tei_xml.parse_document_xml(tei)
    except Exception as e:  # grobid_tei_xml raises various parser errors
        return Fulltext(FulltextStatus.BAD_TEI, error=str(e)[:500], status_code=code,
                        tei=tei, quality="bad", engine=engine)
    header = doc.header
    tei_json = doc.to_dict()
    metadata = FulltextHeader(
        title=" ".join(header.title.split()) if header.title else None,
        authors=tei_json.get("header", {}).get("authors", []),
        date=header.date,
        doi=header.doi,
        abstract=doc.abstract,
        references=len(doc.citations or []),
        language=doc.language_code,
        grobid_version=doc.grobid_version,
    )
    return Fulltext(FulltextStatus.SUCCESS, status_code=code, grobid_version=doc.grobid_version,
                    tei=tei, tei_json=tei_json, metadata=metadata, quality=quality(doc),
                    engine=engine)
