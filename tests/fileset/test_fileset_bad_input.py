"""Fileset ingest of bad input: platforms that lie, downloads that misbehave,
landing pages that fail, manifests and bundles made to escape the store, limits,
and malformed requests. Each gets its own status, never a success, and nothing
is written outside the store (nor left behind in it)."""

from __future__ import annotations

import io
import stat
import warnings
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from sandcrawler.app.settings import load_settings
from sandcrawler.core.work import Item
from sandcrawler.db.engine import begin
from sandcrawler.db.schema import web_cdx
from sandcrawler.fileset.ingest import SUCCESS, FilesetIngester, IngestOutcome
from sandcrawler.fileset.worker import IngestFilesetWorker
from sandcrawler.records.fileset import FilesetIngestResult, IngestRequest, IngestStrategy
from sandcrawler_testkit.platforms import FakeFile, PlatformServer
from tests.helpers.fileset import open_ingester

S = IngestStrategy
DV = "dataverse.example.edu"
PID = "doi:10.5072/FK2/BAD001"
ZENODO_BUNDLE = "https://zenodo.org/api/records/{}/files-archive"


def files_outside_data(root: Path) -> set[Path]:
    data = root / "data"
    return {p for p in root.rglob("*") if p.is_file() and data not in p.parents}


@pytest.fixture(autouse=True)
def nothing_outside_the_store(tmp_path: Path) -> Iterator[Path]:
    """Downloads spool under tmp_path/spool (so a leaked spool file shows); after
    the test, no file has appeared outside the data dir, none is left in the
    spool or half written in the local store, and the data dir holds only the
    database and the store."""
    spool = tmp_path / "spool"
    spool.mkdir()
    before = files_outside_data(tmp_path)
    yield spool
    assert files_outside_data(tmp_path) == before
    assert not list(spool.iterdir())
    data = tmp_path / "data"
    if data.exists():
        assert {p.name for p in data.iterdir()} <= {
            "store", "sandcrawler.sqlite3", "sandcrawler.sqlite3-wal", "sandcrawler.sqlite3-shm",
            "sandcrawler.sqlite3.locks"}  # the lock files (db/locks.py)
        tmp = data / "store" / ".tmp"
        assert not tmp.exists() or not list(tmp.iterdir())


def make(srv: PlatformServer, strategy: IngestStrategy | None = None,
         **overrides: Any) -> FilesetIngester:
    settings = load_settings(**{"http_routes": srv.routes(), "fetch_timeout": 2,
                                "fileset_tmp_dir": Path("spool").resolve(), **overrides})
    return open_ingester(settings, strategy)


def run(srv: PlatformServer, url: str, strategy: IngestStrategy | None = None,
        **overrides: Any) -> tuple[IngestOutcome, FilesetIngester]:
    """One ingest; the ingester is returned closed (its store and database still
    readable) for the checks of what it left behind."""
    ingester = make(srv, strategy, **overrides)
    try:
        out = ingester.ingest(IngestRequest(ingest_type="dataset", base_url=url))
    finally:
        ingester.close()
    return out, ingester


def assert_status(out: IngestOutcome, status: str, *, manifest: bool = True) -> None:
    r = out.result.to_json()
    assert r["status"] == status, r
    assert r["status"] not in SUCCESS
    assert r["hit"] is False
    assert out.file_result is None
    assert "fileset_file" not in r and "fileset_bundle" not in r
    assert out.error and r["error_message"] == out.error
    if manifest:
        assert r["manifest"]
        assert all(e.get("status") in (None, "success", status) for e in r["manifest"])


def assert_nothing_archived(ingester: FilesetIngester, out: IngestOutcome) -> None:
    """No item files or metadata; of the web archive only landing pages (every
    WARC file indexed, every index row a capture of the request's URL)."""
    store = ingester.ctx.web.store
    assert [b.key for b in store.list("items/")] == []
    with begin(ingester.ctx.web.engine) as conn:
        rows = list(conn.execute(select(web_cdx.c.url, web_cdx.c.warc_path)))
    assert {row.url for row in rows} <= {out.result.to_json()["request"]["base_url"]}
    assert {b.key for b in store.list("warcs/")} == {row.warc_path for row in rows}


def file_requests(srv: PlatformServer) -> list[str]:
    """Paths of every file (or bundle) download the server answered."""
    marks = ("/files/", "/api/files/", "/files-archive", "/download/", "/1/items/",
             "/api/access/", "/s3/")
    return [p for _, _, p in srv.requests if any(m in p for m in marks)]


