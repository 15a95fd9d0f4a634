"""EUDAT B2SHARE (``fileset/platforms/b2share.py``): real answers of its training
instance (the test kit's ``b2share/``, sources in its ``SOURCES.md``), and invented
records for what they cannot show (restriction, deletion, a self-hosted instance,
B2SHARE 3's InvenioRDM shape, downloads verified), all over real HTTP to the
loopback platform server. Every invented answer is built here and says so."""

from __future__ import annotations

import copy
import hashlib
from typing import Any

import pytest

from sandcrawler.app.settings import load_settings, platform_sections
from sandcrawler.fileset.platforms import platform_helpers
from sandcrawler.fileset.platforms.base import LandingPage, choose_strategy
from sandcrawler.records.fileset import FilesetPlatformItem, IngestRequest
from sandcrawler.web.http.fetch import HttpFetcher
from sandcrawler_testkit.platforms import PlatformServer
from sandcrawler_testkit.recorded import RECORDED
from tests.helpers.platforms import ingest, page_json, paths, process, status

TRNG = "trng-b2share.eudat.eu"
PROD = "b2share.eudat.eu"
#: the real record a1c2ef96… of the training instance (a search hit's JSON, see SOURCES.md)
REAL_RECORD = RECORDED["b2share-trng-record-a1c2ef96"].json()


def rows(item: FilesetPlatformItem) -> list[tuple[Any, ...]]:
    return [(f.path, f.size, f.md5, f.mimetype, f.platform_url) for f in item.manifest or []]


# --- real answers (the training instance) ---------------------------------------------------


def test_real_record_whose_bucket_is_not_found_uses_its_own_file_list(
        srv: PlatformServer) -> None:
    """The record's ``links.files`` bucket answers B2SHARE's real 404: the record's
    own ``files`` (key, size, md5, bucket) make the manifest, downloaded from
    ``/api/files/{bucket}/{key}`` as EUDAT's guide does."""
    item = process(srv, f"https://{TRNG}/records/a1c2ef96a1e446fa9bd7a2a46d2242d4", "b2share")
    assert (item.platform_name, item.platform_domain, item.platform_id) == (
        "b2share", TRNG, "a1c2ef96a1e446fa9bd7a2a46d2242d4")
    assert rows(item) == [("myfile", 9, "c8afdb36c52cf4727836669019e69222", None,
                           f"https://{TRNG}/api/files/f1fa180a-4db8-439e-9ccd-89422e27708e/myfile")]
    assert item.manifest is not None
    assert item.manifest[0].extra == {"file_id": "a19f5b2c-d882-4b04-ab58-e0664a7ee756"}
    assert paths(srv) == ["/api/records/a1c2ef96a1e446fa9bd7a2a46d2242d4",
                          "/api/files/f1fa180a-4db8-439e-9ccd-89422e27708e"]
    # ids are per instance: the training instance's host names the item
    assert item.archiveorg_item_name == f"{TRNG}-a1c2ef96a1e446fa9bd7a2a46d2242d4"
    assert item.archiveorg_item_meta == {
        "title": "REST paper 2014", "source": f"https://{TRNG}/records/a1c2ef96a1e446fa9bd7a2a46d2242d4"}
    assert item.web_bundle_url is None


def test_real_bucket_of_two_files(srv: PlatformServer) -> None:
    """A record (its answer to publishing) and the real listing of its bucket:
    ``contents`` with mimetypes and ``links.self``, checksums ``md5:…``."""
    bucket = f"https://{TRNG}/api/files/0163d244-5845-40ca-899c-d1d0025f68aa"
    item = process(srv, f"https://{TRNG}/records/b43a0e6914e34de8bd19613bcdc0d364", "b2share")
    assert rows(item) == [
        ("sequence2.txt", 4042, "0f8d51036979343c38dcc291c18dae7e", "text/plain",
         f"{bucket}/sequence2.txt"),
        ("sequence.txt", 440, "e617f15cd8bded0c4e92e35b5af1609d", "text/plain",
         f"{bucket}/sequence.txt")]
    meta = item.archiveorg_item_meta or {}
    # the DOI as B2SHARE gives it ("http://doi.org/…"), without its resolver
    assert (meta["title"], meta["doi"]) == ("My test upload",
                                            "10.5072/b2share.b43a0e6914e34de8bd19613bcdc0d364")
    # two small files, and B2SHARE v2 has no "download all"
    assert choose_strategy(item, load_settings().fileset) == "web-fileset"


