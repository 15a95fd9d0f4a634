"""Each platform helper through the fileset ingester, over real HTTP to the
loopback platform server; and the strategy rule and item names on their own."""

from __future__ import annotations

import hashlib
import json
import re
import socket
from typing import Any
from urllib.parse import quote

import pytest

from sandcrawler.app.settings import load_settings
from sandcrawler.config import FilesetSettings
from sandcrawler.fileset.ingest import IngestOutcome
from sandcrawler.fileset.platforms.archiveorg import ArchiveOrgHelper
from sandcrawler.fileset.platforms.base import choose_strategy, item_name
from sandcrawler.records.fileset import (
    FilesetManifestFile,
    FilesetPlatformItem,
    IngestRequest,
    IngestStrategy,
)
from sandcrawler.storage.items import check_item_name
from sandcrawler.web.http.fetch import HttpFetcher
from sandcrawler_testkit.platforms import FakeFile, PlatformServer
from tests.helpers.fileset import open_ingester

DV = "dataverse.example.edu"  # not in settings.dataverse_hosts: matched by its page shape
HARVARD = "dataverse.harvard.edu"  # in the default settings.dataverse_hosts
PID = "doi:10.5072/FK2/ABC123"
ZENODO_HOST = "zenodo.org"


def run(srv: PlatformServer, url: str, strategy: IngestStrategy | None = None,
        **overrides: Any) -> IngestOutcome:
    """One ingest of ``url`` by a fresh ingester routed to ``srv``."""
    settings = load_settings(http_routes=srv.routes(), fetch_timeout=2, **overrides)
    ingester = open_ingester(settings, strategy)
    try:
        return ingester.ingest(IngestRequest(ingest_type="dataset", base_url=url,
                                             force_recrawl=False))
    finally:
        ingester.close()


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def sha1(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def downloads(srv: PlatformServer) -> list[tuple[str, str, str]]:
    """Requests that fetched a file (not a landing page or an API answer)."""
    pattern = re.compile(r"/(api/records/\d+/files/|api/files/|files/\d|api/access/|s3/|"
                         r"download/|1/items/)")
    return [r for r in srv.requests if pattern.search(r[2])]


def assert_failed(out: IngestOutcome, status: str) -> None:
    assert out.status == status, out.result
    assert out.result.to_json()["hit"] is False
    assert out.file_result is None
    assert out.error


# --- Zenodo ---------------------------------------------------------------------------------


def test_zenodo_record(srv: PlatformServer) -> None:
    a, b = b"a,b\n1,2\n", bytes(range(256)) * 4
    srv.add_zenodo(5703112, [FakeFile("a.csv", a), FakeFile("b b.bin", b)], version="2.1")
    out = run(srv, "https://zenodo.org/records/5703112")
    r = out.result.to_json()
    assert (r["status"], r["hit"]) == ("success", True)
    assert r["platform_name"] == "zenodo"
    assert r["platform_domain"] == "zenodo.org"
    assert r["platform_id"] == "5703112"
    assert r["platform_base_url"] == "https://zenodo.org/records/5703112"
    assert r["ingest_strategy"] == "web-fileset"
    assert [(f["path"], f["size"], f["md5"]) for f in r["manifest"]] == [
        ("a.csv", len(a), md5(a)), ("b b.bin", len(b), md5(b))]
    assert [f["platform_url"] for f in r["manifest"]] == [
        "https://zenodo.org/api/records/5703112/files/a.csv/content",
        "https://zenodo.org/api/records/5703112/files/b%20b.bin/content"]
    assert (r["file_count"], r["total_size"]) == (2, len(a) + len(b))
    assert r["html_biblio"]["title"] == "A Zenodo dataset"
    assert "archiveorg_item_name" not in r  # a web strategy has no item
    # the item store names the item after the record and its version
    out = run(srv, "https://zenodo.org/records/5703112", IngestStrategy.ARCHIVEORG_FILESET)
    assert out.status == "success"
    assert out.result.to_json()["archiveorg_item_name"] == "zenodo.org-5703112-v2.1"


def test_zenodo_concept_id_is_scope(srv: PlatformServer) -> None:
    srv.add_zenodo(101, [FakeFile("a.csv", b"1")], concept_id=100)
    srv.add_zenodo(102, [FakeFile("a.csv", b"2")], concept_id=100, version="2.0")
    out = run(srv, "https://zenodo.org/records/100")  # redirects to 102
    assert_failed(out, "platform-scope")
    assert out.result.to_json()["platform_name"] == "zenodo"
    assert not downloads(srv)
    # the version itself is fine
    assert run(srv, "https://zenodo.org/records/101").status == "success-file"


@pytest.mark.parametrize("access_right", ["embargoed", "restricted", "closed"])
def test_zenodo_not_open_is_restricted(srv: PlatformServer, access_right: str) -> None:
    srv.add_zenodo(200, [FakeFile("a.csv", b"1")], access_right=access_right)
    out = run(srv, "https://zenodo.org/records/200")
    assert_failed(out, "platform-restricted")
    assert access_right in out.result.to_json()["error_message"]
    assert not downloads(srv)


def test_zenodo_unknown_and_deleted_are_404(srv: PlatformServer) -> None:
    assert_failed(run(srv, "https://zenodo.org/records/999999"), "platform-404")
    srv.add_zenodo(300, [FakeFile("a.csv", b"1")], status=410)
    out = run(srv, "https://zenodo.org/record/300")
    assert_failed(out, "platform-404")
    assert "410" in out.result.to_json()["error_message"]


def test_zenodo_api_error(srv: PlatformServer) -> None:
    srv.add_zenodo(400, [FakeFile("a.csv", b"1")], status=500)
    out = run(srv, "https://zenodo.org/records/400")
    assert_failed(out, "error-platform-api")
    assert "500" in out.result.to_json()["error_message"]
    assert out.result.to_json()["platform_name"] == "zenodo"


@pytest.mark.parametrize("answer", [b"<html>maintenance</html>", b"[]", b'{"id": "x"}'])
def test_zenodo_api_answer_not_a_record(srv: PlatformServer, answer: bytes) -> None:
    srv.add_zenodo(450, [FakeFile("a.csv", b"1")])
    srv.add_page("zenodo.org", "/api/records/450", answer, content_type="application/json")
    out = run(srv, "https://zenodo.org/records/450")
    assert_failed(out, "error-platform-api")
    assert not downloads(srv)


def test_zenodo_file_level_url(srv: PlatformServer) -> None:
    one, two = b"first file\n", b"second file\n"
    srv.add_zenodo(500, [FakeFile("my data.csv", one), FakeFile("other.bin", two)])
    out = run(srv, f"https://zenodo.org/records/500/files/{quote('my data.csv')}")
    r = out.result.to_json()
    assert r["status"] == "success-file", r
    assert r["ingest_strategy"] == "web-file"
    assert [(f["path"], f["size"], f["md5"]) for f in r["manifest"]] == [
        ("my data.csv", len(one), md5(one))]
    assert r["fileset_file"]["file_meta"]["sha1hex"] == sha1(one)
    assert out.file_result is not None and out.file_result.to_json()["status"] == "success"
    assert not [x for x in srv.requests if "other.bin" in x[2]]
    out = run(srv, "https://zenodo.org/records/500/files/missing.csv")
    assert_failed(out, "platform-404")
    assert "missing.csv" in out.result.to_json()["error_message"]


def test_zenodo_files_entries_download_from_content(srv: PlatformServer) -> None:
    """InvenioRDM's ``files.entries``: ``links.self`` is the file's metadata (JSON),
    ``links.content`` its bytes."""
    data = bytes(range(256)) * 3
    api = "https://zenodo.org/api/records/88"
    entry = {"id": "0b1c", "key": "d.bin", "size": len(data), "checksum": f"md5:{md5(data)}",
             "mimetype": "application/octet-stream",
             "links": {"self": f"{api}/files/d.bin", "content": f"{api}/files/d.bin/content"}}
    srv.add_page(ZENODO_HOST, "/records/88", b"<html></html>")
    srv.add_page(ZENODO_HOST, "/api/records/88", json.dumps({
        "id": 88, "conceptrecid": "87", "metadata": {"title": "t", "access_right": "open"},
        "files": {"enabled": True, "count": 1, "entries": {"d.bin": entry}},
        "links": {}}).encode(), content_type="application/json")
    srv.add_page(ZENODO_HOST, "/api/records/88/files/d.bin", json.dumps(entry).encode(),
                 content_type="application/json")
    srv.add_page(ZENODO_HOST, "/api/records/88/files/d.bin/content", data,
                 content_type="application/octet-stream")
    out = run(srv, "https://zenodo.org/records/88")
    r = out.result.to_json()
    assert r["status"] == "success-file", r
    assert r["manifest"][0]["platform_url"] == f"{api}/files/d.bin/content"
    assert r["fileset_file"]["file_meta"]["sha1hex"] == sha1(data)


SANDBOX = "sandbox.zenodo.org"


def sandbox_record(srv: PlatformServer, record_id: int, data: bytes) -> None:
    """A record on Zenodo's sandbox only (ids are per instance: production has
    no such record, so asking zenodo.org would answer 404)."""
    content = f"https://{SANDBOX}/api/records/{record_id}/files/s.csv/content"
    srv.add_page(SANDBOX, f"/records/{record_id}", b"<html><title>sandbox</title></html>")
    srv.add_page(SANDBOX, f"/api/records/{record_id}", json.dumps({
        "id": record_id, "conceptrecid": str(record_id - 1), "doi": "10.5072/zenodo.1",
        "metadata": {"title": "sandbox record", "access_right": "open"},
        "files": [{"key": "s.csv", "size": len(data), "checksum": f"md5:{md5(data)}",
                   "links": {"self": content}}],
        "links": {}}).encode(), content_type="application/json")
    srv.add_page(SANDBOX, f"/api/records/{record_id}/files/s.csv/content", data,
                 content_type="text/csv")


def test_zenodo_sandbox_record_is_asked_of_the_sandbox(srv: PlatformServer) -> None:
    data = b"x,y\n1,2\n"
    sandbox_record(srv, 4242, data)
    out = run(srv, f"https://{SANDBOX}/records/4242", IngestStrategy.ARCHIVEORG_FILE)
    r = out.result.to_json()
    assert r["status"] == "success-file", r
    assert (r["platform_domain"], r["platform_id"]) == (SANDBOX, "4242")
    assert r["archiveorg_item_name"] == "sandbox.zenodo.org-4242"
    assert r["manifest"][0]["md5"] == md5(data)
    assert {host for host, _, path in srv.requests if path.startswith("/api/")} == {SANDBOX}
    # www. is the same instance as its listed host
    assert run(srv, f"https://www.{SANDBOX}/records/4242").result.to_json()[
        "platform_domain"] == SANDBOX


def test_zenodo_api_url_setting_still_serves_production(srv: PlatformServer) -> None:
    """zenodo.api_url moves production (a mirror); api_urls moves another instance."""
    data = b"mirrored\n"
    sandbox_record(srv, 4243, data)
    # a "mirror" of production: pages on zenodo.org, the API answered by the sandbox's host
    srv.add_page(ZENODO_HOST, "/records/4243", b"<html></html>")
    out = run(srv, "https://zenodo.org/records/4243", IngestStrategy.ARCHIVEORG_FILE,
              zenodo_api_url=f"https://{SANDBOX}/api")
    assert out.status == "success-file", out.result
    assert out.result.to_json()["platform_domain"] == "zenodo.org"
    assert out.result.to_json()["archiveorg_item_name"] == "zenodo.org-4243"
    srv.add_page("api-mirror.example", "/api/records/4243", b'{"status": 404}', status=404,
                 content_type="application/json")
    srv.clear_requests()
    out = run(srv, f"https://{SANDBOX}/records/4243",
              zenodo_api_urls={SANDBOX: "https://api-mirror.example/api"})
    assert out.status == "platform-404", out.result
    assert ("api-mirror.example", "GET", "/api/records/4243") in srv.requests


# --- figshare -------------------------------------------------------------------------------


def test_figshare_article_version(srv: PlatformServer) -> None:
    a, b = b"x,y\n3,4\n", b"\x00\x01" * 300
    srv.add_figshare(8765432, 2, [FakeFile("table.csv", a, mimetype="text/csv"),
                                  FakeFile("blob.bin", b)])
    url = "https://figshare.com/articles/dataset/A_figshare_dataset/8765432/2"
    out = run(srv, url)
    r = out.result.to_json()
    assert r["status"] == "success", r
    assert r["platform_name"] == "figshare"
    assert r["platform_domain"] == "figshare.com"
    assert r["platform_id"] == "8765432"
    assert r["ingest_strategy"] == "web-fileset"
    assert [(f["path"], f["size"], f["md5"]) for f in r["manifest"]] == [
        ("table.csv", len(a), md5(a)), ("blob.bin", len(b), md5(b))]
    assert r["manifest"][0]["mimetype"] == "text/csv"
    assert all(f["platform_url"].startswith("https://ndownloader.figshare.com/files/")
               for f in r["manifest"])
    out = run(srv, url, IngestStrategy.ARCHIVEORG_FILESET)
    assert out.result.to_json()["archiveorg_item_name"] == "figshare.com-8765432-v2"


PORTAL = "data.university.example"  # an institutional figshare portal on its own domain
PORTAL_PAGE = (b'<html><head><title>Runs</title><link rel="preconnect" '
               b'href="https://ndownloader.figshare.com/"></head><body>runs</body></html>')


def test_figshare_portal_on_its_own_domain_found_by_its_page(srv: PlatformServer) -> None:
    srv.add_figshare(4321, 2, [FakeFile("run.txt", b"run\n")])
    url = f"https://{PORTAL}/articles/dataset/runs/4321/2"
    srv.add_page(PORTAL, "/articles/dataset/runs/4321/2", PORTAL_PAGE)
    out = run(srv, url)
    r = out.result.to_json()
    assert r["status"] == "success-file", r
    assert (r["platform_name"], r["platform_domain"], r["platform_id"]) == (
        "figshare", "figshare.com", "4321")
    assert r["platform_base_url"] == url
    # off: only figshare.hosts (where an operator lists such portals) match
    assert run(srv, url, figshare_detect_portals=False).status == "no-platform-match"
    # (already archived by the first run)
    assert run(srv, url, figshare_detect_portals=False,
               figshare_hosts=["figshare.com", PORTAL]).status == "success-existing"


@pytest.mark.parametrize(("path", "page"), [
    # the article shape, but nothing in the page says figshare
    ("/articles/dataset/runs/4321/2", b"<html><head><title>Runs</title></head></html>"),
    # figshare named, but not the full portal shape (no type and slug)
    ("/articles/4321/2", PORTAL_PAGE),
])
def test_figshare_portal_detection_is_conservative(srv: PlatformServer, path: str,
                                                   page: bytes) -> None:
    srv.add_figshare(4321, 2, [FakeFile("run.txt", b"run\n")])
    srv.add_page(PORTAL, path, page)
    assert run(srv, f"https://{PORTAL}{path}").status == "no-platform-match"


def test_figshare_without_version_is_scope(srv: PlatformServer) -> None:
    srv.add_figshare(1111, 1, [FakeFile("a.csv", b"1")])
    out = run(srv, "https://figshare.com/articles/dataset/A_figshare_dataset/1111")
    assert_failed(out, "platform-scope")
    assert not [x for x in srv.requests if x[0] == "api.figshare.com"]


def test_figshare_embargoed_and_unknown(srv: PlatformServer) -> None:
    srv.add_figshare(2222, 1, [FakeFile("a.csv", b"1")], is_embargoed=True)
    out = run(srv, "https://figshare.com/articles/dataset/x/2222/1")
    assert_failed(out, "platform-restricted")
    assert "embargoed" in out.result.to_json()["error_message"]
    assert_failed(run(srv, "https://figshare.com/articles/dataset/x/3333/1"), "platform-404")
    assert not downloads(srv)


# --- Dataverse ------------------------------------------------------------------------------


def dataverse_url(host: str, pid: str, page: str = "dataset.xhtml", extra: str = "") -> str:
    return f"https://{host}/{page}?persistentId={pid}{extra}"


@pytest.fixture
def dataverse(srv: PlatformServer) -> PlatformServer:
    """Two versions of one dataset on DV, one on Harvard's host."""
    srv.add_dataverse(DV, PID, [
        FakeFile("readme.txt", b"read me v1\n", mimetype="text/plain"),
        FakeFile("data.csv", b"1,2\n", directory="data/raw", mimetype="text/csv"),
    ], version=(1, 0), title="Version one")
    srv.add_dataverse(DV, PID, [
        FakeFile("readme.txt", b"read me v2\n", mimetype="text/plain"),
        FakeFile("data.csv", b"1,2\n3,4\n", directory="/data/raw/", mimetype="text/csv"),
        FakeFile("more.csv", b"5,6\n", directory="data", mimetype="text/csv"),
    ], version=(2, 0), title="Version two")
    srv.add_dataverse(HARVARD, "doi:10.7910/DVN/HARV01", [FakeFile("h.txt", b"harvard\n")])
    return srv


def test_dataverse_version(dataverse: PlatformServer) -> None:
    out = run(dataverse, dataverse_url(DV, PID, extra="&version=1.0"),
              IngestStrategy.ARCHIVEORG_FILESET)
    r = out.result.to_json()
    assert r["status"] == "success", r
    assert r["platform_name"] == "dataverse"
    assert r["platform_domain"] == DV
    assert r["platform_id"] == PID
    assert [(f["path"], f["size"], f["md5"]) for f in r["manifest"]] == [
        ("readme.txt", 11, md5(b"read me v1\n")), ("data/raw/data.csv", 4, md5(b"1,2\n"))]
    assert r["archiveorg_item_name"] == item_name(DV, PID, "1.0")
    assert r["archiveorg_item_name"] == "dataverse.example.edu-doi_10.5072_FK2_ABC123-v1.0"


def test_dataverse_latest_published(dataverse: PlatformServer) -> None:
    out = run(dataverse, dataverse_url(DV, PID), IngestStrategy.ARCHIVEORG_FILESET)
    r = out.result.to_json()
    assert r["status"] == "success", r
    # the directoryLabel is the path's prefix, its slashes trimmed
    assert [f["path"] for f in r["manifest"]] == [
        "readme.txt", "data/raw/data.csv", "data/more.csv"]
    assert r["manifest"][0]["md5"] == md5(b"read me v2\n")
    assert r["archiveorg_item_name"] == "dataverse.example.edu-doi_10.5072_FK2_ABC123-v2.0"
    assert any("/versions/:latest-published" in x[2] for x in dataverse.requests)
    # the default strategy for three small files without enough for a bundle
    out = run(dataverse, dataverse_url(DV, PID))
    assert out.result.to_json()["ingest_strategy"] == "web-fileset"


def test_dataverse_listed_host(dataverse: PlatformServer) -> None:
    out = run(dataverse, f"https://{HARVARD}/dataset.xhtml?persistentId=doi:10.7910/DVN/HARV01")
    r = out.result.to_json()
    assert r["status"] == "success-file", r
    assert (r["platform_name"], r["platform_domain"]) == ("dataverse", HARVARD)
    assert r["manifest"][0]["path"] == "h.txt"
    assert r["fileset_file"]["file_meta"]["md5hex"] == md5(b"harvard\n")


@pytest.mark.parametrize("fault", [{"restricted": True}, {"embargoed_until": "2099-12-31"}])
def test_dataverse_restricted_or_embargoed_file(srv: PlatformServer,
                                                fault: dict[str, Any]) -> None:
    srv.add_dataverse(DV, PID, [FakeFile("open.txt", b"open"),
                                FakeFile("closed.txt", b"closed", **fault)])
    out = run(srv, dataverse_url(DV, PID))
    assert_failed(out, "platform-restricted")
    assert "closed.txt" in out.result.to_json()["error_message"]
    assert not downloads(srv)


def test_dataverse_unknown_pid(dataverse: PlatformServer) -> None:
    out = run(dataverse, dataverse_url(DV, "doi:10.5072/FK2/NOPE"))
    assert_failed(out, "platform-404")
    assert out.result.to_json()["platform_name"] == "dataverse"
    out = run(dataverse, dataverse_url(DV, PID, extra="&version=7.0"))
    assert_failed(out, "platform-404")


@pytest.mark.parametrize("answer", [b"[]", b'"OK"', b'{"status": "OK", "data": []}',
                                    b'{"status": "ERROR", "message": "no"}', b"<html></html>"])
def test_dataverse_api_answer_not_a_dataset(srv: PlatformServer, answer: bytes) -> None:
    """An installation that answers 200 with something else than a dataset."""
    pid = "doi:10.5072/FK2/ODD"
    srv.add_page(DV, f"/api/datasets/:persistentId/versions/:latest-published?persistentId={pid}",
                 answer, content_type="application/json")
    out = run(srv, dataverse_url(DV, pid))
    assert_failed(out, "error-platform-api")
    assert out.result.to_json()["platform_name"] == "dataverse"


def test_dataverse_file_page(dataverse: PlatformServer) -> None:
    out = run(dataverse, dataverse_url(DV, f"{PID}/F2", page="file.xhtml"))
    r = out.result.to_json()
    assert r["status"] == "success-file", r
    assert r["ingest_strategy"] == "web-file"
    (f,) = r["manifest"]
    # F2 of the latest version that has one: data.csv of 2.0, in its directory
    assert (f["path"], f["size"], f["md5"]) == ("data/raw/data.csv", 8, md5(b"1,2\n3,4\n"))
    assert r["fileset_file"]["file_meta"]["sha1hex"] == sha1(b"1,2\n3,4\n")
    assert any(x[2].startswith("/api/files/:persistentId/") for x in dataverse.requests)
    out = run(dataverse, dataverse_url(DV, f"{PID}/F1", page="file.xhtml"))
    assert out.status == "success-file"
    assert [(f["path"], f["md5"]) for f in out.result.to_json()["manifest"]] == [
        ("readme.txt", md5(b"read me v2\n"))]
    assert_failed(run(dataverse, dataverse_url(DV, f"{PID}/F9", page="file.xhtml")),
                  "platform-404")


STATA = b"\x72\x01\x02" + bytes(range(200)) * 3  # the upload: what the checksum describes
TAB = b"x\ty\n1\t2\n3\t4\n"  # the .tab Dataverse derives and serves by default


@pytest.mark.parametrize("strategy", [IngestStrategy.WEB_FILESET,
                                      IngestStrategy.ARCHIVEORG_FILESET,
                                      IngestStrategy.WEB_FILESET_BUNDLED,
                                      IngestStrategy.ARCHIVEORG_FILESET_BUNDLED])
def test_dataverse_tabular_file_archives_the_original(srv: PlatformServer,
                                                       strategy: IngestStrategy) -> None:
    """An ingested table: Dataverse's md5 is the upload's, so the upload is
    fetched (``?format=original``, the zip too) and verified, under its own name."""
    srv.add_dataverse(DV, PID, [
        FakeFile("readme.txt", b"read me\n", mimetype="text/plain"),
        FakeFile("survey.dta", STATA, directory="data", mimetype="application/x-stata",
                 tabular=TAB)])
    out = run(srv, dataverse_url(DV, PID), strategy)
    r = out.result.to_json()
    assert r["status"] == "success", r
    got = r["manifest"][1]
    assert (got["path"], got["size"], got["md5"], got["mimetype"]) == (
        "data/survey.dta", len(STATA), md5(STATA), "application/x-stata")
    assert got["platform_url"].endswith("?format=original")
    assert got["extra"]["derived_filename"] == "survey.tab"
    assert got["extra"]["derived_size"] == len(TAB)
    if "bundled" in strategy:
        assert r["fileset_bundle"]
        assert any("/api/access/dataset/" in x[2] and "format=original" in x[2]
                   for x in srv.requests)
    else:
        assert got["status"] == "success"
        assert got["sha1"] == sha1(STATA)


def test_loopback_dataverse_serves_tab_by_default_and_the_original_on_request(
        srv: PlatformServer) -> None:
    srv.add_dataverse(DV, PID, [FakeFile("survey.dta", STATA, tabular=TAB)])
    settings = load_settings(http_routes=srv.routes(), fetch_timeout=2)
    fetcher = HttpFetcher(timeout=2, routes=settings.http.routes, retries=0)
    try:
        status, answer = fetcher.get_json(
            f"https://{DV}/api/datasets/:persistentId/versions/1.0?persistentId={PID}")
        assert status == 200
        df = answer["data"]["files"][0]["dataFile"]
        assert (df["filename"], df["filesize"], df["tabularData"]) == ("survey.tab", len(TAB), True)
        assert (df["originalFileName"], df["originalFileSize"], df["md5"]) == (
            "survey.dta", len(STATA), md5(STATA))
        for query, body in (("", TAB), ("?format=original", STATA)):
            opened = fetcher.open(f"https://{DV}/api/access/datafile/{df['id']}{query}")
            try:
                assert (opened.status, opened.response.read()) == (200, body)
            finally:
                opened.close()
    finally:
        fetcher.close()


# --- archive.org ----------------------------------------------------------------------------


def test_archiveorg_item(srv: PlatformServer) -> None:
    csv, blob = b"a,b\n1,2\n", b"\x01" * 5000
    srv.add_archiveorg("my-item", [FakeFile("table.csv", csv), FakeFile("sub/blob.bin", blob)])
    settings = load_settings(http_routes=srv.routes(), fetch_timeout=2)
    ingester = open_ingester(settings)
    try:
        out = ingester.ingest(IngestRequest(ingest_type="dataset",
                                            base_url="https://archive.org/details/my-item"))
        items = ingester.ctx.items
        r = out.result.to_json()
        assert r["status"] == "success", r
        assert (r["platform_name"], r["platform_domain"], r["platform_id"]) == (
            "archiveorg", "archive.org", "my-item")
        # two small files would go to the web archive elsewhere: archive.org is an item already
        assert r["ingest_strategy"] == "archiveorg-fileset"
        assert r["archiveorg_item_name"] == "my-item"
        manifest = r["manifest"]
        assert [f["path"] for f in manifest] == ["table.csv", "sub/blob.bin"]
        assert all(isinstance(f["size"], int) for f in manifest)
        assert [(f["size"], f["md5"], f["sha1"]) for f in manifest] == [
            (len(csv), md5(csv), sha1(csv)), (len(blob), md5(blob), sha1(blob))]
        assert sorted(items.files("my-item")) == ["sub/blob.bin", "table.csv"]
        assert items.store.get("items/my-item/sub/blob.bin") == blob
    finally:
        ingester.close()
    fetched = {x[2] for x in downloads(srv)}
    assert not [p for p in fetched if "_meta.xml" in p or "_files.xml" in p
                or "torrent" in p or "__ia_thumb" in p]


def test_archiveorg_system_files_left_out(srv: PlatformServer) -> None:
    srv.add_archiveorg("sys-item", [FakeFile("only.txt", b"only")])
    out = run(srv, "https://archive.org/details/sys-item")
    assert out.status == "success-file"
    assert out.result.to_json()["ingest_strategy"] == "archiveorg-file"
    assert [f["path"] for f in out.result.to_json()["manifest"]] == ["only.txt"]


def test_archiveorg_unknown_dark_restricted(srv: PlatformServer) -> None:
    out = run(srv, "https://archive.org/details/nothing-here")
    assert_failed(out, "platform-404")
    assert out.result.to_json()["platform_name"] == "archiveorg"
    srv.add_archiveorg("dark-item", [FakeFile("a", b"a")], is_dark=True)
    out = run(srv, "https://archive.org/details/dark-item")
    assert_failed(out, "platform-restricted")
    assert "dark" in out.result.to_json()["error_message"]
    srv.add_archiveorg("locked-item", [FakeFile("a", b"a")], restricted=True)
    assert_failed(run(srv, "https://archive.org/details/locked-item"), "platform-restricted")
    assert not downloads(srv)


def test_archiveorg_private_files_left_out(srv: PlatformServer) -> None:
    """A lending-library book: its scans are private (403); the public files are
    the dataset, and an item with nothing public left is restricted."""
    srv.add_archiveorg("lent-book", [FakeFile("book.pdf", b"%PDF-1.4 lent", private=True),
                                     FakeFile("book_djvu.txt", b"lent", private=True),
                                     FakeFile("notes.txt", b"public notes")])
    out = run(srv, "https://archive.org/details/lent-book", IngestStrategy.ARCHIVEORG_FILESET)
    r = out.result.to_json()
    assert r["status"] == "success", r
    assert [f["path"] for f in r["manifest"]] == ["notes.txt"]
    assert not [x for x in downloads(srv) if "/book" in x[2]]
    srv.add_archiveorg("all-lent", [FakeFile("book.pdf", b"%PDF-1.4", private=True)])
    out = run(srv, "https://archive.org/details/all-lent")
    assert_failed(out, "platform-restricted")
    assert "private" in out.result.to_json()["error_message"]
    # a file link to a private file (its landing capture is the one request for it)
    srv.clear_requests()
    assert_failed(run(srv, "https://archive.org/download/lent-book/book.pdf"),
                  "platform-restricted")
    assert [x[2] for x in downloads(srv)] == ["/download/lent-book/book.pdf"]


def test_archiveorg_download_url_is_one_file(srv: PlatformServer) -> None:
    srv.add_archiveorg("two-files", [FakeFile("a.txt", b"aaa"), FakeFile("dir/b c.txt", b"bbb")])
    out = run(srv, "https://archive.org/download/two-files/dir/b%20c.txt")
    r = out.result.to_json()
    assert r["status"] == "success-file", r
    assert r["ingest_strategy"] == "archiveorg-file"
    # the item is not archived: the file gets its own item, never the item's name
    assert r["archiveorg_item_name"] == "two-files-file-" + sha1(b"dir/b c.txt")[:12]
    assert [(f["path"], f["sha1"]) for f in r["manifest"]] == [("dir/b c.txt", sha1(b"bbb"))]
    assert r["fileset_file"]["file_meta"]["sha1hex"] == sha1(b"bbb")
    assert out.file_result is not None
    assert out.file_result.to_json()["request"]["ingest_type"] == "dataset-file"
    assert_failed(run(srv, "https://archive.org/download/two-files/nope.txt"), "platform-404")


def item_store(srv: PlatformServer) -> Any:
    """The item store the ingests of ``run`` write to (this test's data dir)."""
    ingester = open_ingester(load_settings(http_routes=srv.routes(), fetch_timeout=2))
    return ingester, ingester.ctx.items


def test_archiveorg_file_link_into_an_archived_item_is_existing(srv: PlatformServer) -> None:
    """A file link never replaces its item's archive: the item holds the file."""
    srv.add_archiveorg("two-files", [FakeFile("a.txt", b"aaa"), FakeFile("dir/b c.txt", b"bbb")])
    assert run(srv, "https://archive.org/details/two-files").status == "success"
    srv.clear_requests()
    out = run(srv, "https://archive.org/download/two-files/dir/b%20c.txt")
    r = out.result.to_json()
    assert r["status"] == "success-existing", r
    assert (r["ingest_strategy"], r["archiveorg_item_name"]) == ("archiveorg-file", "two-files")
    assert [(f["path"], f["sha1"], f["status"]) for f in r["manifest"]] == [
        ("dir/b c.txt", sha1(b"bbb"), "success")]
    assert r["fileset_file"]["file_meta"]["sha1hex"] == sha1(b"bbb")
    # the file link was captured as the landing page, then only the metadata API asked
    assert srv.requests[-1][2] == "/metadata/two-files"
    ingester, items = item_store(srv)
    try:
        meta = items.read_meta("two-files")
        assert meta["ingest_strategy"] == "archiveorg-fileset"
        assert [f["path"] for f in meta["result"]["manifest"]] == ["a.txt", "dir/b c.txt"]
        assert sorted(items.files("two-files")) == ["a.txt", "dir/b c.txt"]
    finally:
        ingester.close()


def test_archiveorg_file_link_without_its_item_gets_its_own_item(srv: PlatformServer) -> None:
    srv.add_archiveorg("two-files", [FakeFile("a.txt", b"aaa"), FakeFile("dir/b c.txt", b"bbb")])
    out = run(srv, "https://archive.org/download/two-files/dir/b%20c.txt")
    r = out.result.to_json()
    own = "two-files-file-" + sha1(b"dir/b c.txt")[:12]
    assert (r["status"], r["archiveorg_item_name"]) == ("success-file", own), r
    # the item, ingested afterwards, is archived in full under its identifier
    assert run(srv, "https://archive.org/details/two-files").status == "success"
    assert run(srv, "https://archive.org/download/two-files/a.txt").status == "success-existing"
    # the platform now describes a.txt otherwise than the item's archive holds it:
    # the file is archived under its own name, the item's archive is left as it was
    srv.add_archiveorg("two-files", [FakeFile("a.txt", b"AAAA"), FakeFile("dir/b c.txt", b"bbb")])
    out = run(srv, "https://archive.org/download/two-files/a.txt")
    own_a = "two-files-file-" + sha1(b"a.txt")[:12]
    assert (out.status, out.result.to_json()["archiveorg_item_name"]) == ("success-file", own_a)
    ingester, items = item_store(srv)
    try:
        assert items.read_meta(own)["ingest_strategy"] == "archiveorg-file"
        assert items.store.get(f"items/{own_a}/a.txt") == b"AAAA"
        meta = items.read_meta("two-files")
        assert meta["ingest_strategy"] == "archiveorg-fileset"
        assert sorted(items.files("two-files")) == ["a.txt", "dir/b c.txt"]
        assert items.store.get("items/two-files/a.txt") == b"aaa"
    finally:
        ingester.close()


def test_zenodo_file_link_into_an_archived_record_is_existing(srv: PlatformServer) -> None:
    srv.add_zenodo(77, [FakeFile("a.csv", b"a,b\n"), FakeFile("b.bin", b"\x00" * 64)])
    assert run(srv, "https://zenodo.org/records/77",
               IngestStrategy.ARCHIVEORG_FILESET).status == "success"
    srv.clear_requests()
    out = run(srv, "https://zenodo.org/records/77/files/b.bin", IngestStrategy.ARCHIVEORG_FILE)
    assert srv.requests[-1][2] == "/api/records/77"
    assert (out.status, out.result.to_json()["archiveorg_item_name"]) == (
        "success-existing", "zenodo.org-77-v1.0"), out.result
    ingester, items = item_store(srv)
    try:
        assert items.read_meta("zenodo.org-77-v1.0")["ingest_strategy"] == "archiveorg-fileset"
    finally:
        ingester.close()


# --- no platform ----------------------------------------------------------------------------


def test_unknown_platform_page_is_still_captured(srv: PlatformServer) -> None:
    page = (b"<html><head><title>Some dataset page</title></head>"
            b"<body><a href='/data.zip'>data</a></body></html>")
    srv.add_page("example.org", "/dataset", page)
    out = run(srv, "https://example.org/dataset")
    r = out.result.to_json()
    assert (r["status"], r["hit"]) == ("no-platform-match", False)
    assert out.file_result is None
    assert r["terminal"]["terminal_url"] == "https://example.org/dataset"
    assert r["terminal"]["terminal_status_code"] == 200
    assert r["terminal"]["terminal_sha1hex"] == sha1(page)
    assert r["cdx"]["url"] == "https://example.org/dataset"
    assert r["cdx"]["warc_path"].startswith("warcs/")
    assert r["file_meta"]["sha1hex"] == sha1(page)
    assert r["html_biblio"]["title"] == "Some dataset page"
    assert "platform_name" not in r and "manifest" not in r


# --- the strategy rule and item names -------------------------------------------------------


def platform_item(sizes: list[int], bundle: bool = False) -> FilesetPlatformItem:
    return FilesetPlatformItem(
        platform_name="zenodo", platform_status="success",
        manifest=[FilesetManifestFile(path=f"f{i}", size=s) for i, s in enumerate(sizes)],
        web_bundle_url="https://zenodo.org/api/records/1/files-archive" if bundle else None)


@pytest.fixture
def rule_settings() -> FilesetSettings:
    return load_settings(fileset_web_max_files=5, fileset_web_max_file_size=1000,
                         fileset_web_max_total_size=3000, fileset_bundle_min_files=3).fileset


@pytest.mark.parametrize(("sizes", "bundle", "expected"), [
    ([10], False, "web-file"),
    ([10], True, "web-file"),  # one file: never a bundle
    ([1000], False, "web-file"),  # at the per-file limit
    ([1001], False, "archiveorg-file"),  # over it
    ([10, 10], False, "web-fileset"),
    ([10, 10], True, "web-fileset"),  # fewer than fileset_bundle_min_files
    ([10, 10, 10], True, "web-fileset-bundled"),
    ([10, 10, 10], False, "web-fileset"),  # no bundle URL
    ([10] * 5, False, "web-fileset"),  # at fileset_web_max_files
    ([10] * 6, False, "archiveorg-fileset"),  # over it
    ([10] * 6, True, "archiveorg-fileset-bundled"),
    ([1000, 1000, 1000], False, "web-fileset"),  # at the total limit
    ([1000, 1000, 1000, 1], False, "archiveorg-fileset"),  # over it
    ([1000, 1000, 1000, 1], True, "archiveorg-fileset-bundled"),
    ([10, 1001], False, "archiveorg-fileset"),  # one file too large sends all
])
def test_choose_strategy_rule(rule_settings: FilesetSettings, sizes: list[int], bundle: bool,
                              expected: str) -> None:
    assert choose_strategy(platform_item(sizes, bundle), rule_settings) == expected


def test_choose_strategy_defaults_and_backend() -> None:
    full = load_settings()
    settings = full.fileset
    assert choose_strategy(platform_item([10] * 20), settings) == "web-fileset"
    assert choose_strategy(platform_item([10] * 21), settings) == "archiveorg-fileset"
    assert choose_strategy(platform_item([10] * 10, bundle=True), settings) == (
        "web-fileset-bundled")
    assert choose_strategy(platform_item([10] * 9, bundle=True), settings) == "web-fileset"
    assert choose_strategy(platform_item([128 * 2**20 + 1]), settings) == "archiveorg-file"
    assert choose_strategy(platform_item([10]), settings, backend="archiveorg") == (
        "archiveorg-file")
    # archive.org items always go to the item store
    helper = ArchiveOrgHelper(full.archiveorg, HttpFetcher(), settings)  # type: ignore[attr-defined]
    assert helper.choose_strategy(platform_item([10])) == "archiveorg-file"
    assert helper.choose_strategy(platform_item([10, 10])) == "archiveorg-fileset"
    assert helper.choose_strategy(platform_item([10] * 10, bundle=True)) == (
        "archiveorg-fileset-bundled")


@pytest.mark.parametrize(("args", "expected"), [
    (("zenodo.org", "5703112", "1.0"), "zenodo.org-5703112-v1.0"),
    (("zenodo.org", "5703112", None), "zenodo.org-5703112"),
    (("figshare.com", "123", "4"), "figshare.com-123-v4"),
    (("dataverse.harvard.edu", "doi:10.7910/DVN/ABC123", "2.1"),
     "dataverse.harvard.edu-doi_10.7910_DVN_ABC123-v2.1"),
    (("dataverse.no", "hdl:1902.1/111 222", "1.0"), "dataverse.no-hdl_1902.1_111_222-v1.0"),
    (("example.org", "ünïcode/../../etc", "1 / 2"), "example.org-_n_code_.._.._etc-v1_2"),
    (("example.org", "x", "../.."), "example.org-x-v"),
    (("example.org", "x", "..."), "example.org-x-v"),
    ((".hidden", "id", None), "hidden-id"),
])
def test_item_name(args: tuple[str, str, str | None], expected: str) -> None:
    name = item_name(*args)
    assert name == expected
    assert check_item_name(name) == name
    assert re.fullmatch(r"[A-Za-z0-9._-]+", name)


def test_item_name_length() -> None:
    name = item_name("dataverse.example.edu", "doi:10.5072/" + "X" * 300, "1.0")
    assert len(name) <= 100
    assert name.startswith("dataverse.example.edu-doi_10.5072_XXX")


def test_platform_api_that_does_not_answer_is_fetch_error(srv: PlatformServer) -> None:
    """Issue 14 C4: an unreachable or unresolvable platform host was
    error-platform-api, which the docs reserve for what an API answered."""
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    routes = {**srv.routes(), "https://zenodo.org": f"http://127.0.0.1:{port}"}
    settings = load_settings(http_routes=routes, fetch_timeout=2)
    ingester = open_ingester(settings)
    try:
        out = ingester.ingest(IngestRequest(ingest_type="dataset",
                                            base_url="https://zenodo.org/records/1"))
    finally:
        ingester.close()
    assert out.status == "fetch-error", out.result
    assert out.result.to_json()["platform_name"] == "zenodo" and "zenodo API" in out.error  # type: ignore[operator]
