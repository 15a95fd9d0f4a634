"""Matching on the pages of ``sandcrawler serve`` (issue 25): each reference with its
match and the cited DOI's Crossref page, "cited by" (paged) on the Crossref and
document pages, and the document's ``match0`` (the matched Crossref record), read
defensively. In-process (Starlette's test client) on SQLite and PostgreSQL, as
JSON and HTML; then the same pages in Chromium.

The rows are written as the system writes them (``persist crossref --parse-refs``,
``store add``, the PDF table, the ``citation`` upsert of ``db/persist.py``), not by
``match refs``: the pages read what is stored, whoever resolved it."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from starlette.testclient import TestClient

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.db.engine import begin
from sandcrawler.db.persist import TABLES, upsert
from sandcrawler.site.app import CSP, create_app
from sandcrawler.storage.pdftable import PdfTable
from tests.helpers.cli import invoke
from tests.helpers.isolation import isolated
from tests.helpers.paths import REPO
from tests.site.test_site_browser import Server, browser  # noqa: F401 (the browser fixture)

# SQL: on SQLite and PostgreSQL
pytestmark = pytest.mark.both_backends

BASE = "http://127.0.0.1"
CITING = "10.5555/example.2024.001"  # two parsed references (examples/crossref-works.jsonl)
POPULAR = "10.5555/example.2024.002"  # cited by more works than a page lists
IDENTIFIED = "10.5555/example.2024.003"  # the document's DOI, no references of its own
ABSENT = "10.9999/not-in-the-table"
NOT_A_UUID = "uuid:not-a-uuid"
UNKNOWN_DOC = "uuid:00000000-0000-4000-8000-000000000000"
#: the document's parsed references: an entry that is no object keeps its place
DOC_REFS: list[Any] = [
    {"title": "Persistent identifiers for research data", "authors": [{"surname": "Okafor"}],
     "date": "2021"},
    "not an object",
    {"unstructured": "Anon. An example dataset. 2024."},
    {"title": "<script>alert(1)</script> A work elsewhere", "date": "1999"},
]
POPULAR_CITERS = 123


def _citation(citing: str, i: int, status: str, doi: str | None = None,
              score: float | None = None, reasons: list[str] | None = None,
              key: str | None = None) -> dict[str, Any]:
    return {"citing": citing, "ref_index": i, "ref_key": key, "cited_doi": doi,
            "status": status, "score": score, "reasons": reasons}


def fill(tmp_path: Path) -> dict[str, Any]:
    """Crossref works with parsed references, two documents (one identified by
    ``match0``, one not), and citation rows of both kinds of citing work (into the
    database and data directory the settings name, the database at the latest schema)."""
    result = invoke(["persist", "crossref", "--parse-refs",
                     str(REPO / "examples" / "crossref-works.jsonl")])
    assert result.exit_code == 0, result.stderr
    docs = []
    for name, meta in (("identified", {"DOI": IDENTIFIED, "title": ["An example dataset"]}),
                       ("unmatched", {"title": ["Nobody matched me"]})):
        (tmp_path / f"{name}.html").write_bytes(
            f"<!doctype html><html><body><p>{name}</p></body></html>".encode())
        (tmp_path / f"{name}.json").write_bytes(orjson.dumps(meta))
        added = invoke(["store", "add", str(tmp_path / f"{name}.html"), "--kind", "html",
                        "--metadata", str(tmp_path / f"{name}.json")])
        assert added.exit_code == 0, added.stderr
        docs.append(orjson.loads(added.stdout))
    doc, unmatched = docs
    with Services(load_settings()) as services:
        engine = services.engine
        with begin(engine) as conn:
            upsert(conn, TABLES["grobid_refs"], [
                {"source": "document", "source_id": doc["id"], "source_ts": None,
                 "refs_json": DOC_REFS}])
            rows = [
                _citation(f"doi:{CITING}", 0, "exact", IDENTIFIED, 1.0,
                          ["title:same", "year:same"], "ref1"),
                _citation(f"doi:{CITING}", 1, "no-match", None, 0.42, ["title:differs"],
                          "ref4"),
                _citation(f"uuid:{doc['id']}", 0, "strong", POPULAR, 0.93, ["title:same"]),
                _citation(f"uuid:{doc['id']}", 1, "bad-biblio"),
                _citation(f"uuid:{doc['id']}", 2, "exact", IDENTIFIED, 0.99, ["title:same"]),
                _citation(f"uuid:{doc['id']}", 3, "exact", ABSENT, 0.97, ["doi:same"]),
                # a row past the list (parsed again, shorter): shown, not dropped
                _citation(f"uuid:{doc['id']}", 6, "weak", None, 0.6, ["year:differs"]),
                # citing sides the pages cannot link: shown as text
                _citation(NOT_A_UUID, 0, "exact", IDENTIFIED, 0.95),
                _citation(UNKNOWN_DOC, 4, "strong", IDENTIFIED, 0.9),
                *(_citation(f"doi:10.7777/w{i:03d}", i % 5, "exact", POPULAR, 0.98)
                  for i in range(POPULAR_CITERS - 1)),
            ]
            upsert(conn, TABLES["citation"], rows)
        services.pdftable.put(doc["sha1"], {"match0": {
            "mstatus": "exact", "doi": IDENTIFIED.upper(),
            "minfo": {"score": 0.97, "source": "html-biblio",
                      "reasons": ["title:same", "year:same"], "extra": {"a": [1]}}}})
        table = services.pdftable_name
    return {"doc": doc, "unmatched": unmatched, "table": table}


@pytest.fixture(scope="module")
def built_site(module_db_url: str,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """``fill`` once per module and backend, and a client of the pages on it. The
    tests read it; those that write a document's ``match0`` write their own
    document's (``own_document``)."""
    home = tmp_path_factory.mktemp("citations")
    env = {"SANDCRAWLER_DATABASE_URL": module_db_url,
           "SANDCRAWLER_DATA_DIR": str(home / "data")}
    with isolated(home, **env):
        held = fill(home)
        services = Services(load_settings())
    with TestClient(create_app(services), base_url=BASE) as client:
        yield {**held, "client": client, "services": services, "env": env}
    services.close()


