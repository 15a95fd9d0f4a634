"""The web pages of ``sandcrawler serve`` in-process (Starlette's test client): every
page as JSON and HTML on a database filled by the real commands, bad input as a
clear 4xx, hostile metadata escaped, the token, the refusal to bind elsewhere."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import orjson
import pytest
from sqlalchemy import update
from starlette.testclient import TestClient

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.core.identifiers import sha1_base32
from sandcrawler.db.engine import begin
from sandcrawler.db.schema import ingest_file_result
from sandcrawler.site.app import CSP, FILE_CSP, create_app
from sandcrawler.site.exposure import is_loopback
from sandcrawler.site.fields import metadata_view, pdftable_view
from sandcrawler.site.formats import names, when
from sandcrawler.site.reads import capture_link
from sandcrawler.site.search import classify
from sandcrawler_testkit.http_files import FileServer
from tests.helpers.cli import invoke, run_cli
from tests.helpers.isolation import isolated
from tests.helpers.paths import REPO

# SQL: on SQLite and PostgreSQL
pytestmark = pytest.mark.both_backends

BASE = "http://127.0.0.1"  # a Host the server answers (test_site_exposure.py)
TOKEN = "0123456789abcdefghijKLMN"
HOSTILE_TITLE = "<script>alert('x')</script> " + "مرحبا بالعالم " + "very long title " * 300
HTML_DOC = b"<!doctype html><html><head><title>t</title></head><body><p>Text.</p></body></html>"
LONG_AGO = datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)


@pytest.fixture(scope="module")
def built_site(module_db_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """A database filled by the real commands (Crossref records with parsed
    references, a stored HTML document with hostile metadata and no thumbnails),
    a capture in our web archive, and a client of the pages on it: built once per
    module and backend; the tests only read it."""
    home = tmp_path_factory.mktemp("site")
    env = {"SANDCRAWLER_DATABASE_URL": module_db_url,
           "SANDCRAWLER_DATA_DIR": str(home / "data")}
    with isolated(home, **env):
        result = invoke(["persist", "crossref", "--parse-refs",
                         str(REPO / "examples" / "crossref-works.jsonl")])
        assert result.exit_code == 0, result.stderr
        (home / "doc.html").write_bytes(HTML_DOC)
        (home / "meta.json").write_bytes(orjson.dumps({
            "DOI": "10.5555/Example.2024.001", "title": [HOSTILE_TITLE], "pmid": "31234567",
            "author": [{"given": "<b>Eve</b>", "family": "\u202eReversed"}]}))
        result = invoke(["store", "add", str(home / "doc.html"), "--kind", "html",
                         "--metadata", str(home / "meta.json")])
        assert result.exit_code == 0, result.stderr
        doc = orjson.loads(result.stdout)
        www = home / "www"
        www.mkdir()
        (www / "paper.html").write_bytes(HTML_DOC)
        with FileServer(www) as server:
            services = Services(load_settings({"http.routes": {"https://example.org":
                                                               server.url}}))
            with services.web_archive.session() as session:
                session.capture("https://example.org/paper.html", max_bytes=10**6).close()
                session.commit()
    capture = services.web_archive.latest("https://example.org/paper.html")
    assert capture is not None
    with TestClient(create_app(services), base_url=BASE) as client:
        yield {"client": client, "doc": doc, "capture": capture, "services": services,
               "env": env}
    services.close()


@pytest.fixture
def site(built_site: dict, monkeypatch: pytest.MonkeyPatch) -> dict:
    """The module's site; the settings (its database, its data directory) name it."""
    for name, value in built_site["env"].items():
        monkeypatch.setenv(name, value)
    return built_site


def get_json(client: TestClient, url: str, status: int = 200) -> Any:
    answer = client.get(url, headers={"accept": "application/json"})
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"] == "application/json"
    return answer.json()


def test_dashboard(site: dict) -> None:
    data = get_json(site["client"], "/")
    assert data["tables"]["crossref"] == 3
    assert data["tables"]["catalogue"] == 1
    assert data["tables"]["web_cdx"] == 1
    assert data["references"] == {"crossref": 3}  # one of them without references
    assert [c["url"] for c in data["recent"]["captures"]] == ["https://example.org/paper.html"]
    html = site["client"].get("/").text
    assert "<svg" in html and "parsed references per source" in html


