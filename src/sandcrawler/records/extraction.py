"""What the embedded extraction cascade made of one PDF (``sandcrawler extract``,
the PDF table's ``extract0`` family; docs/extraction.md).

The header and the references are ``GrobidBiblio`` records, the shape the rest
of the system reads GROBID's results in (``to_dict()``); the abstract and the
keywords sit beside the header, as in GROBID's TEI.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from grobid_tei_xml.types import GrobidBiblio

from sandcrawler.records.fulltext import Body
from sandcrawler.records.statuses import ExtractStatus, LayoutStatus, SandboxStatus

#: the statuses of an extraction that gives a header and references
USABLE = frozenset({ExtractStatus.SUCCESS, ExtractStatus.PARTIAL})


@dataclass(frozen=True, slots=True)
class ExtractRequest:
    """What to read of a PDF: GROBID's ``start``/``end`` (1-based, inclusive;
    ``None`` for the document's own ends), whether to read the body
    (``full``) and the references; ``header_only`` reads the header alone
    from the first ``header_pages`` pages (GROBID's processHeaderDocument
    reads two)."""

    full: bool = False
    references: bool = True
    first_page: int | None = None
    last_page: int | None = None
    header_only: bool = False
    header_pages: int = 2


@dataclass(slots=True)
class Extraction:
    status: ExtractStatus | LayoutStatus | SandboxStatus
    error: str | None = None
    header: GrobidBiblio | None = None
    abstract: str | None = None
    keywords: list[str] = field(default_factory=list)
    references: list[GrobidBiblio] = field(default_factory=list)
    #: the body (sections, figures, callouts), when the full text was asked for
    body: Body | None = None
    #: pages in the file, and pages read (fewer when over the page limit)
    pages: int | None = None
    pages_read: int | None = None
    #: the layout reader that gave the tokens: "pdfalto" or "pdfium"
    reader: str | None = None
    #: the models' versions (name -> the SHA-256 prefix of the model file)
    models: dict[str, str] = field(default_factory=dict)
    seconds: float | None = None

    def header_json(self) -> dict[str, Any]:
        if self.header is None:
            return {}
        out = self.header.to_dict()
        if self.keywords:
            out["keywords"] = list(self.keywords)
        return out

    def references_json(self) -> list[dict[str, Any]]:
        return [ref.to_dict() for ref in self.references]

    def info(self) -> dict[str, Any]:
        """How the extraction ran (``extract0:xinfo``)."""
        return {k: v for k, v in (("pages", self.pages), ("pages_read", self.pages_read),
                                  ("reader", self.reader), ("models", self.models or None),
                                  ("seconds", self.seconds), ("error", self.error))
                if v is not None}

    def to_json(self, path: str | None = None) -> dict[str, Any]:
        """The ``sandcrawler extract`` line."""
        out: dict[str, Any] = {} if path is None else {"path": path}
        out |= {"status": str(self.status), "header": self.header_json(),
                "abstract": self.abstract, "references": self.references_json()}
        if self.body is not None:
            out["body"] = self.body.to_json()
        out |= self.info()
        return out