def test_real_new_version_and_its_head_id(srv: PlatformServer) -> None:
    """A new version (2ff3f581…) with its bucket; its head id (7be05b53…, all
    versions) redirects to it, as v2 redirects a head to the latest version."""
    item = process(srv, f"https://{TRNG}/records/2ff3f5815db3494a840e6b3f1e6a6542", "b2share")
    assert [(f.path, f.size, f.md5, f.mimetype, (f.extra or {})["file_id"])
            for f in item.manifest or []] == [
        ("EUDAT-logo2011.jpg", 34128, "96c403b2882ac4d9dec0e9f6a9f19a48", "image/jpeg",
         "1d406342-bc3c-4750-a16f-34c1cdccb4c2")]
    head = "7be05b53b34145b59c9ab1bca5b7aee2"
    srv.add_page(TRNG, f"/api/records/{head}", b"", status=301,
                 location=f"https://{TRNG}/api/records/2ff3f5815db3494a840e6b3f1e6a6542")
    srv.clear_requests()
    assert status(srv, f"https://{TRNG}/records/{head}", "b2share") == "platform-scope"
    assert paths(srv) == [f"/api/records/{head}",
                          "/api/records/2ff3f5815db3494a840e6b3f1e6a6542"]


def test_real_not_found_answer_is_404(srv: PlatformServer) -> None:
    assert status(srv, f"https://{TRNG}/records/00000000000000000000000000000000",
                  "b2share") == "platform-404"


# --- invented records -----------------------------------------------------------------------


def record_like_real(record_id: str, host: str, **metadata: Any) -> dict[str, Any]:
    """The real record a1c2ef96…, re-identified and re-hosted, ``metadata`` changed:
    invented, in the real shape."""
    rec: dict[str, Any] = copy.deepcopy(REAL_RECORD)
    rec["id"] = record_id
    rec["links"] = {"self": f"https://{host}/api/records/{record_id}",
                    "files": f"https://{host}/api/files/bucket-{record_id}"}
    rec["metadata"].update(metadata)
    return rec


@pytest.mark.parametrize(("metadata", "expected"), [
    ({"open_access": False}, "platform-restricted"),
    ({"open_access": False, "embargo_date": "2099-01-01"}, "platform-restricted"),
    ({"embargo_date": "2099-06-30T00:00:00+00:00"}, "platform-restricted"),
    ({"embargo_date": "2001-01-01"}, "success"),  # an embargo that has ended
])
def test_restricted_or_embargoed_files(srv: PlatformServer, metadata: dict[str, Any],
                                       expected: str) -> None:
    rid = "1" * 32
    page_json(srv, PROD, f"/api/records/{rid}", record_like_real(rid, PROD, **metadata))
    url = f"https://{PROD}/records/{rid}"
    if expected == "success":
        assert [f.path for f in process(srv, url, "b2share").manifest or []] == ["myfile"]
    else:
        assert status(srv, url, "b2share") == expected
        # the bucket of a closed record is not asked for
        assert paths(srv) == [f"/api/records/{rid}"]


def test_deleted_record_is_404(srv: PlatformServer) -> None:
    page_json(srv, PROD, f"/api/records/{'2' * 32}",  # invented: B2SHARE's 410 for a deleted record
              {"status": 410, "message": "PID has been deleted."}, status=410)
    assert status(srv, f"https://{PROD}/records/{'2' * 32}", "b2share") == "platform-404"


