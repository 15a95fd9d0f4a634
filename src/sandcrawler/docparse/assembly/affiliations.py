"""A header's affiliation text split into affiliations with GROBID's
affiliation-address model, retrained on GROBID's corpus (docs/extraction-names.md).

The model labels each token institution, department, laboratory, address line,
post code, post box, settlement, region, country or marker; affiliations are
then read off the labels as GROBID reads them: a marker opens a new affiliation
when the current one has a marker already or the marker starts a line, and a
second institution (department, laboratory) opens one once the current
affiliation has an address.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from babel import Locale
from grobid_tei_xml.types import GrobidAddress, GrobidAffiliation

from sandcrawler.docparse.crf import shipped_model_path
from sandcrawler.docparse.crf.text import TextCrfModel, read_corpus, shipped_text_model
from sandcrawler.docparse.features.text import Gazetteers, normalize, phrases_of
from sandcrawler.tagging.corpus import LabelledText
from sandcrawler.tagging.scoring import OTHER, fields
from sandcrawler.tagging.tokens import Token

MODEL_NAME = "affiliation-address"
#: GROBID's sequence: one ``<author>`` block, holding one or more affiliations
UNIT = "author"

INSTITUTION, DEPARTMENT, LABORATORY = "<institution>", "<department>", "<laboratory>"
ADDR_LINE, POST_CODE, POST_BOX = "<addrLine>", "<postCode>", "<postBox>"
SETTLEMENT, REGION, COUNTRY, MARKER = "<settlement>", "<region>", "<country>", "<marker>"

#: ``orgName`` types of GROBID's corpus, as its TEI parser reads them
_ORG_TYPES = {"institution": INSTITUTION, "institute": INSTITUTION, "consortium": INSTITUTION,
              "department": DEPARTMENT, "departement": DEPARTMENT, "laboratory": LABORATORY}
_TAGS = {"addrline": ADDR_LINE, "postcode": POST_CODE, "postbox": POST_BOX,
         "settlement": SETTLEMENT, "region": REGION, "country": COUNTRY, "marker": MARKER}
_ADDRESS = (ADDR_LINE, POST_CODE, POST_BOX, SETTLEMENT, REGION, COUNTRY)

#: country names in the languages affiliations are mostly written in (CLDR's, from
#: babel), with the short forms the corpus shows
_COUNTRY_LOCALES = ("en", "fr", "de", "es", "it", "pt")
_COUNTRY_EXTRA = ("USA", "U.S.A.", "U.S.A", "U.S.", "US", "UK", "U.K.", "P.R. China",
                  "PR China", "P. R. China", "People's Republic of China", "Korea",
                  "Republic of Korea", "South Korea", "The Netherlands", "Holland",
                  "England", "Scotland", "Wales", "Northern Ireland", "Russia", "Iran",
                  "Taiwan", "Czech Republic", "Viet Nam")
#: a marker glued to the line it opens ("1Department", "*University"): a superscript
#: in the PDF, written apart in GROBID's corpus, so apart here too
_GLUED = re.compile(r"^([0-9]{1,2}|[*\u2020\u2021\u00a7\u00b6#]+)(?=[^\W\d_]{2})", re.M)
_EDGE = " \t\n,;:.-\u2013"
_EDGE_KEEP_DOT = " \t\n,;:-\u2013"


def label_of(tag: str, attrs: Mapping[str, str]) -> str | None:
    tag = tag.lower()
    if tag == "orgname":
        return _ORG_TYPES.get((attrs.get("type") or "").strip().lower())
    return _TAGS.get(tag)


def read_affiliations(corpus: Path) -> list[LabelledText]:
    """The affiliation blocks of a directory of GROBID affiliation TEI files."""
    return read_corpus(corpus, UNIT, label_of)


def gazetteers() -> Gazetteers:
    names = set(_COUNTRY_EXTRA)
    for locale in _COUNTRY_LOCALES:
        names.update(name for code, name in Locale.parse(locale).territories.items()
                     if code.isalpha() and len(code) == 2)
    return Gazetteers({"country": phrases_of(sorted(names))})


@dataclass(frozen=True, slots=True)
class Address:
    addr_line: str | None = None
    post_code: str | None = None
    post_box: str | None = None
    settlement: str | None = None
    region: str | None = None
    country: str | None = None


@dataclass(frozen=True, slots=True)
class Affiliation:
    """One affiliation; an affiliation may name several institutions ("Museum of
    Natural History, University of the Philippines"), departments or
    laboratories, in the order written."""

    raw: str
    marker: str | None = None
    institutions: tuple[str, ...] = ()
    departments: tuple[str, ...] = ()
    laboratories: tuple[str, ...] = ()
    address: Address = field(default_factory=Address)

    @property
    def institution(self) -> str | None:
        return self.institutions[0] if self.institutions else None

    @property
    def department(self) -> str | None:
        return self.departments[0] if self.departments else None

    @property
    def laboratory(self) -> str | None:
        return self.laboratories[0] if self.laboratories else None

    def to_grobid_affiliation(self) -> GrobidAffiliation:
        a = self.address
        address = None
        if a.addr_line or a.post_code or a.settlement or a.country:
            address = GrobidAddress(addr_line=a.addr_line, post_code=a.post_code,
                                    settlement=a.settlement, country=a.country)
        return GrobidAffiliation(institution=self.institution, department=self.department,
                                 laboratory=self.laboratory, address=address)


@dataclass
class _Open:
    """An affiliation being read: its fields by label, and where its text runs."""

    values: dict[str, list[str]] = field(default_factory=dict)
    start: int = -1
    end: int = -1

    def has(self, label: str) -> bool:
        return label in self.values

    def has_address(self) -> bool:
        return any(label in self.values for label in _ADDRESS)

    def add(self, label: str, text: str, start: int, end: int) -> None:
        self.values.setdefault(label, []).append(text)
        if label != MARKER:
            self.start = start if self.start < 0 else self.start
            self.end = end


def _clean(text: str, edge: str = _EDGE) -> str:
    return " ".join(text.split()).strip(edge)


def _joined(values: list[str] | None, keep_dot: bool = False) -> str | None:
    if not values:
        return None
    out: list[str] = []
    for v in values:
        v = _clean(v, _EDGE_KEEP_DOT if keep_dot else _EDGE)
        if v and v not in out:
            out.append(v)
    return " ".join(out) or None


def _affiliation(text: str, a: _Open) -> Affiliation | None:
    v = a.values
    # a post code or a marker alone names no place: digits or punctuation read as one
    if not any(c.isalpha() for label, texts in v.items() if label != MARKER
               for t in texts for c in t):
        return None
    orgs = {label: tuple(x for x in (_clean(s, _EDGE_KEEP_DOT) for s in v.get(label, ())) if x)
            for label in (INSTITUTION, DEPARTMENT, LABORATORY)}
    return Affiliation(
        raw=_clean(text[a.start : a.end], _EDGE_KEEP_DOT),
        marker=_joined(v.get(MARKER)),
        institutions=orgs[INSTITUTION],
        departments=orgs[DEPARTMENT],
        laboratories=orgs[LABORATORY],
        address=Address(
            addr_line=_joined(v.get(ADDR_LINE), keep_dot=True),
            post_code=_joined(v.get(POST_CODE)),
            post_box=_joined(v.get(POST_BOX), keep_dot=True),
            settlement=_joined(v.get(SETTLEMENT), keep_dot=True),
            region=_joined(v.get(REGION)),
            country=_joined(v.get(COUNTRY)),
        ),
    )


def affiliations_from_labels(text: str, tokens: list[Token], labels: list[str]
                             ) -> list[Affiliation]:
    done: list[_Open] = []
    current = _Open()
    for label, a, b in fields(labels):
        if label == OTHER:
            continue
        start, end = tokens[a].start, tokens[b - 1].end
        if label == MARKER:
            line_start = a == 0 or "\n" in text[tokens[a - 1].end : start]
            if current.values and (current.has(MARKER) or line_start):
                done.append(current)
                current = _Open()
        elif (label in (INSTITUTION, DEPARTMENT, LABORATORY) and current.has(label)
              and current.has_address()):
            done.append(current)
            current = _Open()
        current.add(label, text[start:end], start, end)
    done.append(current)
    return [x for x in (_affiliation(text, o) for o in done) if x is not None]


def default_model_path() -> Path:
    return shipped_model_path(MODEL_NAME)


def default_model() -> TextCrfModel:
    return shipped_text_model(MODEL_NAME)


def parse_affiliations(text: str, model: TextCrfModel | None = None) -> list[Affiliation]:
    """The affiliations of a header's affiliation text; ``[]`` when there are none.
    Input past the model's bound is left unread."""
    model = model or default_model()
    text, tokens, labels = model.label(_GLUED.sub(r"\1 ", normalize(text)))
    return affiliations_from_labels(text, tokens, labels)
