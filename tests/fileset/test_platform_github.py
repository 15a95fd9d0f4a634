"""GitHub releases (``fileset/platforms/github.py``): recorded real answers of the
REST API, then invented releases for what they cannot show (digests, drafts,
paged assets, rate limits), and whole ingests whose assets redirect to the
objects host and are verified by their sha256 digest.

Every invented answer below has the shape of GitHub's documented release and
asset objects and is built here, in the test, never presented as recorded."""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

import pytest

from sandcrawler.app.settings import load_settings
from sandcrawler.fileset.platforms.base import file_item_name
from sandcrawler.web.http.fetch import HttpFetcher
from sandcrawler.web.http.hosts import HostGate
from sandcrawler_testkit.platforms import PlatformServer
from sandcrawler_testkit.recorded import RECORDED
from tests.fileset.test_platform_answers import Platforms
from tests.helpers.platforms import ingest_result

API = "api.github.com"
OBJECTS = "release-assets.githubusercontent.com"
JSON = "application/json; charset=utf-8"
BURI = "https://github.com/cambiata-team/buri/releases"
OCTOKIT_REPO = "octokit-fixture-org/tmp-scenario-release-assets-20220719044014639-1reww"


def platforms(srv: PlatformServer) -> Platforms:
    """Helpers routed to ``srv`` (made after its pages: the routes list their hosts)."""
    return Platforms(srv)


def asset(owner_repo: str, tag: str, name: str, data: bytes, *, digest: str | None = "sha256",
          state: str = "uploaded", asset_id: int = 1) -> dict[str, Any]:
    """An invented asset object, its digest computed from ``data`` (None: null)."""
    value = None if digest is None else f"{digest}:{hashlib.new(digest, data).hexdigest()}"
    return {"url": f"https://{API}/repos/{owner_repo}/releases/assets/{asset_id}",
            "id": asset_id, "name": name, "label": None, "content_type": "application/gzip",
            "state": state, "size": len(data), "digest": value, "download_count": 0,
            "created_at": "2025-07-01T10:00:00Z", "updated_at": "2025-07-01T10:00:01Z",
            "browser_download_url": f"https://github.com/{owner_repo}/releases/download/"
                                    f"{tag}/{name}"}


def release(owner_repo: str, tag: str, assets: list[dict[str, Any]], *, release_id: int = 7,
            **fields: Any) -> bytes:
    """An invented release object."""
    api = f"https://{API}/repos/{owner_repo}"
    return json.dumps({
        "url": f"{api}/releases/{release_id}", "id": release_id, "tag_name": tag,
        "html_url": f"https://github.com/{owner_repo}/releases/tag/{tag}",
        "target_commitish": "main", "name": f"Release {tag}", "draft": False,
        "prerelease": False, "created_at": "2025-07-01T09:00:00Z",
        "published_at": "2025-07-01T09:30:00Z", "author": {"login": "someone"},
        "assets": assets, "tarball_url": f"{api}/tarball/{tag}",
        "zipball_url": f"{api}/zipball/{tag}", "body": None, **fields}).encode()


# --- recorded answers -----------------------------------------------------------------------


def test_recorded_release_with_ten_assets_and_no_digests(srv: PlatformServer) -> None:
    p = platforms(srv)
    item = p.process(f"{BURI}/tag/0.2.0")
    answer = RECORDED["github-buri-0.2.0"].json()
    assert (item.platform_name, item.platform_domain, item.platform_id) == (
        "github", "github.com", "cambiata-team/buri/0.2.0")
    # the answer predates digests: its assets have no "digest" at all
    assert all("digest" not in a for a in answer["assets"])
    assert [(f.path, f.size, f.mimetype, f.platform_url) for f in item.manifest] == [
        (a["name"], a["size"], a["content_type"], a["browser_download_url"])
        for a in answer["assets"]]
    assert len(item.manifest) == 10
    assert item.manifest[3].path == "cli-aarch64-unknown-linux-gnu.tar.gz"
    assert item.manifest[3].size == 1366150
    assert all(f.sha256 is None and f.md5 is None and f.checksums is None
               for f in item.manifest)
    assert item.manifest[0].extra == {"id": answer["assets"][0]["id"],
                                      "updated_at": "2023-07-01T22:45:00Z"}
    assert item.archiveorg_item_name == "github.com-cambiata-team_buri-v0.2.0"
    assert item.web_bundle_url is None  # no "download all": source archives are not it
    meta = item.archiveorg_item_meta
    assert (meta["tag"], meta["creator"], meta["date"], meta["prerelease"]) == (
        "0.2.0", "github-actions[bot]", "2023-07-01", False)
    assert meta["tarball_url"] == "https://api.github.com/repos/cambiata-team/buri/tarball/0.2.0"
    assert p.strategy(f"{BURI}/tag/0.2.0") == "web-fileset"


