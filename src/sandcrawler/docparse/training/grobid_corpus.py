"""GROBID's training data for the layout models read into labelled sequences:
per document, a raw feature file (``raw/``) labelled from its TEI annotation
(``tei/``) as GROBID's trainers pair them; documents that do not align are
skipped with a reason and counted (:class:`CorpusRead`). What differs per
model: docs/extraction-models.md, "Notes by module".
"""

from __future__ import annotations

import re
import unicodedata
import xml.sax
import xml.sax.handler
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from sandcrawler.core.errors import ConfigError
from sandcrawler.core.imports import entry
from sandcrawler.docparse.layout.tokens import DELIMITERS, PUNCTUATION

BEGIN = "I-"
OTHER = "<other>"
#: a document whose rows found a label for less than this share is misaligned
MIN_ALIGNED = 0.9
#: how far past the last matched token a row's first column is looked for
#: (GROBID looks at the next seven annotated tokens)
REACH = 7
#: segmentation: a raw file ending in this many unmatched rows is unusable, and
#: reading stops after one more than :data:`_GIVE_UP` in a row (GROBID's limits)
_UNSYNCHRONISED = 10
_GIVE_UP = 20

# Java's String.trim() removes every character up to U+0020, not Unicode spaces
_JAVA_TRIM = "".join(map(chr, range(33)))
_SEGMENTATION_WORD = re.compile("[ \t\f\u00a0]+")
_LINE = "\x1e"  # a line break in the annotated text (never in TEI text: XML forbids it)
_REFSEG_DELIMITERS = frozenset(" \n\t" + PUNCTUATION)
_NEWLINE_MARK = " @newline "


class SkipReason(StrEnum):
    """Why a document of the corpus is not used."""

    #: an annotation without its raw feature file (or the reverse)
    NO_RAW_FILE = "no-raw-file"
    NO_TEI_FILE = "no-tei-file"
    BAD_XML = "bad-xml"
    #: a raw row without the model's number of columns (a truncated or foreign file)
    BAD_ROW = "bad-row"
    #: segmentation: the raw file ends in a run of rows not in the annotation
    UNSYNCHRONISED = "unsynchronised"
    #: fewer than MIN_ALIGNED of the rows found a label
    MISALIGNED = "misaligned"
    #: nothing labelled: an empty file or annotation
    EMPTY = "empty"


@dataclass(frozen=True, slots=True)
class LabelledSequence:
    """One document: its raw rows (columns as in the raw file) and one label
    per row, GROBID's names with the ``I-`` mark on each field's first row."""

    doc: str
    rows: list[list[str]]
    labels: list[str]


@dataclass(frozen=True, slots=True)
class Skip:
    doc: str
    reason: SkipReason
    detail: str


@dataclass
class CorpusRead:
    """The sequences of a corpus directory and what was left out, and why."""

    model: str
    directory: Path
    sequences: list[LabelledSequence] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    #: raw rows of the documents used, and of those: labelled by a match, given a
    #: neighbour's label (segmentation: the previous row's; header: a one-row gap),
    #: dropped for want of a label
    rows: int = 0
    matched: int = 0
    guessed: int = 0
    dropped: int = 0

    @property
    def documents(self) -> int:
        """Documents seen: annotations and raw files without a partner, each once
        (a figure or table document gives a sequence per figure, one document)."""
        return len({s.doc for s in self.sequences}) + len(self.skipped)

    def skip_counts(self) -> dict[SkipReason, int]:
        return dict(sorted(Counter(s.reason for s in self.skipped).items()))

    def summary(self) -> str:
        skips = ", ".join(f"{n} {reason}" for reason, n in self.skip_counts().items()) or "none"
        used = len({s.doc for s in self.sequences})
        if used != len(self.sequences):
            used_text = f"{used} used ({len(self.sequences)} sequences)"
        else:
            used_text = f"{used} used"
        return (f"{self.model}: {self.documents} documents, {used_text}, "
                f"{len(self.skipped)} skipped ({skips}); {self.rows} rows: "
                f"{self.matched} matched, {self.guessed} labelled from a neighbour, "
                f"{self.dropped} dropped")


