"""Our web archive on its own: WARC records, gzip members, redirects, revisits."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import tempfile
import zlib
from base64 import b32encode
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import insert, select, text
from sqlalchemy.exc import IntegrityError
from warcio.archiveiterator import ArchiveIterator

from sandcrawler.core.errors import DatabaseUnavailable, RecordError
from sandcrawler.core.timestamps import now14
from sandcrawler.db.engine import make_engine
from sandcrawler.db.schema import web_cdx
from sandcrawler.records.capture import CdxRecord
from sandcrawler.storage.blobs import BlobStore
from sandcrawler.storage.local import LocalBlobStore
from sandcrawler.storage.s3 import S3BlobStore
from sandcrawler.web.archive.captures import WarcSession, WebArchive, _http_headers
from sandcrawler.web.archive.cdx import surt
from sandcrawler.web.archive.warc import copy_payload
from sandcrawler.web.archive.warc_writer import compressible, crc32_combine
from sandcrawler.web.http.fetch import Hop, HttpFetcher, TooLarge
from sandcrawler_testkit.http_files import FileServer
from tests.helpers.cli import invoke
from tests.helpers.db import migrated_sqlite

# SQL: on SQLite and PostgreSQL
pytestmark = pytest.mark.both_backends


def _archive(tmp_path: Path, server: FileServer, *, store: BlobStore | None = None,
             gzip_level: int = 1) -> WebArchive:
    engine = migrated_sqlite(tmp_path / "db.sqlite3")
    fetcher = HttpFetcher(routes={"https://example.org": server.url}, retries=0)
    return WebArchive(store or LocalBlobStore(tmp_path / "store"), engine, fetcher,
                      gzip_level=gzip_level, spool_dir=tmp_path)


def test_text_is_deflated_and_incompressible_payloads_are_stored(tmp_path: Path) -> None:
    www = tmp_path / "www"
    www.mkdir()
    text = b"site,year,count\n" * 20_000
    noise = os.urandom(300_000)
    (www / "t.csv").write_bytes(text)
    (www / "r.bin").write_bytes(noise)
    with FileServer(www) as server:
        archive = _archive(tmp_path, server)
        with archive.session() as session:
            t = session.capture("https://example.org/t.csv", max_bytes=10**8)
            r = session.capture("https://example.org/r.bin", max_bytes=10**8)
            t.close()
            r.close()
            session.commit()
        assert t.terminal.warc_csize < len(text) / 10  # deflated
        assert len(noise) < r.terminal.warc_csize < len(noise) * 1.01  # stored
        for name, data in (("t.csv", text), ("r.bin", noise)):
            url = f"https://example.org/{name}"
            chain = archive.lookup(url)
            assert chain is not None
            buf = io.BytesIO()
            archive.read_payload(chain[-1], buf)
            assert buf.getvalue() == data


def test_aborted_session_leaves_nothing(tmp_path: Path) -> None:
    www = tmp_path / "www"
    www.mkdir()
    (www / "a.txt").write_bytes(b"a" * 1000)
    with FileServer(www) as server:
        archive = _archive(tmp_path, server)
        with archive.session() as session:
            session.capture("https://example.org/a.txt", max_bytes=10**6).close()
            # leaving without commit() aborts
        assert archive.lookup("https://example.org/a.txt") is None
        assert not [p for p in (tmp_path / "store").rglob("*.warc*")]


def test_surt() -> None:
    assert surt("https://www.Example.org/A/b?z=1&a=2") == "org,example)/a/b?a=2&z=1"
    assert surt("http://example.org:8080") == "org,example:8080)/"


# -- the write path: straight into the WARC, or through the spool --------------------------


def _sha1_b32(data: bytes) -> str:
    return "sha1:" + b32encode(hashlib.sha1(data).digest()).decode()


def _read_back(store: BlobStore, key: str, rows: list[CdxRecord],
               files: dict[str, bytes]) -> None:
    """Every record of the WARC file reads back with warcio, digests checked, from the
    start and from every record's offset; every row's payload is the file's."""
    warc = store.get(key)
    offsets = []
    with io.BytesIO(warc) as f:
        records = ArchiveIterator(f, check_digests="raise")
        for record in records:
            offsets.append(records.get_record_offset())
            record.content_stream().read()  # digests checked at the end
    for offset in offsets:
        # the record parsed here by hand: the digests are of the bytes as written
        if key.endswith(".gz"):
            raw = zlib.decompressobj(31).decompress(warc[offset:])
        else:
            raw = warc[offset:]
        head, _, rest = raw.partition(b"\r\n\r\n")
        fields = dict(line.split(": ", 1) for line in head.decode().split("\r\n")[1:])
        block = rest[:int(fields["Content-Length"])]
        assert rest[len(block):len(block) + 4] == b"\r\n\r\n"
        assert fields["WARC-Block-Digest"] if fields["WARC-Type"] != "request" else True
        if fields["WARC-Type"] in ("response", "revisit"):
            assert fields["WARC-Block-Digest"] == _sha1_b32(block)
        if fields["WARC-Type"] == "response":
            assert fields["WARC-Payload-Digest"] == _sha1_b32(block.partition(b"\r\n\r\n")[2])
    if key.endswith(".gz"):
        gzip.decompress(warc)  # every member well formed, CRC-32 and size included
    assert {r.warc_offset for r in rows} <= set(offsets)
    for offset in offsets:
        records = ArchiveIterator(io.BytesIO(warc[offset:]), check_digests="raise")
        record = next(records)
        record.content_stream().read()
    for row in rows:
        if row.status_code != 200:
            continue
        data = files[row.url.rsplit("/", 1)[-1]]
        assert (row.size, row.sha1hex) == (len(data), hashlib.sha1(data).hexdigest())
        assert row.sha256hex == hashlib.sha256(data).hexdigest()
        assert row.md5hex == hashlib.md5(data).hexdigest()
        if not row.is_revisit:
            with io.BytesIO(warc[row.warc_offset:row.warc_offset + row.warc_csize]) as f:
                buf = io.BytesIO()
                copy_payload(f, buf, where="test", length=row.warc_csize)
                assert buf.getvalue() == data


