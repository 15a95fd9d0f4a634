"""4TU.ResearchData, which runs djehuty (``fileset/platforms/djehuty.py``): real
answers from djehuty's documentation and of data.4tu.nl (the test kit's
``djehuty/``, sources in its ``SOURCES.md``), and invented datasets for what they
cannot show (a whole version's files, link-only files, file links, downloads
verified), all over real HTTP to the loopback platform server. Every invented
answer is built here, in the shape of djehuty's formatter, and says so."""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

import pytest

from sandcrawler.core.errors import RecordError
from sandcrawler.fileset.platforms.base import LandingPage
from sandcrawler.web.http.fetch import HttpFetcher
from sandcrawler_testkit.platforms import PlatformServer
from tests.helpers.platforms import ingest, matching, page_json, paths, process, status

HOST = "data.4tu.nl"
DOCS_UUID = "342efadc-66f8-4e9b-9d27-da7b28b849d2"  # djehuty's own source code, documented
UUID = "0d1c5a4e-9f0b-4c59-8d53-6f1e2b3a4c5d"  # invented


def file_record(dataset: str, name: str, data: bytes, **fields: Any) -> dict[str, Any]:
    """Invented: a file as ``format_file_for_dataset_record`` writes it."""
    file_uuid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{dataset}/{name}"))
    return {"id": None, "uuid": file_uuid, "name": name, "size": len(data),
            "is_link_only": False, "is_incomplete": False,
            "download_url": f"https://{HOST}/file/{dataset}/{file_uuid}",
            "supplied_md5": None, "computed_md5": hashlib.md5(data).hexdigest(), **fields}


def version_record(dataset: str, version: int, files: list[dict[str, Any]],
                   **fields: Any) -> dict[str, Any]:
    """Invented: a version as ``format_dataset_details_record`` writes it (abridged)."""
    return {"files": files, "authors": [{"full_name": "Ada Lovelace"}], "version": version,
            "license": {"value": 1, "name": "CC BY 4.0"}, "is_embargoed": False,
            "embargo_date": None, "embargo_type": "file", "id": None, "uuid": dataset,
            "title": "An invented 4TU dataset", "doi": f"10.4121/{dataset}.v{version}",
            "published_date": "2024-05-06T10:11:12", **fields}


def add_version(srv: PlatformServer, dataset: str, version: int, files: list[dict[str, Any]],
                latest: bool = False, **fields: Any) -> None:
    record = version_record(dataset, version, files, **fields)
    page_json(srv, HOST, f"/v2/articles/{dataset}/versions/{version}", record)
    if latest:
        page_json(srv, HOST, f"/v2/articles/{dataset}", record)


# --- real answers ---------------------------------------------------------------------------


def test_no_version_pins_the_latest_of_the_real_versions_list(srv: PlatformServer) -> None:
    """The dataset's own answer is not recorded (404 here): the real ``/versions``
    answer gives version 1, whose (invented) answer is then asked and pinned."""
    add_version(srv, DOCS_UUID, 1, [file_record(DOCS_UUID, "djehuty-0.0.1.tar.gz", b"tar")])
    item = process(srv, f"https://{HOST}/datasets/{DOCS_UUID}", "djehuty")
    assert paths(srv) == [f"/v2/articles/{DOCS_UUID}", f"/v2/articles/{DOCS_UUID}/versions",
                          f"/v2/articles/{DOCS_UUID}/versions/1"]
    assert (item.platform_name, item.platform_domain, item.platform_id) == (
        "djehuty", HOST, DOCS_UUID)
    assert item.archiveorg_item_name == f"{HOST}-{DOCS_UUID}-v1"
    assert item.web_bundle_url == f"https://{HOST}/ndownloader/items/{DOCS_UUID}/versions/1"


def test_real_whole_dataset_embargo_is_restricted(srv: PlatformServer) -> None:
    url = f"https://{HOST}/datasets/c1274889-b797-43bd-a3b1-ee0611d58fd7/2"
    with pytest.raises(RecordError) as caught:
        process(srv, url, "djehuty")
    assert caught.value.status == "platform-restricted"
    assert "2039-06-30" in str(caught.value)
    assert paths(srv) == ["/v2/articles/c1274889-b797-43bd-a3b1-ee0611d58fd7/versions/2"]


