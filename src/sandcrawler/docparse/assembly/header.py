"""A header's labelled tokens to a biblio: title, authors (through the name
model), affiliations (through the affiliation model, linked to authors by their
markers), date, identifiers, the journal reference line (through the citation
parser), abstract and keywords. Which field comes from which label:
docs/extraction.md, "Notes by module".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from grobid_tei_xml.types import GrobidAffiliation, GrobidAuthor, GrobidBiblio

from sandcrawler.citations.crf.biblio import find_arxiv, find_doi, normalize_date
from sandcrawler.docparse.assembly.titles import main_title, retitle
from sandcrawler.docparse.layout.elements import Token
from sandcrawler.docparse.layout.text import join_tokens
from sandcrawler.tagging.scoring import fields

_AFTER_HEAD = r"\b[\s.:\-\u2014\u2013]*"
_ABSTRACT_HEAD = re.compile(r"^\s*(?:a\s?b\s?s\s?t\s?r\s?a\s?c\s?t|summary|résumé)"
                            + _AFTER_HEAD, re.IGNORECASE)
_KEYWORDS_HEAD = re.compile(r"^\s*(?:key\s?words?|index terms|mots[- ]cl[ée]s)" + _AFTER_HEAD,
                            re.IGNORECASE)
_KEYWORD_SPLIT = re.compile(r"\s*[;,·•|]\s*|\s+[-\u2014\u2013]\s+")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
#: a title is at most this many characters (a longer one is a mislabelled paragraph)
MAX_TITLE = 600


@dataclass(slots=True)
class LinkedAffiliation:
    affiliation: GrobidAffiliation
    #: the marker printed before it ("1", "a", "*"), if any
    marker: str | None = None


@dataclass(slots=True)
class LinkedAuthor:
    author: GrobidAuthor
    #: the affiliation markers printed after the name
    markers: list[str] = field(default_factory=list)


class HeaderModels(Protocol):
    """The sub-models a header needs (the cascade's)."""

    def authors(self, text: str) -> list[LinkedAuthor]: ...

    def affiliations(self, text: str) -> list[LinkedAffiliation]: ...


@dataclass(slots=True)
class Header:
    biblio: GrobidBiblio
    abstract: str | None = None
    keywords: list[str] = field(default_factory=list)


def build_header(tokens: Sequence[Token], labels: Sequence[str], models: HeaderModels,
                 parse_reference: Callable[[str], GrobidBiblio]) -> Header:
    texts: dict[str, list[str]] = {}
    affiliation_texts: list[str] = []
    titles: list[str] = []
    for label, start, end in fields(retitle(tokens, labels)):
        text = join_tokens(tokens[start:end])
        if not text:
            continue
        texts.setdefault(label, []).append(text)
        if label == "<title>" and len(title := main_title(tokens[start:end])) <= MAX_TITLE:
            titles.append(title)
        elif label == "<affiliation>":
            affiliation_texts.append(text)
        elif label == "<address>" and affiliation_texts:
            affiliation_texts[-1] += ", " + text
    biblio = GrobidBiblio(authors=[])
    if titles:
        biblio.title = _one_line(titles[0])
    linked = _authors(texts.get("<author>", ()), models)
    affiliations = [a for text in affiliation_texts for a in models.affiliations(text)]
    biblio.authors = _link(linked, affiliations)
    _emails(biblio.authors, texts.get("<email>", ()))
    for text in texts.get("<date>", ()):
        if date := normalize_date(text):
            biblio.date = date
            break
    _identifiers(biblio, texts.get("<pubnum>", ()), " ".join(" ".join(v) for v in texts.values()))
    for text in texts.get("<reference>", ()):
        add_reference_line(biblio, parse_reference(text))
    abstract = " ".join(texts.get("<abstract>", ()))
    abstract = _ABSTRACT_HEAD.sub("", abstract, count=1).strip()
    keywords = [k for text in texts.get("<keyword>", ())
                for k in _KEYWORD_SPLIT.split(_KEYWORDS_HEAD.sub("", text, count=1).strip())
                if k and len(k) <= 200]
    return Header(biblio, abstract or None, keywords)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _link(authors: list[LinkedAuthor],
          affiliations: list[LinkedAffiliation]) -> list[GrobidAuthor]:
    if not affiliations:
        return [a.author for a in authors]
    by_marker = {a.marker: a.affiliation for a in affiliations if a.marker}
    out = []
    for linked in authors:
        author = linked.author
        found = [by_marker[m] for m in linked.markers if m in by_marker]
        if found:
            author = replace(author, affiliation=found[0])
        elif len(affiliations) == 1 and (not linked.markers or not by_marker):
            author = replace(author, affiliation=affiliations[0].affiliation)
        out.append(author)
    return out


def _authors(texts: Sequence[str], models: HeaderModels) -> list[LinkedAuthor]:
    """The persons of the author fields, each once: a name printed again (the
    corresponding author's block, "Correspondência: Roseli Mieko Yamamoto
    Nomura") is someone already listed, even where the name model, given the
    name alone, cuts it in two."""
    out: list[LinkedAuthor] = []
    for text in texts:
        listed = {_letters(a.author.full_name) for a in out}
        if _letters(text) in listed:
            continue
        out.extend(a for a in models.authors(text) if _letters(a.author.full_name) not in listed)
    return out


def _letters(name: str | None) -> str:
    return "".join(c for c in (name or "").casefold() if c.isalpha())


def _emails(authors: list[GrobidAuthor], texts: Sequence[str]) -> None:
    """Emails in order of the authors when there is one per author."""
    found = [m.group() for text in texts for m in _EMAIL.finditer(text)]
    if found and len(found) == len(authors):
        for author, email in zip(authors, found, strict=True):
            author.email = email


def _identifiers(biblio: GrobidBiblio, pubnums: Sequence[str], everything: str) -> None:
    for text in (*pubnums, everything):
        if biblio.doi is None and (doi := find_doi(text)):
            biblio.doi = doi
        if biblio.arxiv_id is None and (arxiv := find_arxiv(text)):
            biblio.arxiv_id = arxiv


def add_reference_line(biblio: GrobidBiblio, ref: GrobidBiblio) -> None:
    """What a journal reference line (the header's, a running head's) adds to the
    header (never replaces; its DOI is left to the identifiers' finder)."""
    for name in ("journal", "journal_abbrev", "volume", "issue", "pages", "first_page",
                 "last_page", "publisher", "date"):
        if getattr(biblio, name) is None and (value := getattr(ref, name)):
            setattr(biblio, name, value)