# --- platforms that lie, downloads that differ ----------------------------------------------

BOTH = [S.WEB_FILESET, S.ARCHIVEORG_FILESET]
GOOD = FakeFile("good.txt", b"a good file\n")


@pytest.mark.parametrize("strategy", BOTH)
@pytest.mark.parametrize(("fault", "status"), [
    ({"reported_size": 5}, "mismatch-size"),  # says fewer bytes: stopped at the budget
    ({"reported_size": 500}, "mismatch-size"),  # says more
    ({"reported_md5": "0" * 32}, "mismatch-md5"),
    ({"served": b"the wrong bytes, same size"[:20]}, "mismatch-md5"),
    ({"served": b"other bytes, another length"}, "mismatch-size"),
    ({"served": b"short"}, "mismatch-size"),
    ({"reported_size": 5, "chunked": True}, "mismatch-size"),
])
def test_platform_lies(srv: PlatformServer, strategy: IngestStrategy, fault: dict[str, Any],
                       status: str) -> None:
    data = b"twenty bytes of data"
    srv.add_zenodo(10, [GOOD, FakeFile("bad.bin", data, **fault)])
    out, ingester = run(srv, "https://zenodo.org/records/10", strategy)
    assert_status(out, status)
    assert [e.get("status") for e in out.result.to_json()["manifest"]] == ["success", status]
    assert "bad.bin" in out.error
    assert_nothing_archived(ingester, out)


def test_archiveorg_wrong_sha1(srv: PlatformServer) -> None:
    srv.add_archiveorg("lying-item", [GOOD, FakeFile("bad.bin", b"bytes", reported_sha1="1" * 40)])
    out, ingester = run(srv, "https://archive.org/details/lying-item")
    assert out.result.to_json()["ingest_strategy"] == "archiveorg-fileset"
    assert_status(out, "mismatch-sha1")
    assert "1" * 40 in out.error
    assert_nothing_archived(ingester, out)


def test_single_file_mismatch_is_not_a_file_result(srv: PlatformServer) -> None:
    srv.add_figshare(20, 1, [FakeFile("only.bin", b"0123456789", reported_md5="f" * 32)])
    out, ingester = run(srv, "https://figshare.com/articles/dataset/x/20/1")
    assert out.result.to_json()["ingest_strategy"] == "web-file"
    assert_status(out, "mismatch-md5")
    assert_nothing_archived(ingester, out)


# --- downloads that fail --------------------------------------------------------------------


@pytest.mark.parametrize("strategy", BOTH)
@pytest.mark.parametrize("fault", [
    {"truncate_at": 1000},
    {"truncate_at": 0},
    {"truncate_at": 1000, "redirects": 0},
    {"stall_at": 1000, "stall_seconds": 4.0},
    {"redirect_loop": True},
    {"redirects": 9},  # more than the fetcher follows
    {"status": 404},
    {"status": 410},
    {"status": 403},
    {"status": 500},
], ids=lambda f: "-".join(f"{k}={v}" for k, v in f.items()))
@pytest.mark.slow  # waits out timeouts, retries or stalls
def test_download_fails(srv: PlatformServer, strategy: IngestStrategy,
                        fault: dict[str, Any]) -> None:
    data = bytes(range(256)) * 20
    srv.add_zenodo(30, [GOOD, FakeFile("bad.bin", data, **fault)])
    # the module's 2 s (not 1 s: on a loaded CI machine the good file before
    # the bad one once took longer); the stall (4 s) still outlasts it
    out, ingester = run(srv, "https://zenodo.org/records/30", strategy)
    assert_status(out, "error-platform-download")
    assert [e.get("status") for e in out.result.to_json()["manifest"]] == [
        "success", "error-platform-download"]
    assert "bad.bin" in out.error
    if "redirect_loop" in fault or fault.get("redirects", 0) > 5:
        assert "redirect" in out.error
    if "status" in fault:
        assert str(fault["status"]) in out.error
    assert_nothing_archived(ingester, out)


@pytest.mark.parametrize(("strategy", "status"), [(S.WEB_FILESET, 429),
                                                   (S.ARCHIVEORG_FILESET, 503)])
