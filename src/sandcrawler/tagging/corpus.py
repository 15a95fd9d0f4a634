"""The one reader of GROBID's TEI training corpora of short texts: a citation's
``<bibl>``, a header's ``<author>`` block, each a labelled text.

A text keeps a label and a field number per character, so that any tokenization
of it gets its labels and field starts; the citation parser and the name and
affiliation models differ only in the small :class:`TeiReading` they pass.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from sandcrawler.core.errors import ConfigError
from sandcrawler.tagging.scoring import BEGIN, OTHER
from sandcrawler.tagging.tokens import Token, tokenize

#: tag, attributes -> label; None: the element only holds text or other elements
LabelOf = Callable[[str, Mapping[str, str]], str | None]


@dataclass(frozen=True, slots=True)
class TeiReading:
    """How one kind of corpus is read.

    - ``unit``: the element that is one sequence (``bibl``, ``author``);
    - ``label_of``: an annotation element's label (None: not an annotation);
    - ``outside``: the label of text outside annotations;
    - ``breaks``: elements that are a line break, and ``line_break`` what they become;
    - ``normalize``: applied to each piece of text (``None``: as written);
    - ``split_glued``: two fields written without a space get one, as GROBID
      tokenizes each field apart;
    - ``spaces_keep_label``: a space between two characters of one label has that
      label (else the outside label), so that runs of a label read whole.
    """

    unit: str
    label_of: LabelOf
    outside: str
    breaks: frozenset[str] = frozenset({"lb", "pb"})
    line_break: str = "\n"
    normalize: Callable[[str], str] | None = None
    split_glued: bool = True
    spaces_keep_label: bool = False


@dataclass(frozen=True, slots=True)
class LabelledText:
    """One training sequence: the text with whitespace collapsed, a label and a
    field number per character (a space has field -1)."""

    text: str
    char_labels: tuple[str, ...]
    char_fields: tuple[int, ...]
    source: str  # file name, for folds and messages

    def plain_labels(self, tokens: Sequence[Token] | None = None) -> list[str]:
        """A token's label is its first character's."""
        found = tokens if tokens is not None else tokenize(self.text)
        return [self.char_labels[t.start] for t in found]

    def token_labels(self, tokens: Sequence[Token] | None = None) -> list[str]:
        """GROBID's labels: a token takes the label of its first character, marked
        ``I-`` where a new field starts."""
        out: list[str] = []
        previous = -1
        for tok in tokens if tokens is not None else tokenize(self.text):
            label, number = self.char_labels[tok.start], self.char_fields[tok.start]
            out.append(BEGIN + label if number != previous else label)
            previous = number
        return out

    def fields(self, outside: str = OTHER) -> list[tuple[str, str]]:
        """(label, text) of each annotated field, in order, ``outside`` left out."""
        spans: dict[int, list[int]] = {}
        labels: dict[int, str] = {}
        for i, number in enumerate(self.char_fields):
            if number >= 0 and self.char_labels[i] != outside:
                spans.setdefault(number, [i, i])[1] = i
                labels[number] = self.char_labels[i]
        return [(labels[n], self.text[a : b + 1]) for n, (a, b) in sorted(spans.items())]

    def spans(self, outside: str = OTHER) -> list[tuple[str, str]]:
        """(label, text) of each maximal run of one label, ``outside`` left out."""
        out: list[tuple[str, str]] = []
        run_label, run_start = None, 0
        for i, label in enumerate((*self.char_labels, None)):
            if label != run_label:
                if run_label not in (None, outside):
                    piece = self.text[run_start:i].strip()
                    if piece:
                        out.append((run_label, piece))
                run_label, run_start = label, i
        return out


class _Builder:
    """Collects (text, label, field) pieces into a :class:`LabelledText`."""

    def __init__(self, reading: TeiReading) -> None:
        self.reading = reading
        self.chars: list[str] = []
        self.labels: list[str] = []
        self.fields: list[int] = []
        self.pending = ""  # whitespace seen since the last character: "", " " or a break

    def newline(self) -> None:
        self.pending = self.reading.line_break

    def add(self, text: str, label: str, number: int) -> None:
        reading = self.reading
        if reading.normalize is not None:
            text = reading.normalize(text)
        for ch in text:
            if ch.isspace():
                if self.pending != reading.line_break:
                    self.pending = " "
                continue
            if self.chars:
                glued = (reading.split_glued and not self.pending
                         and self.fields[-1] != number
                         and self.chars[-1].isalnum() and ch.isalnum())
                gap = self.pending or (" " if glued else "")
                if gap:
                    keep = reading.spaces_keep_label and self.labels[-1] == label
                    self.chars.append(gap)
                    self.labels.append(label if keep else reading.outside)
                    self.fields.append(-1)
            self.pending = ""
            self.chars.append(ch)
            self.labels.append(label)
            self.fields.append(number)

    def build(self, source: str) -> LabelledText | None:
        if not self.chars:
            return None
        return LabelledText("".join(self.chars), tuple(self.labels), tuple(self.fields), source)


def local_name(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _walk(elem: ET.Element, label: str, number: int, reading: TeiReading, out: _Builder,
          counter: Iterator[int]) -> None:
    """Text inside an annotated element has its label and one field number; text
    between annotations has the outside label, one field per run (a line break
    inside a run does not end it)."""
    outside = reading.outside
    if elem.text:
        out.add(elem.text, label, number)
    for child in elem:
        tag = local_name(child.tag)
        if tag in reading.breaks:
            out.newline()
        else:
            child_label = reading.label_of(tag, child.attrib) if label == outside else None
            if child_label is not None:
                _walk(child, child_label, next(counter), reading, out, counter)
            else:
                _walk(child, label, number if label != outside else next(counter), reading,
                      out, counter)
        if child.tail:
            if label == outside and tag not in reading.breaks:
                number = next(counter)
            out.add(child.tail, label, number)


def read_tei(path: Path, reading: TeiReading) -> list[LabelledText]:
    """Every ``reading.unit`` element of a TEI file as a labelled text, in document
    order."""
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        raise ConfigError(f"{path}: not well-formed XML: {e}") from e
    out = []
    counter = iter(range(1 << 62))
    for elem in root.iter():
        if local_name(elem.tag) == reading.unit:
            builder = _Builder(reading)
            _walk(elem, reading.outside, next(counter), reading, builder, counter)
            text = builder.build(path.name)
            if text is not None:
                out.append(text)
    return out


def corpus_files(directory: Path) -> list[Path]:
    """The ``*.xml`` files of a corpus directory, sorted by name."""
    if not directory.is_dir():
        raise ConfigError(f"corpus directory {directory} does not exist")
    files = sorted(p for p in directory.iterdir() if p.suffix == ".xml" and p.is_file())
    if not files:
        raise ConfigError(f"no .xml files in corpus directory {directory}")
    return files


def read_corpus(directory: Path, reading: TeiReading) -> list[LabelledText]:
    """The sequences of every ``*.xml`` of a directory, in a stable order (sorted
    file names, document order)."""
    return [t for path in corpus_files(directory) for t in read_tei(path, reading)]
