"""A dataset's files archived side by side (``fileset.parallel_downloads``),
bounded per host by the crawl gate, with the guarantees of one at a time: all
or nothing, every checksum verified; and the checksums beyond md5, sha1 and
sha256 (``fileset/checksums.py``), with the generic faults issue 27 names."""

from __future__ import annotations

import hashlib
import io
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from warcio.archiveiterator import ArchiveIterator

from sandcrawler.app.settings import load_settings
from sandcrawler.core.errors import RecordError
from sandcrawler.fileset.ingest import FilesetIngester, IngestOutcome
from sandcrawler.fileset.parallel import in_parallel
from sandcrawler.fileset.platforms.base import LandingPage, PlatformHelper, checksums
from sandcrawler.records.fileset import FilesetPlatformItem, IngestRequest, IngestStrategy
from sandcrawler.records.statuses import FilesetStatus
from sandcrawler.web.http.fetch import HttpFetcher
from sandcrawler_testkit.platforms import FakeFile, PlatformServer
from tests.helpers.fileset import open_ingester

S = IngestStrategy
BOTH = [S.WEB_FILESET, S.ARCHIVEORG_FILESET]
ZENODO = "zenodo.org"


def ingest(srv: PlatformServer, url: str, strategy: IngestStrategy | None = None,
           **overrides: Any) -> tuple[IngestOutcome, FilesetIngester]:
    settings = load_settings(**{"http_routes": srv.routes(), "fetch_timeout": 5,
                                "crawl_host_delay": 0, **overrides})
    ingester = open_ingester(settings, strategy)
    try:
        return ingester.ingest(IngestRequest(ingest_type="dataset", base_url=url)), ingester
    finally:
        ingester.close()


def payload(ingester: FilesetIngester, url: str) -> bytes:
    chain = ingester.ctx.web.lookup(url)
    assert chain is not None, url
    out = io.BytesIO()
    ingester.ctx.web.read_payload(chain[-1], out)
    return out.getvalue()


def files(n: int) -> list[FakeFile]:
    return [FakeFile(f"part-{i:03d}.bin", hashlib.sha256(str(i).encode()).digest() * (100 + i))
            for i in range(n)]


# --- side by side, bounded per host ---------------------------------------------------------


@pytest.mark.parametrize("strategy", BOTH)
def test_files_side_by_side_within_the_host_limit(srv: PlatformServer,
                                                  strategy: IngestStrategy) -> None:
    """Twelve files, each answered after 50 ms, eight workers: the host never has
    more than crawl.host_concurrency requests at once, and has that many."""
    srv.add_zenodo(700, files(12))
    srv.answer_delay = 0.05
    out, _ = ingest(srv, "https://zenodo.org/records/700", strategy,
                    crawl_host_concurrency=3, fileset_parallel_downloads=8)
    assert out.status == "success", out.result
    manifest = out.result.to_json()["manifest"]
    assert [m["status"] for m in manifest] == ["success"] * 12
    assert [m["path"] for m in manifest] == [f.name for f in files(12)]  # the platform's order
    assert srv.peak_in_flight[ZENODO] == 3


@pytest.mark.parametrize("strategy", BOTH)
def test_one_at_a_time_when_set(srv: PlatformServer, strategy: IngestStrategy) -> None:
    srv.add_zenodo(701, files(5))
    srv.answer_delay = 0.02
    out, _ = ingest(srv, "https://zenodo.org/records/701", strategy,
                    crawl_host_concurrency=4, fileset_parallel_downloads=1)
    assert out.status == "success", out.result
    assert srv.peak_in_flight[ZENODO] == 1


def test_web_archive_written_side_by_side_reads_back(srv: PlatformServer) -> None:
    """Captures made by several threads into one WARC session: every file's
    payload reads back byte for byte, the WARC file parses record by record,
    and two files with the same bytes are one response and one revisit."""
    parts = [*files(10), FakeFile("copy-of-part-000.bin", files(1)[0].data)]
    srv.add_zenodo(702, parts)
    srv.answer_delay = 0.02
    out, ingester = ingest(srv, "https://zenodo.org/records/702", S.WEB_FILESET,
                           crawl_host_concurrency=4, fileset_parallel_downloads=8)
    assert out.status == "success", out.result
    manifest = out.result.to_json()["manifest"]
    for entry, part in zip(manifest, parts, strict=True):
        assert payload(ingester, entry["platform_url"]) == part.data
    warcs = list(ingester.ctx.web.store.list("warcs/"))
    kinds: list[str] = []
    for blob in warcs:
        with ingester.ctx.web.store.open_read(blob.key) as f:
            for record in ArchiveIterator(f):
                kinds.append(record.rec_type)
                if record.rec_type == "response":
                    record.content_stream().read()  # every body inflates and ends well
    # each file: a redirect hop and its final answer, each with its request record
    assert kinds.count("revisit") == 1
    assert kinds.count("response") + kinds.count("revisit") == 2 * len(parts) + 1  # + landing
    assert kinds.count("request") == kinds.count("response") + kinds.count("revisit")