def test_recorded_asset_link_is_that_one_asset(srv: PlatformServer) -> None:
    p = platforms(srv)
    url = f"{BURI}/download/0.2.0/cli-x86_64-apple-darwin.tar.gz"
    item = p.process(url)
    assert [(f.path, f.size) for f in item.manifest] == [
        ("cli-x86_64-apple-darwin.tar.gz", 403915)]
    assert item.archiveorg_dataset_item == "github.com-cambiata-team_buri-v0.2.0"
    assert item.archiveorg_item_name == file_item_name(
        "github.com-cambiata-team_buri-v0.2.0", "cli-x86_64-apple-darwin.tar.gz")
    assert p.strategy(url) == "web-file"
    assert p.status(f"{BURI}/download/0.2.0/no-such-asset.zip") == "platform-404"


def test_recorded_release_without_assets_has_an_empty_manifest(srv: PlatformServer) -> None:
    item = platforms(srv).process(f"https://github.com/{OCTOKIT_REPO}/releases/tag/v1.0.0")
    assert item.manifest == []
    assert item.archiveorg_item_meta["title"] == "Version 1.0.0"
    assert item.archiveorg_item_meta["commit"] == "b8b58742c92c098cae4d8c5ea7390d552faba041"


# --- invented answers -----------------------------------------------------------------------


def test_digest_present_null_unknown_and_broken_uploads(srv: PlatformServer) -> None:
    a, b, c = b"new asset\n", b"old asset\n", b"other digest\n"
    assets = [asset("o/r", "v1", "new.tar.gz", a, asset_id=1),
              asset("o/r", "v1", "old.tar.gz", b, digest=None, asset_id=2),
              asset("o/r", "v1", "odd.bin", c, digest="sha512", asset_id=3),
              asset("o/r", "v1", "half.bin", c, state="starter", asset_id=4)]
    srv.add_page(API, "/repos/o/r/releases/tags/v1", release("o/r", "v1", assets),
                 content_type=JSON)
    item = platforms(srv).process("https://github.com/o/r/releases/tag/v1")
    by_path = {f.path: f for f in item.manifest}
    assert list(by_path) == ["new.tar.gz", "old.tar.gz", "odd.bin"]  # not the broken upload
    assert by_path["new.tar.gz"].sha256 == hashlib.sha256(a).hexdigest()
    assert (by_path["old.tar.gz"].sha256, by_path["old.tar.gz"].checksums) == (None, None)
    assert by_path["odd.bin"].sha256 is None
    assert by_path["odd.bin"].checksums == {"sha512": hashlib.sha512(c).hexdigest()}


@pytest.mark.parametrize("page", ["release/1.0+build", "release%2F1.0%2Bbuild"])
def test_tag_with_slashes_and_escapes(srv: PlatformServer, page: str) -> None:
    srv.add_page(API, "/repos/o/r/releases/tags/release/1.0+build",
                 release("o/r", "release/1.0+build", [asset("o/r", "x", "a.txt", b"a")]),
                 content_type=JSON)
    item = platforms(srv).process(f"https://github.com/o/r/releases/tag/{page}")
    assert item.platform_id == "o/r/release/1.0+build"
    assert item.archiveorg_item_name == "github.com-o_r-vrelease_1.0_build"
    # the tag is one path segment, its slash escaped (the server logs it decoded)
    assert (API, "GET", "/repos/o/r/releases/tags/release/1.0+build") in srv.requests


def test_latest_is_named_by_the_tag_it_resolves_to(srv: PlatformServer) -> None:
    srv.add_page(API, "/repos/o/r/releases/latest",
                 release("o/r", "v2.0", [asset("o/r", "v2.0", "a.txt", b"a")]), content_type=JSON)
    p = platforms(srv)
    item = p.process("https://github.com/o/r/releases/latest")
    assert (item.platform_id, item.archiveorg_item_name) == ("o/r/v2.0", "github.com-o_r-vv2.0")
    assert [r[2] for r in srv.requests if r[0] == API] == ["/repos/o/r/releases/latest"]
    file_item = p.process("https://github.com/o/r/releases/latest/download/a.txt")
    assert file_item.archiveorg_dataset_item == "github.com-o_r-vv2.0"
    assert p.status("https://github.com/o/r/releases/latest/download/b.txt") == "platform-404"


