"""The web pages of ``sandcrawler serve`` in-process (Starlette's test client): every
page as JSON and HTML on a database filled by the real commands, bad input as a
clear 4xx, hostile metadata escaped, the token, the refusal to bind elsewhere."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import orjson
import pytest
from starlette.testclient import TestClient

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.identifiers import sha1_base32
from sandcrawler.site.app import CSP, create_app
from sandcrawler.site.exposure import is_loopback
from sandcrawler.site.search import classify
from sandcrawler_testkit.http_files import FileServer
from tests.conftest import invoke, run_cli

REPO = Path(__file__).resolve().parents[1]
BASE = "http://127.0.0.1"  # a Host the server answers (test_site_exposure.py)
TOKEN = "0123456789abcdefghijKLMN"
HOSTILE_TITLE = "<script>alert('x')</script> " + "مرحبا بالعالم " + "very long title " * 300
HTML_DOC = b"<!doctype html><html><head><title>t</title></head><body><p>Text.</p></body></html>"


@pytest.fixture
def site(db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict]:
    """A database filled by the real commands (Crossref records with parsed
    references, a stored HTML document with hostile metadata and no thumbnails),
    a capture in our web archive, and a client of the pages on it."""
    monkeypatch.setenv("SANDCRAWLER_DATABASE_URL", db_url)
    invoke(["db", "init"])
    result = invoke(["persist", "crossref", "--parse-refs",
                     str(REPO / "examples" / "crossref-works.jsonl")])
    assert result.exit_code == 0, result.stderr
    (tmp_path / "doc.html").write_bytes(HTML_DOC)
    (tmp_path / "meta.json").write_bytes(orjson.dumps({
        "DOI": "10.5555/Example.2024.001", "title": [HOSTILE_TITLE], "pmid": "31234567",
        "author": [{"given": "<b>Eve</b>", "family": "\u202eReversed"}]}))
    result = invoke(["store", "add", str(tmp_path / "doc.html"), "--kind", "html",
                     "--metadata", str(tmp_path / "meta.json")])
    assert result.exit_code == 0, result.stderr
    doc = orjson.loads(result.stdout)
    www = tmp_path / "www"
    www.mkdir()
    (www / "paper.html").write_bytes(HTML_DOC)
    with FileServer(www) as server:
        services = Services(load_settings({"http.routes": {"https://example.org": server.url}}))
        with services.web_archive.session() as session:
            session.capture("https://example.org/paper.html", max_bytes=10**6).close()
            session.commit()
    capture = services.web_archive.latest("https://example.org/paper.html")
    assert capture is not None
    with TestClient(create_app(services), base_url=BASE) as client:
        yield {"client": client, "doc": doc, "capture": capture, "services": services}
    services.close()


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
    assert data["title"] == HOSTILE_TITLE
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
        answer = client.get(f"/?token={TOKEN}")  # sets the cookie the next pages send
        assert answer.status_code == 200
        assert "HttpOnly" in answer.headers["set-cookie"]
        assert client.get("/search?q=x").status_code == 200


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
    """CSL names split or not (landing pages and JATS give ``name``), raw names;
    never an empty entry (a page showed ", ," for three ``{"name": ...}``)."""
    from sandcrawler.site.reads import _authors

    assert _authors({"author": [{"given": "Jane", "family": "Doe"}, {"name": "Ann Lee"},
                                {"literal": "The Consortium"}, {"family": "Solo"}, {},
                                "not a dict"]}) == [
        "Jane Doe", "Ann Lee", "The Consortium", "Solo"]
    assert _authors({"contrib_raw_names": ["A. Person"]}) == ["A. Person"]
    assert _authors({}) == []
