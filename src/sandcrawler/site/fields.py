"""A document's metadata and its PDF-table row as labelled fields for people.

Pages show the metadata file and the PDF table's families as labelled fields
(nested values as nested fields), never as JSON text; the raw JSON stays one
link away.

    metadata dict ─▶ metadata_view() ─▶ MetadataView(fields, sources, conflicts, other)
    PDF-table row  ─▶ pdftable_view() ─▶ [FamilyView(name, title, fields)]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from sandcrawler.core.textfix import readable
from sandcrawler.site import formats

#: longest text shown in a field (full texts, TEI, abstracts); the JSON has it all
LONG = 2000
#: nested values deeper than this are summarised
DEPTH = 4


@dataclass(frozen=True, slots=True)
class Field:
    """One labelled value. ``kind``: ``text``; ``long`` (wrapped, clipped text);
    ``mono`` (hashes, paths); ``group`` (``children`` are its fields); ``list``
    (``items``); with ``href`` the value is a link."""

    label: str
    text: str = ""
    kind: str = "text"
    href: str | None = None
    items: tuple[str, ...] = ()
    children: tuple[Field, ...] = ()


@dataclass(frozen=True, slots=True)
class Conflict:
    """A value a lower-ranked source gave that disagrees with the one kept."""

    source: str
    label: str
    value: str


@dataclass(frozen=True, slots=True)
class MetadataView:
    fields: list[Field]
    #: (field label, where its value came from), in the order of ``fields``
    sources: list[tuple[str, str]]
    conflicts: list[Conflict]
    #: the best source that has written to the document
    source: str | None
    #: what the crawl that found the file says (base, landing and terminal URL)
    crawl: list[Field] = field(default_factory=list)
    #: fields no label is known for, shown under their own names
    other: list[Field] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class FamilyView:
    name: str
    title: str
    fields: list[Field]


SOURCE_NAMES = {"user": "given by a user", "crossref": "Crossref", "jats": "the JATS XML",
                "request": "the ingest request", "landing_page": "the landing page",
                "grobid": "GROBID", "html": "the HTML text (trafilatura)",
                "pdf": "the PDF's own metadata"}


def source_name(source: Any) -> str:
    return SOURCE_NAMES.get(str(source), str(source))


# --- metadata ------------------------------------------------------------------------------

def _text(label: str, value: Any) -> Field | None:
    text = formats.first_text(value)
    return Field(label, text) if text else None


def _joined(label: str, value: Any) -> Field | None:
    values = value if isinstance(value, list) else [value]
    texts = [t for v in values if (t := formats.first_text(v))]
    return Field(label, ", ".join(texts)) if texts else None


def _people(label: str, value: Any) -> Field | None:
    people = formats.names(value)
    return Field(label, ", ".join(people), kind="list", items=tuple(people)) if people else None


def _date(label: str, value: Any) -> Field | None:
    text = formats.csl_date(value)
    return Field(label, text) if text else None


def _long(label: str, value: Any) -> Field | None:
    text = formats.first_text(value)
    return Field(label, _clip(text), kind="long") if text else None


def _link(label: str, value: Any) -> Field | None:
    text = formats.first_text(value)
    if not text:
        return None
    return Field(label, text, href=text if text.startswith(("http://", "https://")) else None)


def _doi(label: str, value: Any) -> Field | None:
    text = formats.first_text(value)
    return Field(label, text, href=f"/search?{urlencode({'q': text})}") if text else None


#: CSL (and biblio-glutton) field -> label and how it reads, in display order
_KNOWN: tuple[tuple[str, str, Callable[[str, Any], Field | None]], ...] = (
    ("title", "title", _text),
    ("subtitle", "subtitle", _joined),
    ("original-title", "original title", _text),
    ("author", "authors", _people),
    ("editor", "editors", _people),
    ("pdf_author", "author in the PDF", _text),
    ("container-title", "journal", _text),
    ("short-container-title", "journal (short)", _text),
    ("publisher", "publisher", _text),
    ("issued", "published", _date),
    ("published-print", "published in print", _date),
    ("published-online", "published online", _date),
    ("volume", "volume", _text),
    ("issue", "issue", _text),
    ("page", "pages", _text),
    ("article-number", "article number", _text),
    ("type", "type", _text),
    ("language", "language", _text),
    ("DOI", "DOI", _doi),
    ("doi", "DOI", _doi),
    ("pmid", "PMID", _text),
    ("PMID", "PMID", _text),
    ("pmcid", "PMCID", _text),
    ("PMCID", "PMCID", _text),
    ("arxiv_id", "arXiv", _text),
    ("arxiv", "arXiv", _text),
    ("ISSN", "ISSN", _joined),
    ("ISBN", "ISBN", _joined),
    ("publisher_id", "publisher's id", _text),
    ("URL", "URL", _link),
    ("license", "licence", _joined),
    ("keywords", "keywords", _joined),
    ("subject", "subjects", _joined),
    ("abstract", "abstract", _long),
)
#: keys shown elsewhere on the page (identifiers, the PDF table, references) or by
#: their meaning (``field_sources``, ``conflicts``, ``ingest``)
_ELSEWHERE = frozenset({"id", "sha1", "pdf", "raw_references", "metadata_source",
                        "field_sources", "conflicts", "ingest"})
_LABELS = {key: label for key, label, _ in _KNOWN}


def label_of(key: str) -> str:
    return _LABELS.get(key, key.replace("_", " ").replace("-", " "))


def metadata_view(meta: Mapping[str, Any], *, with_pdf: bool = True) -> MetadataView:
    """``meta`` as fields; with ``with_pdf`` False the embedded PDF extraction is
    shown too (there is no PDF-table row to show it)."""
    fields: list[Field] = []
    for key, label, make in _KNOWN:
        f = make(label, meta[key]) if key in meta else None
        if f is not None and not any(x.label == f.label for x in fields):  # DOI, doi: one
            fields.append(f)
    sources_of = meta.get("field_sources")
    sources_of = sources_of if isinstance(sources_of, Mapping) else {}
    sources = [(label_of(str(k)), source_name(v)) for k, v in sources_of.items()]
    conflicts: list[Conflict] = []
    raw_conflicts = meta.get("conflicts")
    if isinstance(raw_conflicts, Mapping):
        for source, said in raw_conflicts.items():
            if not isinstance(said, Mapping):
                continue
            for key, value in said.items():
                shown = _value_text(key, value)
                if shown:
                    conflicts.append(Conflict(source_name(source), label_of(str(key)), shown))
    crawl: list[Field] = []
    ingest = meta.get("ingest")
    if isinstance(ingest, Mapping):
        crawl = [f for f in (
            _link("requested URL", ingest.get("base_url")),
            _link("landing page", ingest.get("landing_url")),
            _link("full text URL", ingest.get("terminal_url")),
            _text("captured", formats.when(ingest.get("terminal_dt"))),
        ) if f is not None]
    skip = _ELSEWHERE - ({"pdf"} if not with_pdf else set())
    other = [value_field(label_of(k), v) for k, v in meta.items()
             if k not in _LABELS and k not in skip]
    source = meta.get("metadata_source")
    return MetadataView(fields, sources, conflicts,
                        source_name(source) if isinstance(source, str) else None,
                        crawl, [f for f in other if f.text or f.children or f.items])


def _value_text(key: str, value: Any) -> str:
    if key in ("author", "editor"):
        return ", ".join(formats.names(value))
    if key in ("issued", "published-print", "published-online"):
        return formats.csl_date(value) or ""
    return _flat(value)


def _flat(value: Any) -> str:
    """Any JSON value as one line of text (lists joined, objects as ``key: value``)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return readable(value)
    if isinstance(value, int | float):
        return f"{value:,}" if isinstance(value, int) and abs(value) >= 10000 else str(value)
    if isinstance(value, list):
        return ", ".join(t for v in value if (t := _flat(v)))
    if isinstance(value, Mapping):
        if "date-parts" in value:
            return formats.csl_date(value) or ""
        name = formats.person_name(value) if {"given", "family", "name", "literal"} & set(
            value) else None
        if name:
            return name
        return "; ".join(f"{label_of(str(k))}: {t}" for k, v in value.items()
                         if (t := _flat(v)))
    return str(value)


