"""Dryad (``fileset/platforms/dryad.py``): real recorded answers (the test kit's
``dryad/``, sources in its ``SOURCES.md``), and invented datasets for what they
cannot show (paging, faults, downloads verified), all over real HTTP to the
loopback platform server. Every invented answer is built here, in the API's
documented shapes, and says so."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from sandcrawler.fileset.platforms.base import LandingPage
from sandcrawler_testkit.platforms import PlatformServer
from sandcrawler_testkit.recorded import RECORDED
from tests.helpers.platforms import ingest, page_json, process, process_page, status

HOST = "datadryad.org"
JSON = "application/json; charset=utf-8"
#: the real download of file 61858, and the checksums S3 gave with it (ETag and
#: x-amz-meta-sha256, recorded with the bytes)
CSV = RECORDED["dryad-file-61858"].raw
CSV_MD5 = "c914810b357752a8e0df61c65a2acad9"
CSV_SHA256 = "506c33db2b3916080640e0b18184cc9f1893544b22dbe15a0fb5a46c0f334a5d"


def answer(srv: PlatformServer, path: str, obj: object, status: int = 200,
           host: str = HOST) -> None:
    """An invented JSON answer of ``host``'s API at ``path``."""
    page_json(srv, host, path, obj, status, JSON)


def file_entry(file_id: int, path: str, data: bytes | None = None,
               digest: tuple[str, str] | None = None) -> dict[str, Any]:
    """An invented entry of ``_embedded["stash:files"]`` in the documented shape."""
    entry: dict[str, Any] = {
        "_links": {"self": {"href": f"/api/v2/files/{file_id}"},
                   "stash:download": {"href": f"/api/v2/files/{file_id}/download"}},
        "path": path, "size": len(data or b""), "mimeType": "text/plain", "status": "created"}
    if digest:
        entry["digestType"], entry["digest"] = digest
    return entry


def add_dataset(srv: PlatformServer, doi: str, pages: list[list[dict[str, Any]]],
                version_id: int = 700, curation: str = "Published",
                host: str = HOST) -> None:
    """An invented dataset: its answer, its latest version, its files in ``pages``."""
    quoted = doi.replace(":", "%3A").replace("/", "%2F")
    answer(srv, f"/api/v2/datasets/{doi}", {
        "_links": {"self": {"href": f"/api/v2/datasets/{quoted}"},
                   "stash:version": {"href": f"/api/v2/versions/{version_id}"}},
        "identifier": doi, "title": "An invented Dryad dataset", "versionNumber": 2,
        "curationStatus": curation, "publicationDate": "2025-01-02",
        "license": "https://spdx.org/licenses/CC0-1.0.html",
        "authors": [{"firstName": "Ada", "lastName": "Lovelace"}]}, host=host)
    files = f"/api/v2/versions/{version_id}/files"
    answer(srv, f"/api/v2/versions/{version_id}", {
        "_links": {"self": {"href": f"/api/v2/versions/{version_id}"},
                   "stash:files": {"href": files},
                   "stash:download": {"href": f"/api/v2/versions/{version_id}/download"}},
        "versionNumber": 2}, host=host)
    for n, entries in enumerate(pages, 1):
        links: dict[str, Any] = {"self": {"href": f"{files}?page={n}"}}
        if n < len(pages):
            links["next"] = {"href": f"{files}?page={n + 1}"}
        answer(srv, files if n == 1 else f"{files}?page={n}", {
            "_links": links, "count": len(entries), "total": sum(map(len, pages)),
            "_embedded": {"stash:files": entries}}, host=host)
    srv.add_page(host, f"/dataset/{doi}", b"<html><title>Dryad</title></html>")


# --- real answers ---------------------------------------------------------------------------


@pytest.mark.parametrize("url", [
    "https://datadryad.org/stash/dataset/doi:10.5061/dryad.7rh4625",
    "https://datadryad.org/dataset/doi:10.5061/dryad.7rh4625",
    "https://datadryad.org/dataset/doi%3A10.5061%2Fdryad.7rh4625",
])
def test_recorded_dataset_leads_to_its_latest_version(srv: PlatformServer, url: str) -> None:
    """The real answer's ``stash:version`` is followed; that version was not
    recorded, so the loopback server has none: platform-404, after the right calls."""
    assert status(srv, url, "dryad") == "platform-404"
    # the DOI asked fully percent-encoded (the server logs paths decoded)
    assert [r[2] for r in srv.requests] == [
        "/api/v2/datasets/doi:10.5061/dryad.7rh4625", "/api/v2/versions/93"]