def test_draft_not_found_and_other_answers(srv: PlatformServer) -> None:
    srv.add_page(API, "/repos/o/r/releases/tags/draft",
                 release("o/r", "draft", [], draft=True), content_type=JSON)
    not_found = b'{"message":"Not Found","status":"404"}'
    srv.add_page(API, "/repos/o/r/releases/tags/gone", not_found, status=404, content_type=JSON)
    srv.add_page(API, "/repos/o/r/releases/tags/other", release("o/r", "v9", []),
                 content_type=JSON)
    srv.add_page(API, "/repos/o/r/releases/tags/refused", b'{"message":"Forbidden"}',
                 status=403, content_type=JSON)
    p = platforms(srv)
    assert p.status("https://github.com/o/r/releases/tag/draft") == "platform-restricted"
    assert p.status("https://github.com/o/r/releases/tag/gone") == "platform-404"
    assert p.status("https://github.com/o/r/releases/tag/other") == "error-platform-api"
    # a 403 that is not a rate limit is a refusal
    assert p.status("https://github.com/o/r/releases/tag/refused") == "platform-restricted"
    assert not p.helpers[0].match_request(*p.request("https://github.com/o/r/tags"), None)


def test_a_full_page_of_assets_is_paged_by_the_link_header(srv: PlatformServer) -> None:
    assets = [asset("o/r", "v1", f"f{i:03d}.bin", b"%d" % i, asset_id=i) for i in range(130)]
    srv.add_page(API, "/repos/o/r/releases/tags/v1", release("o/r", "v1", assets[:100]),
                 content_type=JSON)
    page2 = f"https://{API}/repositories/1/releases/7/assets?per_page=100&page=2"
    srv.add_page(API, "/repos/o/r/releases/7/assets?per_page=100",
                 json.dumps(assets[:100]).encode(), content_type=JSON,
                 headers={"Link": f'<{page2}>; rel="next", <{page2}>; rel="last"'})
    srv.add_page(API, "/repositories/1/releases/7/assets?per_page=100&page=2",
                 json.dumps(assets[100:]).encode(), content_type=JSON)
    item = platforms(srv).process("https://github.com/o/r/releases/tag/v1")
    assert [f.path for f in item.manifest] == [f"f{i:03d}.bin" for i in range(130)]


def test_assets_listing_that_repeats_ends(srv: PlatformServer) -> None:
    assets = [asset("o/r", "v1", f"f{i:03d}.bin", b"x", asset_id=i) for i in range(100)]
    srv.add_page(API, "/repos/o/r/releases/tags/v1", release("o/r", "v1", assets),
                 content_type=JSON)
    here = f"https://{API}/repos/o/r/releases/7/assets?per_page=100"
    srv.add_page(API, "/repos/o/r/releases/7/assets?per_page=100", json.dumps(assets).encode(),
                 content_type=JSON, headers={"Link": f'<{here}>; rel="next"'})
    assert platforms(srv).status("https://github.com/o/r/releases/tag/v1") == "error-platform-api"


# --- rate limits ----------------------------------------------------------------------------


def rate_limit(srv: PlatformServer, path: str, reset_in: float, status: int = 403,
               retry_after: str | None = None) -> None:
    """GitHub's answer when the quota is spent (headers as its REST API documents):
    ``X-RateLimit-Remaining: 0`` until ``X-RateLimit-Reset``; a secondary limit
    says ``Retry-After``."""
    headers = {"X-RateLimit-Limit": "60", "X-RateLimit-Remaining": "0",
               "X-RateLimit-Used": "60", "X-RateLimit-Resource": "core",
               "X-RateLimit-Reset": str(int(time.time() + reset_in))}
    if retry_after is not None:
        headers = {"Retry-After": retry_after}
    srv.queue_page(API, path, b'{"message":"API rate limit exceeded"}', status=status,
                   content_type=JSON, headers=headers)


@pytest.mark.parametrize(("status", "retry_after"), [(403, None), (403, "1"), (429, "1")])
def test_rate_limit_slows_the_api_host_then_succeeds(srv: PlatformServer, status: int,
                                                     retry_after: str | None) -> None:
    path = "/repos/o/r/releases/tags/v1"
    srv.add_page(API, path, release("o/r", "v1", [asset("o/r", "v1", "a", b"a")]),
                 content_type=JSON)
    rate_limit(srv, path, reset_in=1.5, status=status, retry_after=retry_after)
    gate = HostGate(concurrency=2, delay=0)
    settings = load_settings(http_routes=srv.routes())
    fetcher = HttpFetcher(timeout=2, routes=settings.http.routes, gate=gate, retry_after_max=10)
    p = platforms(srv)
    helper = p.helper("https://github.com/o/r/releases/tag/v1")
    helper.fetcher = fetcher
    try:
        started = time.monotonic()
        item = helper.process_request(*p.request("https://github.com/o/r/releases/tag/v1"), None)
        # waited as asked: the reset is in whole seconds, at least 0.5 s away
        assert time.monotonic() - started >= 0.4
    finally:
        fetcher.close()
    assert [f.path for f in item.manifest] == ["a"]
    assert [r for r in srv.requests if r[0] == API] == [(API, "GET", path)] * 2