def test_document_page(site: dict) -> None:
    client, doc = site["client"], site["doc"]
    data = get_json(client, f"/document/{doc['id']}?format=json")
    assert data["doi"] == "10.5555/example.2024.001"
    assert data["pmid"] == "31234567"
    assert data["title"] == HOSTILE_TITLE.strip()
    assert data["thumbnails"] == []
    assert {r["kind"] for r in data["resource_list"]} == {"html", "metadata"}
    assert data["crossref"] is True
    answer = client.get(f"/document/{doc['id']}")
    assert answer.status_code == 200
    html = answer.text
    assert "<script>" not in html  # escaped, never markup
    assert "&lt;script&gt;alert(" in html
    assert "No thumbnails." in html
    assert answer.headers["content-security-policy"] == CSP
    assert answer.headers["x-content-type-options"] == "nosniff"
    for href in re.findall(r'href="(/[^"]*)"', html):
        assert client.get(href.replace("&amp;", "&")).status_code == 200, href
    stored = client.get(f"/document/{doc['id']}/resource/html")
    assert stored.content == HTML_DOC
    assert stored.headers["content-disposition"].startswith("attachment")


def test_search_finds_each_form(site: dict) -> None:
    client, doc, capture = site["client"], site["doc"], site["capture"]
    sha1 = doc["sha1"]
    for query, what in [
        ("10.5555/EXAMPLE.2024.001", "doi"), ("doi:10.5555/example.2024.001", "doi"),
        ("https://doi.org/10.5555/example.2024.001", "doi"), (sha1, "sha1"),
        (sha1_base32(sha1), "sha1"), (f"sha1:{sha1}", "sha1"), ("31234567", "pmid"),
        ("pmid:31234567", "pmid"), (doc["id"], "uuid"), (doc["id"].upper(), "uuid"),
    ]:
        data = get_json(client, "/search?" + _q(query))
        assert data["what"] == what, query
        assert [d["uuid"] for d in data["documents"]] == [doc["id"]], query
    data = get_json(client, "/search?" + _q(capture.url))
    assert data["what"] == "url"
    assert [c["url"] for c in data["captures"]] == [capture.url]
    data = get_json(client, "/search?" + _q("Worked EXAMPLE"))
    assert data["what"] == "title"
    assert [c["doi"] for c in data["crossref"]] == ["10.5555/example.2024.001"]
    assert data["crossref"][0]["documents"] == [doc["id"]]
    # a document's own title (its metadata's, indexed in the catalogue)
    data = get_json(client, "/search?" + _q("مرحبا very LONG title"))
    assert data["what"] == "title"
    assert [d["uuid"] for d in data["titled_documents"]] == [doc["id"]]
    assert data["titled_documents"][0]["title"].startswith("<script>")
    assert get_json(client, "/search?" + _q("no such words anywhere"))["titled_documents"] == []
    assert get_json(client, "/search?q=")["what"] is None


@pytest.mark.parametrize(("query", "what"), [
    ("PMC1234567", "pmcid"), ("pmcid:PMC1234567", "pmcid"), ("arxiv:0807.3577", "arxiv"),
    ("0807.3577v2", "arxiv"), ("hep-th/9901001", "arxiv"), ("12345", "pmid"),
    ("http://example.org/a", "url"), ("graphene oxide", "title"),
    ("https://doi.org/robots.txt", "url"), ("https://doi.org/10.1/x", "doi"),
    ("a" * 40 + " words", "title"),
])
def test_classify(query: str, what: str) -> None:
    assert classify(query)[0] == what


def test_ingest_and_capture_pages(site: dict) -> None:
    client, capture = site["client"], site["capture"]
    data = get_json(client, f"/capture?warc={capture.warc_path}&offset={capture.warc_offset}"
                    "&format=json")
    assert data["headers"]["type"] == "response"
    warc = dict(data["headers"]["warc"])
    assert warc["WARC-Target-URI"] == "https://example.org/paper.html"
    assert data["headers"]["http_status"].startswith("200")
    payload = client.get(data["payload_link"])
    assert payload.status_code == 200
    assert payload.content == HTML_DOC
    assert payload.headers["content-disposition"].startswith("attachment")
    assert payload.headers["content-type"] == "application/octet-stream"


