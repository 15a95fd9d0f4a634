"""Parsing untrusted XML (JATS from publishers, GROBID TEI of crawled PDFs), safely.

``defusedxml`` over the standard library's expat parser: a DOCTYPE is allowed
but its DTD never read, any ``<!ENTITY>`` is refused, HTML's named entities are
resolved, the input is bounded (``max_bytes``) and nesting is at most
``MAX_DEPTH``. Every failure is a ``RecordError`` (``bad-xml`` or ``too-large``),
never a parser exception. Element names lose their namespaces, attributes keep
theirs (docs/architecture.md, "Untrusted XML").
"""

from __future__ import annotations

import html.entities
import xml.etree.ElementTree as ET
from xml.parsers import expat

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import DefusedXMLParser

from sandcrawler.core.errors import RecordError
from sandcrawler.core.textfix import readable
from sandcrawler.records.statuses import ProcessingStatus

#: larger XML is not parsed: the biggest PMC articles are a few MB
MAX_XML_BYTES = 64 * 2**20
#: deeper nesting is refused (libxml2's default limit, far under Python's recursion limit)
MAX_DEPTH = 256
XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
_ENTITIES = {name: chr(code) for name, code in html.entities.name2codepoint.items()}


def parse_xml(data: bytes | str, what: str = "XML",
              max_bytes: int = MAX_XML_BYTES) -> ET.Element:
    """The root element of ``data`` with namespaces stripped from element names."""
    if len(data) > max_bytes:
        raise RecordError(f"{what} is {len(data)} bytes, over the {max_bytes}-byte limit",
                          status=ProcessingStatus.TOO_LARGE)
    parser = DefusedXMLParser(target=_DepthLimited(what), forbid_dtd=False,
                              forbid_entities=True, forbid_external=True)
    parser.entity.update(_ENTITIES)
    try:
        parser.feed(data)
        root = parser.close()
    except DefusedXmlException as e:
        raise RecordError(f"{what} refused: {type(e).__name__}: {e}",
                          status=ProcessingStatus.BAD_XML) from None
    except (ET.ParseError, expat.ExpatError, ValueError, LookupError) as e:
        # LookupError: an encoding declaration naming no codec Python knows
        raise RecordError(f"{what} is not well-formed: {e}",
                          status=ProcessingStatus.BAD_XML) from None
    for el in root.iter():
        if isinstance(el.tag, str) and el.tag.startswith("{"):
            el.tag = el.tag.rpartition("}")[2]
    return root


class _DepthLimited(ET.TreeBuilder):
    """ElementTree's tree builder, refusing elements nested deeper than ``MAX_DEPTH``."""

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what
        self.depth = 0

    def start(self, tag: str, attrs: dict[str, str]) -> ET.Element:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            # raised through expat's callback and the parser as it is
            raise RecordError(f"{self.what} is nested deeper than {MAX_DEPTH} elements",
                              status=ProcessingStatus.BAD_XML)
        return super().start(tag, attrs)

    def end(self, tag: str) -> ET.Element:
        self.depth -= 1
        return super().end(tag)


def text_of(el: ET.Element | None, sep: str = "") -> str | None:
    """The element's text (descendants included), whitespace collapsed; None if empty."""
    if el is None:
        return None
    if sep:  # pieces apart: element-citation's fields have no text between them
        joined = sep.join(t.strip() for t in el.itertext() if t.strip())
    else:
        joined = "".join(el.itertext())
    # readable: XML declared ISO-8859-1 that holds cp1252 (SciELO's ``Azote\x92y``)
    return readable(" ".join(joined.split())) or None