def test_rate_limit_past_the_maximum_wait_is_an_api_error_not_a_refusal(
        srv: PlatformServer) -> None:
    path = "/repos/o/r/releases/tags/v1"
    srv.add_page(API, path, release("o/r", "v1", []), content_type=JSON)
    rate_limit(srv, path, reset_in=3600)
    gate = HostGate(concurrency=2, delay=0)
    fetcher = HttpFetcher(timeout=2, routes=load_settings(http_routes=srv.routes()).http.routes,
                          gate=gate, retry_after_max=2)
    p = platforms(srv)
    helper = p.helper("https://github.com/o/r/releases/tag/v1")
    helper.fetcher = fetcher
    try:
        with pytest.raises(Exception) as caught:
            helper.process_request(*p.request("https://github.com/o/r/releases/tag/v1"), None)
    finally:
        fetcher.close()
    assert getattr(caught.value, "status", None) == "error-platform-api"
    assert "rate-limited (HTTP 403)" in str(caught.value)
    assert gate.backed_off_for(API) > 1  # the host is slowed, for at most retry_after_max
    assert len([r for r in srv.requests if r[0] == API]) == 1  # the hour was not waited


def test_a_403_that_is_not_a_rate_limit_is_asked_once(srv: PlatformServer) -> None:
    path = "/repos/o/r/releases/tags/v1"
    srv.add_page(API, path, b'{"message":"Resource not accessible"}', status=403,
                 content_type=JSON, headers={"X-RateLimit-Remaining": "59"})
    gate = HostGate(concurrency=2, delay=0)
    fetcher = HttpFetcher(timeout=2, routes=load_settings(http_routes=srv.routes()).http.routes,
                          gate=gate, retries=3, retry_after_max=10)
    p = platforms(srv)
    helper = p.helper("https://github.com/o/r/releases/tag/v1")
    helper.fetcher = fetcher
    try:
        with pytest.raises(Exception) as caught:
            helper.process_request(*p.request("https://github.com/o/r/releases/tag/v1"), None)
    finally:
        fetcher.close()
    assert getattr(caught.value, "status", None) == "platform-restricted"
    assert len([r for r in srv.requests if r[0] == API]) == 1
    assert gate.backed_off_for(API) == 0


# --- whole ingests --------------------------------------------------------------------------


def add_release_with_downloads(srv: PlatformServer, files: dict[str, bytes],
                               served: dict[str, bytes] | None = None) -> None:
    """An invented release of o/r at v1 whose assets redirect to the objects host."""
    assets = [asset("o/r", "v1", name, data, asset_id=i) for i, (name, data)
              in enumerate(files.items(), 1)]
    srv.add_page(API, "/repos/o/r/releases/tags/v1", release("o/r", "v1", assets),
                 content_type=JSON)
    srv.add_page("github.com", "/o/r/releases/tag/v1", b"<html><title>v1</title></html>")
    for i, (name, data) in enumerate(files.items(), 1):
        target = f"/github-production-release-asset/1/{i}?response-content-disposition=x"
        srv.add_page("github.com", f"/o/r/releases/download/v1/{name}", b"", status=302,
                     location=f"https://{OBJECTS}{target}")
        srv.add_page(OBJECTS, target, (served or {}).get(name, data),
                     content_type="application/octet-stream")


def test_ingest_of_a_release_verified_by_sha256(srv: PlatformServer) -> None:
    files = {"tool-linux.tar.gz": bytes(range(256)) * 40, "tool.sha256": b"abc  tool\n"}
    add_release_with_downloads(srv, files)
    r = ingest_result(srv, "https://github.com/o/r/releases/tag/v1")
    assert (r["status"], r["hit"], r["platform_name"], r["ingest_strategy"]) == (
        "success", True, "github", "web-fileset")
    assert [(f["path"], f["size"], f["sha256"], f["status"]) for f in r["manifest"]] == [
        (name, len(data), hashlib.sha256(data).hexdigest(), "success")
        for name, data in files.items()]
    # each download went to github.com, then to the objects host (files may go in parallel)
    assert sorted((h, p.split("?")[0]) for h, _, p in srv.requests
                  if "/download/" in p or "production" in p) == sorted([
        ("github.com", "/o/r/releases/download/v1/tool-linux.tar.gz"),
        ("github.com", "/o/r/releases/download/v1/tool.sha256"),
        (OBJECTS, "/github-production-release-asset/1/1"),
        (OBJECTS, "/github-production-release-asset/1/2")])


def test_ingest_with_bytes_that_do_not_match_the_digest(srv: PlatformServer) -> None:
    files = {"tool-linux.tar.gz": b"the real bytes\n"}
    add_release_with_downloads(srv, files, served={"tool-linux.tar.gz": b"other bytes!!!\n"})
    r = ingest_result(srv, "https://github.com/o/r/releases/download/v1/tool-linux.tar.gz")
    assert (r["status"], r["hit"]) == ("mismatch-sha256", False)