def test_documented_files_listing(srv: PlatformServer) -> None:
    """A real dataset answer (version 5 of dryad.77b2422), an invented version
    answer, and the files listing Dryad's API documentation gives."""
    answer(srv, "/api/v2/versions/40259", {  # invented: points at the documented listing
        "_links": {"stash:files": {"href": "/api/v2/versions/32/files"},
                   "stash:download": {"href": "/api/v2/versions/40259/download"}}})
    item = process(srv, "https://datadryad.org/dataset/doi:10.5061/dryad.77b2422", "dryad")
    assert [(f.path, f.size, f.mimetype, f.md5, f.platform_url, f.extra)
            for f in item.manifest or []] == [
        ("I0006475A.jpg", 218594, "image/jpeg", "1adgsdhsg232776e7qedqgdaysdfts8",
         "https://datadryad.org/api/v2/downloads/66", {"file_id": "66"}),
        ("admin_editing2.jpg", 185621, "image/jpeg", None,
         "https://datadryad.org/api/v2/downloads/67", {"file_id": "67"})]
    assert (item.platform_name, item.platform_domain, item.platform_id) == (
        "dryad", "datadryad.org", "doi:10.5061/dryad.77b2422")
    assert item.archiveorg_item_name == "datadryad.org-doi_10.5061_dryad.77b2422-v5"
    assert item.web_bundle_url == "https://datadryad.org/api/v2/versions/40259/download"
    meta = item.archiveorg_item_meta or {}
    assert (meta["doi"], meta["version"], meta["date"]) == ("10.5061/dryad.77b2422", 5,
                                                            "2019-10-23")
    assert meta["title"].startswith("Data from:")


# --- invented datasets ----------------------------------------------------------------------


def test_two_pages_ingested_and_every_digest_verified(srv: PlatformServer) -> None:
    a, notes = b"site,count\nA,3\n", b"read me\n"
    add_dataset(srv, "doi:10.5061/dryad.two", [
        [file_entry(1, "data/a.csv", a, ("md5", hashlib.md5(a).hexdigest())),
         file_entry(2, "notes.txt", notes, ("adler-32", "0d8c02b4"))],
        [file_entry(61858, "Crossin et al 2012 MAC data for Dryad.csv", CSV,
                    ("sha-256", CSV_SHA256))]])
    srv.add_page(HOST, "/api/v2/files/1/download", a, content_type="text/csv")
    srv.add_page(HOST, "/api/v2/files/2/download", notes, content_type="text/plain")
    out = ingest(srv, "https://datadryad.org/dataset/doi:10.5061/dryad.two")
    r = out.result.to_json()
    assert (r["status"], r["platform_name"], r["ingest_strategy"]) == (
        "success", "dryad", "web-fileset"), r
    # each file's digests, the platform's and those its bytes gave (which agree)
    assert [(f["path"], f["size"], f.get("md5"), f.get("sha256"), f.get("checksums"))
            for f in r["manifest"]] == [
        ("data/a.csv", len(a), hashlib.md5(a).hexdigest(), hashlib.sha256(a).hexdigest(), None),
        ("notes.txt", len(notes), hashlib.md5(notes).hexdigest(),
         hashlib.sha256(notes).hexdigest(), {"adler32": "0d8c02b4"}),  # kept, not verified
        ("Crossin et al 2012 MAC data for Dryad.csv", len(CSV), CSV_MD5, CSV_SHA256, None)]
    assert {p for _, _, p in srv.requests if p.endswith("/download")} == {
        "/api/v2/files/1/download", "/api/v2/files/2/download", "/api/v2/files/61858/download"}


@pytest.mark.parametrize(("digest", "expected"), [
    (("md5", "0" * 32), "mismatch-md5"), (("sha-256", "0" * 64), "mismatch-sha256")])
def test_a_wrong_digest_fails_the_record(srv: PlatformServer, digest: tuple[str, str],
                                         expected: str) -> None:
    add_dataset(srv, "doi:10.5061/dryad.bad", [[file_entry(61858, "c.csv", CSV, digest),
                                                 file_entry(5, "d.txt", b"d\n")]])
    srv.add_page(HOST, "/api/v2/files/5/download", b"d\n", content_type="text/plain")
    out = ingest(srv, "https://datadryad.org/dataset/doi:10.5061/dryad.bad")
    assert out.status == expected, out.result.to_json()


