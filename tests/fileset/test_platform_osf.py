"""OSF (``fileset/platforms/osf.py``): real recorded answers of OSF's test server
(the test kit's ``osf/``, recorded by osfr; sources in its ``SOURCES.md``), and
invented projects for what they cannot show (deep folders, faults, downloads
verified), all over real HTTP to the loopback platform server. Every invented
answer is built here, in the API's shapes, and says so."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from sandcrawler.core.errors import RecordError
from sandcrawler_testkit.platforms import PlatformServer
from sandcrawler_testkit.recorded import RECORDED
from tests.helpers.platforms import ingest, page_json, process, status

API, TEST_API = "api.osf.io", "api.test.osf.io"
JSONAPI = "application/vnd.api+json; charset=utf-8"
MANY = "/v2/nodes/y8t6r/files/osfstorage/5d4ef2104e90e100146f7e53/"


def answer(srv: PlatformServer, host: str, path: str, obj: object, status: int = 200) -> None:
    page_json(srv, host, path, obj, status, JSONAPI)


def folder(node: str, folder_id: str, path: str, host: str = API) -> dict[str, Any]:
    """An invented folder entry of a files listing, in the real entries' shape."""
    return {"id": folder_id, "type": "files",
            "attributes": {"kind": "folder", "name": path.rstrip("/").rsplit("/", 1)[-1],
                           "materialized_path": path, "size": None, "provider": "osfstorage",
                           "extra": {"hashes": {"md5": None, "sha256": None}}},
            "relationships": {"files": {"links": {"related": {
                "href": f"https://{host}/v2/nodes/{node}/files/osfstorage/{folder_id}/",
                "meta": {}}}}},
            "links": {"info": f"https://{host}/v2/files/{folder_id}/"}}


def file(node: str, file_id: str, path: str, data: bytes) -> dict[str, Any]:
    """An invented file entry, with the md5 and sha256 of ``data``."""
    return {"id": file_id, "type": "files",
            "attributes": {"kind": "file", "name": path.rsplit("/", 1)[-1], "guid": None,
                           "materialized_path": path, "size": len(data),
                           "provider": "osfstorage",
                           "extra": {"hashes": {"md5": hashlib.md5(data).hexdigest(),
                                                "sha256": hashlib.sha256(data).hexdigest()},
                                     "downloads": 0}},
            "relationships": {"node": {"data": {"id": node, "type": "nodes"}}},
            "links": {"download": f"https://osf.io/download/{file_id}/"}}


def listing(host: str, path: str, entries: list[dict[str, Any]], nxt: str | None = None,
            srv: PlatformServer | None = None) -> dict[str, Any]:
    obj = {"data": entries, "links": {"first": None, "last": None, "prev": None,
                                      "next": nxt, "meta": {"total": len(entries),
                                                            "per_page": 10}},
           "meta": {"version": "2.0"}}
    if srv is not None:
        answer(srv, host, path, obj)
    return obj


def add_node(srv: PlatformServer, node: str, title: str = "An invented OSF project") -> None:
    answer(srv, API, f"/v2/nodes/{node}/", {"data": {
        "id": node, "type": "nodes",
        "attributes": {"title": title, "category": "project", "registration": False,
                       "preprint": False, "public": True,
                       "date_created": "2024-05-06T07:08:09.000000"}}})
    srv.add_page("osf.io", f"/{node}/", b"<html><title>OSF</title></html>")


# --- real answers ---------------------------------------------------------------------------


def test_recorded_project_walked_until_too_many_files(srv: PlatformServer) -> None:
    """osfr's fixture project: its root (a file and two folders), then the folder
    many-files page by page. Past 15 files the walk stops, before page 3 (which
    was not recorded) and before the folder nested-dir."""
    assert status(srv, "https://test.osf.io/y8t6r/", "osf", fileset_max_file_count=15) == (
        "too-many-files")
    assert [(h, p) for h, _, p in srv.requests] == [
        (TEST_API, "/v2/nodes/y8t6r/"), (TEST_API, "/v2/nodes/y8t6r/files/osfstorage/"),
        (TEST_API, MANY), (TEST_API, f"{MANY}?page=2")]


