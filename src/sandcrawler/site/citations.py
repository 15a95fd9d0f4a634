"""What the pages show of matching: each reference of a work with its match, the
works whose references resolved to a DOI ("cited by"), and what a document was
identified as (the PDF table's ``match0``).

The rows are ``citation``'s (``db/queries.py``), read on the page's connection; a
reference's row is the one at its place in the parsed list (``ref_index``), and
rows past the list are shown on their own. ``match0`` may be missing or
partial: every cell is optional.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

import orjson
from sqlalchemy.engine import Connection

from sandcrawler.app.services import Services
from sandcrawler.core.errors import InvalidName
from sandcrawler.db import queries
from sandcrawler.db.rows import CitationTableRow, JsonObject
from sandcrawler.records.match import MATCHED
from sandcrawler.records.statuses import StoreStatus
from sandcrawler.site import formats
from sandcrawler.site.page_data import (
    CitedBy,
    CitingWork,
    Identification,
    MatchView,
    PdfTableRowView,
    RefRow,
    ResolvedRefRow,
)
from sandcrawler.storage.docid import parse_uuid

#: references citing a DOI listed a page
CITED_PER_PAGE = 50
MAX_PAGE = 100_000
#: the query parameter of the "cited by" list's page (the pages' own ``page`` is free)
PAGE_PARAM = "cited_page"


def check_page(page: int) -> None:
    if not 1 <= page <= MAX_PAGE:
        raise InvalidName(f"{PAGE_PARAM} {page} is out of range (1 to {MAX_PAGE})",
                          status=StoreStatus.BAD_KEY)


def crossref_link(doi: str) -> str:
    return f"/crossref/{doi}"


def held_dois(conn: Connection, rows: Sequence[CitationTableRow]) -> set[str]:
    """The cited DOIs among ``rows`` whose Crossref record the table holds (a link to
    a page that would be a 404 is never drawn)."""
    return {r["doi"] for r in queries.crossref_titles_of(
        conn, [row["cited_doi"] for row in rows if row["cited_doi"]])}


def match_view(row: CitationTableRow, held: set[str]) -> MatchView:
    doi = row["cited_doi"]
    return {"status": row["status"], "matched": row["status"] in MATCHED, "cited_doi": doi,
            "score": row["score"],
            "reasons": [str(r) for r in row["reasons"] or [] if isinstance(r, str)],
            "ref_key": row["ref_key"],
            "link": crossref_link(doi) if doi and doi in held else None}


def match_counts(rows: Sequence[CitationTableRow]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    return counts


def by_index(rows: Sequence[CitationTableRow]) -> dict[int, CitationTableRow]:
    return {row["ref_index"]: row for row in rows}


def indexed_refs(refs_json: list[Any] | None) -> list[tuple[int, JsonObject]]:
    """The references of a ``refs_json`` that are objects, each with its place in
    the whole list (the ``ref_index`` its citation row has)."""
    return [(i, ref) for i, ref in enumerate(refs_json or []) if isinstance(ref, dict)]


def unlisted(rows: Sequence[CitationTableRow], listed: set[int]) -> list[CitationTableRow]:
    """The citation rows of no parsed reference shown."""
    return [row for row in rows if row["ref_index"] not in listed]


#: a parsed reference as the columns of a table, numbered (``reads.ref_row``)
RefColumns = Callable[[Mapping[str, Any], int], RefRow]


def resolved_rows(refs: list[tuple[int, JsonObject]], rows: Sequence[CitationTableRow],
                  held: set[str], ref_row: RefColumns) -> list[ResolvedRefRow]:
    """Each parsed reference (``ref_row``: its columns) with its match, in the order
    of the list and numbered from 1; a citation row of no reference shown (an entry
    that is no object, a list parsed again shorter) keeps its place, with empty
    columns."""
    found = by_index(rows)
    parsed = dict(refs)
    out: list[ResolvedRefRow] = []
    for n, i in enumerate(sorted(parsed.keys() | found.keys()), 1):
        row = found.get(i)
        out.append({**ref_row(parsed.get(i, {}), n), "ref_index": i,
                    "match": match_view(row, held) if row is not None else None,
                    "contexts": []})
    return out


# --- cited by -------------------------------------------------------------------------------


def _citing_work(citing: str, titles: dict[str, str | None],
                 docs: dict[str, str | None]) -> tuple[str, str, str | None, str | None]:
    """(kind, id, title, link) of a citing side: ``doi:`` a Crossref work (linked
    when held), ``uuid:`` a document (linked when in the catalogue)."""
    scheme, _, value = citing.partition(":")
    if scheme == "doi":
        held = value in titles
        return "crossref", value, titles.get(value), crossref_link(value) if held else None
    if scheme == "uuid":
        held = value in docs
        return "document", value, docs.get(value), f"/document/{value}" if held else None
    return "", citing, None, None


def cited_by(services: Services, conn: Connection, doi: str | None, page: int) -> CitedBy:
    """The references, in any work, that resolved to ``doi``: a page of them by
    citing work (its title and page where we hold it), and how many in all."""
    check_page(page)
    if not doi:
        return {"doi": None, "total": 0, "page": 1, "pages": 1, "works": [],
                "previous": None, "next": None}
    total, rows = queries.cited_by(conn, doi, offset=(page - 1) * CITED_PER_PAGE,
                                  limit=CITED_PER_PAGE)
    pages = max(1, -(-total // CITED_PER_PAGE))
    cited_dois = [c.partition(":")[2] for c in (r["citing"] for r in rows)
                  if c.startswith("doi:")]
    titles = {r["doi"]: formats.first_text(r["title"])
              for r in queries.crossref_titles_of(conn, cited_dois)}
    docs: dict[str, str | None] = {}
    for row in rows:
        scheme, _, value = row["citing"].partition(":")
        if scheme != "uuid" or value in docs:
            continue
        try:
            entry = services.catalogue.get(parse_uuid(value), conn=conn)
        except InvalidName:  # written by hand or by another tool: shown, not linked
            continue
        if entry is not None:
            docs[value] = formats.first_text(entry.title)
    works: list[CitingWork] = []
    for row in rows:
        kind, ident, title, link = _citing_work(row["citing"], titles, docs)
        works.append({"citing": row["citing"], "kind": kind, "id": ident, "title": title,
                      "link": link, "ref_index": row["ref_index"], "status": row["status"],
                      "score": row["score"]})
    return {"doi": doi, "total": total, "page": page, "pages": pages, "works": works,
            "previous": _page_query(page - 1) if page > 1 else None,
            "next": _page_query(page + 1) if page < pages else None}


def _page_query(page: int) -> str:
    return "?" + urlencode({PAGE_PARAM: page})


# --- a document's identification ------------------------------------------------------------


def identification(conn: Connection, pdftable: PdfTableRowView | None) -> Identification:
    """What ``match0`` says the document is; every cell optional (see the module
    docstring)."""
    found_cells = pdftable["families"].get("match0") if pdftable is not None else None
    cells: JsonObject = found_cells if isinstance(found_cells, dict) else {}
    status = cells.get("mstatus")
    doi = cells.get("doi")
    info = cells.get("minfo")
    doi = doi.strip().lower() if isinstance(doi, str) and doi.strip() else None
    title: str | None = None
    link: str | None = None
    if doi:
        found = queries.crossref_titles_of(conn, [doi])
        if found:
            title, link = formats.first_text(found[0]["title"]), crossref_link(doi)
    info = info if isinstance(info, dict) else None
    return {"status": status if isinstance(status, str) and status else None, "doi": doi,
            "info": info, "details": [(str(k), _detail(v)) for k, v in (info or {}).items()],
            "title": title, "link": link}


def _detail(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return " ".join(value)
    return orjson.dumps(value, default=str).decode()
