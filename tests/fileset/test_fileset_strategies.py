"""The six archive strategies end to end: what they write (WARC files and
``web_cdx`` rows, or item-store files and the item's metadata), what they report,
``check_existing``, and that a failed fileset leaves nothing archived."""

from __future__ import annotations

import base64
import hashlib
import io
import itertools
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from sqlalchemy import Engine, select
from warcio.archiveiterator import ArchiveIterator

from sandcrawler.app.settings import load_settings
from sandcrawler.db.engine import begin
from sandcrawler.db.schema import web_cdx
from sandcrawler.fileset.ingest import FilesetIngester, IngestOutcome
from sandcrawler.records.capture import REVISIT_MIME, CdxRecord
from sandcrawler.records.fileset import IngestRequest, IngestStrategy
from sandcrawler_testkit.platforms import FakeFile, PlatformServer
from tests.helpers.fileset import open_ingester

S = IngestStrategy
DV = "dataverse.example.edu"
PID = "doi:10.5072/FK2/STRAT1"


@pytest.fixture(params=["local", "s3"])
def store(request: pytest.FixtureRequest) -> str:
    """Run on the default local store (data_dir/store) and on the real S3 server."""
    if request.param == "s3":
        request.getfixturevalue("s3_bucket")
    return str(request.param)


def make(srv: PlatformServer, strategy: IngestStrategy | None = None,
         **overrides: Any) -> FilesetIngester:
    settings = load_settings(http_routes=srv.routes(), fetch_timeout=2, **overrides)
    return open_ingester(settings, strategy)


@pytest.fixture
def ingesters() -> Iterator[list[FilesetIngester]]:
    made: list[FilesetIngester] = []
    yield made
    for ingester in made:
        ingester.close()


def ingest(ingester: FilesetIngester, url: str, *, force: bool = False) -> IngestOutcome:
    return ingester.ingest(IngestRequest(ingest_type="dataset", base_url=url,
                                         force_recrawl=force))


def hashes(data: bytes) -> dict[str, Any]:
    """What ``file_meta`` says of ``data`` (all but the MIME type)."""
    return {"size_bytes": len(data), "sha1hex": hashlib.sha1(data).hexdigest(),
            "sha256hex": hashlib.sha256(data).hexdigest(), "md5hex": hashlib.md5(data).hexdigest()}


def manifest_hashes(data: bytes) -> dict[str, Any]:
    h = hashes(data)
    return {"size": h["size_bytes"], "sha1": h["sha1hex"], "sha256": h["sha256hex"],
            "md5": h["md5hex"]}


def file_downloads(srv: PlatformServer) -> list[str]:
    """Paths of zenodo file downloads (and bundle downloads) the server answered."""
    return [p for host, _, p in srv.requests
            if host == "zenodo.org" and (p.startswith("/api/files/") or "/files/" in p
                                         or p.endswith("/files-archive"))]


def payload(ingester: FilesetIngester, row: CdxRecord) -> bytes:
    buf = io.BytesIO()
    ingester.ctx.web.read_payload(row, buf)
    return buf.getvalue()


def all_cdx(ingester: FilesetIngester) -> list[dict[str, Any]]:
    with begin(ingester.ctx.web.engine) as conn:
        return [dict(r._mapping) for r in conn.execute(select(web_cdx))]


def cdx_rows(ingester: FilesetIngester, url: str) -> list[CdxRecord]:
    """Every capture of ``url``, originals first."""
    rows = [CdxRecord.from_row(row) for row in all_cdx(ingester) if row["url"] == url]
    return sorted(rows, key=lambda row: row.is_revisit)


def warc_keys(ingester: FilesetIngester) -> set[str]:
    return {b.key for b in ingester.ctx.web.store.list("warcs/")}