def test_recorded_project_with_its_unrecorded_pages_invented(srv: PlatformServer) -> None:
    """The same walk to its end: pages 3 and 4 of many-files and the listing of
    nested-dir were not recorded, and are invented here (last page: no next)."""
    listing(TEST_API, f"{MANY}?page=3", [file("y8t6r", "a" * 24, "/many-files/x.txt", b"x")],
            f"https://{TEST_API}{MANY}?page=4", srv=srv)
    listing(TEST_API, f"{MANY}?page=4", [file("y8t6r", "b" * 24, "/many-files/y.txt", b"y")],
            srv=srv)
    listing(TEST_API, "/v2/nodes/y8t6r/files/osfstorage/5d4f01fb4fb5130014d6754d/",
            [file("y8t6r", "c" * 24, "/nested-dir/z.txt", b"z")], srv=srv)
    item = process(srv, "https://test.osf.io/y8t6r/", "osf")
    manifest = item.manifest or []
    assert (item.platform_name, item.platform_domain, item.platform_id) == (
        "osf", "test.osf.io", "y8t6r")
    assert item.archiveorg_item_name == "test.osf.io-y8t6r"
    assert item.archiveorg_item_meta == {"title": "osfr-testthat-project", "date": "2019-08-10",
                                         "source": "https://test.osf.io/y8t6r/"}
    assert item.web_bundle_url is None
    paths = [f.path for f in manifest]
    assert len(paths) == 1 + 20 + 2 + 1
    assert paths[:3] == ["image-file-01.pdf", "many-files/text-file-02.txt",
                         "many-files/text-file-03.txt"]
    assert paths[-3:] == ["many-files/x.txt", "many-files/y.txt", "nested-dir/z.txt"]
    first = manifest[0]
    assert (first.size, first.md5, first.sha256, first.platform_url, first.extra) == (
        7709, "b2b8554427811f3d67cd91e1b4e6631b",
        "09de58bd85494bf792e8838b1f77afd11ca43b4746362c8128fcbcdeea80cc49",
        "https://test.osf.io/download/bexrz/",
        {"file_id": "5d4ef38e4e90e100146f7f41", "guid": "bexrz"})
    # the real answers' every file, as they give it
    real = [e for name in ("osf-test-files-y8t6r", "osf-test-files-many-files-1",
                           "osf-test-files-many-files-2")
            for e in RECORDED[name].json()["data"] if e["attributes"]["kind"] == "file"]
    assert [(f.path, f.size, f.md5, f.sha256) for f in manifest[:21]] == [
        (e["attributes"]["materialized_path"][1:], e["attributes"]["size"],
         e["attributes"]["extra"]["hashes"]["md5"], e["attributes"]["extra"]["hashes"]["sha256"])
        for e in real]


def test_recorded_component_and_folder(srv: PlatformServer) -> None:
    # a component (category ""): asked like a project, on the test server; its
    # storage was not recorded, so the loopback server has none
    assert status(srv, "https://test.osf.io/4fjxr/files/osfstorage/", "osf") == "platform-404"
    assert [p for _, _, p in srv.requests] == ["/v2/nodes/4fjxr/",
                                               "/v2/nodes/4fjxr/files/osfstorage/"]
    # a folder's own answer, reached by a file link: not one file
    assert status(srv, "https://test.osf.io/y8t6r/files/osfstorage/5d4ef2104e90e100146f7e53",
                  "osf") == "platform-scope"


# --- invented projects ----------------------------------------------------------------------


def test_nested_paged_folders_ingested_and_verified(srv: PlatformServer) -> None:
    node, root = "abc12", "/v2/nodes/abc12/files/osfstorage/"
    data = {f"f{i}": bytes([i]) * (100 + i) for i in range(5)}
    add_node(srv, node)
    listing(API, root, [folder(node, "d1" * 12, "/data/"), file(node, "f0" * 12, "/top.txt",
                                                               data["f0"])],
            f"https://{API}{root}?page=2", srv=srv)
    listing(API, f"{root}?page=2", [file(node, "f1" * 12, "/second page.txt", data["f1"])],
            srv=srv)
    d1 = f"/v2/nodes/{node}/files/osfstorage/{'d1' * 12}/"
    listing(API, d1, [folder(node, "d2" * 12, "/data/deep/"),
                      file(node, "f2" * 12, "/data/a.csv", data["f2"])], srv=srv)
    d2 = f"/v2/nodes/{node}/files/osfstorage/{'d2' * 12}/"
    listing(API, d2, [file(node, "f3" * 12, "/data/deep/b.bin", data["f3"])],
            f"https://{API}{d2}?page=2", srv=srv)
    listing(API, f"{d2}?page=2", [file(node, "f4" * 12, "/data/deep/c.bin", data["f4"])],
            srv=srv)
    for i in range(5):
        srv.add_page("osf.io", f"/download/{f'f{i}' * 12}/", data[f"f{i}"],
                     content_type="application/octet-stream")
    out = ingest(srv, f"https://osf.io/{node}/")
    r = out.result.to_json()
    assert (r["status"], r["platform_name"], r["ingest_strategy"]) == (
        "success", "osf", "web-fileset"), r
    assert [(f["path"], f["size"], f["md5"], f["sha256"]) for f in r["manifest"]] == [
        (p, len(data[k]), hashlib.md5(data[k]).hexdigest(), hashlib.sha256(data[k]).hexdigest())
        for p, k in (("top.txt", "f0"), ("second page.txt", "f1"), ("data/a.csv", "f2"),
                     ("data/deep/b.bin", "f3"), ("data/deep/c.bin", "f4"))]
    assert r["platform_base_url"] == f"https://osf.io/{node}/"