def test_crossref_side_by_side(site: dict) -> None:
    data = get_json(site["client"], "/crossref/10.5555/Example.2024.001?format=json")
    assert data["deposited_count"] == 4
    assert data["parsed_count"] == 2  # the references with text enough to parse
    parsed = [p for p in data["pairs"] if p["parsed"]]
    assert len(parsed) == 2 and all(p["deposited"] for p in parsed)
    assert all(p["deposited"]["key"] == p["parsed"]["raw"]["id"] for p in parsed)
    assert data["documents"] == [site["doc"]["id"]]
    unparsed = get_json(site["client"], "/crossref/10.5555/example.2024.003?format=json")
    assert unparsed["parsed_count"] == 0


@pytest.mark.parametrize(("url", "status", "words"), [
    ("/document/00000000-0000-0000-0000-000000000000", 404, "no document"),
    ("/document/not-a-uuid", 400, "UUID"),
    ("/document/{doc}/resource/..%2F..%2Fetc%2Fpasswd", 404, ""),
    ("/document/{doc}/resource/%2e%2e", 400, "unknown resource kind"),
    ("/document/{doc}/resource/secret.json", 400, "unknown resource kind"),
    ("/document/{doc}/resource/pdf", 404, "no blob"),
    ("/search?q=x&page=99999999999999", 400, "page"),
    ("/search?q=x&page=-1", 400, "page"),
    ("/search?q=x&page=5000", 400, "out of range"),
    ("/search?q=" + "x" * 2000, 400, "longer"),
    ("/capture?warc=../../etc/passwd&offset=0", 400, "blob key"),
    ("/capture?warc=warcs/none.warc.gz&offset=0", 404, "no capture"),
    ("/capture?warc=warcs/none.warc.gz&offset=abc", 400, "not a number"),
    ("/capture?warc=warcs/none.warc.gz&offset=99999999999999999999999", 400, "out of range"),
    ("/capture", 400, ""),
    ("/capture/payload?warc=warcs/none.warc.gz&offset=1", 404, "no capture"),
    ("/ingest/pdf?url=https://nowhere.example/", 404, "no pdf ingest result"),
    ("/ingest/pdf", 400, "base URL"),
    ("/crossref/10.9999/none", 404, "no Crossref record"),
    ("/crossref/not-a-doi", 400, "DOI"),
    ("/static/../../pyproject.toml", 404, ""),
    ("/nowhere", 404, "nothing at"),
])
def test_bad_input_is_a_clear_4xx(site: dict, url: str, status: int, words: str) -> None:
    client = site["client"]
    url = url.replace("{doc}", site["doc"]["id"])
    answer = client.get(url)
    assert answer.status_code == status, answer.text
    assert "text/html" in answer.headers["content-type"]
    assert f"<h1>{status} " in answer.text
    assert words.lower() in answer.text.lower()
    data = get_json(client, url + ("&" if "?" in url else "?") + "format=json", status)
    assert data["status"] == status


def test_writes_are_refused(site: dict) -> None:
    assert site["client"].post("/").status_code == 405