def test_real_maintenance_answer_is_an_api_error(srv: PlatformServer) -> None:
    url = f"https://{HOST}/datasets/7b024697-659a-47ad-95a4-0497bf52b432"
    assert status(srv, url, "djehuty") == "error-platform-api"
    assert paths(srv) == ["/v2/articles/7b024697-659a-47ad-95a4-0497bf52b432"]


# --- invented datasets ----------------------------------------------------------------------


def test_a_version_and_its_files(srv: PlatformServer) -> None:
    a, b = b"x,y\n1,2\n", b"readme\n"
    files = [file_record(UUID, "data.csv", a),
             file_record(UUID, "README.txt", b, computed_md5=None,
                         supplied_md5=hashlib.md5(b).hexdigest()),
             file_record(UUID, "elsewhere.nc", b"", is_link_only=True,
                         download_url="https://opendap.4tu.nl/thredds/x.nc", computed_md5=None)]
    add_version(srv, UUID, 2, files)
    item = process(srv, f"https://{HOST}/datasets/{UUID}/2", "djehuty")
    # the link-only file (hosted elsewhere) is left out; supplied_md5 when none computed
    assert [(f.path, f.size, f.md5, f.platform_url, (f.extra or {})["file_id"])
            for f in item.manifest or []] == [
        ("data.csv", len(a), hashlib.md5(a).hexdigest(), files[0]["download_url"],
         files[0]["uuid"]),
        ("README.txt", len(b), hashlib.md5(b).hexdigest(), files[1]["download_url"],
         files[1]["uuid"])]
    assert item.archiveorg_item_name == f"{HOST}-{UUID}-v2"
    assert item.archiveorg_item_meta == {
        "title": "An invented 4TU dataset", "date": "2024-05-06", "doi": f"10.4121/{UUID}.v2",
        "version": "2", "source": f"https://{HOST}/datasets/{UUID}/2", "license": "CC BY 4.0",
        "creator": ["Ada Lovelace"]}
    assert paths(srv) == [f"/v2/articles/{UUID}/versions/2"]


def test_no_version_takes_the_latest_from_the_dataset_answer(srv: PlatformServer) -> None:
    add_version(srv, UUID, 3, [file_record(UUID, "a.txt", b"a")], latest=True)
    item = process(srv, f"https://{HOST}/datasets/{UUID}", "djehuty")
    assert paths(srv) == [f"/v2/articles/{UUID}"]  # its answer is the latest version's
    assert item.archiveorg_item_name == f"{HOST}-{UUID}-v3"


@pytest.mark.parametrize("path", ["/articles/dataset/Wind_tunnel/21922026/1",
                                  "/articles/_/21922026/1", "/articles/software/tool/21922026/1"])
def test_figshare_era_pages_are_asked_by_their_number(srv: PlatformServer, path: str) -> None:
    add_version(srv, "21922026", 1, [file_record(UUID, "a.txt", b"a")], uuid=UUID)
    item = process(srv, f"https://{HOST}{path}", "djehuty")
    assert paths(srv) == ["/v2/articles/21922026/versions/1"]
    # named by the uuid it answers with: one dataset, one item name
    assert (item.platform_id, item.archiveorg_item_name) == (UUID, f"{HOST}-{UUID}-v1")


def test_djehuty_not_figshare_takes_a_4tu_page_that_mentions_figshare(
        srv: PlatformServer) -> None:
    url = f"https://{HOST}/articles/dataset/Wind_tunnel/21922026/1"
    page = LandingPage(url=url, terminal_url=url,
                       html=b'<a href="https://figshare.com/x">migrated from figshare</a>')
    fetcher = HttpFetcher()
    try:
        # both would take it; the registry tries djehuty first
        assert [h.name for h in matching(srv, page, fetcher)] == ["djehuty", "figshare"]
    finally:
        fetcher.close()


