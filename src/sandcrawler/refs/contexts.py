"""What a full-text TEI says of its body (GROBID's, or the embedded cascade's in
GROBID's shape): its sections with their paragraphs, and each reference's
citation contexts, the sentences (or, without ``<s>``, the paragraphs) whose
``<ref type="bibr" target="#bN">`` points at it. The document page shows both.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from sandcrawler.core.safexml import parse_xml

#: safexml strips namespaces from element names (attributes keep theirs)
_NS = ""
_XML_ID = "{http://www.w3.org/XML/1998/namespace}id"
#: a context longer than this is cut around its callout
MAX_CONTEXT = 400
#: paragraphs kept per section (a page shows an outline, not the whole text)
MAX_PARAGRAPHS = 200


@dataclass(frozen=True, slots=True)
class TeiSection:
    head: str | None
    number: str | None
    paragraphs: list[str]


@dataclass(slots=True)
class TeiBody:
    sections: list[TeiSection] = field(default_factory=list)
    #: the reference's place in ``listBibl`` -> the contexts citing it, in order
    contexts: dict[int, list[str]] = field(default_factory=dict)
    #: callouts of references, and how many point at a reference of the list
    callouts: int = 0
    linked: int = 0


def read_body(tei: bytes | str) -> TeiBody:
    """The body of a full-text TEI; raises ``CorruptData`` (``safexml``) when
    it is not XML."""
    root = parse_xml(tei, "TEI")
    out = TeiBody()
    # numbered as grobid_tei_xml numbers the references: listBibl's order
    ids = {s.get(_XML_ID): i for i, s in
           enumerate(root.iterfind(f".//{_NS}listBibl/{_NS}biblStruct")) if s.get(_XML_ID)}
    body = root.find(f".//{_NS}text/{_NS}body")
    if body is None:
        return out
    for div in body.iter(f"{_NS}div"):
        head = div.find(f"{_NS}head")
        paragraphs = [_text(p) for p in div.findall(f"{_NS}p")]
        out.sections.append(TeiSection(_text(head) if head is not None else None,
                                       head.get("n") if head is not None else None,
                                       [p for p in paragraphs if p][:MAX_PARAGRAPHS]))
    for p in body.iter(f"{_NS}p"):
        units = p.findall(f"{_NS}s") or [p]
        for unit in units:
            for ref in unit.iter(f"{_NS}ref"):
                if ref.get("type") != "bibr":
                    continue
                out.callouts += 1
                index = ids.get((ref.get("target") or "").lstrip("#"))
                if index is None:
                    continue
                out.linked += 1
                context = _context(_text(unit), _text(ref))
                found = out.contexts.setdefault(index, [])
                if context not in found:
                    found.append(context)
    return out


def _text(el: ET.Element) -> str:
    return re.sub(r"\s+", " ", "".join(el.itertext())).strip()


def _context(text: str, callout: str) -> str:
    if len(text) <= MAX_CONTEXT:
        return text
    at = max(0, text.find(callout))
    start = max(0, at - MAX_CONTEXT // 2)
    piece = text[start:start + MAX_CONTEXT]
    return ("…" if start else "") + piece + ("…" if start + MAX_CONTEXT < len(text) else "")
