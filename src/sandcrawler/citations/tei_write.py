"""Biblios written as TEI ``biblStruct`` elements, in the layout GROBID writes
and ``grobid_tei_xml`` (and ``citations.tei``) read back: a resolved
references file (``match.document``) and the extraction cascade's TEI
(``docparse.tei``) are both built from these.

A biblio is ``GrobidBiblio.to_dict()``'s shape (the one the rest of the system
reads), with ``unstructured`` kept as ``note type="raw_reference"``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from typing import Any

TEI_NS = "http://www.tei-c.org/ns/1.0"
XML_ID = "{http://www.w3.org/XML/1998/namespace}id"
#: characters XML 1.0 cannot hold (ElementTree would write them, and the file
#: would not parse)
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def tei_text(value: Any) -> str | None:
    """One line of text XML can hold, or None for nothing."""
    if value is None:
        return None
    text = _NOT_XML.sub("\ufffd", " ".join(str(value).split()))
    return text or None


def sub(parent: ET.Element, tag: str, text: Any = None, **attrs: str) -> ET.Element:
    # plain tag names, the namespace declared on the root: ElementTree's
    # default_namespace refuses unqualified attributes, which TEI's all are
    el = ET.SubElement(parent, tag, attrs)
    if (value := tei_text(text)) is not None:
        el.text = value
    return el


def tei_root() -> ET.Element:
    return ET.Element("TEI", {"xmlns": TEI_NS})


def write_authors(parent: ET.Element, authors: Any) -> None:
    """``author`` elements: the name (forename, middle, surname, or the whole
    name when it was not split), email, and the affiliation with its address."""
    for a in authors if isinstance(authors, list) else ():
        if isinstance(a, str):
            a = {"full_name": a}
        if not isinstance(a, Mapping):
            continue
        author = sub(parent, "author")
        pers = sub(author, "persName")
        given, middle = tei_text(a.get("given_name")), tei_text(a.get("middle_name"))
        surname = tei_text(a.get("surname"))
        if given:
            sub(pers, "forename", given, type="first")
        if middle:
            sub(pers, "forename", middle, type="middle")
        if surname:
            sub(pers, "surname", surname)
        if not given and not surname:
            pers.text = tei_text(a.get("full_name"))
        if a.get("email"):
            sub(author, "email", a["email"])
        if isinstance(aff := a.get("affiliation"), Mapping):
            _affiliation(author, aff)


def _affiliation(author: ET.Element, aff: Mapping[str, Any]) -> None:
    el = sub(author, "affiliation")
    for kind in ("department", "laboratory", "institution"):
        if aff.get(kind):
            sub(el, "orgName", aff[kind], type=kind)
    address = aff.get("address")
    if isinstance(address, Mapping) and any(address.values()):
        addr = sub(el, "address")
        for key, tag in (("addr_line", "addrLine"), ("post_code", "postCode"),
                         ("settlement", "settlement"), ("country", "country")):
            if address.get(key):
                sub(addr, tag, address[key])


def bibl_struct(index: int, ref: Mapping[str, Any], *, own_doi: bool = True) -> ET.Element:
    """A biblio's ``biblStruct`` (``xml:id`` ``b<index>``). ``own_doi=False``
    leaves out the biblio's DOI, for a writer that states which DOI it found."""
    struct = ET.Element("biblStruct", {XML_ID: f"b{index}"})
    if (key := tei_text(ref.get("id") or ref.get("key"))) is not None:
        struct.set("n", key)
    container = ref.get("journal") or ref.get("book_title")
    title = ref.get("title")
    if title and container:
        analytic = sub(struct, "analytic")
        sub(analytic, "title", title, level="a", type="main")
        write_authors(analytic, ref.get("authors"))
        monogr = sub(struct, "monogr")
        level = "j" if ref.get("journal") else "m"
        sub(monogr, "title", container, level=level)
    else:
        monogr = sub(struct, "monogr")
        if title:
            sub(monogr, "title", title, level="m")
        elif container:
            # no title of its own ("Graff, Expert Opin Ther Targets (2002) 6(1)"):
            # the container is the monograph's title, so the journal is not lost
            sub(monogr, "title", container, level="j" if ref.get("journal") else "m")
        write_authors(monogr, ref.get("authors"))
    if ref.get("journal_abbrev"):
        sub(monogr, "title", ref["journal_abbrev"], level="j", type="abbrev")
    imprint = sub(monogr, "imprint")
    if ref.get("publisher"):
        sub(imprint, "publisher", ref["publisher"])
    for unit in ("volume", "issue"):
        if ref.get(unit):
            sub(imprint, "biblScope", ref[unit], unit=unit)
    first, last = ref.get("first_page"), ref.get("last_page")
    if first:
        scope = {"from": tei_text(first) or ""}
        if last:
            scope["to"] = tei_text(last) or ""
        sub(imprint, "biblScope", unit="page", **scope)
    elif ref.get("pages"):
        sub(imprint, "biblScope", ref["pages"], unit="page")
    if date := tei_text(ref.get("date")):
        sub(imprint, "date", date, type="published", when=date)
    if own_doi and ref.get("doi"):
        sub(struct, "idno", ref["doi"], type="DOI")
    for kind, name in (("PMID", "pmid"), ("PMCID", "pmcid"), ("arXiv", "arxiv_id")):
        if ref.get(name):
            sub(struct, "idno", ref[name], type=kind)
    if ref.get("url"):
        sub(struct, "ptr", target=tei_text(ref["url"]) or "")
    if ref.get("unstructured"):
        sub(struct, "note", ref["unstructured"], type="raw_reference")
    return struct