def test_embargoed_files_and_missing_versions(srv: PlatformServer) -> None:
    # invented: a file-level embargo answers is_embargoed and no files
    add_version(srv, UUID, 1, [], is_embargoed=True, embargo_date="2030-01-01")
    assert status(srv, f"https://{HOST}/datasets/{UUID}/1", "djehuty") == "platform-restricted"
    assert status(srv, f"https://{HOST}/datasets/{UUID}/9", "djehuty") == "platform-404"


def test_file_links_look_through_the_versions(srv: PlatformServer) -> None:
    old = file_record(UUID, "old.txt", b"old")
    new = file_record(UUID, "new.txt", b"new")
    link = file_record(UUID, "link.nc", b"", is_link_only=True)
    add_version(srv, UUID, 1, [old])
    add_version(srv, UUID, 2, [new, link], latest=True)
    page_json(srv, HOST, f"/v2/articles/{UUID}/versions", [  # invented, as the real one is shaped
        {"version": v, "url": f"https://{HOST}/v2/articles/{UUID}/versions/{v}"} for v in (1, 2)])
    item = process(srv, f"https://{HOST}/file/{UUID}/{new['uuid']}", "djehuty")
    assert [f.path for f in item.manifest or []] == ["new.txt"]
    assert item.archiveorg_dataset_item == f"{HOST}-{UUID}-v2"
    assert item.archiveorg_item_name not in (None, item.archiveorg_dataset_item)
    assert item.web_bundle_url is None
    srv.clear_requests()
    item = process(srv, f"https://{HOST}/file/{UUID}/{old['uuid']}", "djehuty")
    assert (item.archiveorg_dataset_item, [f.path for f in item.manifest or []]) == (
        f"{HOST}-{UUID}-v1", ["old.txt"])
    assert paths(srv) == [f"/v2/articles/{UUID}", f"/v2/articles/{UUID}/versions",
                          f"/v2/articles/{UUID}/versions/1"]
    assert status(srv, f"https://{HOST}/file/{UUID}/{uuid.uuid4()}", "djehuty") == (
        "platform-404")
    assert status(srv, f"https://{HOST}/file/{UUID}/{link['uuid']}", "djehuty") == (
        "platform-404")


def add_ingestable(srv: PlatformServer, files: dict[str, bytes],
                   lie: dict[str, str] | None = None) -> None:
    """Invented: a version with its landing page and downloads; ``lie`` gives the
    computed_md5 the API reports instead of the truth."""
    records = [file_record(UUID, k, v, **({"computed_md5": lie[k]} if lie and k in lie else {}))
               for k, v in files.items()]
    add_version(srv, UUID, 1, records)
    for record, data in zip(records, files.values(), strict=True):
        srv.add_page(HOST, f"/file/{UUID}/{record['uuid']}", data,
                     content_type="application/octet-stream")
    srv.add_page(HOST, f"/datasets/{UUID}/1", b"<html><title>4TU.ResearchData</title></html>")


def test_ingest_downloads_and_verifies_computed_md5(srv: PlatformServer) -> None:
    files = {"data.csv": b"a,b\n1,2\n", "blob.bin": bytes(range(256)) * 3}
    add_ingestable(srv, files)
    out = ingest(srv, f"https://{HOST}/datasets/{UUID}/1")
    r = out.result.to_json()
    assert (r["status"], r["platform_name"], r["ingest_strategy"]) == (
        "success", "djehuty", "web-fileset"), r
    assert [(f["path"], f["size"], f["md5"]) for f in r["manifest"]] == [
        (k, len(v), hashlib.md5(v).hexdigest()) for k, v in files.items()]
    assert len([p for p in paths(srv) if p.startswith(f"/file/{UUID}/")]) == 2


def test_ingest_fails_on_a_wrong_computed_md5(srv: PlatformServer) -> None:
    add_ingestable(srv, {"a.bin": b"aaa", "b.bin": b"bbb"}, lie={"a.bin": "0" * 32})
    out = ingest(srv, f"https://{HOST}/datasets/{UUID}/1")
    assert (out.status, out.result.to_json()["hit"]) == ("mismatch-md5", False)
