"""A header's author field split into persons with GROBID's name-header model,
retrained here with CRFsuite on GROBID's corpus (docs/extraction-names.md).

The model labels each token forename, middle name, surname, title (GROBID's
``roleName``: "Dr", "MD", "PhD"), suffix ("Jr") or marker (the "1,*" and "†"
that link a person to affiliations and notes); the persons are then read off
the labels: a second forename or surname starts a new person, and a marker
closes the person it follows (or opens the one it precedes, when a list writes
markers first).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from grobid_tei_xml.types import GrobidAuthor

from sandcrawler.docparse.crf import shipped_model_path
from sandcrawler.docparse.crf.text import (
    TextCrfModel,
    labelled_fields,
    read_corpus,
    shipped_text_model,
)
from sandcrawler.docparse.features.text import Gazetteers, normalize, phrases_of
from sandcrawler.tagging.corpus import LabelledText
from sandcrawler.tagging.scoring import OTHER

MODEL_NAME = "name-header"
#: GROBID's sequence: one ``<author>`` block of a header
UNIT = "author"

FORENAME, MIDDLENAME, SURNAME = "<forename>", "<middlename>", "<surname>"
TITLE, SUFFIX, MARKER = "<title>", "<suffix>", "<marker>"

#: TEI elements of GROBID's name corpora -> labels; its own parser reads these tags
#: (and ``roleName`` as a title), the misspellings are read for what they mean
_TAGS = {
    "forename": FORENAME, "firstname": FORENAME, "forenname": FORENAME,
    "middlename": MIDDLENAME,
    "surname": SURNAME, "lastname": SURNAME, "surename": SURNAME,
    "title": TITLE, "rolename": TITLE,
    "suffix": SUFFIX, "genname": SUFFIX,
    "marker": MARKER,
}

#: titles written before a name: one after a complete person opens the next person
#: (degrees such as "MD" or "PhD" follow the name they belong to)
_PRENOMINAL = {"dr", "prof", "professor", "mr", "mrs", "ms", "miss", "sir", "dame",
               "prof dr", "dr med", "rev", "mme", "mlle", "m"}
#: phrases that are titles or name suffixes wherever they stand (facts, not from a
#: lexicon file): they help where the training data has few examples
_TITLES = ["Dr", "Dr.", "Prof", "Prof.", "Professor", "Mr", "Mrs", "Ms", "Sir", "PhD", "Ph.D",
           "Ph. D", "MD", "M.D", "M. D", "MSc", "M.Sc", "BSc", "MPH", "MBBS", "MBA", "DPhil",
           "ScD", "PharmD", "RN", "MS", "MA", "BA", "FRCP", "FRCS", "Member, IEEE",
           "Senior Member, IEEE", "Fellow, IEEE", "Student Member, IEEE"]
_SUFFIXES = ["Jr", "Jr.", "Sr", "Sr.", "II", "III", "IV"]

_ET_AL = re.compile(r"\bet\.?\s*al\b\.?.*$", re.I | re.S)
#: a marker glued to a name ("Bobnar1", "Maurano*", "1John"): a superscript in the
#: PDF. GROBID's corpus writes every field apart, so the model never saw one glued
#: and would read "1" as part of the surname; a space puts it as the model knows it
_GLUED = re.compile(r"(?<=[^\W\d_])(?=\d)|(?<=\d)(?=[^\W\d_])"
                    r"|(?<=[\w.])(?=[*\u2020\u2021\u00a7\u00b6#])")
_MARKER_PART = re.compile(r"\d+|[^\W\d_]+|([^\w\s,;])\1*")
_EDGE = " \t\n,;:"


def label_of(tag: str, attrs: dict[str, str] | object) -> str | None:
    tag = tag.lower()
    if tag == "forename" and isinstance(attrs, dict) and attrs.get("type") == "middle":
        return MIDDLENAME
    return _TAGS.get(tag)


def read_names(corpus: Path) -> list[LabelledText]:
    """The author blocks of a directory of GROBID name TEI files."""
    return read_corpus(corpus, UNIT, label_of)


def gazetteers() -> Gazetteers:
    return Gazetteers({"title": phrases_of(_TITLES), "suffix": phrases_of(_SUFFIXES)})


@dataclass(frozen=True, slots=True)
class PersonName:
    """One author: ``given_name`` is the first forename, ``middle_name`` the others;
    ``markers`` link the person to affiliations and notes ("1", "*", "†")."""

    full_name: str
    given_name: str | None = None
    middle_name: str | None = None
    surname: str | None = None
    suffix: str | None = None
    title: str | None = None
    markers: tuple[str, ...] = ()

    def to_grobid_author(self) -> GrobidAuthor:
        return GrobidAuthor(full_name=self.full_name, given_name=self.given_name,
                            middle_name=self.middle_name, surname=self.surname)


@dataclass
class _Person:
    forenames: list[str] = field(default_factory=list)
    middle: list[str] = field(default_factory=list)
    surname: list[str] = field(default_factory=list)
    suffix: list[str] = field(default_factory=list)
    title: list[str] = field(default_factory=list)
    markers: list[str] = field(default_factory=list)

    def named(self) -> bool:
        return bool(self.forenames or self.middle or self.surname)


def split_markers(text: str) -> list[str]:
    """"1,*" -> ["1", "*"]; "a, b" -> ["a", "b"]; "**" stays one marker, "*†" is two."""
    return [m.group() for m in _MARKER_PART.finditer(text)]


def _recase(word: str) -> str:
    """A name part in capitals ("WANG", "O'NEIL") as GROBID writes it ("Wang",
    "O'Neil"); initials and mixed case are kept."""
    letters = [c for c in word if c.isalpha()]
    if len(letters) < 3 or not all(c.isupper() for c in letters):
        return word
    return re.sub(r"[^\W\d_]+", lambda m: m.group()[0] + m.group()[1:].lower(), word)


def _clean(text: str) -> str:
    text = " ".join(text.split()).strip(_EDGE)
    # an initial loses its dot, as GROBID reports it ("T." -> "T")
    if re.fullmatch(r"[^\W\d_]\.", text):
        text = text[0]
    return text


def _person(p: _Person) -> PersonName | None:
    forenames = [f for f in (_recase(_clean(x)) for x in p.forenames) if f]
    middle = [m for m in (_recase(_clean(x)) for x in p.middle) if m]
    surname = " ".join(s for s in (_recase(_clean(x)) for x in p.surname) if s) or None
    given = forenames[0] if forenames else None
    # "JA" as one forename is two initials (GROBID's normalisation)
    if given and not middle and len(given) == 2 and given.isalpha() and given.isupper():
        given, middle = given[0], [given[1]]
    middle = forenames[1:] + middle
    if not given and middle:
        given, middle = middle[0], middle[1:]
    # a "name" without a letter is punctuation or digits read as one
    if not any(c.isalpha() for c in (given or "") + (surname or "")):
        return None
    suffix = " ".join(_clean(s) for s in p.suffix if _clean(s)) or None
    title = ", ".join(_clean(t) for t in p.title if _clean(t)) or None
    parts = [given, *middle, surname, suffix]
    return PersonName(
        full_name=" ".join(x for x in parts if x),
        given_name=given,
        middle_name=" ".join(middle) or None,
        surname=surname,
        suffix=suffix,
        title=title,
        markers=tuple(p.markers),
    )


def persons_from_fields(fields: list[tuple[str, str]]) -> list[PersonName]:
    """Persons from labelled fields, in order."""
    named = [f for f in fields if f[0] != OTHER]
    # a list that opens with a marker writes markers before the names ("¹A. Smith")
    markers_first = bool(named) and named[0][0] == MARKER
    done: list[_Person] = []
    p = _Person()
    previous = ""  # the label of the last field that was not <other>

    def close() -> None:
        nonlocal p
        if p.named() or p.markers or p.title:
            done.append(p)
        p = _Person()

    for k, (label, text) in enumerate(named):
        if label == MARKER:
            marks = split_markers(text)
            if markers_first:
                if p.named():
                    close()
                p.markers.extend(marks)
            elif p.named():
                p.markers.extend(marks)
                close()
            elif previous == MARKER and done:
                done[-1].markers.extend(marks)  # "Smith 1 *": one person's two markers
            else:
                p.markers.extend(marks)
        elif label == FORENAME:
            # a forename cut in two fields stays one person's, unless a surname came between
            if p.forenames and (previous != FORENAME or p.surname):
                close()
            p.forenames.append(text)
        elif label == MIDDLENAME:
            p.middle.append(text)
        elif label == SURNAME:
            if p.surname:
                close()
            p.surname.append(text)
        elif label == TITLE:
            key = " ".join(re.sub(r"[.\s]+", " ", text.lower()).split())
            name_follows = any(lab in (FORENAME, SURNAME) for lab, _ in named[k + 1 : k + 3])
            if p.surname and key in _PRENOMINAL and name_follows:
                close()
            p.title.append(text)
        elif label == SUFFIX:
            p.suffix.append(text)
        previous = label
    close()
    return [person for person in (_person(x) for x in done) if person is not None]


def default_model_path() -> Path:
    return shipped_model_path(MODEL_NAME)


def default_model() -> TextCrfModel:
    return shipped_text_model(MODEL_NAME)


def parse_names(text: str, model: TextCrfModel | None = None) -> list[PersonName]:
    """The persons of a header's author field ("Matthew T. Maurano 1,* , Hao Wang
    1,2"); ``[]`` when there are none. Input past the model's bound is left
    unread."""
    text = _GLUED.sub(" ", _ET_AL.sub("", normalize(text)))
    model = model or default_model()
    text, tokens, labels = model.label(text)
    if not tokens:
        return []
    return persons_from_fields(labelled_fields(text, tokens, labels))
