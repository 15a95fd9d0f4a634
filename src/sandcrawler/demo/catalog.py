"""The offline demo's catalog: Crossref-shaped works, so that the demo can show
documents identified and references resolved (docs/matching-documents.md).

Built from ``articles.json`` when the demo runs: the five articles with their
real metadata, and the works cited by half the references of the two articles
whose references the demo reads without GROBID, under stand-in DOIs
(``10.5555/sandcrawler-demo.<article>.<n>``), so the demo shows references that
find nothing too (docs/ingest.md, "The demo's catalog").
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

from sandcrawler.demo import SITE

#: Crossref's test prefix: no registered work has a DOI under it
STAND_IN_PREFIX = "10.5555/sandcrawler-demo"
#: the articles whose references the demo resolves without GROBID
RESOLVED = ("plos", "scielo")
#: when the demo's works were "indexed" (fixed: a rerun writes nothing new)
INDEXED = "2026-11-26T00:00:00Z"


@cache
def articles() -> tuple[dict[str, Any], ...]:
    data = json.loads((SITE.parent / "articles.json").read_text(encoding="utf-8"))
    return tuple(data["articles"])


def _person(name: str) -> dict[str, str]:
    """``Yang Li`` or ``CA Monteiro``: the last word is the family name (the
    references' compact initials first, as PubMed writes them)."""
    given, _, family = name.strip().rpartition(" ")
    return {"given": given, "family": family} if given else {"family": family}


def _pages(first: Any, last: Any = None) -> str | None:
    if not first:
        return None
    return f"{first}-{last}" if last else str(first)


def _year(value: Any) -> int | None:
    m = re.match(r"\s*(\d{4})", str(value or ""))
    return int(m.group(1)) if m else None


def article_work(article: dict[str, Any]) -> dict[str, Any]:
    """One of the five articles as the Crossref REST API describes a work."""
    authors = [{"given": a["given"], "family": a["surname"]} if a.get("surname")
               else _person(a["name"]) for a in article["authors"]]
    parts = [int(p) for p in article["date"].split("-")]
    work: dict[str, Any] = {
        "DOI": article["doi"], "type": "journal-article", "title": [article["title"]],
        "author": authors, "issued": {"date-parts": [parts]},
        "container-title": [article["journal"]], "publisher": article.get("publisher"),
        "ISSN": [article["issn"]] if article.get("issn") else [],
        "indexed": {"date-time": INDEXED}}
    if article.get("journal_abbrev"):
        work["short-container-title"] = [article["journal_abbrev"]]
    for key in ("volume", "issue"):
        if article.get(key):
            work[key] = article[key]
    if page := _pages(article.get("first_page"), article.get("last_page")):
        work["page"] = page
    return work


def reference_work(key: str, index: int, ref: dict[str, Any], *,
                   sparse: bool = False) -> dict[str, Any] | None:
    """The work a reference cites, as far as the reference says; None for a
    reference without a title (a book known by its name only)."""
    title = ref.get("title")
    if not title:
        return None
    work: dict[str, Any] = {"DOI": f"{STAND_IN_PREFIX}.{key}.{index}",
                            "type": "journal-article", "title": [title],
                            "indexed": {"date-time": INDEXED}}
    authors = [_person(n) for n in ref.get("authors") or ()]
    if sparse:  # as many catalog records are: first surname, abbreviation, locator
        work["author"] = authors[:1] and [{"family": authors[0]["family"]}]
        if ref.get("container"):
            work["short-container-title"] = [ref["container"]]
    else:
        work["author"] = authors
        if ref.get("container"):
            work["container-title"] = [ref["container"]]
        if year := _year(ref.get("year")):
            work["issued"] = {"date-parts": [[year]]}
        if ref.get("issue"):
            work["issue"] = ref["issue"]
    if ref.get("volume"):
        work["volume"] = ref["volume"]
    if page := ref.get("pages") or _pages(ref.get("first_page"), ref.get("last_page")):
        work["page"] = page
    return work


def demo_works() -> list[dict[str, Any]]:
    """Every work of the demo's catalog: the articles, then the reference targets."""
    works = [article_work(a) for a in articles()]
    for article in articles():
        if article["key"] not in RESOLVED:
            continue
        targets = [(i, ref) for i, ref in enumerate(article["references"]) if i % 2 == 0]
        for n, (i, ref) in enumerate(targets):
            if (w := reference_work(article["key"], i, ref, sparse=n % 3 == 2)) is not None:
                works.append(w)
    return works