def test_earliest_failure_decides_whatever_finishes_first() -> None:
    """The verdict does not depend on thread timing: the third item fails after
    the fifth has failed, and the third's failure is the one reported."""
    def job(i: int) -> int:
        if i == 2:
            time.sleep(0.2)
            raise RecordError("third", FilesetStatus.ERROR_PLATFORM_DOWNLOAD)
        if i == 4:
            raise RecordError("fifth", FilesetStatus.MISMATCH_MD5)
        return i * 10

    results, failure = in_parallel(list(range(6)), 4, job)
    assert failure is not None
    assert (failure[0], str(failure[1])) == (2, "third")
    assert results[0] == 0 and 2 not in results and 4 not in results


def test_no_new_file_starts_after_a_failure() -> None:
    started: list[int] = []
    lock = threading.Lock()

    def job(i: int) -> int:
        with lock:
            started.append(i)
        if i == 0:
            raise RecordError("first", FilesetStatus.ERROR_PLATFORM_DOWNLOAD)
        time.sleep(0.05)
        return i

    _, failure = in_parallel(list(range(50)), 2, job)
    assert failure is not None and failure[0] == 0
    assert len(started) <= 3  # the two running, at most one started as the failure landed


# --- checksums beyond md5, sha1 and sha256 --------------------------------------------------


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def zenodo_record(srv: PlatformServer, record_id: int,
                  entries: list[tuple[str, bytes, str]]) -> str:
    """A Zenodo record served as pages: its API answer gives each file the
    checksum string given (``"<algorithm>:<value>"``)."""
    api = f"https://{ZENODO}/api/records/{record_id}"
    answer = {"id": record_id, "conceptrecid": str(record_id), "metadata": {"title": "t"},
              "links": {}, "files": [
                  {"key": name, "size": len(data), "checksum": checksum,
                   "links": {"self": f"https://{ZENODO}/files/{record_id}/{name}"}}
                  for name, data, checksum in entries]}
    srv.add_page(ZENODO, f"/api/records/{record_id}", json.dumps(answer).encode(),
                 content_type="application/json")
    srv.add_page(ZENODO, f"/records/{record_id}", b"<html><title>t</title></html>")
    for name, data, _ in entries:
        srv.add_page(ZENODO, f"/files/{record_id}/{name}", data,
                     content_type="application/octet-stream")
    return api.replace("/api", "")


A, B = b"alpha\n" * 1000, b"beta\n" * 3


@pytest.mark.parametrize("strategy", BOTH)
def test_other_checksums_verified(srv: PlatformServer, strategy: IngestStrategy) -> None:
    url = zenodo_record(srv, 710, [
        ("a.txt", A, "sha512:" + hashlib.sha512(A).hexdigest()),
        ("b.txt", B, "git-sha1:" + git_blob_id(B)),
        ("c.txt", B + A, "crc32c:1234abcd")])
    out, _ = ingest(srv, url, strategy)
    assert out.status == "success", out.result
    a, b, c = out.result.to_json()["manifest"]
    assert a["checksums"] == {"sha512": hashlib.sha512(A).hexdigest()}
    assert b["checksums"] == {"git-sha1": git_blob_id(B)}
    assert "unverified" not in (a.get("extra") or {}) and "unverified" not in (b.get("extra") or {})
    # an algorithm we do not compute is kept, said to be unverified, and fails nothing
    assert c["checksums"] == {"crc32c": "1234abcd"}
    assert c["extra"]["unverified"] == ["crc32c"]


@pytest.mark.parametrize("strategy", BOTH)
@pytest.mark.parametrize("checksum", ["sha512:" + "0" * 128, "git-sha1:" + "0" * 40,
                                      "sha3-256:" + "1" * 64])