def test_empty_database(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDCRAWLER_DATABASE_URL", db_url)
    invoke(["db", "init"])
    with Services(load_settings()) as services, \
            TestClient(create_app(services), base_url=BASE) as client:
        for url in ("/", "/search?q=10.1/x", "/search?q=some+words", "/search?q=PMC1"):
            answer = client.get(url)
            assert answer.status_code == 200, url
        assert "No ingest results yet." in client.get("/").text
        assert get_json(client, "/")["tables"]["catalogue"] == 0


def test_token(monkeypatch: pytest.MonkeyPatch) -> None:
    with Services(load_settings({"serve.token": TOKEN})) as services, \
            TestClient(create_app(services), base_url=BASE) as client:
        assert client.get("/").status_code == 401
        assert client.get("/?token=wrong").status_code == 401
        assert client.get("/", headers={"authorization": f"Bearer {TOKEN}"}).status_code == 200
        # sets the cookie the next pages send, and sends the browser to the address
        # without the token (out of its history and of what a user copies)
        answer = client.get(f"/search?q=a+b&token={TOKEN}&page=1", follow_redirects=False)
        assert answer.status_code == 303
        assert answer.headers["location"] == "/search?q=a+b&page=1"
        assert "HttpOnly" in answer.headers["set-cookie"]
        assert TOKEN not in answer.text
        assert client.get(answer.headers["location"]).status_code == 200
        assert client.get("/search?q=x").status_code == 200
        # the address sent to is this site's, whatever the path looked like
        for path, location in [("//evil.example/x", "/evil.example/x"),
                               ("/%5Cevil.example", "/%5Cevil.example"), ("/", "/")]:
            answer = client.get(f"{BASE}{path}?token={TOKEN}", follow_redirects=False)
            assert answer.headers["location"] == location, path


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("::1", True), ("localhost", True), ("127.0.0.2", True),
    ("0.0.0.0", False), ("192.168.1.4", False), ("example.org", False),
])
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_serve_refuses_other_hosts_without_a_token() -> None:
    done = run_cli(["serve", "--host", "0.0.0.0", "--port", "0"], timeout=30)
    assert done.returncode == 1
    assert done.stderr.decode().strip() == (
        "Error: refusing to listen on 0.0.0.0 without a token: set SANDCRAWLER_SERVE_TOKEN "
        "(or token in the [serve] table), or listen on 127.0.0.1")
    assert b"Traceback" not in done.stderr


def test_config_show_masks_the_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDCRAWLER_SERVE_TOKEN", "s3cret")
    result = invoke(["config", "show"])
    assert "s3cret" not in result.stdout
    assert "serve.token" in result.stdout or "token" in result.stdout


def _q(query: str) -> str:
    return urlencode({"q": query})


def test_authors_of_every_shape_the_catalogue_holds_are_named() -> None:
    """CSL names split or not (landing pages and JATS give ``name``), GROBID's, raw
    strings; never an empty entry (a page showed ", ," for three ``{"name": ...}``)."""
    assert names([{"given": "Jane", "family": "Doe"}, {"name": "Ann Lee"},
                  {"literal": "The Consortium"}, {"family": "Solo"}, {}, 7,
                  "A. Person", {"full_name": "Z. Cheng"},
                  {"given_name": "Y.", "surname": "Shi"}, {"name": "Ca\x92n"}]) == [
        "Jane Doe", "Ann Lee", "The Consortium", "Solo", "A. Person", "Z. Cheng", "Y. Shi",
        "Ca\u2019n"]
    assert names(None) == [] and names({"name": "One"}) == ["One"]


@pytest.mark.parametrize(("value", "shown"), [
    ("20261125211332", "2026-11-25 21:13:32 UTC"),
    ("2026-11-25T21:13:32Z", "2026-11-25 21:13:32 UTC"),
    ("2026-11-25T21:13:32.123456Z", "2026-11-25 21:13:32 UTC"), (None, ""), ("soon", "soon"),
    ("99999999999999", "99999999999999"),
])
def test_human_dates(value: str | None, shown: str) -> None:
    assert when(value) == shown