def value_field(label: str, value: Any, depth: int = 0) -> Field:
    """Any JSON value as a field: an object becomes a group of fields, a list of
    scalars one line, long text a clipped block."""
    if isinstance(value, Mapping) and depth < DEPTH and "date-parts" not in value:
        return Field(label, kind="group", children=tuple(
            value_field(label_of(str(k)), v, depth + 1) for k, v in value.items()
            if v not in (None, "", [], {})))
    if (isinstance(value, list) and depth < DEPTH and value
            and all(isinstance(v, Mapping) for v in value)
            and not all({"given", "family", "name", "literal"} & set(v) for v in value)):
        return Field(label, kind="group", children=tuple(
            value_field(str(i), v, depth + 1) for i, v in enumerate(value, 1)))
    text = _flat(value)
    if len(text) > 200 or "\n" in text:
        return Field(label, _clip(text), kind="long")
    return Field(label, text)


def _clip(text: str, limit: int = LONG) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text):,} characters)"


# --- the PDF table ---------------------------------------------------------------------------

_FAMILY_TITLES = {"f": "crawler de-duplication record", "file": "the file",
                  "pdf0": "PDF extraction (PDFium)", "grobid0": "GROBID",
                  "match0": "identification against the catalogue"}
_COLUMN_LABELS = {
    ("f", "c"): "de-duplication record",
    ("file", "size"): "size", ("file", "mime"): "MIME type", ("file", "cdx"): "captured",
    ("pdf0", "pdf_status"): "status", ("pdf0", "pdf_meta"): "PDF metadata",
    ("pdf0", "text"): "text",
    ("grobid0", "status_code"): "HTTP status", ("grobid0", "quality"): "quality",
    ("grobid0", "status"): "status", ("grobid0", "tei_xml"): "TEI XML",
    ("grobid0", "tei_json"): "full text", ("grobid0", "metadata"): "header and citations",
    ("match0", "mstatus"): "match", ("match0", "doi"): "DOI", ("match0", "minfo"): "details",
}
#: keys of the PDF-extraction record and the de-dupe cell, as people read them
_KEY_LABELS = {"page_count": "pages", "page0_width": "page 1 width (points)",
               "page0_height": "page 1 height (points)", "pdf_version": "PDF version",
               "info": "information dictionary", "xmp": "XMP", "permanent_id": "permanent id",
               "update_id": "update id", "word_count": "words", "u": "URL", "d": "date",
               "f": "WARC file", "o": "WARC offset", "c": "copies", "i": "WARC record id",
               "dt": "date", "warc": "WARC file", "offset": "WARC offset",
               "c_size": "WARC record length", "surt": "SURT", "url": "URL"}