@pytest.mark.parametrize("parallel", [1, 8])
@pytest.mark.slow  # waits out timeouts, retries or stalls
def test_download_busy_after_retries(srv: PlatformServer, strategy: IngestStrategy,
                                     status: int, parallel: int) -> None:
    """429 and 503 are retried (the server says Retry-After: 0); one that stays
    busy fails the download. One file at a time, the files after it are never
    started; side by side, the others may have been fetched, and nothing of
    them is archived either."""
    srv.add_zenodo(31, [FakeFile("busy.bin", b"busy", status=status, redirects=0), GOOD])
    out, ingester = run(srv, "https://zenodo.org/records/31", strategy,
                        fileset_parallel_downloads=parallel)
    assert_status(out, "error-platform-download")
    assert str(status) in out.error
    tries = [p for p in file_requests(srv) if "busy.bin" in p]
    assert len(tries) == 4  # the first try and three retries
    good = [p for p in file_requests(srv) if "good.txt" in p]
    assert not good if parallel == 1 else len(good) <= 2  # at most once (and its redirect)
    assert_nothing_archived(ingester, out)


def test_error_page_larger_than_the_file(srv: PlatformServer) -> None:
    """A 404 whose page is larger than the file the platform declared is still a 404."""
    srv.add_zenodo(32, [FakeFile("tiny.txt", b"ab", status=404), GOOD])
    out, ingester = run(srv, "https://zenodo.org/records/32", S.WEB_FILESET)
    assert_status(out, "error-platform-download")
    assert "404" in out.error
    assert_nothing_archived(ingester, out)


# --- landing pages --------------------------------------------------------------------------


def test_landing_redirect_loop(srv: PlatformServer) -> None:
    srv.add_page("example.org", "/loop", b"", status=302, location="https://example.org/loop")
    out, ingester = run(srv, "https://example.org/loop")
    assert_status(out, "redirect-loop", manifest=False)
    assert "terminal" not in out.result.to_json()
    assert "platform_name" not in out.result.to_json()
    assert list(ingester.ctx.web.store.list("")) == []


def test_landing_404_on_unknown_host(srv: PlatformServer) -> None:
    srv.add_page("example.org", "/gone", b"<html><title>Gone</title></html>", status=404)
    out, _ = run(srv, "https://example.org/gone")
    assert_status(out, "terminal-bad-status", manifest=False)
    assert out.result.to_json()["terminal"]["terminal_status_code"] == 404
    assert "404" in out.error


def test_landing_500_on_platform_url(srv: PlatformServer) -> None:
    data = b"archived anyway\n"
    srv.add_zenodo(40, [FakeFile("data.txt", data)])
    srv.add_page("zenodo.org", "/records/40", b"<h1>Internal error</h1>", status=500)
    out, _ = run(srv, "https://zenodo.org/records/40")
    r = out.result.to_json()
    assert (r["status"], r["hit"]) == ("success-file", True), r
    assert r["terminal"]["terminal_status_code"] == 500
    assert r["platform_name"] == "zenodo"
    assert "html_biblio" not in r
    assert r["fileset_file"]["file_meta"]["size_bytes"] == len(data)


# --- manifests that would escape the store --------------------------------------------------


@pytest.mark.parametrize("strategy", [None, S.WEB_FILESET, S.ARCHIVEORG_FILESET_BUNDLED])
@pytest.mark.parametrize("name", [
    "../../evil.txt", "/abs.txt", "a/../../b", "a//b", "./a", "dir/", "a\\..\\..\\b",
    "ctl\x07.txt", "unsafe-item_meta.json", "unsafe-item_meta.json/x",
])
def test_archiveorg_unsafe_paths(srv: PlatformServer, tmp_path: Path, name: str,
                                 strategy: IngestStrategy | None) -> None:
    srv.add_archiveorg("unsafe-item", [GOOD, FakeFile(name, b"evil")])
    out, ingester = run(srv, "https://archive.org/details/unsafe-item", strategy)
    assert_status(out, "unsafe-path")
    assert "ingest_strategy" not in out.result.to_json()  # refused before any strategy ran
    assert file_requests(srv) == []
    assert_nothing_archived(ingester, out)
    assert not (tmp_path / "evil.txt").exists() and not Path("/abs.txt").exists()


@pytest.mark.parametrize("names", [
    ["a", "a/b"],  # a file where another needs a directory
    ["a/b/c", "a/b"],
])
def test_archiveorg_file_directory_clash(srv: PlatformServer, names: list[str]) -> None:
    srv.add_archiveorg("clash-item", [FakeFile(n, n.encode()) for n in names])
    for strategy in (S.ARCHIVEORG_FILESET, S.WEB_FILESET):
        out, ingester = run(srv, "https://archive.org/details/clash-item", strategy)
        assert_status(out, "unsafe-path")
        assert file_requests(srv) == []
        assert_nothing_archived(ingester, out)


