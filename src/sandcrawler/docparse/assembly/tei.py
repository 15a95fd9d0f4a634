"""An extraction as TEI, laid out as GROBID lays out its full-text TEI, so that
everything reading GROBID's (``grobid_tei_xml.parse_document_xml``,
``ingest.references.refs_from_tei``) reads this too: the header's
``biblStruct`` in ``sourceDesc``, the title also in ``titleStmt``, keywords
and abstract in ``profileDesc``, the references in ``back``'s ``listBibl``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime

from sandcrawler.citations.tei_write import bibl_struct, sub, tei_root
from sandcrawler.records.extraction import Extraction
from sandcrawler.version import __version__


def extraction_tei(extraction: Extraction) -> bytes:
    tei = tei_root()
    header = sub(tei, "teiHeader")
    desc = sub(header, "fileDesc")
    biblio = extraction.header_json()
    sub(sub(desc, "titleStmt"), "title", biblio.get("title"), level="a", type="main")
    sub(sub(desc, "publicationStmt"), "publisher", biblio.get("publisher"))
    source = sub(desc, "sourceDesc")
    struct = bibl_struct(0, biblio)
    del struct.attrib["{http://www.w3.org/XML/1998/namespace}id"]
    source.append(struct)
    encoding = sub(header, "encodingDesc")
    # grobid_tei_xml reads the application's version and "when" as GROBID's
    when = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    app = sub(sub(encoding, "appInfo"), "application", version=__version__,
              ident="sandcrawler-extract", when=when)
    sub(app, "desc", "the embedded extraction cascade (docs/extraction.md)")
    profile = sub(header, "profileDesc")
    if extraction.keywords:
        keywords = sub(sub(profile, "textClass"), "keywords")
        for term in extraction.keywords:
            sub(keywords, "term", term)
    if extraction.abstract:
        sub(sub(sub(profile, "abstract"), "div"), "p", extraction.abstract)
    text = sub(tei, "text")
    sub(text, "body")
    listbibl = sub(sub(sub(text, "back"), "div", type="references"), "listBibl")
    for i, ref in enumerate(extraction.references_json()):
        listbibl.append(bibl_struct(i, ref))
    ET.indent(tei)
    out: bytes = ET.tostring(tei, encoding="utf-8", xml_declaration=True)
    return out