@pytest.fixture
def site(built_site: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The module's site; the settings (its database, its data directory) name it."""
    for name, value in built_site["env"].items():
        monkeypatch.setenv(name, value)
    return built_site


@pytest.fixture
def own_document(site: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    """A document of this test's own in the module's site, as ``fill``'s unmatched one
    (no DOI, no ``match0``): a test may write its ``match0`` without changing what
    the other tests read."""
    page = tmp_path / "own.html"
    page.write_bytes(f"<!doctype html><html><body><p>{uuid.uuid4()}</p></body></html>".encode())
    (tmp_path / "own.json").write_bytes(orjson.dumps({"title": ["Nobody matched me"]}))
    added = invoke(["store", "add", str(page), "--kind", "html",
                    "--metadata", str(tmp_path / "own.json")])
    assert added.exit_code == 0, added.stderr
    doc: dict[str, Any] = orjson.loads(added.stdout)
    return doc


def get_json(client: TestClient, url: str, status: int = 200) -> Any:
    answer = client.get(url, headers={"accept": "application/json"})
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"] == "application/json"
    return answer.json()


def links_answer(client: TestClient, html: str) -> list[str]:
    """Every same-site link of a page answers 200 (relative queries included)."""
    hrefs = [h.replace("&amp;", "&") for h in re.findall(r'href="([^"]*)"', html)]
    for href in hrefs:
        if href.startswith("/"):
            assert client.get(href).status_code == 200, href
    return hrefs


def test_crossref_page_references_with_matches(site: dict[str, Any]) -> None:
    client = site["client"]
    data = get_json(client, f"/crossref/{CITING.upper()}")
    parsed = [p for p in data["pairs"] if p["parsed"]]
    assert [p["parsed"]["raw"]["id"] for p in parsed] == ["ref1", "ref4"]
    first, second = (p["match"] for p in parsed)
    assert first == {"status": "exact", "matched": True, "cited_doi": IDENTIFIED, "score": 1.0,
                     "reasons": ["title:same", "year:same"], "ref_key": "ref1",
                     "link": f"/crossref/{IDENTIFIED}"}
    assert second["status"] == "no-match" and second["link"] is None
    assert second["matched"] is False and second["cited_doi"] is None
    # deposited but not parsed: nothing to resolve
    assert all(p["match"] is None for p in data["pairs"] if not p["parsed"])
    assert data["match_counts"] == {"exact": 1, "no-match": 1}
    assert data["cited_by"] == {"doi": CITING, "total": 0, "page": 1, "pages": 1, "works": [],
                                "previous": None, "next": None}
    answer = client.get(f"/crossref/{CITING}")
    html = answer.text
    assert answer.headers["content-security-policy"] == CSP
    assert f'<a href="/crossref/{IDENTIFIED}" dir="auto">{IDENTIFIED}</a>' in html
    assert "Resolved against the catalog: exact 1 · no-match 1." in html
    assert "No reference resolved to this DOI yet." in html
    links_answer(client, html)


def test_dashboard_counts_resolved_references(site: dict[str, Any]) -> None:
    data = get_json(site["client"], "/")
    assert data["tables"]["citation"] == 9 + POPULAR_CITERS - 1
    assert {"table": "citation", "label": "references resolved against the catalog",
            "rows": 9 + POPULAR_CITERS - 1} in data["counted"]


def test_crossref_page_cited_by_pages(site: dict[str, Any]) -> None:
    client = site["client"]
    first = get_json(client, f"/crossref/{POPULAR}")["cited_by"]
    assert (first["total"], first["page"], first["pages"]) == (POPULAR_CITERS, 1, 3)
    assert len(first["works"]) == 50 and first["previous"] is None
    assert first["next"] == "?cited_page=2"
    work = first["works"][0]
    assert work == {"citing": "doi:10.7777/w000", "kind": "crossref", "id": "10.7777/w000",
                    "title": None, "link": None, "ref_index": 0, "status": "exact",
                    "score": 0.98}  # no Crossref record of it here: no link to a 404
    last = get_json(client, f"/crossref/{POPULAR}?cited_page=3")["cited_by"]
    assert len(last["works"]) == POPULAR_CITERS - 100 and last["next"] is None
    assert last["previous"] == "?cited_page=2"
    # the document citing it is among them, linked by its UUID, titled
    everything = first["works"] + get_json(
        client, f"/crossref/{POPULAR}?cited_page=2")["cited_by"]["works"] + last["works"]
    assert len({(w["citing"], w["ref_index"]) for w in everything}) == POPULAR_CITERS
    [doc] = [w for w in everything if w["kind"] == "document"]
    assert doc["link"] == f"/document/{site['doc']['id']}"
    assert doc["title"] == "An example dataset"
    past = get_json(client, f"/crossref/{POPULAR}?cited_page=9")["cited_by"]
    assert past["works"] == [] and past["total"] == POPULAR_CITERS
    html = client.get(f"/crossref/{POPULAR}?cited_page=2").text
    assert "page 2 of 3" in html
    assert 'href="?cited_page=1#cited-by" rel="prev"' in html
    assert 'href="?cited_page=3#cited-by" rel="next"' in html
    assert "No citing reference on page 9 (of 3)." in client.get(
        f"/crossref/{POPULAR}?cited_page=9").text


def test_document_page_references_identification_cited_by(site: dict[str, Any]) -> None:
    client, doc = site["client"], site["doc"]
    data = get_json(client, f"/document/{doc['id']}?format=json")
    rows = data["reference_rows"]
    # numbered from 1 in the list's order, each with the row at its place in the list;
    # the entry that is no object and the row past the list keep their places, empty
    assert [(r["n"], r["ref_index"]) for r in rows] == [(1, 0), (2, 1), (3, 2), (4, 3), (5, 6)]
    assert [r["match"]["status"] for r in rows] == [
        "strong", "bad-biblio", "exact", "exact", "weak"]
    assert rows[0]["title"] == "Persistent identifiers for research data"
    assert rows[0]["match"]["link"] == f"/crossref/{POPULAR}"
    assert rows[1]["title"] == "" and rows[1]["raw"] == {}
    assert rows[2]["title"] == "Anon. An example dataset. 2024."
    assert rows[3]["match"]["cited_doi"] == ABSENT and rows[3]["match"]["link"] is None
    assert rows[4]["title"] == "" and rows[4]["raw"] == {}
    assert data["references"] == [r for r in DOC_REFS if isinstance(r, dict)]
    assert data["match_counts"] == {"strong": 1, "bad-biblio": 1, "exact": 2, "weak": 1}
    assert data["identification"] == {
        "status": "exact", "doi": IDENTIFIED,
        "info": {"score": 0.97, "source": "html-biblio", "reasons": ["title:same", "year:same"],
                 "extra": {"a": [1]}},
        "details": [["score", "0.97"], ["source", "html-biblio"],
                    ["reasons", "title:same year:same"], ["extra", '{"a":[1]}']],
        "title": None, "link": f"/crossref/{IDENTIFIED}"}
    cited = data["cited_by"]
    assert cited["doi"] == IDENTIFIED and cited["total"] == 4
    # by citing side: a UUID not in the catalogue, or no UUID at all, is named unlinked
    assert [(w["kind"], w["id"], w["link"], w["ref_index"]) for w in cited["works"]] == [
        ("crossref", CITING, f"/crossref/{CITING}", 0),
        *sorted([("document", "00000000-0000-4000-8000-000000000000", None, 4),
                 ("document", "not-a-uuid", None, 0),
                 ("document", doc["id"], f"/document/{doc['id']}", 2)])]
    assert cited["works"][0]["title"] == "A worked example of reference parsing"
    answer = client.get(f"/document/{doc['id']}")
    html = answer.text
    assert answer.headers["content-security-policy"] == CSP
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)" in html
    assert "The matched Crossref record" in html
    assert f'<a href="/crossref/{IDENTIFIED}">{IDENTIFIED}</a>' in html
    assert "References (5)" in html and "Cited by (4 references)" in html
    assert "A worked example of reference parsing" in html
    assert f'<span dir="auto">{ABSENT}</span>' in html  # matched, but no page to link
    links_answer(client, html)


def test_document_not_matched_yet(site: dict[str, Any]) -> None:
    client, doc = site["client"], site["unmatched"]
    data = get_json(client, f"/document/{doc['id']}?format=json")
    assert data["identification"] == {"status": None, "doi": None, "info": None,
                                      "details": [], "title": None, "link": None}
    assert data["reference_rows"] == [] and data["match_counts"] == {}
    assert data["cited_by"]["doi"] is None and data["cited_by"]["works"] == []
    html = client.get(f"/document/{doc['id']}").text
    assert "Not matched against the catalog yet." in html
    assert "No DOI: nothing can cite this document by one." in html


@pytest.mark.parametrize(("cells", "expected"), [
    # a status alone (the matcher named no work)
    ({"mstatus": "no-match"}, {"status": "no-match", "doi": None, "info": None,
                               "details": [], "title": None, "link": None}),
    # info that is not an object, a DOI of blanks
    ({"mstatus": "conflict", "doi": "  ", "minfo": ["a", "b"]},
     {"status": "conflict", "doi": None, "info": None, "details": [], "title": None,
      "link": None}),
    # a DOI with no Crossref record here: named, not linked
    ({"doi": ABSENT, "minfo": {"n": 1}},
     {"status": None, "doi": ABSENT, "info": {"n": 1}, "details": [["n", "1"]],
      "title": None, "link": None}),
])
def test_match0_read_defensively(site: dict[str, Any], own_document: dict[str, Any],
                                 cells: dict[str, Any], expected: dict[str, Any]) -> None:
    doc = own_document
    PdfTable(site["services"].engine, site["table"]).put(doc["sha1"], {"match0": cells})
    data = get_json(site["client"], f"/document/{doc['id']}")
    assert data["identification"] == expected
    html = site["client"].get(f"/document/{doc['id']}").text
    if expected["status"] is None:
        assert "Not matched against the catalog yet." in html
    else:
        assert f">{expected['status']}</span>" in html


def test_the_matched_record_titled(site: dict[str, Any], own_document: dict[str, Any]) -> None:
    """The identified DOI's Crossref title, when the record has one."""
    doc = own_document
    PdfTable(site["services"].engine, site["table"]).put(doc["sha1"], {"match0": {
        "mstatus": "strong", "doi": CITING}})
    ident = get_json(site["client"], f"/document/{doc['id']}")["identification"]
    assert ident["title"] == "A worked example of reference parsing"
    assert ident["link"] == f"/crossref/{CITING}"


@pytest.mark.parametrize("query", ["cited_page=0", "cited_page=abc", "cited_page=-1",
                                   "cited_page=100001", "cited_page=99999999999"])
def test_bad_cited_page(site: dict[str, Any], query: str) -> None:
    client = site["client"]
    for path in (f"/crossref/{POPULAR}", f"/document/{site['doc']['id']}"):
        data = get_json(client, f"{path}?{query}", 400)
        assert "cited_page" in data["message"]


# --- in Chromium ----------------------------------------------------------------------------


# on the module's SQLite site (the screenshots are named so)
@pytest.mark.parametrize("db_backend", ["sqlite"], indirect=True, scope="module")
def test_citation_pages_in_a_browser(browser: Any, site: dict[str, Any]) -> None:  # noqa: F811
    """The references, the match and "cited by" laid out in a real browser: every
    same-site link answers, no script runs, no CSP error or 4xx on the way."""
    held = site
    problems: list[str] = []
    with Services(load_settings()) as services, Server(services) as server:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("pageerror", lambda e: problems.append(f"error: {e}"))
        page.on("dialog", lambda d: problems.append(f"dialog: {d.message}"))
        page.on("console", lambda m: problems.append(f"console: {m.text}")
                if m.type == "error" else None)
        page.on("response", lambda r: problems.append(f"{r.status} {r.url}")
                if r.status >= 400 else None)
        from tests.site.test_site_browser import _check_links, _shot

        seen: set[str] = set()
        page.goto(f"{server.url}/document/{held['doc']['id']}")
        _shot(page, "sqlite-document-citations")
        assert page.locator("table.identification a").inner_text() == IDENTIFIED
        assert page.locator("table.refs tbody tr").count() == 5
        matches = page.locator("table.refs td.match").all_inner_texts()
        assert matches[0].startswith(f"strong {POPULAR} 0.93")
        assert page.locator("table.cited-by tbody tr").count() == 4
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 1280 + 20, "the references table must fit the page"
        _check_links(page, server.url, seen)

        page.goto(f"{server.url}/crossref/{POPULAR}")
        _shot(page, "sqlite-crossref-cited-by")
        assert page.locator("table.cited-by tbody tr").count() == 50
        page.locator("a[rel=next]").click()
        page.wait_for_url("**cited_page=2*")
        assert page.locator("table.cited-by tbody tr").count() == 50
        _check_links(page, server.url, seen)

        page.goto(f"{server.url}/crossref/{CITING}")
        _shot(page, "sqlite-crossref-matches")
        page.locator("table.sidebyside td.match a", has_text=IDENTIFIED).click()
        page.wait_for_url(f"**/crossref/{IDENTIFIED}")
        _check_links(page, server.url, seen)
        page.close()
    assert problems == []