def test_dataverse_duplicate_paths(srv: PlatformServer) -> None:
    srv.add_dataverse(DV, PID, [FakeFile("x.csv", b"1", directory="data"),
                                FakeFile("x.csv", b"2", directory="/data/")])
    for strategy in (None, S.ARCHIVEORG_FILESET):
        out, ingester = run(srv, f"https://{DV}/dataset.xhtml?persistentId={PID}", strategy)
        assert_status(out, "unsafe-path")
        assert "data/x.csv" in out.error
        assert file_requests(srv) == []
        assert_nothing_archived(ingester, out)


# --- hostile bundles ------------------------------------------------------------------------


def zip_of(members: list[tuple[str | zipfile.ZipInfo, bytes]],
           compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of duplicate names
        with zipfile.ZipFile(buf, "w", compression) as zf:
            for name, data in members:
                zf.writestr(name, data)
    return buf.getvalue()


def raw_name(name: str) -> zipfile.ZipInfo:
    """A member named exactly ``name`` (ZipInfo's constructor would tidy it)."""
    info = zipfile.ZipInfo("placeholder")
    info.filename = name
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def symlink(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


BUNDLE_FILES = {"a.csv": b"1,2\n3,4\n", "b.txt": b"bee\n", "c.bin": b"\x00\x01\x02" * 10}
OK_MEMBERS = list(BUNDLE_FILES.items())


def bomb() -> bytes:
    """30 MB of zeros, deflated to some 30 KB, next to the real files."""
    return zip_of([*OK_MEMBERS, ("zeros.bin", bytes(30 * 2**20))])


HOSTILE = {
    "dotdot": ([*OK_MEMBERS, (raw_name("../../evil.txt"), b"evil")], "unsafe-path"),
    "absolute": ([*OK_MEMBERS, (raw_name("/tmp/abs-evil.txt"), b"evil")], "unsafe-path"),
    "symlink": ([*OK_MEMBERS, (symlink("link"), b"/etc/passwd")], "unsafe-path"),
    "duplicate": ([*OK_MEMBERS, ("a.csv", b"9,9\n9,9\n")], "unsafe-path"),
    "missing": (OK_MEMBERS[:2], "bundle-incomplete"),
    "different": ([("a.csv", b"1,2\n3,5\n"), *OK_MEMBERS[1:]], "mismatch-md5"),
    "different-size": ([("a.csv", b"1,2\n"), *OK_MEMBERS[1:]], "mismatch-size"),
}


@pytest.mark.parametrize("strategy", [S.WEB_FILESET_BUNDLED, S.ARCHIVEORG_FILESET_BUNDLED])
@pytest.mark.parametrize("case", [*HOSTILE, "bomb", "not-a-zip", "truncated"])
def test_hostile_bundle(srv: PlatformServer, tmp_path: Path, strategy: IngestStrategy,
                        case: str) -> None:
    if case == "bomb":
        bundle, status = bomb(), "zip-bomb"
    elif case == "not-a-zip":
        bundle, status = b"<html>Please log in to download</html>", "bad-bundle"
    elif case == "truncated":
        bundle, status = zip_of(OK_MEMBERS)[:-30], "bad-bundle"
    else:
        members, status = HOSTILE[case]
        bundle = zip_of(members)
    srv.add_zenodo(50, [FakeFile(k, v) for k, v in BUNDLE_FILES.items()], bundle=bundle)
    out, ingester = run(srv, "https://zenodo.org/records/50", strategy)
    assert out.result.to_json()["ingest_strategy"] == strategy.value
    assert_status(out, status)
    # the platform's manifest, as it was said: nothing of the bundle is in it
    assert [e["path"] for e in out.result.to_json()["manifest"]] == list(BUNDLE_FILES)
    assert all("status" not in e for e in out.result.to_json()["manifest"])
    assert_nothing_archived(ingester, out)
    assert ingester.ctx.web.latest(ZENODO_BUNDLE.format(50)) is None
    assert ingester.ctx.items.read_meta("zenodo.org-50-v1.0") is None
    assert not (tmp_path / "evil.txt").exists() and not Path("/tmp/abs-evil.txt").exists()
    assert [p for p in file_requests(srv)] == ["/api/records/50/files-archive"]


def test_bundle_compressed_well_is_not_a_bomb(srv: PlatformServer) -> None:
    """Sanity for the bomb case: the same files and a small run of zeros are fine."""
    zeros = bytes(2**20 // 2)
    files = {**BUNDLE_FILES, "zeros.bin": zeros}
    srv.add_zenodo(51, [FakeFile(k, v) for k, v in files.items()])
    out, _ = run(srv, "https://zenodo.org/records/51", S.ARCHIVEORG_FILESET_BUNDLED)
    assert out.status == "success", out.result


# --- limits ---------------------------------------------------------------------------------


def test_too_many_files(srv: PlatformServer) -> None:
    srv.add_zenodo(60, [FakeFile(f"{i}.txt", b"x") for i in range(4)])
    out, ingester = run(srv, "https://zenodo.org/records/60", fileset_max_file_count=3)
    assert_status(out, "too-many-files")
    assert out.result.to_json()["file_count"] == 4
    assert file_requests(srv) == []
    assert_nothing_archived(ingester, out)
    out, _ = run(srv, "https://zenodo.org/records/60", fileset_max_file_count=4)
    assert out.status == "success"


def test_too_large_size(srv: PlatformServer) -> None:
    srv.add_zenodo(61, [FakeFile("a.bin", b"a" * 600), FakeFile("b.bin", b"b" * 600)])
    out, ingester = run(srv, "https://zenodo.org/records/61", fileset_max_total_size=1000)
    assert_status(out, "too-large-size")
    assert out.result.to_json()["total_size"] == 1200
    assert file_requests(srv) == []
    assert_nothing_archived(ingester, out)


def test_too_large_size_declared_small(srv: PlatformServer) -> None:
    """The platform declares a small total, a file turns out larger: stopped at its
    declared size, nothing archived."""
    srv.add_zenodo(62, [FakeFile("a.bin", b"a" * 600, reported_size=100), GOOD])
    for strategy in BOTH:
        out, ingester = run(srv, "https://zenodo.org/records/62", strategy,
                            fileset_max_total_size=1000)
        assert_status(out, "mismatch-size")
        assert_nothing_archived(ingester, out)


def test_empty_manifest(srv: PlatformServer) -> None:
    srv.add_zenodo(63, [])
    out, ingester = run(srv, "https://zenodo.org/records/63")
    assert_status(out, "empty-manifest", manifest=False)
    assert out.result.to_json()["manifest"] == []
    assert out.result.to_json()["file_count"] == 0
    assert_nothing_archived(ingester, out)


# --- malformed requests through the worker --------------------------------------------------


@pytest.mark.parametrize(("data", "status", "kind"), [
    (b"not json", "bad-json", "error"),
    (b"\xff\xfe{}", "bad-utf8", "error"),
    (b"[1, 2]", "bad-request", "error"),
    (b'"https://zenodo.org/records/1"', "bad-request", "error"),
    (b'{"ingest_type": "dataset"}', "bad-request", "error"),
    (b'{"ingest_type": "dataset", "base_url": ""}', "bad-request", "error"),
    (b'{"base_url": "https://zenodo.org/records/1"}', "bad-request", "error"),
    (b'{"ingest_type": "dataset", "base_url": 7}', "bad-request", "error"),
    (b'{"ingest_type": "pdf", "base_url": "https://zenodo.org/records/1"}',
     "skip-ingest-type", "skip"),
])
def test_worker_bad_requests(srv: PlatformServer, data: bytes, status: str, kind: str) -> None:
    worker = IngestFilesetWorker(make(srv))
    try:
        (outcome,) = worker.process_batch([Item("line 1", data)])
    finally:
        worker.close()
    assert (outcome.where, outcome.status, outcome.kind) == ("line 1", status, kind)
    assert outcome.output is None
    assert srv.requests == []  # nothing was fetched for it


def test_worker_result(srv: PlatformServer) -> None:
    srv.add_zenodo(70, [FakeFile("a.txt", b"a", status=500)])
    worker = IngestFilesetWorker(make(srv))
    try:
        (outcome,) = worker.process_batch([Item(
            "line 2", b'{"ingest_type": "dataset", "base_url": "https://zenodo.org/records/70",'
                      b' "link_source": "doi", "extra_field": [1]}')])
    finally:
        worker.close()
    assert (outcome.status, outcome.kind) == ("error-platform-download", "error")
    assert isinstance(outcome.output, FilesetIngestResult)  # typed until the sink writes it
    line = outcome.output.to_json()
    assert line["status"] == "error-platform-download"
    assert line["request"]["extra_field"] == [1]  # unknown fields echoed back
    assert outcome.error and "500" in outcome.error