def test_a_wrong_sha256_fails_the_record(srv: PlatformServer) -> None:
    node, root = "bad12", "/v2/nodes/bad12/files/osfstorage/"
    add_node(srv, node)
    liar = file(node, "e1" * 12, "/a.txt", b"what the API describes")
    liar["attributes"]["extra"]["hashes"]["md5"] = None  # only the sha256 can catch it
    listing(API, root, [liar, file(node, "e2" * 12, "/b.txt", b"b")], srv=srv)
    srv.add_page("osf.io", f"/download/{'e1' * 12}/", b"what the API describez")
    srv.add_page("osf.io", f"/download/{'e2' * 12}/", b"b")
    assert ingest(srv, f"https://osf.io/{node}/").status == "mismatch-sha256"


def test_listings_that_repeat_are_api_errors(srv: PlatformServer) -> None:
    # a folder that lists itself: walked once, then error-platform-api
    node, root = "loop1", "/v2/nodes/loop1/files/osfstorage/"
    add_node(srv, node)
    listing(API, root, [folder(node, "aa" * 12, "/again/")], srv=srv)
    inner = f"/v2/nodes/{node}/files/osfstorage/{'aa' * 12}/"
    listing(API, inner, [folder(node, "aa" * 12, "/again/again/")], srv=srv)
    assert status(srv, f"https://osf.io/{node}/", "osf") == "error-platform-api"
    assert [p for _, _, p in srv.requests].count(inner) == 1
    # a next link that comes back to the first page
    node, root = "loop2", "/v2/nodes/loop2/files/osfstorage/"
    add_node(srv, node)
    listing(API, root, [file(node, "b1" * 12, "/1.txt", b"1")], f"https://{API}{root}?page=2",
            srv=srv)
    listing(API, f"{root}?page=2", [file(node, "b2" * 12, "/2.txt", b"2")],
            f"https://{API}{root}", srv=srv)
    assert status(srv, f"https://osf.io/{node}/", "osf") == "error-platform-api"


@pytest.mark.parametrize(("code", "expected"), [
    (401, "platform-restricted"), (403, "platform-restricted"), (410, "platform-404")])
def test_private_and_deleted_nodes(srv: PlatformServer, code: int, expected: str) -> None:
    # OSF's JSON:API error shape; the detail is invented
    answer(srv, API, "/v2/nodes/priv1/", {"errors": [{"detail": "refused"}]}, status=code)
    assert status(srv, "https://osf.io/priv1/", "osf") == expected


def guid_answer(guid: str, kind: str, href: str) -> dict[str, Any]:
    """An invented ``/v2/guids/{guid}/?resolve=false`` answer (GuidSerializer's shape)."""
    return {"data": {"id": guid, "type": "guids", "relationships": {"referent": {
        "links": {"related": {"href": href, "meta": {"type": kind}}}}}}}


@pytest.mark.parametrize("kind", ["registrations", "preprints"])
def test_registrations_and_preprints_are_out_of_scope(srv: PlatformServer, kind: str) -> None:
    answer(srv, API, "/v2/nodes/reg12/", {"errors": [{"detail": "Not found."}]}, status=404)
    answer(srv, API, "/v2/guids/reg12/?resolve=false",
           guid_answer("reg12", kind, f"https://{API}/v2/{kind}/reg12/"))
    with pytest.raises(RecordError) as caught:
        process(srv, "https://osf.io/reg12/", "osf")
    assert caught.value.status == "platform-scope"
    assert f"one of OSF's {kind}," in str(caught.value)
    # a guid that names nothing at all
    assert status(srv, "https://osf.io/none1/", "osf") == "platform-404"


def test_file_guid_and_file_link(srv: PlatformServer) -> None:
    node = "abc12"
    entry = file(node, "f9" * 12, "/data/one.csv", b"1,2\n")
    answer(srv, API, "/v2/guids/fg123/?resolve=false",
           guid_answer("fg123", "files", f"https://{API}/v2/files/{'f9' * 12}/"))
    answer(srv, API, f"/v2/files/{'f9' * 12}/", {"data": entry})
    for url in ("https://osf.io/fg123/", f"https://osf.io/{node}/files/osfstorage/{'f9' * 12}"):
        item = process(srv, url, "osf")
        assert [(f.path, f.md5) for f in item.manifest or []] == [
            ("data/one.csv", hashlib.md5(b"1,2\n").hexdigest())]
        assert item.platform_id == node
        assert item.archiveorg_dataset_item == "osf.io-abc12"
        assert (item.archiveorg_item_name or "").startswith("osf.io-abc12-file-")
