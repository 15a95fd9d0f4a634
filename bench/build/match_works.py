"""Crossref-shaped works from the public sources in bench/data/match/source/, and the
biblios (``refs_json``-shaped queries) made from them. Imported by match_data.py.

A work of Crossref's reference-matching-evaluation is rebuilt from two of the strings
citeproc rendered from its real Crossref record: IEEE quotes the title as deposited
(case kept), APA gives the authors as "Family, I. I." with the year, and the
container, volume, issue and pages after the title. Works whose strings do not parse
that way are left out, so every field of a rebuilt work is one the record had.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

DATA_DIR = Path(__file__).resolve().parents[1] / "data" / "match"
SOURCE_DIR = DATA_DIR / "source"

#: the ``indexed`` stamp of every work we write: persist needs one, its value is moot
INDEXED = {"date-parts": [[2024, 1, 1]], "date-time": "2024-01-01T00:00:00Z",
           "timestamp": 1704067200000}

_MONTHS = {m: i for i, m in enumerate(
    ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"], 1)}
_APA_HEAD = re.compile(
    r"^(?P<authors>.*?)\s*\((?P<year>\d{4})[a-z]?(?:, [^)]*)?\)\.\s+(?P<rest>.*)$", re.S)
_IEEE_TITLE = re.compile(r"\u201c(?P<title>.+?),?\u201d", re.S)
_IEEE_MONTH = re.compile(r"\b(?P<mon>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\w*\.? "
                         r"(?P<year>\d{4})\.?$")
_RANGE = re.compile(r"^\w*\d+\w*\s*[\u2013-]\s*\w*\d+\w*$")
_PROCEEDINGS = re.compile(r"Conference|Proceedings|Symposium|Workshop|Congress|Meeting", re.I)
_INITIALS = re.compile(r"^(?:[^\W\d_]{1,3}\.[\s-]*)+$")
_CONTAINER = re.compile(r"^(?P<container>.+?),\s+(?P<volume>[^,()]+?)?\s*"
                        r"(?:\((?P<issue>[^()]*(?:\([^()]*\))?[^()]*)\))?"
                        r"(?:,\s+(?P<pages>[^,]+?))?\.?$")


def read_gz_lines(path: Path) -> Iterator[dict[str, Any]]:
    with gzip.open(path, "rb") as f:
        for line in f:
            yield orjson.loads(line)


def parse_apa_authors(text: str) -> list[dict[str, str]] | None:
    """"Shea, M. J., & Compton, R. N." -> [{given, family}]; None if it is not that shape."""
    text = text.strip().rstrip(".").replace("\u2026", ",").replace(", &", ",").replace(" & ", ", ")
    if not text:
        return []
    tokens = [t.strip() for t in text.split(",") if t.strip()]
    out: list[dict[str, str]] = []
    i = 0
    while i < len(tokens):
        family = tokens[i]
        given = tokens[i + 1] + "." if i + 1 < len(tokens) else ""
        if i + 1 < len(tokens) and _INITIALS.match(given.replace("..", ".")):
            out.append({"given": given.replace("..", "."), "family": family})
            i += 2
        else:
            return None  # an organisation, a name in another order: not APA's "Family, I."
    return out


def parse_pages(pages: str | None) -> str | None:
    if not pages:
        return None
    p = pages.strip().removeprefix("pp. ").removeprefix("p. ").replace("\u2013", "-")
    return p or None


def rme_work(row: dict[str, Any]) -> dict[str, Any] | None:
    """The Crossref work behind one DOI of the reference-matching-evaluation data, or
    None when its APA and IEEE strings do not give title, authors and year plainly."""
    styles: dict[str, str] = row["styles"]
    apa, ieee = styles.get("apa"), styles.get("ieee")
    if not apa or not ieee:
        return None
    head = _APA_HEAD.match(apa)
    if not head:
        return None
    authors = parse_apa_authors(head["authors"])
    if authors is None:
        return None
    rest = head["rest"].strip()
    m = _IEEE_TITLE.search(ieee)
    title: str | None = None
    if m:
        title = " ".join(m["title"].split())
        flat = " ".join(rest.split())
        if not flat.lower().startswith(title.lower()):
            return None
        tail = flat[len(title):].lstrip(".?!").strip()
    else:
        tail = " ".join(rest.split())  # a record without a title: APA starts at the container
    work: dict[str, Any] = {"DOI": row["doi"], "type": "other", "indexed": INDEXED}
    if title:
        work["title"] = [title]
    if authors:
        work["author"] = [dict(a, sequence="first" if i == 0 else "additional")
                          for i, a in enumerate(authors)]
    date_parts = [int(head["year"])]
    mon = _IEEE_MONTH.search(ieee.strip())
    if mon and mon["year"] == head["year"]:
        date_parts.append(_MONTHS[mon["mon"]])
    work["issued"] = {"date-parts": [date_parts]}
    if tail.startswith("In "):
        work["type"] = "book-chapter"
    elif tail:
        c = _CONTAINER.match(tail)
        if c and c["container"] and (c["volume"] or c["pages"]):
            volume, pages = c["volume"], c["pages"]
            if volume and not pages and _RANGE.match(volume):
                # "Book Title, 440-451.": APA's chapter in a book, pages without volume
                volume, pages = None, volume
            work["type"] = "journal-article" if volume else "book-chapter"
            work["container-title"] = [c["container"].strip()]
            if volume:
                work["volume"] = volume.strip()
            if c["issue"]:
                work["issue"] = c["issue"].strip()
            page = parse_pages(pages)
            if page:
                work["page"] = page
        elif not m:
            return None  # neither a title nor a container: nothing to rebuild
        elif _PROCEEDINGS.search(tail):
            work["type"] = "proceedings-article"
            work["container-title"] = [tail.rstrip(".")]
        else:
            work["type"] = "book"  # APA: "Title. Publisher."
            work["publisher"] = tail.rstrip(".")
    if "title" not in work and "container-title" not in work:
        return None
    return work


def rme_works() -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, dict[str, str]]]:
    """(works kept in Crossref's index, works kept out, DOI -> style -> string)."""
    kept: list[dict[str, Any]] = []
    out: list[dict[str, Any]] = []
    strings: dict[str, dict[str, str]] = {}
    for row in read_gz_lines(SOURCE_DIR / "rme_styles.jsonl.gz"):
        work = rme_work(row)
        if work is None:
            continue
        strings[row["doi"]] = row["styles"]
        (kept if row["in_index"] else out).append(work)
    return kept, out, strings


# --- fields of a work, as a matcher's input names them -----------------------------------


def title_of(work: dict[str, Any]) -> str | None:
    t = work.get("title")
    return t[0] if t else None


def container_of(work: dict[str, Any]) -> str | None:
    c = work.get("container-title")
    return c[0] if c else None


def year_of(work: dict[str, Any]) -> int | None:
    for key in ("issued", "published-print", "published-online"):
        parts = (work.get(key) or {}).get("date-parts") or [[]]
        if parts and parts[0] and parts[0][0]:
            return int(parts[0][0])
    return None


def first_page_of(work: dict[str, Any]) -> str | None:
    page = work.get("page")
    return page.split("-")[0] if page else None


def full_name(author: dict[str, str]) -> str:
    return " ".join(p for p in (author.get("given"), author.get("family")) if p)


def biblio_authors(work: dict[str, Any]) -> list[dict[str, str | None]]:
    return [{"full_name": full_name(a), "given_name": a.get("given"),
             "surname": a.get("family")} for a in work.get("author") or [] if a.get("family")]


def biblio_of(work: dict[str, Any]) -> dict[str, Any]:
    """A refs_json-shaped biblio with every field the work has (no DOI)."""
    page = work.get("page")
    first, _, last = (page or "").partition("-")
    year = year_of(work)
    return {
        "title": title_of(work),
        "authors": biblio_authors(work),
        "date": str(year) if year else None,
        "journal": container_of(work),
        "volume": work.get("volume"),
        "issue": work.get("issue"),
        "pages": page,
        "first_page": first or None,
        "last_page": last or None,
    }