def test_other_checksum_that_disagrees(srv: PlatformServer, strategy: IngestStrategy,
                                       checksum: str) -> None:
    url = zenodo_record(srv, 711, [("a.txt", A, "md5:" + hashlib.md5(A).hexdigest()),
                                   ("b.txt", B, checksum)])
    out, ingester = ingest(srv, url, strategy)
    assert out.status == "mismatch-checksum", out.result
    assert "b.txt" in (out.error or "")
    assert [b.key for b in ingester.ctx.web.store.list("items/")] == []


def test_checksums_spellings() -> None:
    got = checksums([("MD5", "ABC"), ("sha-256", "def"), ("SHA1", None), ("SHA-512", "99"),
                     ("git-sha1", "aa"), ("CRC32", "7")])
    assert got == {"md5": "abc", "sha256": "def",
                   "checksums": {"sha512": "99", "git-sha1": "aa", "crc32": "7"}}


# --- the faults the issue names, for every platform's helper ----------------------------------


class _Listing(PlatformHelper[Any]):
    """Just enough of a helper to walk a paged listing over real HTTP."""

    name = "probe"

    def locate(self, request: IngestRequest, resource: LandingPage) -> None:
        return None

    def process_request(self, request: IngestRequest, resource: LandingPage,
                        html_biblio: Any) -> FilesetPlatformItem:
        raise NotImplementedError

    def walk(self, url: str) -> int:
        count = 0
        for page in self.pages(url, lambda a: a.value.get("next"), lambda a: a.value["items"]):
            count += len(page.value["items"])
            self.check_file_count(count)
        return count


@pytest.fixture
def listing(srv: PlatformServer) -> Iterator[_Listing]:
    settings = load_settings(http_routes={"https://api.example.org": srv.url}, fetch_timeout=2)
    fetcher = HttpFetcher(timeout=2, routes=settings.http.routes, retries=0)
    try:
        yield _Listing(None, fetcher, settings.fileset)
    finally:
        fetcher.close()


def page(items: list[int], following: str | None) -> bytes:
    return json.dumps({"items": items, "next": following}).encode()


def test_listing_that_ends(srv: PlatformServer, listing: _Listing) -> None:
    srv.add_page("api.example.org", "/l?p=1", page([1, 2], "https://api.example.org/l?p=2"))
    srv.add_page("api.example.org", "/l?p=2", page([3], None))
    assert listing.walk("https://api.example.org/l?p=1") == 3


def test_listing_that_comes_back(srv: PlatformServer, listing: _Listing) -> None:
    srv.add_page("api.example.org", "/l?p=1", page([1], "https://api.example.org/l?p=2"))
    srv.add_page("api.example.org", "/l?p=2", page([2], "https://api.example.org/l?p=1"))
    with pytest.raises(RecordError) as caught:
        listing.walk("https://api.example.org/l?p=1")
    assert caught.value.status == "error-platform-api"
    assert len(srv.requests) == 2


def test_listing_that_repeats_its_page(srv: PlatformServer, listing: _Listing) -> None:
    """A server that ignores the page parameter: every page the same."""
    for n in range(1, 5):
        srv.add_page("api.example.org", f"/l?p={n}",
                     page([1, 2], f"https://api.example.org/l?p={n + 1}"))
    with pytest.raises(RecordError) as caught:
        listing.walk("https://api.example.org/l?p=1")
    assert caught.value.status == "error-platform-api"
    assert "repeats" in str(caught.value)
    assert len(srv.requests) == 2


def test_listing_of_100000_files_stops_at_the_limit(srv: PlatformServer,
                                                    listing: _Listing) -> None:
    """1,000 pages of 100 files: too-many-files after the third page (the limit
    is 200), not after reading them all."""
    for n in range(1, 1001):
        following = f"https://api.example.org/l?p={n + 1}" if n < 1000 else None
        srv.add_page("api.example.org", f"/l?p={n}",
                     page(list(range(n * 100, n * 100 + 100)), following))
    with pytest.raises(RecordError) as caught:
        listing.walk("https://api.example.org/l?p=1")
    assert caught.value.status == "too-many-files"
    assert len(srv.requests) == 3