def _capture_href(cell: Mapping[str, Any]) -> str | None:
    warc, offset = cell.get("warc") or cell.get("f"), cell.get("offset") or cell.get("o")
    if not warc or offset is None:
        return None
    return "/capture?" + urlencode({"warc": warc, "offset": offset})


def _cell_field(family: str, qualifier: str, value: Any) -> Field:
    label = _COLUMN_LABELS.get((family, qualifier), qualifier.replace("_", " "))
    if (family, qualifier) == ("file", "size"):
        return Field(label, formats.size(value))
    if (family, qualifier) in (("file", "cdx"), ("f", "c")) and isinstance(value, Mapping):
        children = []
        for k, v in value.items():
            k_label = _KEY_LABELS.get(str(k), str(k))
            if k in ("dt", "d"):
                children.append(Field(k_label, formats.when(v)))
            elif k in ("url", "u"):
                children.append(Field(k_label, str(v), href=str(v)))
            else:
                children.append(Field(k_label, str(v), kind="mono"))
        return Field(label, kind="group", href=_capture_href(value), children=tuple(children))
    if qualifier in ("text", "tei_xml"):
        return Field(label, _clip(value if isinstance(value, str) else _flat(value)),
                     kind="long")
    if isinstance(value, Mapping):
        return Field(label, kind="group", children=tuple(
            _record_field(k, v) for k, v in value.items() if v not in (None, "", [], {})))
    return value_field(label, value)


def _record_field(key: str, value: Any) -> Field:
    label = _KEY_LABELS.get(key, label_of(key))
    if key in ("created", "modified", "creation_date", "mod_date") and isinstance(value, str):
        return Field(label, formats.when(value) or value)
    return value_field(label, value, 1)


def pdftable_view(families: Mapping[str, Mapping[str, Any]]) -> list[FamilyView]:
    """The families of one PDF-table row (values decoded) as fields."""
    return [FamilyView(name, _FAMILY_TITLES.get(name, name),
                       [_cell_field(name, q, v) for q, v in cols.items()])
            for name, cols in families.items()]
