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
from dataclasses import dataclass, field, replace
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
#: what sets a list's persons apart
_SEPARATOR = re.compile(r"[,;&|]+|and|e|y|et|und", re.IGNORECASE)
_ROMAN = re.compile(r"[IVX]{1,4}")
_INITIALS = re.compile(r"[A-Z]{1,3}")
_WORDLIKE = re.compile(r"[^\W\d_][^\W\d_'\u2019-]*[a-z\u00df-\u00ff][^\W\d_'\u2019-]*")
#: a Portuguese or Spanish name has at most this many words
MAX_NAME_WORDS = 5
#: the particles of a surname ("dos Santos", "de la Fuente", "van Suntum")
_PARTICLES = frozenset({"da", "das", "de", "del", "della", "di", "do", "dos", "du", "la",
                        "le", "van", "von", "der", "den", "ten", "ter"})


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
    """Persons from labelled fields, in order; a long name the model cut in two
    between the list's separators is one person (see :func:`_one_name`)."""
    segments = _segments(fields)
    found = [_persons(seg) for seg in segments]
    merge = [_one_name(seg, persons, len(segments) > 1)
             for seg, persons in zip(segments, found, strict=True)]
    if not any(merge):
        # the model's reading of the whole list (a person it reads across a
        # separator, "Smith, J.", stays one)
        return _initials_last(_persons(fields))
    return _initials_last([person for seg, persons, one in zip(segments, found, merge,
                                                               strict=True)
                           for person in ([_merged(seg)] if one else persons)])


def _initials_last(persons: list[PersonName]) -> list[PersonName]:
    """A list written surname first, initials after ("Alabsi S, Alhadainy HA",
    Vancouver's style), that the model read as forename and surname: when every
    person is a word and initials, the names are turned round."""
    def initials(p: PersonName) -> str:
        return "".join(x for x in (p.middle_name, p.surname) if x).replace(" ", "")

    if not persons or not all(p.given_name and _WORDLIKE.fullmatch(p.given_name)
                              and _INITIALS.fullmatch(initials(p)) for p in persons):
        return persons
    out = []
    for p in persons:
        letters = list(initials(p))
        out.append(replace(p, full_name=" ".join([*letters, p.given_name or ""]),
                           given_name=letters[0], middle_name=" ".join(letters[1:]) or None,
                           surname=p.given_name))
    return out


def _segments(fields: list[tuple[str, str]]) -> list[list[tuple[str, str]]]:
    """The fields of each person as the page sets them apart: between the list's
    separators (",", ";", "and", "e", "y", "und"), and at a marker, which closes
    the person before it (or opens the next, where the list writes them first)."""
    named = [f for f in fields if f[0] != OTHER]
    markers_first = bool(named) and named[0][0] == MARKER
    segments: list[list[tuple[str, str]]] = [[]]
    for label, text in fields:
        if label in (OTHER, MARKER) and _SEPARATOR.fullmatch(text.strip()):
            segments.append([])
        elif label == MARKER and markers_first:
            segments.append([(label, text)])
        elif label == MARKER:
            segments[-1].append((label, text))
            segments.append([])
        else:
            segments[-1].append((label, text))
    return [seg for seg in segments if any(label != OTHER for label, _ in seg)]


def _name_words(seg: list[tuple[str, str]]) -> list[str]:
    return [w for label, text in seg if label not in (MARKER, TITLE, SUFFIX)
            for w in text.split() if any(c.isalpha() for c in w)]


def _one_name(seg: list[tuple[str, str]], found: list[PersonName], separated: bool) -> bool:
    """Persons the model found between two separators are one Portuguese or
    Spanish name of four or five words ("Roseli Mieko Yamamoto Nomura", "Maria
    Lúcia F Penna"): in a list whose persons are set apart by separators, or
    when one of them has no forename or no surname. A list that sets none apart
    ("John Smith Mary Jones") keeps the model's persons."""
    words = [w for w in _name_words(seg) if not _ROMAN.fullmatch(w)]
    if len(found) < 2 or not 3 <= len(words) <= MAX_NAME_WORDS:
        return False
    return separated or any(not p.given_name or not p.surname for p in found)


def _merged(seg: list[tuple[str, str]]) -> PersonName:
    """One person of the segment's words: the last (with the particles before
    it, "dos Santos") the surname, as SciELO's records index them."""
    words = [_recase(_clean(w)) for w in _name_words(seg)]
    words = [w for w in words if w]
    roman: list[str] = []  # SciELO marks affiliations with Roman numerals ("Ramos I, II")
    while len(words) > 2 and _ROMAN.fullmatch(words[-1]):
        roman.insert(0, words.pop())
    cut = len(words) - 1
    while cut > 1 and words[cut - 1].lower() in _PARTICLES:
        cut -= 1
    given, middle, surname = words[0], words[1:cut], " ".join(words[cut:])
    markers = tuple(m for label, text in seg if label == MARKER
                    for m in split_markers(text)) + tuple(roman)
    return PersonName(full_name=" ".join(words), given_name=given,
                      middle_name=" ".join(middle) or None, surname=surname, markers=markers)


def _persons(fields: list[tuple[str, str]]) -> list[PersonName]:
    """Persons from labelled fields, in order, as the model cut them."""
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