@pytest.mark.parametrize("keep_body", [False, True])
@pytest.mark.parametrize("gzip_level", [0, 1])
def test_records_read_back_at_every_offset(tmp_path: Path, blob_store: BlobStore,
                                           gzip_level: int, keep_body: bool,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    spooled: list[str] = []
    mkstemp = tempfile.mkstemp

    def counting_mkstemp(**kw: Any) -> tuple[int, str]:
        fd, name = mkstemp(**kw)
        spooled.append(name)
        return fd, name

    monkeypatch.setattr(tempfile, "mkstemp", counting_mkstemp)
    www = tmp_path / "www"
    www.mkdir()
    files = {
        "big.pdf": b"%PDF-1.5\n" + os.urandom(2 * 2**20 + 65535 * 3 + 7),  # several chunks
        "small.bin": os.urandom(70_000),
        "t.csv": b"site,year,count\n" * 100_000,  # deflated at level 1
        "empty.bin": b"",
        "same.bin": b"",  # the big file again: a revisit
    }
    files["same.bin"] = files["big.pdf"]
    for name, data in files.items():
        (www / name).write_bytes(data)
    with FileServer(www) as server:
        server.redirects["/moved"] = "/small.bin"
        server.lie_length["/cut.bin"] = 10**6
        (www / "cut.bin").write_bytes(os.urandom(1000))
        archive = _archive(tmp_path, server, store=blob_store, gzip_level=gzip_level)
        with archive.session() as session:
            captures = [session.capture(f"https://example.org/{name}", max_bytes=10**8,
                                        keep_body=keep_body)
                        for name in ("big.pdf", "t.csv", "moved", "empty.bin", "same.bin")]
            size = session._writer.size
            with pytest.raises(RecordError):  # the connection is lost mid-body
                session.capture("https://example.org/cut.bin", max_bytes=10**8,
                                keep_body=keep_body)
            assert session._writer.size == size  # nothing of it left behind
            missing = session.capture("https://example.org/nothing", max_bytes=10**8,
                                      keep_body=keep_body)
            for capture in captures:
                assert (capture.spool is not None) == (keep_body and capture.status_code == 200)
                if capture.spool is not None:
                    name = capture.terminal.url.rsplit("/", 1)[-1]
                    assert capture.spool.read_bytes() == files[name]
                capture.close()
            rows = session.commit()
    bodies = sum(name.endswith(".body") for name in spooled)
    # the cut body fails before its first chunk: it never needed a spool file
    if keep_body or isinstance(blob_store, S3BlobStore):  # every other final body (6)
        assert bodies == 6
    else:  # only what is deflated: the text and bodies under 4 KiB (empty, 404)
        assert bodies == (3 if gzip_level else 0)
    assert missing.status_code == 404
    assert captures[-1].revisit_of is not None
    assert captures[-1].terminal.is_revisit
    assert [r.url.rsplit("/", 1)[-1] for r in captures[2].rows] == ["moved", "small.bin"]
    _read_back(blob_store, session.key, rows, files)
    csv = next(r for r in rows if r.url.endswith("t.csv"))
    big = next(r for r in rows if r.url.endswith("big.pdf"))
    if gzip_level:
        assert csv.warc_csize < len(files["t.csv"]) / 10
        assert len(files["big.pdf"]) < big.warc_csize < len(files["big.pdf"]) * 1.01


def test_an_aborted_capture_leaves_the_session_usable(tmp_path: Path) -> None:
    """A body cut short on the direct path is cut off the WARC file again."""
    www = tmp_path / "www"
    www.mkdir()
    data = os.urandom(3 * 2**20)
    (www / "a.bin").write_bytes(data)
    (www / "b.bin").write_bytes(data[:2**20])
    with FileServer(www) as server:
        server.lie_length["/b.bin"] = 5 * 2**20
        archive = _archive(tmp_path, server)
        with archive.session() as session:
            with pytest.raises(TooLarge):
                session.capture("https://example.org/a.bin", max_bytes=2**20 + 5,
                                keep_body=False)
            with pytest.raises(RecordError):
                session.capture("https://example.org/b.bin", max_bytes=10**8,
                                keep_body=False)
            session.capture("https://example.org/a.bin", max_bytes=10**8,
                            keep_body=False).close()
            rows = session.commit()
    _read_back(archive.store, session.key, rows, {"a.bin": data})


def test_compressible_is_judged_by_type_and_sample() -> None:
    noise = os.urandom(2**20)
    text = b"site,year,count\n" * 65536
    assert not compressible(noise, "application/pdf")
    assert compressible(text, "application/pdf")  # an uncompressed PDF is sampled
    assert not compressible(text, "application/zip")  # compressed formats are not
    assert not compressible(text, "image/jpeg")
    assert compressible(b"x" * 100, "application/zip")  # tiny: whatever deflate gives
    # noise after a short compressible start is found by the sample's middle and end
    assert not compressible(text[:1024] + noise, None)
    assert compressible(text[:100_000] + noise[:100_000], None)  # a third deflates


def test_crc32_combine() -> None:
    for a, b in ((b"", b""), (b"abc", b""), (b"", b"xyz"), (os.urandom(999), os.urandom(70_001))):
        assert crc32_combine(zlib.crc32(a), zlib.crc32(b), len(b)) == zlib.crc32(a + b)


def test_arc_records_are_read_and_a_line_that_only_looks_like_one_is_bad_warc() -> None:
    """A wrong offset into a gzipped WARC once read as an ARC header line (five
    fields) and gave an empty payload, reported as sha1-mismatch; it is bad-warc."""
    body = b"%PDF-1.4 a tiny file"
    http = (b"HTTP/1.0 200 OK\r\nContent-Type: application/pdf\r\nContent-Length: "
            + str(len(body)).encode() + b"\r\n\r\n" + body)
    arc = (b"http://example.org/a.pdf 127.0.0.1 20200102030405 application/pdf "
           + str(len(http)).encode() + b"\n" + http + b"\n")
    out = io.BytesIO()
    got = copy_payload(io.BytesIO(arc), out, where="arc")
    assert out.getvalue() == body and got.url == "http://example.org/a.pdf"
    for junk in (b"\x02\x03 RX\x9b @\x14 |G 0\n", b"not a record at all, just text\n"):
        with pytest.raises(RecordError) as err:
            copy_payload(io.BytesIO(junk + b"\x00" * 64), io.BytesIO(), where="junk")
        assert err.value.status == "bad-warc"
        assert len(str(err.value)) < 300  # the parser's quote of the bytes is cut short


# -- commit: the WARC file and its index rows, both or neither (issue 22) ------------------


@pytest.fixture
def www(tmp_path: Path) -> Path:
    root = tmp_path / "www"
    root.mkdir()
    (root / "a.txt").write_bytes(b"a" * 1000)
    return root


def _db_archive(tmp_path: Path, server: FileServer, db_url: str) -> WebArchive:
    """An archive on ``db_url``, a database at the latest schema (``migrated_db_url``)."""
    engine = make_engine(db_url)
    fetcher = HttpFetcher(routes={"https://example.org": server.url}, retries=0)
    return WebArchive(LocalBlobStore(tmp_path / "store"), engine, fetcher, spool_dir=tmp_path)


def _warc_keys(archive: WebArchive) -> list[str]:
    return [info.key for info in archive.store.list("warcs/")]


def _indexed(archive: WebArchive) -> list[tuple[str, str]]:
    with archive.engine.connect() as conn:
        return [tuple(r) for r in conn.execute(select(web_cdx.c.warc_path, web_cdx.c.url)
                                               .order_by(web_cdx.c.warc_offset))]


def _record_redirect(session: WarcSession, url: str, location: str) -> CdxRecord:
    """A redirect hop recorded as ``capture`` records one. Built here rather than
    fetched: the fetcher refuses such a URL before it reaches the archive, and the
    archive's own guarantee is what is tested."""
    hop = Hop(url=url, status_code=302, reason="Found", headers=[("Location", location)],
              request_headers=[("User-Agent", "test")], location=location)
    return session._record(hop, now14(), _http_headers(hop), b"", None)


def test_a_nul_in_a_url_is_indexed_with_its_file(tmp_path: Path, www: Path,
                                                 migrated_db_url: str) -> None:
    """Issue 22: on PostgreSQL the web_cdx insert refused a redirect URL with a NUL
    after the WARC file was committed: stored, never indexed. Now the row is
    written (the NUL as U+FFFD) and a lookup by the same URL follows the chain."""
    bad = "https://example.org/moved\x00here"
    with FileServer(www) as server:
        archive = _db_archive(tmp_path, server, migrated_db_url)
        with archive.session() as session:
            _record_redirect(session, bad, "https://example.org/a.txt")
            session.capture("https://example.org/a.txt", max_bytes=10**6).close()
            rows = session.commit()
    assert _warc_keys(archive) == [session.key]
    assert _indexed(archive) == [(session.key, "https://example.org/moved\ufffdhere"),
                                 (session.key, "https://example.org/a.txt")]
    chain = archive.lookup(bad)
    assert chain is not None and [r.warc_offset for r in chain] == [
        r.warc_offset for r in rows]
    payload = io.BytesIO()
    archive.read_payload(chain[-1], payload)
    assert payload.getvalue() == b"a" * 1000


def test_rows_the_database_refuses_leave_no_warc_file(tmp_path: Path, www: Path,
                                                      migrated_db_url: str) -> None:
    """The insert fails (here a row already at the place of one of the session's
    records): the WARC file is not stored either, and the session's error is the
    database's."""
    with FileServer(www) as server:
        archive = _db_archive(tmp_path, server, migrated_db_url)
        with archive.session() as session:
            capture = session.capture("https://example.org/a.txt", max_bytes=10**6)
            capture.close()
            with archive.engine.begin() as conn:
                conn.execute(insert(web_cdx), [capture.terminal.to_row()])
            with pytest.raises(IntegrityError):
                session.commit()
    assert _warc_keys(archive) == []
    assert _indexed(archive) == [(session.key, "https://example.org/a.txt")]  # the blocker


def test_a_session_without_records_stores_no_file(tmp_path: Path, www: Path) -> None:
    with FileServer(www) as server:
        archive = _archive(tmp_path, server)
        with archive.session() as session:
            assert session.commit() == []
    assert _warc_keys(archive) == []


def _refuse_at_commit(archive: WebArchive, action: str) -> None:
    """A deferred constraint trigger on web_cdx: ``action`` runs when the
    transaction commits, after the session committed its file."""
    with archive.engine.begin() as conn:
        conn.execute(text(
            "CREATE FUNCTION at_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            f"{action}; RETURN NULL; END $$"))
        conn.execute(text(
            "CREATE CONSTRAINT TRIGGER at_commit AFTER INSERT ON web_cdx DEFERRABLE "
            "INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION at_commit()"))


def test_a_commit_the_database_refuses_removes_the_warc_file(tmp_path: Path, www: Path,
                                                             pg_migrated_url: str) -> None:
    with FileServer(www) as server:
        archive = _db_archive(tmp_path, server, pg_migrated_url)
        _refuse_at_commit(archive, "RAISE EXCEPTION 'refused' USING ERRCODE = 'check_violation'")
        with archive.session() as session:
            session.capture("https://example.org/a.txt", max_bytes=10**6).close()
            with pytest.raises(IntegrityError, match="refused"):
                session.commit()
    assert _warc_keys(archive) == []
    assert _indexed(archive) == []


def test_a_commit_of_unknown_outcome_keeps_the_file_for_cleanup(
        tmp_path: Path, www: Path, pg_migrated_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The connection is lost while the transaction commits (as when the process is
    killed between the file's commit and the rows'): whether the rows were
    committed is unknown, so the file stays; `store cleanup` removes it once no row
    refers to it, and leaves an indexed file, a young one and files not ours."""
    with FileServer(www) as server:
        archive = _db_archive(tmp_path, server, pg_migrated_url)
        with archive.session() as kept:
            kept.capture("https://example.org/a.txt", max_bytes=10**6).close()
            kept.commit()
        _refuse_at_commit(archive, "PERFORM pg_terminate_backend(pg_backend_pid())")
        with archive.session() as session:
            session.capture("https://example.org/a.txt", max_bytes=10**6).close()
            with pytest.raises(DatabaseUnavailable):
                session.commit()
    archive.store.put("warcs/2024/01/01/imported.warc.gz", b"not ours")
    assert sorted(_warc_keys(archive)) == sorted([kept.key, session.key,
                                                  "warcs/2024/01/01/imported.warc.gz"])
    assert _indexed(archive) == [(kept.key, "https://example.org/a.txt")]
    assert archive.remove_unindexed(older_than=3600) == 0  # young: maybe being committed
    monkeypatch.setenv("SANDCRAWLER_DATABASE_URL", pg_migrated_url)
    monkeypatch.setenv("SANDCRAWLER_STORE_URL", str(tmp_path / "store"))
    result = invoke(["store", "cleanup", "--older-than", "0"])
    assert result.exit_code == 0, result.stderr
    assert "1 unindexed WARC file(s)" in result.stderr
    assert sorted(_warc_keys(archive)) == sorted([kept.key, "warcs/2024/01/01/imported.warc.gz"])
