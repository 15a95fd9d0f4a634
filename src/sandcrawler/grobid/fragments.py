"""The TEI of GROBID's answers other than a document's: a citation's
``biblStruct``, GROBID's envelope around a list of them (processCitationList,
processReferences), ``persName`` elements (the name services), affiliations
and a date, each in the shape GROBID's service writes it (its
``GrobidRestProcessString``). Documents are ``docparse.assembly.tei``'s."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Any

from grobid_tei_xml.types import GrobidBiblio

from sandcrawler.citations.tei_write import TEI_NS, XML_ID, bibl_struct, sub, tei_text
from sandcrawler.docparse.assembly.affiliations import Affiliation
from sandcrawler.docparse.assembly.names import PersonName
from sandcrawler.grobid.dates import Date
from sandcrawler.records.refs import biblio_to_dict


def _bytes(el: ET.Element) -> bytes:
    out: bytes = ET.tostring(el, encoding="utf-8", xml_declaration=False)
    return out


def biblio_dict(biblio: GrobidBiblio, *, raw: bool) -> dict[str, Any]:
    """The biblio as ``bibl_struct`` reads it, with its string as read only when
    asked for (``includeRawCitations``)."""
    out = dict(biblio_to_dict(biblio))
    if not raw:
        out.pop("unstructured", None)
    return out


def biblio_struct(index: int, biblio: GrobidBiblio, *, raw: bool) -> ET.Element:
    return bibl_struct(index, biblio_dict(biblio, raw=raw))


def citation_tei(biblio: GrobidBiblio, *, raw: bool) -> bytes:
    """processCitation: one ``biblStruct``, without an ``xml:id`` (GROBID's ``-1``)."""
    struct = biblio_struct(0, biblio, raw=raw)
    del struct.attrib[XML_ID]
    struct.set("xmlns", TEI_NS)
    ET.indent(struct)
    return _bytes(struct) + b"\n"


def citation_list_tei(biblios: Sequence[GrobidBiblio], *, raw: bool) -> bytes:
    """processCitationList and processReferences: GROBID's TEI envelope (an empty
    header, the ``biblStruct``s in ``back``'s ``listBibl``, ``b0``, ``b1``, ...)."""
    tei = ET.Element("TEI", {"xmlns": TEI_NS, "xmlns:xlink": "http://www.w3.org/1999/xlink",
                             "xmlns:mml": "http://www.w3.org/1998/Math/MathML"})
    sub(tei, "teiHeader")
    text = sub(tei, "text")
    sub(text, "front")
    sub(text, "body")
    listbibl = sub(sub(sub(text, "back"), "div"), "listBibl")
    for i, biblio in enumerate(biblios):
        listbibl.append(biblio_struct(i, biblio, raw=raw))
    ET.indent(tei)
    return _bytes(tei) + b"\n"


def person_element(person: PersonName) -> ET.Element:
    """GROBID's ``Person.toTEI``: role name, first and middle forenames, surname,
    generational name."""
    pers = ET.Element("persName", {"xmlns": TEI_NS})
    if person.title:
        sub(pers, "roleName", person.title)
    if person.given_name:
        sub(pers, "forename", person.given_name, type="first")
    if person.middle_name:
        sub(pers, "forename", person.middle_name, type="middle")
    if person.surname:
        sub(pers, "surname", person.surname)
    if person.suffix:
        sub(pers, "genName", person.suffix)
    return pers


def persons_tei(persons: Sequence[PersonName]) -> bytes:
    """The name services: one ``persName`` per person, one after the other (no
    root element, as GROBID answers)."""
    out = []
    for person in persons:
        if person.given_name or person.middle_name or person.surname:
            el = person_element(person)
            ET.indent(el)
            out.append(_bytes(el))
    return b"\n".join(out) + (b"\n" if out else b"")


def affiliation_element(aff: Affiliation) -> ET.Element:
    """GROBID's ``Affiliation.toTEI``: departments, laboratories and institutions
    (keyed ``dep1``, ``lab1``, ``instit1``, ... when there are several), then the
    address."""
    el = ET.Element("affiliation")
    for kind, names, key in (("department", aff.departments, "dep"),
                             ("laboratory", aff.laboratories, "lab"),
                             ("institution", aff.institutions, "instit")):
        for i, name in enumerate(names, start=1):
            attrs = {"type": kind} if len(names) == 1 else {"type": kind, "key": f"{key}{i}"}
            sub(el, "orgName", name, **attrs)
    a = aff.address
    parts = [("addrLine", a.addr_line), ("postBox", a.post_box), ("postCode", a.post_code),
             ("settlement", a.settlement), ("region", a.region), ("country", a.country)]
    if any(tei_text(v) for _, v in parts):
        address = sub(el, "address")
        for tag, value in parts:
            if tei_text(value):
                sub(address, tag, value)
    return el


def affiliations_tei(affiliations: Sequence[Affiliation]) -> bytes:
    """processAffiliations: one ``affiliation``, or several inside ``<xml>`` (GROBID's
    wrapper for a list)."""
    elements = [affiliation_element(a) for a in affiliations]
    if not elements:
        return b""
    if len(elements) == 1:
        root = elements[0]
    else:
        root = ET.Element("xml")
        root.extend(elements)
    ET.indent(root)
    return _bytes(root) + b"\n"


def date_tei(date: Date) -> bytes:
    """processDate: ``<date when="2001-09-16"/>`` (ISO 8601, as precise as the date)."""
    return _bytes(ET.Element("date", {"when": date.iso()})) + b"\n"