@pytest.mark.parametrize(("overrides", "api"), [
    ({"b2share.hosts": ["b2share.example.org"]}, "/api"),
    ({"b2share.hosts": ["b2share.example.org"],
      "b2share.api_urls": {"b2share.example.org": "https://b2share.example.org/b2/api"}},
     "/b2/api"),
])
def test_self_hosted_instance_by_setting(srv: PlatformServer, overrides: dict[str, Any],
                                         api: str) -> None:
    host, rid = "b2share.example.org", "3" * 32
    rec = record_like_real(rid, host)
    page_json(srv, host, f"{api}/records/{rid}", rec)
    page_json(srv, host, f"/api/files/bucket-{rid}", {"contents": [], "id": f"bucket-{rid}"})
    url = f"https://{host}/records/{rid}"
    # not a B2SHARE host until the setting says so
    request, page = IngestRequest(ingest_type="dataset", base_url=url), LandingPage(url, url)
    settings = load_settings()
    fetcher = HttpFetcher()
    try:
        assert not any(h.match_request(request, page, None) for h in platform_helpers(
            platform_sections(settings), fetcher, settings.fileset) if h.name == "b2share")
    finally:
        fetcher.close()
    item = process(srv, url, "b2share", **overrides)
    assert (item.platform_domain, item.archiveorg_item_name) == (host, f"{host}-{rid}")
    assert paths(srv) == [f"{api}/records/{rid}", f"/api/files/bucket-{rid}"]
    assert item.manifest == []  # its bucket's (empty) contents, not the record's list


def test_b2safe_references_are_left_out(srv: PlatformServer) -> None:
    rid = "4" * 32
    rec = record_like_real(rid, PROD)  # invented: one stored file, one B2SAFE reference
    rec["files"].append({"key": "remote.dat", "ePIC_PID": "http://hdl.handle.net/11304/x",
                         "b2safe": True})
    page_json(srv, PROD, f"/api/records/{rid}", rec)
    page_json(srv, PROD, f"/api/files/bucket-{rid}", {"contents": [
        {"key": "myfile", "size": 9, "checksum": "md5:c8afdb36c52cf4727836669019e69222",
         "links": {"self": f"https://{PROD}/api/files/bucket-{rid}/myfile"}},
        {"key": "remote.dat", "size": 1, "checksum": "md5:0",
         "links": {"self": f"https://{PROD}/api/files/bucket-{rid}/remote.dat"}}]})
    assert [f.path for f in process(srv, f"https://{PROD}/records/{rid}",
                                    "b2share").manifest or []] == ["myfile"]


def rdm_record(rid: str, data: dict[str, bytes], **access: Any) -> dict[str, Any]:
    """Invented: a B2SHARE 3 record in InvenioRDM's shape (no real one was found)."""
    base = f"https://{PROD}/api/records/{rid}"
    return {"id": rid, "parent": {"id": "zzzzz-00000"},
            "access": {"record": "public", "files": "public", **access},
            "pids": {"doi": {"identifier": f"10.23728/b2share.{rid}"}},
            "metadata": {"title": "A B2SHARE 3 record", "publication_date": "2025-03-01",
                         "creators": [{"person_or_org": {"name": "Doe, Jane"}}],
                         "rights": [{"id": "cc-by-4.0"}]},
            "links": {"self": base, "files": f"{base}/files", "archive": f"{base}/files-archive"},
            "files": {"enabled": True, "entries": {
                k: {"key": k, "size": len(v), "checksum": f"md5:{hashlib.md5(v).hexdigest()}"}
                for k, v in data.items()}}}