def test_a_next_link_that_repeats_itself_is_an_api_error(srv: PlatformServer) -> None:
    files = "/api/v2/versions/700/files"
    add_dataset(srv, "doi:10.5061/dryad.loop", [[file_entry(1, "a.txt", b"a")]])
    for page, nxt in ((files, f"{files}?page=2"), (f"{files}?page=2", files)):
        answer(srv, page, {"_links": {"next": {"href": nxt}}, "count": 1, "total": 9,
                           "_embedded": {"stash:files": [file_entry(len(page), page[-6:])]}})
    assert status(srv, "https://datadryad.org/dataset/doi:10.5061/dryad.loop", "dryad") == (
        "error-platform-api")
    assert [p for _, _, p in srv.requests if p.startswith(files)] == [files, f"{files}?page=2"]


def test_too_many_files_stops_the_listing_early(srv: PlatformServer) -> None:
    add_dataset(srv, "doi:10.5061/dryad.many", [
        [file_entry(i, f"f{i}.txt", b"x"), file_entry(i + 100, f"g{i}.txt", b"x")]
        for i in range(5)])
    assert status(srv, "https://datadryad.org/dataset/doi:10.5061/dryad.many", "dryad",
                  fileset_max_file_count=3) == "too-many-files"
    assert "/api/v2/versions/700/files?page=3" not in {p for _, _, p in srv.requests}


@pytest.mark.parametrize("code", [404, 410])
def test_unknown_and_deleted_datasets_are_404(srv: PlatformServer, code: int) -> None:
    answer(srv, "/api/v2/datasets/doi:10.5061/dryad.gone", {"error": "not-found"}, code)
    assert status(srv, "https://datadryad.org/dataset/doi:10.5061/dryad.gone", "dryad") == (
        "platform-404")


def test_not_public_embargoed_and_undownloadable_are_restricted(srv: PlatformServer) -> None:
    # the answer Dryad's presenter gives for a dataset nobody may view (its message)
    answer(srv, "/api/v2/datasets/doi:10.5061/dryad.priv", {
        "identifier": "doi:10.5061/dryad.priv", "id": 7, "message": "Identifier cannot be "
        "viewed. Either you lack permission to view it, or it is missing required elements."})
    assert status(srv, "https://datadryad.org/dataset/doi:10.5061/dryad.priv", "dryad") == (
        "platform-restricted")
    add_dataset(srv, "doi:10.5061/dryad.emb", [[file_entry(1, "a.txt", b"a")]],
                curation="Embargoed")
    assert status(srv, "https://datadryad.org/dataset/doi:10.5061/dryad.emb", "dryad") == (
        "platform-restricted")
    entry = file_entry(1, "a.txt", b"a")
    del entry["_links"]["stash:download"]  # Dryad leaves it out where files may not be had
    add_dataset(srv, "doi:10.5061/dryad.nodl", [[entry]], version_id=701)
    assert status(srv, "https://datadryad.org/dataset/doi:10.5061/dryad.nodl", "dryad") == (
        "platform-restricted")


def test_a_doi_redirect_and_the_sandbox_instance(srv: PlatformServer) -> None:
    sandbox = "sandbox.datadryad.org"
    add_dataset(srv, "doi:10.7959/dryad.sbx", [[file_entry(1, "a.txt", b"a"),
                                                file_entry(2, "b.txt", b"b")]], host=sandbox)
    srv.add_page("doi.org", "/10.7959/dryad.sbx", b"", status=302,
                 location="https://sandbox.datadryad.org/dataset/doi:10.7959/dryad.sbx")
    page = LandingPage(url="https://doi.org/10.7959/dryad.sbx",
                       terminal_url="https://sandbox.datadryad.org/dataset/doi:10.7959/dryad.sbx")
    item = process_page(srv, page, "dryad")
    assert item.platform_domain == sandbox
    assert item.archiveorg_item_name == "sandbox.datadryad.org-doi_10.7959_dryad.sbx-v2"
    assert item.web_bundle_url == "https://sandbox.datadryad.org/api/v2/versions/700/download"
    assert [f.platform_url for f in item.manifest or []] == [
        "https://sandbox.datadryad.org/api/v2/files/1/download",
        "https://sandbox.datadryad.org/api/v2/files/2/download"]
    assert {h for h, _, _ in srv.requests} == {sandbox}
    out = ingest(srv, "https://doi.org/10.7959/dryad.sbx")
    assert out.result.to_json()["platform_domain"] == sandbox
