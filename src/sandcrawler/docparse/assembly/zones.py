"""Corrections of the segmentation's zones that the page makes plain (its
model labels a line by its features alone, trained mostly on English papers):

- a header zone run on over the introduction ends at the introduction's head,
  where that cannot be a title: numbered ("1 Introduction", the number maybe
  on a line of its own), or after the abstract's or keywords' line;
- a bibliography headed in another language ("Referências", "Bibliografía")
  left in the body goes to the references, up to the next heading of back
  matter ("Anexo", "Appendix") or the rest of the list in the references;
- arXiv's margin stamp ("arXiv:0908.0054v1 [astro-ph.CO] 1 Aug 2009") is a
  running head's kind of line, never the body's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from sandcrawler.docparse.layout.elements import Line

HEADER = "<header>"
BODY = "<body>"
HEADNOTE = "<headnote>"
REFERENCES = "<references>"

#: a bibliography's heading, in the languages of the journals we read (English,
#: Portuguese, Spanish, French, German, Italian, Dutch), alone on its line
_REFERENCES_HEAD = re.compile(
    r"^(?:\d{1,2}\.?\s+|[IVX]{1,4}\.?\s+)?(?:references?(?:\s+cited)?|literature\s+cited"
    r"|works\s+cited|literatura\s+(?:citada|consultada)|obras\s+citadas|bibliography"
    r"|refer[êe]ncias(?:\s+bibliogr[áa]ficas)?"
    r"|referencias(?:\s+bibliogr[áa]ficas)?|bibliograf[íi]a|r[ée]f[ée]rences(?:\s+"
    r"bibliographiques)?|bibliographie|literatur(?:verzeichnis)?|quellenverzeichnis"
    r"|riferimenti\s+bibliografici|literatuur(?:lijst)?)\s*:?$", re.IGNORECASE)
#: back matter after a bibliography: it ends there
_BACK_HEAD = re.compile(
    r"^(?:\d{1,2}\.?\s+|[A-Z]\.?\s+)?(?:appendix|appendices|anexos?|ap[êe]ndices?|annexe?s?"
    r"|anhang|supplementary|supporting information|notes?|notas|tables?|tabelas?|tablas?"
    r"|figures?|figuras?|acknowledge?ments?|agradecimentos|agradecimientos|remerciements"
    r"|danksagung)\b.{0,40}$", re.IGNORECASE)

_ARXIV_STAMP = re.compile(
    r"^arXiv:\s?(?:\d{4}\.\d{4,5}|[a-z][a-z\-]+(?:\.[A-Z]{2})?/\d{7})v\d+\s*\[[\w.\-]+\]"
    r"\s*\d{1,2}\s+[A-Z][a-z]{2}\s+\d{4}$")

_FIRST_HEAD = r"(?:introduction|background|motivation)\b[^a-z]{0,3}(?:\w+\s*){0,5}$"
_NUMBERED_HEAD = re.compile(r"^(?:1|I)\.?\s+" + _FIRST_HEAD, re.IGNORECASE)
_HEAD = re.compile(r"^" + _FIRST_HEAD, re.IGNORECASE)
_NUMBER = re.compile(r"^(?:1|I)\.?$")
_ABSTRACT = re.compile(r"^(?:abstract|summary|key\s*words|keywords|index terms)\b",
                       re.IGNORECASE)
#: a first head is short
MAX_HEAD = 60


def body_out_of_header(lines: Sequence[Line], zones: Sequence[str]) -> list[str]:
    """``zones`` with the introduction the header zone took given back to the body."""
    out = list(zones)
    abstract = False
    for i, (line, zone) in enumerate(zip(lines, zones, strict=True)):
        if zone != HEADER:
            continue
        text = line.text.strip()
        if len(text) <= MAX_HEAD and _starts_body(text, lines, zones, i, abstract):
            j = i
            while j < len(out) and out[j] == HEADER:
                out[j] = BODY
                j += 1
            return out
        abstract = abstract or bool(_ABSTRACT.match(text))
    return out


def references_after_heading(lines: Sequence[Line], zones: Sequence[str]) -> list[str]:
    """``zones`` with a bibliography the segmentation left in the body given to
    the references (see the module's docstring)."""
    out = list(zones)
    head = next((i for i in range(len(lines) - 1, -1, -1)
                 if out[i] in (BODY, REFERENCES) and len(lines[i].text) <= MAX_HEAD
                 and _REFERENCES_HEAD.match(lines[i].text.strip())), None)
    if head is None:
        return out
    # where the list is in the references further on, only its first entries,
    # taken for the body's (set in bold, say), are given back to it
    end = next((i for i in range(head + 1, len(out)) if out[i] == REFERENCES), len(lines))
    if end == head + 1:
        return out
    out[head] = REFERENCES  # the heading with its list, as GROBID's segmentation has it
    for i in range(head + 1, end):
        text = lines[i].text.strip()
        if out[i] == BODY and len(text) <= MAX_HEAD and _BACK_HEAD.match(text):
            break
        if out[i] == BODY:
            out[i] = REFERENCES
    return out


def stamps_apart(lines: Sequence[Line], zones: Sequence[str]) -> list[str]:
    """``zones`` with arXiv's margin stamp set apart from the body and header."""
    return [HEADNOTE if _ARXIV_STAMP.match(line.text.strip()) else zone
            for line, zone in zip(lines, zones, strict=True)]


def _starts_body(text: str, lines: Sequence[Line], zones: Sequence[str], i: int,
                 abstract: bool) -> bool:
    if _NUMBERED_HEAD.match(text):
        return True
    if _NUMBER.match(text) and i + 1 < len(lines) and zones[i + 1] == HEADER:
        following = lines[i + 1].text.strip()
        return len(following) <= MAX_HEAD and bool(_HEAD.match(following))
    return abstract and bool(_HEAD.match(text))


#: the corrections, in the order the cascade applies them
ZONE_CORRECTIONS: tuple[Callable[[Sequence[Line], Sequence[str]], list[str]], ...] = (
    body_out_of_header, references_after_heading, stamps_apart)
