"""The body of a document as the cascade reads it (``extract --full``, the
GROBID-compatible service's ``processFulltextDocument``): sections of
paragraphs whose callouts point at references, figures, tables and formulas,
laid out as GROBID's full-text TEI lays out its ``<body>``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

#: a region of a page, as GROBID's ``coords``: page (1-based), x, y, width and
#: height in PDF points from the page's top left
Box = tuple[int, float, float, float, float]


class CalloutKind(StrEnum):
    """What a callout points at; the values are GROBID's ``<ref type>``."""

    BIBR = "bibr"
    FIGURE = "figure"
    TABLE = "table"
    FORMULA = "formula"


@dataclass(slots=True)
class Callout:
    """A callout in a paragraph: ``text[start:end]`` of the paragraph, and the
    ``xml:id`` it points at ("b3", "fig_0", "tab_1", "formula_2") when one
    was found."""

    kind: CalloutKind
    text: str
    start: int
    end: int
    target: str | None = None
    boxes: list[Box] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"type": str(self.kind), "text": self.text, "start": self.start,
                "end": self.end, "target": self.target}


@dataclass(slots=True)
class Paragraph:
    """A paragraph, or a list item (``item``), with its callouts in order."""

    text: str
    callouts: list[Callout] = field(default_factory=list)
    #: one box per printed line, and the characters of ``text`` each holds
    #: (``teiCoordinates`` for sentences picks the lines a sentence spans)
    boxes: list[Box] = field(default_factory=list)
    box_spans: list[tuple[int, int]] = field(default_factory=list)
    item: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"text": self.text,
                               "citations": [c.to_json() for c in self.callouts]}
        if self.item:
            out["item"] = True
        return out


@dataclass(slots=True)
class Formula:
    """A display equation (GROBID's ``<formula xml:id="formula_N">``)."""

    id: str
    text: str
    label: str | None = None
    boxes: list[Box] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"formula": self.text, "id": self.id, "label": self.label}


@dataclass(slots=True)
class Section:
    """A ``<div>``: its head (``None`` for text before the first heading), the
    head's number ("2.1") when it has one, and its paragraphs and formulas in
    reading order."""

    head: str | None
    number: str | None = None
    blocks: list[Paragraph | Formula] = field(default_factory=list)
    boxes: list[Box] = field(default_factory=list)

    @property
    def paragraphs(self) -> list[Paragraph]:
        return [b for b in self.blocks if isinstance(b, Paragraph)]

    def to_json(self) -> dict[str, Any]:
        # every entry of "paragraphs" has text and citations; formulas beside them
        return {"head": self.head, "number": self.number,
                "paragraphs": [p.to_json() for p in self.paragraphs],
                "formulas": [b.to_json() for b in self.blocks if isinstance(b, Formula)]}


@dataclass(slots=True)
class Figure:
    """A figure or a table (``kind`` "table"; ids "fig_N" and "tab_N" as
    GROBID's): its label ("3"), head ("Figure 3"), description (the caption),
    and a table's content as rows of cells."""

    id: str
    kind: str = "figure"
    label: str | None = None
    head: str | None = None
    description: str | None = None
    rows: list[list[str]] = field(default_factory=list)
    note: str | None = None
    boxes: list[Box] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "type": self.kind, "label": self.label,
                               "head": self.head, "description": self.description}
        if self.kind == "table":
            out["rows"] = self.rows
            if self.note:
                out["note"] = self.note
        return out


@dataclass(slots=True)
class Body:
    """The document's body: its sections, figures and tables, and footnotes."""

    sections: list[Section] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    footnotes: list[Paragraph] = field(default_factory=list)

    def callouts(self) -> list[Callout]:
        return [c for s in self.sections for p in s.paragraphs for c in p.callouts]

    def text(self) -> str:
        """The body's plain text: heads and paragraphs, a blank line between."""
        parts: list[str] = []
        for section in self.sections:
            if section.head:
                parts.append(" ".join(filter(None, (section.number, section.head))))
            parts.extend(b.text for b in section.blocks)
        return "\n\n".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {"sections": [s.to_json() for s in self.sections],
                "figures": [f.to_json() for f in self.figures],
                "footnotes": [p.to_json() for p in self.footnotes]}