def test_manifest_of_100000_files_in_one_answer(srv: PlatformServer) -> None:
    """One API answer listing 100,000 files: too-many-files, nothing downloaded."""
    entries = [(f"f{i:06d}.txt", b"", "md5:" + hashlib.md5(b"").hexdigest())
               for i in range(100_000)]
    url = zenodo_record(srv, 720, entries[:3])  # pages for three; the answer lists all
    answer = {"id": 720, "conceptrecid": "720", "metadata": {"title": "t"}, "links": {},
              "files": [{"key": n, "size": 0, "checksum": c,
                         "links": {"self": f"https://{ZENODO}/files/720/{n}"}}
                        for n, _, c in entries]}
    srv.add_page(ZENODO, "/api/records/720", json.dumps(answer).encode(),
                 content_type="application/json")
    out, _ = ingest(srv, url)
    assert out.status == "too-many-files", out.result
    assert not [p for _, _, p in srv.requests if p.startswith("/files/")]


def test_file_gone_between_listing_and_download(srv: PlatformServer) -> None:
    url = zenodo_record(srv, 721, [("a.txt", A, "md5:" + hashlib.md5(A).hexdigest()),
                                   ("b.txt", B, "md5:" + hashlib.md5(B).hexdigest())])
    srv.add_page(ZENODO, "/files/721/b.txt", b"gone", status=410)
    out, ingester = ingest(srv, url, S.ARCHIVEORG_FILESET)
    assert out.status == "error-platform-download", out.result
    assert "410" in (out.error or "") and "b.txt" in (out.error or "")
    assert [b.key for b in ingester.ctx.web.store.list("items/")] == []


@pytest.mark.parametrize("strategy", BOTH)
def test_download_redirected_to_another_host(srv: PlatformServer,
                                             strategy: IngestStrategy) -> None:
    """Platforms hand downloads to an objects host (GitHub, Hugging Face's LFS):
    followed, and the file's terminal URL is that host's."""
    url = zenodo_record(srv, 722, [("a.txt", A, "md5:" + hashlib.md5(A).hexdigest())])
    srv.add_page(ZENODO, "/files/722/a.txt", b"", status=302,
                 location="https://objects.example.net/blob/a")
    srv.add_page("objects.example.net", "/blob/a", A, content_type="text/plain")
    out, _ = ingest(srv, url, strategy)
    assert out.status in ("success", "success-file"), out.result
    assert out.result.to_json()["manifest"][0]["terminal_url"] == (
        "https://objects.example.net/blob/a")


@pytest.mark.parametrize("strategy", BOTH)
def test_download_redirected_to_an_internal_address(srv: PlatformServer,
                                                    strategy: IngestStrategy) -> None:
    """A redirect to a loopback address is refused (the crawler never fetches
    internal addresses unless the operator allows them)."""
    url = zenodo_record(srv, 723, [("a.txt", A, "md5:" + hashlib.md5(A).hexdigest())])
    srv.add_page(ZENODO, "/files/723/a.txt", b"", status=302, location=f"{srv.url}/secret")
    out, _ = ingest(srv, url, strategy)
    assert out.status == "error-platform-download", out.result
    assert "/secret" not in [p for _, _, p in srv.requests]


def test_api_answering_html(srv: PlatformServer) -> None:
    srv.add_page(ZENODO, "/api/records/724", b"<html><body>Maintenance</body></html>")
    srv.add_page(ZENODO, "/records/724", b"<html><title>t</title></html>")
    out, _ = ingest(srv, "https://zenodo.org/records/724")
    assert out.status == "error-platform-api", out.result
    assert "not JSON" in (out.error or "")


@pytest.mark.parametrize("status", [404, 410])
def test_deleted_record(srv: PlatformServer, status: int) -> None:
    srv.add_page(ZENODO, "/api/records/725", b'{"status": %d, "message": "gone"}' % status,
                 status=status, content_type="application/json")
    srv.add_page(ZENODO, "/records/725", b"<html><title>t</title></html>")
    out, _ = ingest(srv, "https://zenodo.org/records/725")
    assert out.status == "platform-404", out.result


def test_spool_left_clean(srv: PlatformServer, tmp_path: Path) -> None:
    """Side by side, a failure leaves no spooled body behind."""
    spool = tmp_path / "spool"
    spool.mkdir()
    url = zenodo_record(srv, 726, [(f"{i}.txt", A + bytes([i]), "md5:" + "0" * 32)
                                   for i in range(6)])
    out, _ = ingest(srv, url, S.WEB_FILESET, fileset_tmp_dir=spool)
    assert out.status == "mismatch-md5", out.result
    assert list(spool.iterdir()) == []