def test_metadata_and_pdf_table_as_fields() -> None:
    """Every key of the metadata and of a PDF-table row is a labelled field; nothing
    is shown as JSON text; where each field came from and the conflicts read as
    sentences' parts (storage.precedence's keys)."""
    view = metadata_view({
        "id": "x", "title": ["A title"], "author": [{"name": "Ann Lee"}],
        "container-title": ["PLOS ONE"], "issued": {"date-parts": [[2019, 4, 22]]},
        "DOI": "10.1/x", "abstract": "Long " * 10, "page": "e1", "publisher_id": "S1",
        "custom": {"nested": {"deep": [1, 2]}, "flag": True},
        "field_sources": {"title": "landing_page", "DOI": "request", "author": "pdf"},
        "conflicts": {"pdf": {"title": ["Another title"],
                              "author": [{"given": "K.", "family": "B."}]}},
        "metadata_source": "landing_page",
        "ingest": {"base_url": "https://doi.org/10.1/x", "terminal_dt": "20190422101010"},
    })
    shown = {f.label: f.text for f in view.fields}
    assert shown["title"] == "A title" and shown["authors"] == "Ann Lee"
    assert shown["journal"] == "PLOS ONE" and shown["published"] == "2019-04-22"
    assert shown["DOI"] == "10.1/x" and shown["publisher's id"] == "S1"
    assert view.sources == [("title", "the landing page"), ("DOI", "the ingest request"),
                            ("authors", "the PDF's own metadata")]
    assert [(c.source, c.label, c.value) for c in view.conflicts] == [
        ("the PDF's own metadata", "title", "Another title"),
        ("the PDF's own metadata", "authors", "K. B.")]
    assert view.source == "the landing page"
    assert {f.label: f.text for f in view.crawl}["captured"] == "2019-04-22 10:10:10 UTC"
    custom = next(f for f in view.other if f.label == "custom")
    assert custom.kind == "group"
    assert [(f.label, f.kind) for f in custom.children] == [("nested", "group"), ("flag", "text")]
    assert custom.children[0].children[0].text == "1, 2"
    families = pdftable_view({
        "file": {"size": 605850, "mime": "application/pdf",
                 "cdx": {"url": "https://x/a.pdf", "dt": "20190422101010",
                         "warc": "warcs/a.warc.gz", "offset": "12"}},
        "pdf0": {"pdf_status": "success", "pdf_meta": {"page_count": 15, "info": {
            "title": "T"}}, "text": "x" * 3000},
    })
    file = {f.label: f for f in families[0].fields}
    assert file["size"].text == "605,850 bytes (591.7 KB)"
    assert file["captured"].href == "/capture?warc=warcs%2Fa.warc.gz&offset=12"
    pdf0 = {f.label: f for f in families[1].fields}
    assert {f.label: f.text for f in pdf0["PDF metadata"].children}["pages"] == "15"
    assert pdf0["text"].kind == "long" and pdf0["text"].text.endswith("(3,000 characters)")

    def texts(fields: Any) -> str:
        return " ".join(f.text + texts(f.children) for f in fields)
    everything = texts(view.fields + view.other + view.crawl) + texts(
        [f for fam in families for f in fam.fields])
    assert "{" not in everything and "[" not in everything


def test_document_page_fields_and_sections(site: dict) -> None:
    """An HTML document: its metadata as fields (authors named, not ", ,"); no PDF
    table section (there is no PDF); the metadata's JSON one link away, shown in a
    sandbox."""
    client, doc = site["client"], site["doc"]
    html = client.get(f"/document/{doc['id']}").text
    assert "<h2>PDF table</h2>" not in html
    assert "<th dir=\"auto\">authors</th>" in html and ", ," not in html
    data = get_json(client, f"/document/{doc['id']}")
    assert data["pdftable_expected"] is False
    assert [f["label"] for f in data["metadata_view"]["fields"]][:2] == ["title", "authors"]
    meta = client.get(f"/document/{doc['id']}/resource/metadata")
    assert meta.headers["content-type"] == "application/json"
    assert meta.headers["content-disposition"].startswith("inline")
    assert meta.headers["content-security-policy"] == FILE_CSP
    assert meta.json()["id"] == doc["id"]
    saved = client.get(f"/document/{doc['id']}/resource/metadata?download=1")
    assert saved.headers["content-disposition"].startswith("attachment")
    assert client.get(f"/document/{doc['id']}/resource/html").headers[
        "content-security-policy"] == FILE_CSP