def check_warc(ingester: FilesetIngester, key: str, tmp_path: Path) -> list[Any]:
    """The WARC file passes ``warcio check`` (every block and payload digest), and
    its records as (type, target URI, payload digest)."""
    data = ingester.ctx.web.store.get(key)
    local = tmp_path / key.rsplit("/", 1)[-1]
    local.write_bytes(data)
    done = subprocess.run([sys.executable, "-m", "warcio.cli", "check", "-v", str(local)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "digest fail" not in done.stdout.lower()
    assert "digest pass" in done.stdout
    records = []
    for record in ArchiveIterator(io.BytesIO(data)):
        records.append((record.rec_type, record.rec_headers.get_header("WARC-Target-URI"),
                        record.rec_headers.get_header("WARC-Payload-Digest")))
        record.content_stream().read()
    return records


# --- web-file -------------------------------------------------------------------------------


def test_web_file(srv: PlatformServer, store: str, ingesters: list[FilesetIngester],
                  tmp_path: Path) -> None:
    data = bytes(range(256)) * 40 + b"tail"
    srv.add_zenodo(1001, [FakeFile("one.bin", data, redirects=2)])
    ingester = make(srv)
    ingesters.append(ingester)
    assert ingester.ctx.web.store.url.startswith("s3://" if store == "s3" else "/")
    out = ingest(ingester, "https://zenodo.org/records/1001")
    r = out.result.to_json()
    assert (r["status"], r["hit"], r["ingest_strategy"]) == ("success-file", True, "web-file")
    single = r["fileset_file"]
    assert {k: single["file_meta"][k] for k in hashes(data)} == hashes(data)
    terminal = single["terminal"]
    assert terminal["terminal_url"].startswith("https://zenodo.org/api/files/")
    assert terminal["terminal_url"].endswith("one.bin?hop=2")
    assert terminal["terminal_status_code"] == 200
    assert terminal["terminal_sha1hex"] == hashes(data)["sha1hex"]
    cdx = single["cdx"]
    assert cdx["url"] == terminal["terminal_url"]
    assert cdx["datetime"] == terminal["terminal_dt"]
    assert cdx["warc_path"].startswith("warcs/")
    assert cdx["warc_offset"] > 0 and cdx["warc_csize"] > 0
    assert cdx["sha1hex"] == hashes(data)["sha1hex"]
    assert cdx["status_code"] == 200
    assert "revisit_cdx" not in single
    (entry,) = r["manifest"]
    assert {k: entry[k] for k in manifest_hashes(data)} == manifest_hashes(data)
    assert (entry["status"], entry["terminal_url"]) == ("success", terminal["terminal_url"])
    # the ingest-file result of the one file
    assert out.file_result is not None
    f = out.file_result.to_json()
    assert f["request"]["ingest_type"] == "dataset-file"
    assert f["request"]["base_url"] == "https://zenodo.org/records/1001"
    assert (f["status"], f["hit"]) == ("success", True)
    assert f["file_meta"] == single["file_meta"]
    assert f["terminal"] == terminal and f["cdx"] == cdx
    # the capture can be found again and replayed, byte for byte
    chain = ingester.ctx.web.lookup(entry["platform_url"])
    assert chain is not None and len(chain) == 3
    assert [row.status_code for row in chain] == [302, 302, 200]
    row = chain[-1]
    assert (row.warc_path, row.warc_offset, row.warc_csize) == (
        cdx["warc_path"], cdx["warc_offset"], cdx["warc_csize"])
    assert payload(ingester, row) == data
    records = check_warc(ingester, cdx["warc_path"], tmp_path)
    types = [t for t, _, _ in records]
    assert types[0] == "warcinfo"
    assert types.count("response") == 3 and types.count("request") == 3
    final = [(u, digest) for t, u, digest in records if t == "response"][-1]
    sha1 = base64.b32encode(hashlib.sha1(data).digest()).decode()
    assert final == (terminal["terminal_url"], f"sha1:{sha1}")


# --- web-fileset ----------------------------------------------------------------------------


def test_web_fileset(srv: PlatformServer, engine: Engine, ingesters: list[FilesetIngester],
                     tmp_path: Path) -> None:
    files = {"a.csv": b"a,b\n1,2\n", "b.bin": b"\x00" * 3000, "c.txt": b"see\n"}
    srv.add_zenodo(1002, [FakeFile("a.csv", files["a.csv"], redirects=0),
                          FakeFile("b.bin", files["b.bin"]),
                          FakeFile("c.txt", files["c.txt"], redirects=3, chunked=True)])
    ingester = make(srv)
    ingesters.append(ingester)
    assert ingester.ctx.web.engine.url == engine.url  # sqlite and postgresql
    out = ingest(ingester, "https://zenodo.org/records/1002")
    r = out.result.to_json()
    assert (r["status"], r["ingest_strategy"]) == ("success", "web-fileset"), r
    assert out.file_result is None and "fileset_file" not in r
    assert (r["file_count"], r["total_size"]) == (3, sum(map(len, files.values())))
    warcs = set()
    for entry, (name, data), hops in zip(r["manifest"], files.items(), [0, 1, 3], strict=True):
        assert entry["path"] == name
        assert entry["status"] == "success"
        assert {k: entry[k] for k in manifest_hashes(data)} == manifest_hashes(data)
        assert entry["terminal_dt"] and len(entry["terminal_dt"]) == 14
        chain = ingester.ctx.web.lookup(entry["platform_url"])
        assert chain is not None and len(chain) == hops + 1
        assert chain[0].url == entry["platform_url"]
        assert chain[-1].url == entry["terminal_url"]
        for row, following in itertools.pairwise(chain):
            assert row.status_code == 302 and row.location == following.url
        assert payload(ingester, chain[-1]) == data
        warcs |= {row.warc_path for row in chain}
    # all files of the fileset are in one WARC file, apart from the landing page's
    assert len(warcs) == 1 and r["cdx"]["warc_path"] not in warcs
    rows = all_cdx(ingester)
    assert sum(1 for row in rows if row["status_code"] == 302) == 0 + 1 + 3
    assert sorted(row["url"] for row in rows if row["status_code"] == 200) == sorted(
        [r["cdx"]["url"], *(e["terminal_url"] for e in r["manifest"])])
    records = check_warc(ingester, warcs.pop(), tmp_path)
    assert sum(1 for t, _, _ in records if t == "response") == 3 + 4


# --- revisits -------------------------------------------------------------------------------


def test_web_file_revisit(srv: PlatformServer, engine: Engine, ingesters: list[FilesetIngester],
                          tmp_path: Path) -> None:
    shared = b"the same bytes in two datasets\n" * 20
    srv.add_zenodo(1003, [FakeFile("shared.txt", shared), FakeFile("own.txt", b"own")])
    srv.add_zenodo(1004, [FakeFile("copy.txt", shared)])
    ingester = make(srv)
    ingesters.append(ingester)
    first = ingest(ingester, "https://zenodo.org/records/1003").result.to_json()
    assert first["status"] == "success"
    original = ingester.ctx.web.lookup(first["manifest"][0]["platform_url"])
    assert original is not None and not original[-1].is_revisit
    out = ingest(ingester, "https://zenodo.org/records/1004")
    r = out.result.to_json()
    assert (r["status"], r["ingest_strategy"]) == ("success-file", "web-file"), r
    single = r["fileset_file"]
    assert single["cdx"]["mimetype"] == REVISIT_MIME
    assert single["cdx"]["sha1hex"] == hashes(shared)["sha1hex"]
    assert single["revisit_cdx"] == original[-1].to_cdx()
    assert single["revisit_cdx"]["url"] == first["manifest"][0]["terminal_url"]
    assert single["file_meta"]["mimetype"] != REVISIT_MIME
    assert {k: single["file_meta"][k] for k in hashes(shared)} == hashes(shared)
    assert out.file_result is not None
    assert out.file_result.to_json()["revisit_cdx"] == single["revisit_cdx"]
    chain = ingester.ctx.web.lookup(r["manifest"][0]["platform_url"])
    assert chain is not None and chain[-1].is_revisit
    assert payload(ingester, chain[-1]) == shared  # resolved to the first capture
    records = check_warc(ingester, single["cdx"]["warc_path"], tmp_path)
    assert "revisit" in [t for t, _, _ in records]
    # archived again: found as it is, with the revisit's metadata of the real payload
    again = ingest(ingester, "https://zenodo.org/records/1004").result.to_json()
    assert again["status"] == "success-existing"
    assert again["fileset_file"]["file_meta"] == single["file_meta"]
    assert again["fileset_file"]["revisit_cdx"] == single["revisit_cdx"]
    assert again["manifest"][0]["mimetype"] == r["manifest"][0]["mimetype"]


# --- bundled --------------------------------------------------------------------------------


def test_web_fileset_bundled(srv: PlatformServer, ingesters: list[FilesetIngester]) -> None:
    files = {f"part{i}.csv": f"{i},{i * i}\n".encode() * (i + 1) for i in range(4)}
    srv.add_zenodo(1005, [FakeFile(k, v) for k, v in files.items()])
    ingester = make(srv, fileset_bundle_min_files=3)
    ingesters.append(ingester)
    out = ingest(ingester, "https://zenodo.org/records/1005")
    r = out.result.to_json()
    assert (r["status"], r["ingest_strategy"]) == ("success", "web-fileset-bundled"), r
    assert out.file_result is None
    assert [e["path"] for e in r["manifest"]] == list(files)
    for entry, data in zip(r["manifest"], files.values(), strict=True):
        assert {k: entry[k] for k in manifest_hashes(data)} == manifest_hashes(data)
        assert entry["status"] == "success"
        assert entry["platform_url"].startswith("https://zenodo.org/api/records/1005/files/")
    bundle = r["fileset_bundle"]
    url = "https://zenodo.org/api/records/1005/files-archive"
    assert bundle["terminal"]["terminal_url"] == url
    assert bundle["cdx"]["url"] == url and bundle["cdx"]["warc_path"].startswith("warcs/")
    assert "archiveorg_bundle_path" not in bundle
    chain = ingester.ctx.web.lookup(url)
    assert chain is not None
    zipped = payload(ingester, chain[-1])
    assert {k: bundle["file_meta"][k] for k in hashes(zipped)} == hashes(zipped)
    with zipfile.ZipFile(io.BytesIO(zipped)) as zf:
        assert {n: zf.read(n) for n in zf.namelist()} == files
    # the files themselves were not downloaded one by one
    assert not [p for p in file_downloads(srv) if "/content" in p or p.startswith("/api/files/")]


def test_archiveorg_fileset_bundled(srv: PlatformServer, store: str,
                                    ingesters: list[FilesetIngester]) -> None:
    files = [FakeFile("readme.txt", b"read me\n"),
             FakeFile("x.csv", b"1,2\n", directory="data/raw"),
             FakeFile("y.csv", b"3,4\n", directory="data/raw"),
             FakeFile("z.bin", b"\x07" * 2000, directory="bin")]
    srv.add_dataverse(DV, PID, files, version=(3, 1))
    ingester = make(srv, fileset_web_max_files=2, fileset_bundle_min_files=3)
    ingesters.append(ingester)
    out = ingest(ingester, f"https://{DV}/dataset.xhtml?persistentId={PID}&version=3.1")
    r = out.result.to_json()
    assert (r["status"], r["ingest_strategy"]) == ("success", "archiveorg-fileset-bundled"), r
    name = r["archiveorg_item_name"]
    assert name == "dataverse.example.edu-doi_10.5072_FK2_STRAT1-v3.1"
    paths = [e["path"] for e in r["manifest"]]
    assert paths == ["readme.txt", "data/raw/x.csv", "data/raw/y.csv", "bin/z.bin", "MANIFEST.TXT"]
    for entry, f in zip(r["manifest"], files, strict=False):
        assert {k: entry[k] for k in manifest_hashes(f.data)} == manifest_hashes(f.data)
        assert entry["platform_url"].startswith(f"https://{DV}/api/access/datafile/")
    manifest_txt = r["manifest"][-1]
    assert manifest_txt["status"] == "success" and "platform_url" not in manifest_txt
    bundle = r["fileset_bundle"]
    assert bundle["archiveorg_bundle_path"] == f"{name}.zip"
    assert bundle["terminal"]["terminal_url"].startswith(
        f"https://{DV}/api/access/dataset/:persistentId/versions/3.1")
    assert "cdx" not in bundle
    items = ingester.ctx.items
    zipped = items.store.get(f"items/{name}/{name}.zip")
    assert {k: bundle["file_meta"][k] for k in hashes(zipped)} == hashes(zipped)
    assert items.files(name) == [f"{name}.zip"]
    meta = items.read_meta(name)
    assert meta is not None
    assert meta["ingest_strategy"] == "archiveorg-fileset-bundled"
    assert meta["result"]["manifest"] == r["manifest"]


# --- archiveorg-file, archiveorg-fileset ----------------------------------------------------


def test_archiveorg_fileset(srv: PlatformServer, store: str,
                            ingesters: list[FilesetIngester]) -> None:
    files = {"table.csv": b"a,b\n1,2\n", "sub/dir/blob.bin": bytes(range(256)) * 30,
             "notes with space.txt": b"notes\n"}
    srv.add_archiveorg("ia-fileset", [FakeFile(k, v) for k, v in files.items()])
    ingester = make(srv)
    ingesters.append(ingester)
    out = ingest(ingester, "https://archive.org/details/ia-fileset")
    r = out.result.to_json()
    assert (r["status"], r["ingest_strategy"]) == ("success", "archiveorg-fileset"), r
    assert r["archiveorg_item_name"] == "ia-fileset"
    items = ingester.ctx.items
    assert sorted(items.files("ia-fileset")) == sorted(files)
    for entry, (path, data) in zip(r["manifest"], files.items(), strict=True):
        assert entry["path"] == path
        assert items.store.get(f"items/ia-fileset/{path}") == data
        assert {k: entry[k] for k in manifest_hashes(data)} == manifest_hashes(data)
        assert entry["status"] == "success"
        assert entry["terminal_url"].startswith("https://ia800100.us.archive.org/1/items/")
    raw = items.store.get("items/ia-fileset/ia-fileset_meta.json")
    meta = orjson.loads(raw)
    assert meta["item_name"] == "ia-fileset"
    assert meta["ingest_strategy"] == "archiveorg-fileset"
    assert meta["platform"] == {"name": "archiveorg", "domain": "archive.org", "id": "ia-fileset",
                                "base_url": "https://archive.org/details/ia-fileset"}
    assert meta["metadata"]["title"] == "An archive.org dataset"
    assert [(x["path"], x["size"]) for x in meta["platform_manifest"]] == [
        (k, len(v)) for k, v in files.items()]
    assert meta["result"]["manifest"] == r["manifest"]
    assert meta["result"]["status"] == "success"
    # nothing of it went into the web archive: only the landing page did
    assert warc_keys(ingester) == {r["cdx"]["warc_path"]}


def test_archiveorg_file(srv: PlatformServer, ingesters: list[FilesetIngester]) -> None:
    data = b"a single file\n" * 100
    srv.add_zenodo(1006, [FakeFile("single.txt", data)], version="v3")
    ingester = make(srv, S.ARCHIVEORG_FILE)
    ingesters.append(ingester)
    out = ingest(ingester, "https://zenodo.org/records/1006")
    r = out.result.to_json()
    assert (r["status"], r["ingest_strategy"]) == ("success-file", "archiveorg-file"), r
    name = r["archiveorg_item_name"]
    assert name == "zenodo.org-1006-vv3"
    assert ingester.ctx.items.store.get(f"items/{name}/single.txt") == data
    single = r["fileset_file"]
    assert {k: single["file_meta"][k] for k in hashes(data)} == hashes(data)
    assert single["terminal"]["terminal_url"].endswith("single.txt?hop=1")
    assert "cdx" not in single
    assert out.file_result is not None
    f = out.file_result.to_json()
    assert (f["status"], f["request"]["ingest_type"]) == ("success", "dataset-file")
    assert f["file_meta"] == single["file_meta"]
    meta = ingester.ctx.items.read_meta(name)
    assert meta is not None and meta["result"]["file_file_meta"] == single["file_meta"]


# --- check_existing -------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", list(S))
def test_check_existing_and_force_recrawl(srv: PlatformServer, strategy: IngestStrategy,
                                          ingesters: list[FilesetIngester]) -> None:
    count = 1 if strategy.entity == "file" else 3
    files = {f"f{i}.dat": f"file {i}\n".encode() * (i + 1) for i in range(count)}
    srv.add_zenodo(2000, [FakeFile(k, v) for k, v in files.items()])
    ingester = make(srv, strategy)
    ingesters.append(ingester)
    url = "https://zenodo.org/records/2000"
    first = ingest(ingester, url).result.to_json()
    assert first["status"] == ("success-file" if count == 1 else "success"), first
    assert first["ingest_strategy"] == strategy.value
    assert file_downloads(srv)
    srv.clear_requests()
    again = ingest(ingester, url)
    r = again.result.to_json()
    assert (r["status"], r["hit"]) == ("success-existing", True), r
    assert again.file_result is None  # only a file archived now is news for file ingest
    assert not file_downloads(srv), srv.requests
    assert {p for _, _, p in srv.requests} == {"/records/2000", "/api/records/2000"}
    keys = ("path", "size", "md5", "sha1", "sha256", "status", "terminal_url", "terminal_dt")
    assert [{k: e.get(k) for k in keys} for e in r["manifest"]] == [
        {k: e.get(k) for k in keys} for e in first["manifest"]]
    if strategy.entity == "file":
        assert r["fileset_file"]["file_meta"] == first["fileset_file"]["file_meta"]
    if strategy.bundled:
        assert r["fileset_bundle"]["file_meta"] == first["fileset_bundle"]["file_meta"]
    # force_recrawl archives it again
    srv.clear_requests()
    forced = ingest(ingester, url, force=True)
    assert forced.status == first["status"], forced.result
    assert file_downloads(srv)
    if strategy.entity == "file":
        assert forced.file_result is not None
    if strategy.backend == "web" and not strategy.bundled:
        # the same payload again is a revisit of the first capture
        for entry in forced.result.to_json()["manifest"]:
            rows = cdx_rows(ingester, entry["terminal_url"])
            assert [row.is_revisit for row in rows] == [False, True]
            assert payload(ingester, rows[1]) == files[entry["path"]]


@pytest.mark.parametrize("changed", [b"two!", b"TWO"], ids=["size", "checksum"])
@pytest.mark.parametrize("strategy", [S.WEB_FILESET, S.WEB_FILESET_BUNDLED,
                                      S.ARCHIVEORG_FILESET, S.ARCHIVEORG_FILESET_BUNDLED])
def test_check_existing_archives_again_when_the_platform_changed(
        srv: PlatformServer, strategy: IngestStrategy, changed: bytes,
        ingesters: list[FilesetIngester]) -> None:
    """A file the platform now describes otherwise (another size, or the same
    size and another md5) is not "existing": the dataset is archived again."""
    srv.add_zenodo(2001, [FakeFile("a.txt", b"one"), FakeFile("b.txt", b"two")])
    ingester = make(srv, strategy)
    ingesters.append(ingester)
    url = "https://zenodo.org/records/2001"
    assert ingest(ingester, url).status == "success"
    assert ingest(ingester, url).status == "success-existing"
    srv.add_zenodo(2001, [FakeFile("a.txt", b"one"), FakeFile("b.txt", changed)])
    srv.clear_requests()
    out = ingest(ingester, url)
    assert out.status == "success", out.result
    assert file_downloads(srv)
    entry = out.result.to_json()["manifest"][1]
    assert (entry["path"], entry["md5"]) == ("b.txt", hashlib.md5(changed).hexdigest())
    if strategy == S.ARCHIVEORG_FILESET:
        assert ingester.ctx.items.store.get("items/zenodo.org-2001-v1.0/b.txt") == changed
    assert ingest(ingester, url).status == "success-existing"


@pytest.mark.parametrize("strategy", [S.WEB_FILESET, S.ARCHIVEORG_FILESET])
def test_check_existing_checksum_case(srv: PlatformServer, strategy: IngestStrategy,
                                      ingesters: list[FilesetIngester]) -> None:
    """A platform that gives its md5 in upper case: the same file, found again."""
    files = [FakeFile(n, d, reported_md5=hashlib.md5(d).hexdigest().upper())
             for n, d in (("a.txt", b"one"), ("b.txt", b"two"))]
    srv.add_figshare(2002, 1, files)
    ingester = make(srv, strategy)
    ingesters.append(ingester)
    url = "https://figshare.com/articles/dataset/x/2002/1"
    assert ingest(ingester, url).status == "success"
    srv.clear_requests()
    assert ingest(ingester, url).status == "success-existing"
    assert not [p for _, _, p in srv.requests if p.startswith("/files/")]


# --- nothing partially archived -------------------------------------------------------------


@pytest.mark.parametrize(("fault", "status"), [
    ({"status": 404}, "error-platform-download"),
    ({"reported_md5": "0" * 32}, "mismatch-md5"),
])
@pytest.mark.parametrize("strategy", [S.WEB_FILESET, S.ARCHIVEORG_FILESET])
@pytest.mark.parametrize("parallel", [1, 8])
def test_failed_fileset_leaves_nothing(srv: PlatformServer, strategy: IngestStrategy,
                                       fault: dict[str, Any], status: str, store: str,
                                       parallel: int,
                                       ingesters: list[FilesetIngester]) -> None:
    files = [FakeFile("1.txt", b"one\n"), FakeFile("2.txt", b"two\n"),
             FakeFile("3.txt", b"three\n", **fault), FakeFile("4.txt", b"four\n")]
    srv.add_zenodo(3000, files)
    ingester = make(srv, strategy, fileset_parallel_downloads=parallel)
    ingesters.append(ingester)
    out = ingest(ingester, "https://zenodo.org/records/3000")
    r = out.result.to_json()
    assert (r["status"], r["hit"]) == (status, False), r
    assert "3.txt" in r["error_message"]
    assert [e["path"] for e in r["manifest"]] == ["1.txt", "2.txt", "3.txt", "4.txt"]
    statuses = [e.get("status") for e in r["manifest"]]
    assert r["manifest"][1]["sha1"] == hashes(b"two\n")["sha1hex"]
    if parallel == 1:
        assert statuses == ["success", "success", status, None]
        assert "terminal_url" not in r["manifest"][3]
        # the fourth file was never asked for
        assert not [p for p in file_downloads(srv) if "4.txt" in p]
    else:
        # side by side, the fourth may have been fetched (and verified) meanwhile;
        # the earliest failure decides, and nothing of any file is kept
        assert statuses[:3] == ["success", "success", status]
        assert statuses[3] in ("success", None)
    # the landing page is captured (its own WARC session); of the files, nothing
    assert warc_keys(ingester) == {r["cdx"]["warc_path"]}
    assert [row["url"] for row in all_cdx(ingester)] == ["https://zenodo.org/records/3000"]
    assert list(ingester.ctx.web.store.list("items/")) == []
    assert ingester.ctx.items.read_meta("zenodo.org-3000-v1.0") is None
    if store == "local":
        tmp = Path(load_settings().store.url) / ".tmp"
        assert not list(tmp.iterdir())  # no write left half done
    # archived again once the platform is fixed: success, and nothing of the failure shows
    srv.add_zenodo(3000, [FakeFile(f.name, f.data) for f in files])
    assert ingest(ingester, "https://zenodo.org/records/3000").status == "success"


def test_failed_rearchive_keeps_the_item_consistent(
        srv: PlatformServer, ingesters: list[FilesetIngester]) -> None:
    srv.add_zenodo(3001, [FakeFile("a.txt", b"one"), FakeFile("b.txt", b"two")])
    ingester = make(srv, S.ARCHIVEORG_FILESET)
    ingesters.append(ingester)
    url = "https://zenodo.org/records/3001"
    assert ingest(ingester, url).status == "success"
    # the platform changes a.txt (same size), and b.txt cannot be downloaded now
    srv.add_zenodo(3001, [FakeFile("a.txt", b"ONE"), FakeFile("b.txt", b"two", status=500)])
    assert ingest(ingester, url).status == "error-platform-download"
    items = ingester.ctx.items
    name = "zenodo.org-3001-v1.0"
    # the marker is withdrawn before files are written over: no marker describes
    # bytes that are not there, and the next attempt archives the item again
    assert items.read_meta(name) is None
    srv.add_zenodo(3001, [FakeFile("a.txt", b"ONE"), FakeFile("b.txt", b"two")])
    assert ingest(ingester, url).status == "success"
    meta = items.read_meta(name)
    assert meta is not None
    for entry in meta["result"]["manifest"]:
        stored = items.store.get(f"items/{name}/{entry['path']}")
        assert hashlib.sha1(stored).hexdigest() == entry["sha1"], entry["path"]