def test_b2share_3_record_and_its_file_link(srv: PlatformServer) -> None:
    rid, data = "h4rf8-38964", {"a.csv": b"x,y\n1,2\n", "b.txt": b"b\n"}
    page_json(srv, PROD, f"/api/records/{rid}", rdm_record(rid, data))
    base = f"https://{PROD}/api/records/{rid}/files"
    page_json(srv, PROD, f"/api/records/{rid}/files", {"entries": [  # InvenioRDM's listing
        {"key": k, "size": len(v), "checksum": f"md5:{hashlib.md5(v).hexdigest()}",
         "mimetype": "text/plain",
         "links": {"self": f"{base}/{k}", "content": f"{base}/{k}/content"}}
        for k, v in data.items()]})
    item = process(srv, f"https://{PROD}/records/{rid}", "b2share")
    assert rows(item) == [(k, len(v), hashlib.md5(v).hexdigest(), "text/plain",
                           f"{base}/{k}/content") for k, v in data.items()]
    assert item.archiveorg_item_meta == {
        "title": "A B2SHARE 3 record", "date": "2025-03-01", "doi": f"10.23728/b2share.{rid}",
        "license": "cc-by-4.0", "creator": ["Doe, Jane"], "source": f"https://{PROD}/records/{rid}"}
    assert item.web_bundle_url == f"{base}-archive"
    one = process(srv, f"https://{PROD}/records/{rid}/files/b.txt", "b2share")
    assert [f.path for f in one.manifest or []] == ["b.txt"]
    assert (one.archiveorg_dataset_item, one.web_bundle_url) == (f"{PROD}-{rid}", None)
    assert one.archiveorg_item_name != one.archiveorg_dataset_item
    assert status(srv, f"https://{PROD}/records/{rid}/files/nope.txt", "b2share") == (
        "platform-404")
    # the parent id names all versions
    page_json(srv, PROD, "/api/records/zzzzz-00000", rdm_record(rid, data))
    assert status(srv, f"https://{PROD}/records/zzzzz-00000", "b2share") == "platform-scope"


@pytest.mark.parametrize("access", [{"files": "restricted"},
                                    {"embargo": {"active": True, "until": "2099-01-01"}}])
def test_b2share_3_restricted(srv: PlatformServer, access: dict[str, Any]) -> None:
    rid = "r3str-00001"
    page_json(srv, PROD, f"/api/records/{rid}", rdm_record(rid, {"a": b"a"}, **access))
    assert status(srv, f"https://{PROD}/records/{rid}", "b2share") == "platform-restricted"


def add_ingestable(srv: PlatformServer, rid: str, files: dict[str, bytes],
                   lie: dict[str, str] | None = None) -> None:
    """Invented: a v2 record on the training instance with its landing page, bucket
    and downloads; ``lie`` gives md5s the bucket reports instead of the truth."""
    bucket = f"https://{TRNG}/api/files/b-{rid}"
    rec = record_like_real(rid, TRNG, titles=[{"title": "An invented record"}])
    rec["links"]["files"] = bucket
    rec["files"] = []
    page_json(srv, TRNG, f"/api/records/{rid}", rec)
    page_json(srv, TRNG, f"/api/files/b-{rid}", {"id": f"b-{rid}", "contents": [
        {"key": k, "size": len(v), "mimetype": "application/octet-stream",
         "checksum": "md5:" + (lie or {}).get(k, hashlib.md5(v).hexdigest()),
         "links": {"self": f"{bucket}/{k}"}} for k, v in files.items()]})
    for k, v in files.items():
        srv.add_page(TRNG, f"/api/files/b-{rid}/{k}", v, content_type="application/octet-stream")
    srv.add_page(TRNG, f"/records/{rid}", b"<html><title>B2SHARE</title></html>")


def test_ingest_downloads_and_verifies_md5(srv: PlatformServer) -> None:
    rid, files = "5" * 32, {"data.csv": b"a,b\n1,2\n", "notes.txt": bytes(range(256))}
    add_ingestable(srv, rid, files)
    out = ingest(srv, f"https://{TRNG}/records/{rid}")
    r = out.result.to_json()
    assert (r["status"], r["platform_name"], r["platform_domain"], r["ingest_strategy"]) == (
        "success", "b2share", TRNG, "web-fileset"), r
    assert [(f["path"], f["size"], f["md5"]) for f in r["manifest"]] == [
        (k, len(v), hashlib.md5(v).hexdigest()) for k, v in files.items()]
    assert {p for p in paths(srv) if p.startswith(f"/api/files/b-{rid}/")} == {
        f"/api/files/b-{rid}/{k}" for k in files}


def test_ingest_fails_on_a_wrong_md5(srv: PlatformServer) -> None:
    rid = "6" * 32
    add_ingestable(srv, rid, {"a.bin": b"aaa", "b.bin": b"bbb"}, lie={"b.bin": "0" * 32})
    out = ingest(srv, f"https://{TRNG}/records/{rid}")
    assert (out.status, out.result.to_json()["hit"]) == ("mismatch-md5", False)