def test_capture_page_size_hashes_timeline_replay(site: dict) -> None:
    """The capture page shows the size and the hashes web_cdx holds (it showed
    " bytes" and dashes), links to every capture of its URL, and with serve.replay_url
    to the capture in pywb."""
    client, capture = site["client"], site["capture"]
    path = f"/capture?warc={capture.warc_path}&offset={capture.warc_offset}"
    data = get_json(client, path)
    assert (data["size"], data["sha256hex"], data["md5hex"]) == (
        len(HTML_DOC), capture.sha256hex, capture.md5hex)
    assert capture.sha256hex and capture.md5hex
    html = client.get(path).text
    assert f"{len(HTML_DOC)} bytes" in html and capture.sha256hex in html
    assert capture.md5hex in html and "Replay in pywb" not in html
    assert data["replay_link"] is None and data["capture_count"] == 1
    timeline = get_json(client, data["timeline_link"])
    assert [c["link"] for c in timeline["captures"]] == [
        capture_link(capture.warc_path, capture.warc_offset)]
    assert timeline["total"] == 1 and timeline["url"] == capture.url
    assert "<ol class=\"timeline\">" in client.get(data["timeline_link"]).text
    assert client.get("/timeline?url=https://nowhere.example/").status_code == 404
    with Services(load_settings({"serve.replay_url": "http://localhost:8080/sandcrawler/"})
                  ) as services, TestClient(create_app(services), base_url=BASE) as other:
        data = get_json(other, path)
        assert data["replay_link"] == (
            f"http://localhost:8080/sandcrawler/{capture.datetime}/{capture.url}")
        assert "Replay in pywb" in other.get(path).text
    payload = client.get(data["payload_link"])
    assert payload.headers["content-security-policy"] == FILE_CSP
    assert payload.headers["content-disposition"].startswith("attachment")


def test_replay_url_must_be_a_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDCRAWLER_SERVE_REPLAY_URL", "javascript:alert(1)")
    result = invoke(["config", "show"])
    assert result.exit_code != 0
    assert "not an http(s) URL" in result.stderr and "Traceback" not in result.stderr


def test_ingest_status_list_pages_and_sorts(migrated_db_url: str, tmp_path: Path) -> None:
    """The dashboard's status bars lead to the results with that status, 50 a page,
    newest or oldest first."""

    def persist(name: str, n: int, status: str) -> None:
        lines = [orjson.dumps({"request": {"ingest_type": "pdf",
                                           "base_url": f"https://example.org/{name}/{i:03d}"},
                               "hit": False, "status": status}) for i in range(n)]
        (tmp_path / f"{name}.json").write_bytes(b"\n".join(lines) + b"\n")
        result = invoke(["persist", "ingest-file", "--no-progress", str(tmp_path / f"{name}.json")])
        assert result.exit_code == 0, result.stderr

    persist("old", 60, "no-pdf-link")
    persist("other", 3, "success")
    persist("new", 60, "no-pdf-link")
    with Services(load_settings()) as services, \
            TestClient(create_app(services), base_url=BASE) as client:
        # the first rows as if updated long before the new ones (persisted within the
        # same second, sorting could not tell them apart)
        with begin(services.engine) as conn:
            for name in ("old", "other"):
                conn.execute(update(ingest_file_result).where(
                    ingest_file_result.c.base_url.startswith(f"https://example.org/{name}/")
                ).values(updated=LONG_AGO))
        dashboard = get_json(client, "/")
        link = dashboard["status_links"]["pdf"]["no-pdf-link"]
        assert link == "/ingest?type=pdf&status=no-pdf-link"
        assert f'href="{link.replace("&", "&amp;")}"' in client.get("/").text
        first = get_json(client, link)
        assert (first["total"], first["pages"], len(first["results"])) == (120, 3, 50)
        assert {r["status"] for r in first["results"]} == {"no-pdf-link"}
        assert all("/new/" in r["base_url"] for r in first["results"])
        third = get_json(client, first["next"].replace("?", "/ingest?", 1).replace(
            "page=2", "page=3"))
        assert len(third["results"]) == 20 and third["next"] is None
        oldest = get_json(client, "/ingest" + first["sorts"]["date"])
        assert all("/old/" in r["base_url"] for r in oldest["results"])
        html = client.get(link + "&page=2").text
        assert 'rel="prev"' in html and 'rel="next"' in html and "page 2 of 3" in html
        assert get_json(client, "/ingest?status=success")["total"] == 3
        assert get_json(client, "/ingest")["total"] == 123
        for bad in ("/ingest?sort=size", "/ingest?page=0", "/ingest?page=x"):
            assert client.get(bad).status_code == 400, bad


def test_favicon_and_files_csp(site: dict) -> None:
    client = site["client"]
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"] == "image/svg+xml"
    assert '<link rel="icon" href="/static/favicon.svg"' in client.get("/").text
    assert client.get("/static/favicon.svg").status_code == 200
    assert client.get("/").headers["content-security-policy"] == CSP
