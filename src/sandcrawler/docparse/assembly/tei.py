"""An extraction as TEI, laid out as GROBID lays out its full-text TEI, so that
everything reading GROBID's (``grobid_tei_xml.parse_document_xml``,
``ingest.references.refs_from_tei``) reads this too: the header's
``biblStruct`` in ``sourceDesc``, the title also in ``titleStmt``, keywords
and abstract in ``profileDesc``, the references in ``back``'s ``listBibl``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from datetime import UTC, datetime

from sandcrawler.citations.tei_write import bibl_struct, sub, tei_root
from sandcrawler.docparse.assembly.sentences import sentence_spans
from sandcrawler.records.extraction import Extraction
from sandcrawler.records.fulltext import Body, Box, Callout, Figure, Formula, Paragraph
from sandcrawler.version import __version__

#: elements inside running text, whose tails are text
_INLINE = frozenset({"ref", "s", "label"})


@dataclass(frozen=True, slots=True)
class TeiOptions:
    """GROBID's TEI options (its service's form parameters of the same meaning):
    ``coordinates`` names the elements that get a ``coords`` attribute
    (``teiCoordinates``: persName, figure, ref, biblStruct, formula, head, s,
    p, note, title, affiliation); ``segment_sentences`` puts each paragraph's
    sentences in ``<s>``; ``raw_citations`` and ``raw_affiliations`` keep the
    strings as read (``note type="raw_reference"``, ``note
    type="raw_affiliation"``); ``generate_ids`` gives elements ``xml:id``s;
    ``header_only`` writes no body and no back matter (processHeaderDocument)."""

    coordinates: frozenset[str] = frozenset()
    segment_sentences: bool = False
    raw_citations: bool = False
    raw_affiliations: bool = False
    generate_ids: bool = False
    header_only: bool = False


def extraction_tei(extraction: Extraction, options: TeiOptions = TeiOptions()) -> bytes:
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
    if options.header_only:
        return _serialise(tei)
    text = sub(tei, "text")
    body = sub(text, "body")
    if extraction.body is not None:
        write_body(body, extraction.body, options)
    listbibl = sub(sub(sub(text, "back"), "div", type="references"), "listBibl")
    for i, ref in enumerate(extraction.references_json()):
        if not options.raw_citations:
            ref.pop("unstructured", None)
        listbibl.append(bibl_struct(i, ref))
    return _serialise(tei)


def _serialise(tei: ET.Element) -> bytes:
    ET.indent(tei)
    # indenting puts line breaks into mixed content (a paragraph's text after
    # its last callout); no text of ours holds a line break, so those go
    for el in tei.iter():
        if el.tail is not None and "\n" in el.tail and not el.tail.strip() \
                and el.tag in _INLINE:
            el.tail = None
    out: bytes = ET.tostring(tei, encoding="utf-8", xml_declaration=True)
    return out


def coords(boxes: list[Box]) -> str:
    """GROBID's ``coords``: ``page,x,y,w,h`` per box, ``;`` between."""
    return ";".join(",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in box)
                    for box in boxes)


def write_body(parent: ET.Element, body: Body, options: TeiOptions) -> None:
    """GROBID's body: footnotes, a ``div`` per section (``head n``, ``p``,
    ``formula``), then the figures and tables."""
    want = options.coordinates
    for n, note in enumerate(body.footnotes):
        el = sub(parent, "note", place="foot", n=str(n + 1))
        _runs(el, note.text, note.callouts, 0, len(note.text))
    for section in body.sections:
        div = sub(parent, "div")
        if section.head:
            head = sub(div, "head", section.head)
            if section.number:
                head.set("n", section.number)
            if "head" in want and section.boxes:
                head.set("coords", coords(section.boxes))
        for block in section.blocks:
            if isinstance(block, Formula):
                _formula(div, block, want)
            else:
                _paragraph(div, block, options)
    for figure in body.figures:
        _figure(parent, figure, want)


def _paragraph(div: ET.Element, para: Paragraph, options: TeiOptions) -> None:
    p = sub(div, "p")
    if "p" in options.coordinates and para.boxes:
        p.set("coords", coords(para.boxes))
    if not options.segment_sentences:
        _runs(p, para.text, para.callouts, 0, len(para.text), options.coordinates)
        return
    for start, end in sentence_spans(para.text, [(c.start, c.end) for c in para.callouts]):
        s = sub(p, "s")
        if "s" in options.coordinates:
            boxes = [b for b, (a, z) in zip(para.boxes, para.box_spans, strict=False)
                     if a < end and z > start]
            if boxes:
                s.set("coords", coords(boxes))
        _runs(s, para.text, para.callouts, start, end, options.coordinates)


def _runs(parent: ET.Element, text: str, callouts: list[Callout], start: int, end: int,
          want: frozenset[str] = frozenset()) -> None:
    """``text[start:end]`` into ``parent``, each callout in it as a ``ref``."""
    at = start
    last: ET.Element | None = None
    for c in callouts:
        if c.start < at or c.end > end:
            continue
        _append_text(parent, last, text[at:c.start])
        ref = sub(parent, "ref", type=str(c.kind))
        ref.text = text[c.start:c.end]
        if c.target:
            ref.set("target", f"#{c.target}")
        if "ref" in want and c.boxes:
            ref.set("coords", coords(c.boxes))
        last, at = ref, c.end
    _append_text(parent, last, text[at:end])


def _append_text(parent: ET.Element, last: ET.Element | None, value: str) -> None:
    if not value:
        return
    if last is None:
        parent.text = (parent.text or "") + value
    else:
        last.tail = (last.tail or "") + value


def _formula(div: ET.Element, formula: Formula, want: frozenset[str]) -> None:
    el = sub(div, "formula", formula.text)
    el.set("{http://www.w3.org/XML/1998/namespace}id", formula.id)
    if "formula" in want and formula.boxes:
        el.set("coords", coords(formula.boxes))
    if formula.label:
        sub(el, "label", formula.label)


def _figure(parent: ET.Element, figure: Figure, want: frozenset[str]) -> None:
    attrs = {"type": "table"} if figure.kind == "table" else {}
    el = sub(parent, "figure", **attrs)
    el.set("{http://www.w3.org/XML/1998/namespace}id", figure.id)
    if "figure" in want and figure.boxes:
        el.set("coords", coords(figure.boxes))
    sub(el, "head", figure.head)
    sub(el, "label", figure.label)
    sub(el, "figDesc", figure.description)
    if figure.kind == "table" and figure.rows:
        table = sub(el, "table")
        for row in figure.rows:
            r = sub(table, "row")
            for cell in row:
                sub(r, "cell", cell)
    if figure.note:
        sub(el, "note", figure.note)
