"""Lists that page: the ingest results with one status, every capture of a URL."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from sandcrawler.app.services import Services
from sandcrawler.core.errors import InvalidName
from sandcrawler.core.timestamps import iso_utc
from sandcrawler.db import queries
from sandcrawler.db.engine import begin
from sandcrawler.records.statuses import StoreStatus
from sandcrawler.site.page_data import (
    IngestListPage,
    ListedIngestView,
    TimelineCaptureView,
    TimelinePage,
)
from sandcrawler.site.reads import capture_link, ingest_link

PER_PAGE = 50
MAX_PAGE = 100_000
#: what a status list sorts by: newest first (the default) or oldest first
SORTS = {"-date": "newest first", "date": "oldest first"}
#: the dashboard's label for results that have no status
NO_STATUS = "(none)"


@dataclass(frozen=True, slots=True)
class Paging:
    page: int
    per_page: int
    total: int

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.per_page


def check_page(page: int) -> None:
    if not 1 <= page <= MAX_PAGE:
        raise InvalidName(f"page {page} is out of range (1 to {MAX_PAGE})",
                          status=StoreStatus.BAD_KEY)


def _query(query: dict[str, str]) -> str:
    return "?" + urlencode({k: v for k, v in query.items() if v})


def ingest_list(services: Services, ingest_type: str = "", status: str = "", page: int = 1,
                sort: str = "-date") -> IngestListPage:
    """The ingest results (file and dataset) of ``ingest_type`` with ``status`` (either
    may be empty: any), sorted by when they were last updated, a page at a time."""
    check_page(page)
    if sort not in SORTS:
        raise InvalidName(f"sort must be one of {', '.join(SORTS)}, not {sort[:40]!r}",
                          status=StoreStatus.BAD_KEY)
    with begin(services.engine) as conn:
        total, found = queries.list_ingest_results(
            conn, ingest_type=ingest_type, status=None if status == NO_STATUS else status,
            oldest_first=sort == "date", offset=(page - 1) * PER_PAGE, limit=PER_PAGE)
    paging = Paging(page, PER_PAGE, total)
    results: list[ListedIngestView] = [
        {**r, "updated": iso_utc(r["updated"]),
         "link": ingest_link(r["ingest_type"], r["base_url"])} for r in found]
    here = {"type": ingest_type, "status": status, "sort": sort}
    return {"ingest_type": ingest_type or None, "status": status or None, "sort": sort,
            "page": page, "pages": paging.pages, "total": total, "results": results,
            "sorts": {key: _query({**here, "sort": key}) for key in SORTS},
            "previous": _query({**here, "page": str(page - 1)}) if page > 1 else None,
            "next": _query({**here, "page": str(page + 1)}) if page < paging.pages else None}


def timeline(services: Services, url: str, page: int = 1) -> TimelinePage | None:
    """Every capture of ``url`` by time, oldest first; None when there is none."""
    if not url:
        raise InvalidName("give the URL: ?url=…", status=StoreStatus.BAD_KEY)
    check_page(page)
    with begin(services.engine) as conn:
        total = queries.capture_count(conn, url)
        if not total:
            return None
        paging = Paging(page, PER_PAGE * 4, total)
        found = queries.capture_timeline(conn, url, offset=paging.offset,
                                        limit=paging.per_page)
    captures: list[TimelineCaptureView] = [
        {**r, "link": capture_link(r["warc_path"], r["warc_offset"])} for r in found]
    years: dict[str, int] = {}
    for r in captures:
        years[r["datetime"][:4]] = years.get(r["datetime"][:4], 0) + 1
    return {"url": url, "total": total, "page": page, "pages": paging.pages,
            "captures": captures, "years": years,
            "previous": _query({"url": url, "page": str(page - 1)}) if page > 1 else None,
            "next": (_query({"url": url, "page": str(page + 1)})
                     if page < paging.pages else None)}