# -- the annotations -----------------------------------------------------------


def _java_trim(text: str) -> str:
    return text.strip(_JAVA_TRIM)


def normalise_token(token: str) -> str:
    """A token as GROBID compares raw and annotated tokens: horizontal spaces and
    line breaks removed, dashes "-", low lines "_", vertical bars "|", bullets
    "•", brackets "(" and ")"."""
    if token.isascii():
        return token.translate(_ASCII_SPACES) if not token.isalnum() else token
    return "".join(_normal_char(c) for c in token)


_ASCII_SPACES = {ord(c): None for c in " \t\n\r\f\v"}
_NON_ASCII: dict[str, str] = {
    **dict.fromkeys("\u00a0\u1680\u180e\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
                    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\u0085", ""),
    **dict.fromkeys("\u203f\u2040\u2054\ufe4d\ufe4e\ufe4f\uff3f\ufe33\ufe34", "_"),
    **dict.fromkeys("\u01c0\u05c0\u2223\u2758", "|"),
    **dict.fromkeys("\u2023\u25e6\u2043\u204c\u204d\u2219\u25d8\u29be\u29bf\u23fa\u25cf"
                    "\u26ab\u2b24\u00b7", "\u2022"),
    **dict.fromkeys("\uff08\u27ee\u2985\u2768\u276a\u27ec", "("),
    **dict.fromkeys("\uff09\u27ef\u2986\u2769\u276b\u27ed", ")"),
}


def _normal_char(c: str) -> str:
    if c.isascii():
        return "" if c in " \t\n\r\f\v" else c
    if c in _NON_ASCII:
        return _NON_ASCII[c]
    if c == "\u2212" or unicodedata.category(c) == "Pd":
        return "-"
    return c


def _cut(text: str, delimiters: frozenset[str]) -> list[str]:
    """``text`` cut at each delimiter, each delimiter a token of its own, every
    token Java-trimmed and the empty ones left out."""
    out: list[str] = []
    start = 0
    for i, c in enumerate(text):
        if c in delimiters:
            if start < i:
                out.append(text[start:i])
            out.append(c)
            start = i + 1
    if start < len(text):
        out.append(text[start:])
    return [t for t in map(_java_trim, out) if t]


@dataclass(slots=True)
class _Annotated:
    """The labelled token stream of one TEI file: (token, label) pairs, label
    None for a marker that takes a place in the stream but labels nothing."""

    tokens: list[tuple[str, str | None]] = field(default_factory=list)
    #: fileDesc/@xml:id without its leading "_" (the header's document id)
    doc_id: str | None = None


class _TeiHandler(xml.sax.handler.ContentHandler):
    """Collects an annotation's text between element events; subclasses say
    which events label it."""

    def __init__(self) -> None:
        super().__init__()
        self.out = _Annotated()
        self.text: list[str] = []

    def characters(self, content: str) -> None:
        self.text.append(content)

    def taken(self) -> str:
        """The text collected since the last time, trimmed, and forget it."""
        text = _java_trim("".join(self.text))
        self.text.clear()
        return text

    def pending(self) -> bool:
        return bool(_java_trim("".join(self.text)))


# segmentation: elements that open a zone (its label is the label of text met
# inside it outside any nested element), elements that label just their own text
_SEG_ZONES = {"front": "<header>", "body": "<body>", "listBibl": "<references>",
              "toc": "<toc>"}
_SEG_DIVS = {
    "annex": "<annex>", "funding": "<funding>", "toc": "<toc>",
    **dict.fromkeys(("availability", "data_availability", "data-availability"),
                    "<availability>"),
    **dict.fromkeys(("acknowledgement", "acknowledgements", "acknowledgment",
                     "acknowledgments"), "<acknowledgement>"),
}
_SEG_NOTES = {"footnote": "<footnote>", "foot": "<footnote>", "headnote": "<headnote>",
              "head": "<headnote>", "margin": "<marginnote>"}
#: elements whose end writes out their text
_SEG_WRITTEN = frozenset(("front", "titlePage", "note", "page", "pages", "body", "listBibl",
                          "div", "other", "toc"))
_SEG_ZONE_ENDS = frozenset(("body", "cover", "front", "div", "toc", "other", "listBibl"))
_SEG_INSERT_ENDS = frozenset(("note", "page", "pages", "titlePage"))


class _SegmentationHandler(_TeiHandler):
    def __init__(self) -> None:
        super().__init__()
        self.label: str | None = None
        self.zone: str | None = None

    def write(self, label: str | None) -> None:
        label = label or OTHER
        first = True
        text = "".join(self.text).replace("\n", " ").replace("\r", " ")
        self.text.clear()
        for line in text.split(_LINE):
            words = [w for w in _SEGMENTATION_WORD.split(_java_trim(line)) if w]
            if not words:
                continue
            mark = BEGIN if first and label != OTHER else ""
            self.out.tokens.append((words[0], mark + label))
            first = False

    def startElement(self, name: str, attrs: xml.sax.xmlreader.AttributesImpl) -> None:
        if name == "lb":
            self.text.append(_LINE)
            return
        if name in ("pb", "space"):
            self.text.append(" ")
            return
        if self.pending():
            self.write(self.zone)
        if name in _SEG_ZONES:
            self.label = self.zone = _SEG_ZONES[name]
        elif name == "div" and attrs.get("type") in _SEG_DIVS:
            self.label = self.zone = _SEG_DIVS[attrs["type"]]
        elif name == "note" and attrs.get("place") in _SEG_NOTES:
            self.label = _SEG_NOTES[attrs["place"]]
        elif name == "titlePage":
            self.label = "<cover>"
        elif name in ("page", "pages"):
            self.label = "<page>"
        elif name == "other":
            self.label = OTHER
        elif name == "text":
            self.label, self.zone = OTHER, None

    def endElement(self, name: str) -> None:
        if name in ("lb", "pb"):
            return
        if name in _SEG_WRITTEN and self.pending():
            self.write(self.label)
        if name in _SEG_ZONE_ENDS:
            self.label = self.zone = None
        elif name in _SEG_INSERT_ENDS:
            self.label = self.zone


_HEADER_ELEMENTS = {
    "titlePart": "<title>", "idno": "<pubnum>", "reference": "<reference>",
    "docAuthor": "<author>", "affiliation": "<affiliation>", "address": "<address>",
    "email": "<email>", "meeting": "<meeting>", "editor": "<editor>", "date": "<date>",
    "keywords": "<keyword>", "keyword": "<keyword>",
}
_HEADER_NOTES = {
    "submission": "<submission>", "reference": "<reference>", "copyright": "<copyright>",
    "funding": "<funding>", "group": "<group>",
    **dict.fromkeys(("document_type", "doctype", "docType", "documentType", "articleType"),
                    "<doctype>"),
    **dict.fromkeys(("availability", "data_availability", "data-availability"),
                    "<availability>"),
}
#: elements whose end writes out their text with the current label
_HEADER_WRITTEN = frozenset(("titlePart", "note", "docAuthor", "affiliation", "address",
                             "email", "idno", "date", "keywords", "keyword", "reference",
                             "ptr", "div", "editor", "meeting"))
#: elements that leave the current label as it is
_HEADER_NEUTRAL = frozenset(("byline", "front", "lb", "tei", "teiHeader", "fileDesc", "text",
                             "docTitle", "p"))


class _HeaderHandler(_TeiHandler):
    def __init__(self) -> None:
        super().__init__()
        self.label: str | None = None

    def write(self, label: str) -> None:
        tokens = _cut(self.taken(), DELIMITERS)
        self.out.tokens.extend((t, (BEGIN if i == 0 else "") + label)
                               for i, t in enumerate(tokens))

    def startElement(self, name: str, attrs: xml.sax.xmlreader.AttributesImpl) -> None:
        if name == "lb":
            self.text.append(" ")
            return
        if self.pending():
            # text outside any labelled element
            self.label = OTHER
            self.write(OTHER)
        self.text.clear()
        if name == "div":
            self.label = "<abstract>" if attrs.get("type") == "abstract" else OTHER
        elif name == "note":
            self.label = _HEADER_NOTES.get(attrs.get("type", ""), OTHER)
        elif name == "ptr":
            if attrs.get("type") == "web":
                self.label = "<web>"
        elif name in _HEADER_ELEMENTS:
            self.label = _HEADER_ELEMENTS[name]
        elif name == "fileDesc":
            doc_id = attrs.get("xml:id")
            if doc_id is not None:
                self.out.doc_id = doc_id[1:] if doc_id.startswith("_") else doc_id
        elif name not in _HEADER_NEUTRAL:
            self.label = OTHER

    def endElement(self, name: str) -> None:
        if name in _HEADER_WRITTEN:
            if self.label is not None:
                self.write(self.label)
            self.text.clear()
        elif name == "front":
            if self.pending():
                self.label = OTHER
                self.write(OTHER)
            self.text.clear()


class _ReferenceSegmenterHandler(_TeiHandler):
    def __init__(self) -> None:
        super().__init__()
        self.label: str | None = None

    def write(self, label: str | None) -> None:
        first = True
        for token in _cut(self.taken(), _REFSEG_DELIMITERS):
            if token in ("@newline", "+PAGE+"):
                self.out.tokens.append((token, None))
                continue
            self.out.tokens.append((token, (BEGIN if first else "") + str(label)))
            first = False

    def startElement(self, name: str, attrs: xml.sax.xmlreader.AttributesImpl) -> None:
        if name in ("lb", "pb"):
            return
        if self.pending():
            self.label = OTHER
            self.write(OTHER)
        self.text.clear()
        if name == "bibl":
            self.label = None
        elif name == "label":
            self.label = "<label>"

    def endElement(self, name: str) -> None:
        if name == "label":
            self.write(self.label)
        elif name == "bibl":
            self.label = "<reference>"
            self.write(self.label)
        elif name in ("lb", "pb"):
            # "@" is a delimiter, so the mark becomes two labelled tokens, "@"
            # and "newline", as in GROBID's stream: they take places in it
            self.text.append(_NEWLINE_MARK)


# fulltext (GROBID's TEIFulltextSaxParser): elements whose end (or whose start,
# for the text before it) writes out the text, and the labels elements push
_FULLTEXT_WRITTEN = frozenset(("other", "p", "ref", "head", "figure", "paragraph", "div",
                               "table", "formula", "item", "label"))
_FULLTEXT_REFS = {"biblio": "<citation_marker>", "figure": "<figure_marker>",
                  "table": "<table_marker>", "formula": "<equation_marker>",
                  "equation": "<equation_marker>", "section": "<section_marker>"}
#: GROBID's trainer labels a list item a paragraph (its <item> label is unused)
_FULLTEXT_ELEMENTS = {"p": "<paragraph>", "item": "<paragraph>", "head": "<section>",
                      "formula": "<equation>", "label": "<equation_label>", "other": OTHER,
                      "text": OTHER}
#: elements that push nothing; any other unknown element pushes <other>
_FULLTEXT_NEUTRAL = frozenset(("tei", "teiHeader", "fileDesc", "list"))


class _FulltextHandler(_TeiHandler):
    """GROBID's TEIFulltextSaxParser: a stack of labels pushed by the elements
    (``<p>`` and ``<item>`` paragraph, ``<head>`` section, ``<ref type=...>``
    markers, ``<formula>``, ``<label>``, ``<figure>``/``<table>``, unknown
    elements ``<other>``); text is written at an element's start with the label
    in force (when the starting element is one of the written ones, else it is
    dropped) and at its end, which pops the stack. Everything inside a figure
    or table is ``<figure>``/``<table>``. GROBID's quirks are kept: an unknown
    element pushes ``<other>`` that its end does not pop."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.label: str | None = None
        self.figure = self.table = False

    def push(self, label: str) -> None:
        self.stack.append(label)
        self.label = label

    def write(self, name: str, pop: bool) -> None:
        if name not in _FULLTEXT_WRITTEN or self.label is None:
            return
        if pop and self.stack:
            self.stack.pop()
        if self.table:
            self.label = "<table>"
        elif self.figure:
            self.label = "<figure>"
        tokens = _cut(self.taken(), DELIMITERS)
        self.out.tokens.extend((t, (BEGIN if i == 0 else "") + str(self.label))
                               for i, t in enumerate(tokens))

    def startElement(self, name: str, attrs: xml.sax.xmlreader.AttributesImpl) -> None:
        if name in ("lb", "space"):
            self.text.append(" ")
            return
        if self.pending():
            self.write(name, False)
        self.text.clear()
        if name == "div":
            if attrs.get("type") == "paragraph":
                self.push("<paragraph>")
        elif name == "ref":
            kind = _FULLTEXT_REFS.get(attrs.get("type", ""))
            if kind is not None:
                self.push(kind)
        elif name == "figure":
            self.table = attrs.get("type") == "table"
            self.figure = not self.table
            self.push("<table>" if self.table else "<figure>")
        elif name == "table":
            self.figure, self.table = False, True
            self.push("<table>")
        elif name in _FULLTEXT_ELEMENTS:
            self.push(_FULLTEXT_ELEMENTS[name])
        elif name not in _FULLTEXT_NEUTRAL:
            self.push(OTHER)

    def endElement(self, name: str) -> None:
        if name not in ("lb", "pb", "space"):
            self.write(name, True)
            if self.stack:
                self.label = self.stack[-1]
        if name in ("figure", "table"):
            self.figure = self.table = False


#: figure and table corpora: where a ``<figure>`` ends in the annotated stream
#: (GROBID's blank line between two figures: it takes a place, labels nothing)
_FIGURE_END = "\x1d"
_FIGURE_ELEMENTS = {"figDesc": "<figDesc>", "table": "<content>", "trash": "<content>",
                    "content": "<content>", "label": "<label>", "note": "<note>"}


class _FigureHandler(_TeiHandler):
    """GROBID's TEIFigureSaxParser, for both corpora: a label stack pushed by
    ``<figure>`` (``<other>``), ``<head>`` inside a figure (``<figure_head>``),
    ``<figDesc>``, ``<label>``, ``<note>``, ``<table>``/``<trash>``/``<content>``
    (``<content>``); text is written at each element's start with the label in
    force, and at each end with the label on top of the stack, which is then
    popped. As in GROBID, the label in force after an end is the ended
    element's until the next end: text between ``</label>`` and a start is the
    label's."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.label: str | None = None
        self.in_figure = False

    def write(self, pop: bool) -> None:
        if self.label is None:
            return
        if pop and self.stack:
            self.stack.pop()
        first = True
        for token in _cut(self.taken(), _REFSEG_DELIMITERS):
            if token == "+L+":
                self.out.tokens.append(("@newline", None))
            elif token == "+PAGE+":
                self.out.tokens.append(("@newpage", None))
            else:
                self.out.tokens.append((token, (BEGIN if first else "") + self.label))
            first = False  # GROBID's: a line break first leaves the field unmarked

    def push(self, label: str) -> None:
        self.stack.append(label)
        self.label = label

    def startElement(self, name: str, attrs: xml.sax.xmlreader.AttributesImpl) -> None:
        if name in ("lb", "pb", "space"):
            self.text.append({"lb": " +L+ ", "pb": " +PAGE+ ", "space": " "}[name])
            return
        if self.pending():
            self.write(False)
        self.text.clear()
        if name == "head":
            if self.in_figure:
                self.push("<figure_head>")
        elif name in _FIGURE_ELEMENTS:
            self.push(_FIGURE_ELEMENTS[name])
        elif name == "figure":
            self.in_figure = True
            self.push(OTHER)

    def endElement(self, name: str) -> None:
        if name not in ("lb", "pb"):
            if self.stack:
                self.label = self.stack[-1]
            self.write(True)
        if name == "figure":
            self.in_figure = False
            self.out.tokens.append((_FIGURE_END, None))


def _parse_tei(path: Path, handler: _TeiHandler) -> _Annotated:
    parser = xml.sax.make_parser()
    parser.setFeature(xml.sax.handler.feature_namespaces, False)
    parser.setFeature(xml.sax.handler.feature_external_ges, False)
    parser.setFeature(xml.sax.handler.feature_external_pes, False)
    parser.setContentHandler(handler)
    parser.parse(str(path))
    return handler.out


# -- the raw files and the alignment --------------------------------------------


class _Unusable(Exception):
    def __init__(self, reason: SkipReason, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


@dataclass(slots=True)
class _Aligned:
    rows: list[list[str]]
    labels: list[str | None]
    matched: int
    guessed: int
    dropped: int
    #: figures and tables: the figure of the annotation each kept row is in
    #: (one sequence per figure); None: the document is one sequence
    parts: list[int] | None = None
    #: figures and tables: the annotation's labelled tokens (annotators leave
    #: out whole runs that are no figure: the rows of those find no label)
    annotated: int | None = None


def read_rows(path: Path, columns: int) -> list[list[str]]:
    """A raw feature file's rows (blank lines left out), each with exactly
    ``columns`` columns."""
    rows: list[list[str]] = []
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise _Unusable(SkipReason.BAD_ROW, f"{path.name}: not UTF-8: {e}") from e
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        row = line.rstrip("\r").split(" ")
        if len(row) != columns or not row[0]:
            raise _Unusable(SkipReason.BAD_ROW,
                            f"{path.name}:{n}: {len(row)} columns, expected {columns}")
        rows.append(row)
    return rows


def _find(stream: list[tuple[str, str | None]], start: int, token: str) -> int:
    """Where ``token`` is in the stream within reach of ``start``, or -1."""
    for i in range(start, min(start + REACH, len(stream))):
        if stream[i][0] == token and stream[i][1] is not None:
            return i
    return -1


def _normalised(annotated: _Annotated) -> list[tuple[str, str | None]]:
    return [(normalise_token(t), label) for t, label in annotated.tokens]


def _align_segmentation(rows: list[list[str]], annotated: _Annotated) -> _Aligned:
    stream = _normalised(annotated)
    kept: list[list[str]] = []
    labels: list[str | None] = []
    at, missed, matched, guessed = 0, 0, 0, 0
    previous: str | None = None
    for row in rows:
        i = _find(stream, at, normalise_token(row[0]))
        if i >= 0:
            previous = stream[i][1]
            kept.append(row)
            labels.append(previous)
            at, missed = i + 1, 0
            matched += 1
            continue
        if at + REACH > len(stream):
            # the annotation ran out before the window did: GROBID leaves the row out
            continue
        missed += 1
        if previous is not None:
            kept.append(row)
            labels.append(previous.removeprefix(BEGIN))
            guessed += 1
        if missed > _GIVE_UP:
            break
    if missed >= _UNSYNCHRONISED:
        raise _Unusable(SkipReason.UNSYNCHRONISED, f"{missed} rows in a row not in the "
                        f"annotation after row {matched + guessed}")
    return _Aligned(kept, labels, matched, guessed, len(rows) - len(kept))


def _align_tokens(rows: list[list[str]], annotated: _Annotated, fill_gaps: bool) -> _Aligned:
    stream = _normalised(annotated)
    labels: list[str | None] = []
    at = 0
    for row in rows:
        i = _find(stream, at, normalise_token(row[0]))
        labels.append(stream[i][1] if i >= 0 else None)
        if i >= 0:
            at = i + 1
    matched = sum(label is not None for label in labels)
    guessed = 0
    if fill_gaps:
        # one unlabelled row between two rows of the same label takes it
        for k in range(1, len(labels) - 1):
            if (labels[k] is None and labels[k - 1] is not None
                    and labels[k - 1] == labels[k + 1]):
                labels[k] = labels[k + 1]
                guessed += 1
    kept = [(row, label) for row, label in zip(rows, labels, strict=True) if label is not None]
    return _Aligned([r for r, _ in kept], [label for _, label in kept], matched, guessed,
                    len(rows) - len(kept))


_FIGURE_COLUMNS = re.compile("[ \t]+")


def read_figure_rows(path: Path, columns: int) -> list[list[str]]:
    """A figure or table raw file's rows: GROBID wrote them as its full-text
    rows, columns apart by tabs or runs of spaces, 26 columns before GROBID added the
    superscript flag, ``columns`` (27) since; a 26-column row gets the flag as
    "0" (no window of the model reads it). Blank lines (between figures) are
    left out: the annotation says where each figure ends."""
    rows: list[list[str]] = []
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise _Unusable(SkipReason.BAD_ROW, f"{path.name}: not UTF-8: {e}") from e
    for n, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        row = _FIGURE_COLUMNS.split(line.strip(" \t"))
        if len(row) == columns - 1:
            row.append("0")
        if len(row) != columns or not row[0]:
            raise _Unusable(SkipReason.BAD_ROW,
                            f"{path.name}:{n}: {len(row)} columns, expected {columns}")
        rows.append(row)
    return rows


def _align_figures(rows: list[list[str]], annotated: _Annotated) -> _Aligned:
    """Rows labelled as the header's and reference segmenter's are (GROBID's
    reach, no gap filled), each kept row with the figure of the annotation its
    label comes from: GROBID's trainer starts a new sequence at each figure's
    end."""
    stream = _normalised(annotated)
    figure_of: list[int] = []
    figure = 0
    for token, _ in stream:
        figure_of.append(figure)
        if token == _FIGURE_END:
            figure += 1
    labels: list[str | None] = []
    parts: list[int] = []
    at = 0
    for row in rows:
        i = _find(stream, at, normalise_token(row[0]))
        labels.append(stream[i][1] if i >= 0 else None)
        if i >= 0:
            at = i + 1
            parts.append(figure_of[i])
    kept = [(row, label) for row, label in zip(rows, labels, strict=True) if label is not None]
    labelled = sum(label is not None for _, label in stream)
    return _Aligned([r for r, _ in kept], [label for _, label in kept], len(kept), 0,
                    len(rows) - len(kept), parts, labelled)


# -- the corpora -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CorpusFormat:
    """How one model's corpus is read: its TEI handler, its raw files' column
    count and how rows are aligned."""

    model: str
    columns: int
    handler: Callable[[], _TeiHandler]
    align: Callable[[list[list[str]], _Annotated], _Aligned]
    #: the raw file's name for a TEI file's: the TEI name without ``.tei.xml``
    raw_names_from_id: tuple[str, ...] = ()
    read: Callable[[Path, int], list[list[str]]] = read_rows


FORMATS: dict[str, CorpusFormat] = {
    "segmentation": CorpusFormat("segmentation", 33, _SegmentationHandler,
                                 _align_segmentation),
    "header": CorpusFormat("header", 32, _HeaderHandler,
                           lambda rows, a: _align_tokens(rows, a, fill_gaps=True),
                           raw_names_from_id=(".header", ".training.header")),
    "reference-segmenter": CorpusFormat("reference-segmenter", 28,
                                        _ReferenceSegmenterHandler,
                                        lambda rows, a: _align_tokens(rows, a, fill_gaps=False)),
    # GROBID's FulltextTrainer pairs rows as its SegmentationTrainer does
    "fulltext": CorpusFormat("fulltext", 27, _FulltextHandler, _align_segmentation),
    **{model: CorpusFormat(model, 27, _FigureHandler, _align_figures, read=read_figure_rows)
       for model in ("figure", "table")},
}


def corpus_format(model: str) -> CorpusFormat:
    return entry(FORMATS, model, "GROBID corpus format")


def _tei_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir()
                  if p.is_file() and (p.name.endswith(".tei.xml") or p.name.endswith(".tei")))


def _raw_for(fmt: CorpusFormat, tei: Path, doc_id: str | None, raw: dict[str, Path]) -> Path | None:
    if doc_id is not None and fmt.raw_names_from_id:
        for suffix in fmt.raw_names_from_id:
            if doc_id + suffix in raw:
                return raw[doc_id + suffix]
        # a document id shared by several raw files ("_download"): one per name
        for name in sorted(raw):
            if name.startswith(doc_id + "._") and name.endswith(fmt.raw_names_from_id):
                return raw[name]
    return raw.get(tei.name.removesuffix(".tei.xml"))


def read_document(model: str, tei: Path, raw: Path) -> LabelledSequence:
    """One annotated document as a labelled sequence (a figure or table
    document: its first figure's); raises ConfigError (with the reason) if it
    cannot be used."""
    read = CorpusRead(model, tei.parent)
    _read_pair(corpus_format(model), tei, raw, read)
    if read.skipped:
        skip = read.skipped[0]
        raise ConfigError(f"{tei.name}: {skip.reason}: {skip.detail}")
    return read.sequences[0]


def _read_pair(fmt: CorpusFormat, tei: Path, raw_path: Path | None, read: CorpusRead,
               annotated: _Annotated | None = None) -> None:
    doc = tei.name.removesuffix(".tei.xml")
    try:
        if annotated is None:
            annotated = _parse_tei(tei, fmt.handler())
        if raw_path is None:
            raise _Unusable(SkipReason.NO_RAW_FILE, f"no raw file for {tei.name}")
        rows = fmt.read(raw_path, fmt.columns)
        if not rows or not annotated.tokens:
            raise _Unusable(SkipReason.EMPTY, f"{len(rows)} raw rows, "
                            f"{len(annotated.tokens)} annotated tokens")
        aligned = fmt.align(rows, annotated)
        share = (aligned.matched + aligned.guessed) / len(rows)
        if aligned.annotated:
            # a figure run the annotator left out is not misalignment
            share = max(share, aligned.matched / aligned.annotated)
        if share < MIN_ALIGNED:
            detail = f"{aligned.matched + aligned.guessed} of {len(rows)} rows labelled"
            if aligned.annotated:
                detail += f", of {aligned.annotated} annotated tokens"
            raise _Unusable(SkipReason.MISALIGNED, detail)
    except _Unusable as e:
        read.skipped.append(Skip(doc, e.reason, e.detail))
        return
    except xml.sax.SAXException as e:
        read.skipped.append(Skip(doc, SkipReason.BAD_XML, f"{tei.name}: {e}"))
        return
    labels = [label for label in aligned.labels if label is not None]
    if aligned.parts is None:
        read.sequences.append(LabelledSequence(doc, aligned.rows, labels))
    else:
        # a sequence per figure, all of one document (cross-validation keeps them together)
        for part in sorted(set(aligned.parts)):
            keep = [k for k, p in enumerate(aligned.parts) if p == part]
            read.sequences.append(LabelledSequence(doc, [aligned.rows[k] for k in keep],
                                                   [labels[k] for k in keep]))
    read.rows += len(rows)
    read.matched += aligned.matched
    read.guessed += aligned.guessed
    read.dropped += aligned.dropped


def read_corpus(model: str, directory: Path) -> CorpusRead:
    """Every document of a GROBID corpus directory (``raw/`` and ``tei/``) for
    ``model``, in the order of the TEI files' names. Raw files that no TEI file
    claims are counted as skipped (``no-tei-file``)."""
    fmt = corpus_format(model)
    tei_dir, raw_dir = directory / "tei", directory / "raw"
    if not tei_dir.is_dir() or not raw_dir.is_dir():
        raise ConfigError(f"{directory} is not a GROBID corpus directory (no tei/ and raw/)")
    raw = {p.name: p for p in raw_dir.iterdir() if p.is_file()}
    read = CorpusRead(model, directory)
    used: set[str] = set()
    for tei in _tei_files(tei_dir):
        try:
            annotated = _parse_tei(tei, fmt.handler())
        except xml.sax.SAXException as e:
            doc = tei.name.removesuffix(".tei.xml")
            read.skipped.append(Skip(doc, SkipReason.BAD_XML, f"{tei.name}: {e}"))
            used.add(doc)  # its raw file is this document's, counted once
            continue
        raw_path = _raw_for(fmt, tei, annotated.doc_id, raw)
        if raw_path is not None:
            used.add(raw_path.name)
        _read_pair(fmt, tei, raw_path, read, annotated)
    for name in sorted(set(raw) - used):
        read.skipped.append(Skip(name, SkipReason.NO_TEI_FILE, f"no annotation for {name}"))
    return read


def iter_rows(sequences: Sequence[LabelledSequence]) -> Iterator[list[str]]:
    for seq in sequences:
        yield from seq.rows
