"""The WARC write path on its own (``sandcrawler.web.archive.warc_writer``): record framing,
gzip members, CRC-32 and sizes, digests against a recomputation, header fields,
revisits, aborted records, and the block digest setting (issue 24, item 6)."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import zlib
from base64 import b32encode
from pathlib import Path
from typing import Any

import pytest
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.core.errors import RecordError
from sandcrawler.records.statuses import FetchStatus
from sandcrawler.storage.blobs import BlobWriter
from sandcrawler.storage.local import LocalBlobStore
from sandcrawler.web.archive.captures import WarcSession, WebArchive
from sandcrawler.web.archive.warc import copy_payload
from sandcrawler.web.archive.warc_writer import (
    REVISIT_PROFILE,
    STORED_MAX,
    Placed,
    ResponseWriter,
    WarcWriter,
    crc32_combine,
    new_record_id,
)
from sandcrawler.web.http.fetch import HttpFetcher
from sandcrawler_testkit.http_files import FileServer
from tests.helpers.db import migrated_sqlite

URL = "https://example.org/paper.pdf"
DATE = "2024-05-06T07:08:09Z"
KEY = "warcs/test.warc.gz"
NOISE = os.urandom(3 * 2**20 + 7)  # several 1 MiB chunks, incompressible
TEXT = b"site,year,count\n" * 40_000  # deflated at level 1

#: the header fields of each record type, in order (warcio's order, kept)
RESPONSE_FIELDS = ["WARC-Record-ID", "WARC-Date", "WARC-Block-Digest", "WARC-Payload-Digest",
                   "WARC-Type", "WARC-Target-URI", "Content-Type", "Content-Length"]
REVISIT_FIELDS = ["WARC-Record-ID", "WARC-Date", "WARC-Profile", "WARC-Refers-To-Target-URI",
                  "WARC-Refers-To-Date", "WARC-Block-Digest", "WARC-Payload-Digest",
                  "WARC-Type", "WARC-Target-URI", "Content-Type", "Content-Length"]
REQUEST_FIELDS = ["WARC-Date", "WARC-Concurrent-To", "WARC-Type", "WARC-Record-ID",
                  "WARC-Target-URI", "WARC-Payload-Digest", "WARC-Block-Digest",
                  "Content-Type", "Content-Length"]
WARCINFO_FIELDS = ["WARC-Type", "WARC-Record-ID", "WARC-Filename", "WARC-Date",
                   "WARC-Block-Digest", "Content-Type", "Content-Length"]


def _b32(data: bytes) -> str:
    return "sha1:" + b32encode(hashlib.sha1(data).digest()).decode()


class Warc:
    """A WARC file being written in a local store, and what the test reads back."""

    def __init__(self, tmp_path: Path, *, gzip_level: int = 1, block_digest: bool = True,
                 rewritable: bool = True) -> None:
        self.store = LocalBlobStore(tmp_path / "store", fsync=False)
        self.spool = tmp_path / "spool"
        # a writer with running hashes cannot overwrite: the S3 store's case
        self.out: BlobWriter = self.store.open_write(KEY, hashes=() if rewritable else ("md5",))
        assert self.out.rewritable == rewritable
        self.writer = WarcWriter(self.out, gzip_level=gzip_level, block_digest=block_digest,
                                 spool_dir=self.spool)

    def spooled(self) -> list[Path]:
        return list(self.spool.iterdir()) if self.spool.exists() else []

    def data(self) -> bytes:
        self.out.commit()
        return self.store.get(KEY)


def _http(length: int | None, content_type: str = "application/pdf") -> StatusAndHeaders:
    headers = [("Content-Type", content_type)]
    if length is not None:
        headers.append(("Content-Length", str(length)))
    http = StatusAndHeaders("200 OK", headers, protocol="HTTP/1.1")
    http.compute_headers_buffer()
    return http


def _start(warc: Warc, body: bytes, *, content_type: str = "application/pdf",
           announced: int | None = -1, keep_body: bool = False) -> ResponseWriter:
    length = len(body) if announced == -1 else announced
    return warc.writer.streamed_response(URL, DATE, _http(length, content_type),
                                         content_type=content_type, length=length,
                                         keep_body=keep_body)


def _feed(record: ResponseWriter, body: bytes, chunk: int = 2**20) -> None:
    for start in range(0, len(body), chunk):
        record.write(body[start:start + chunk])
    record.end_body()


def _stream(warc: Warc, body: bytes, **kw: Any) -> Placed:
    record = _start(warc, body, **kw)
    _feed(record, body)
    record.sha1hex()
    record.finish()
    return record.write_response()


def _members(data: bytes) -> list[tuple[int, bytes, bytes]]:
    """Each gzip member: its offset, its bytes and what it decompresses to (zlib
    checks each member's CRC-32 and size)."""
    out = []
    pos = 0
    while pos < len(data):
        z = zlib.decompressobj(31)
        raw = z.decompress(data[pos:])
        assert z.eof, f"member at {pos} is cut short"
        end = len(data) - len(z.unused_data)
        out.append((pos, data[pos:end], raw))
        pos = end
    return out


def _records(raw: bytes) -> list[tuple[list[tuple[str, str]], bytes]]:
    """The records of plain WARC bytes, parsed by hand: header fields and block."""
    out = []
    while raw:
        head, sep, rest = raw.partition(b"\r\n\r\n")
        assert sep, "a header without its end"
        lines = head.decode().split("\r\n")
        assert lines[0] == "WARC/1.1"
        fields = [(name, value) for name, _, value in (line.partition(": ") for line in lines[1:])]
        length = int(dict(fields)["Content-Length"])
        block = rest[:length]
        assert len(block) == length
        assert rest[length:length + 4] == b"\r\n\r\n"
        out.append((fields, block))
        raw = rest[length + 4:]
    return out


def _record_at(data: bytes, placed: Placed) -> tuple[list[tuple[str, str]], bytes]:
    """The one record in the bytes ``placed`` says, gzip member or plain."""
    piece = data[placed.offset:placed.offset + placed.csize]
    if piece[:2] == b"\x1f\x8b":
        (_, member, raw), = _members(piece)
        assert gzip.decompress(member) == raw  # gzip's own CRC-32 and ISIZE check
        piece = raw
    (record,) = _records(piece)
    return record


def _warcio_records(data: bytes) -> list[tuple[int, str, Any, bytes]]:
    """Every record as warcio reads it, digests checked: offset, type, its digest
    checker and its payload."""
    out = []
    records = ArchiveIterator(io.BytesIO(data), check_digests="raise")
    for record in records:
        payload = record.content_stream().read()
        out.append((records.get_record_offset(), record.rec_type, record.digest_checker,
                    payload))
    return out


# -- framing: one record, one gzip member ----------------------------------------------------

#: (name, body, content type, announced, rewritable, keep_body): how it is framed, by route
CASES = [
    ("stored-direct", NOISE, "application/pdf", True, True, False),
    ("stored-spool-keep", NOISE, "application/pdf", True, True, True),
    ("stored-spool-no-length", NOISE, "application/pdf", False, True, False),
    ("stored-spool-not-rewritable", NOISE, "application/pdf", True, False, False),
    ("stored-one-block", os.urandom(STORED_MAX - 100), "application/zip", True, True, False),
    ("stored-block-edge", os.urandom(2 * STORED_MAX), "application/zip", True, True, False),
    ("deflated", TEXT, "text/csv", True, True, False),
    ("empty", b"", "application/pdf", True, True, False),
]


@pytest.mark.parametrize(("body", "content_type", "announced", "rewritable", "keep_body"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
@pytest.mark.parametrize("block_digest", [True, False])
def test_each_record_is_one_gzip_member(tmp_path: Path, body: bytes, content_type: str,
                                        announced: bool, rewritable: bool, keep_body: bool,
                                        block_digest: bool) -> None:
    warc = Warc(tmp_path, block_digest=block_digest, rewritable=rewritable)
    info = warc.writer.warcinfo("test.warc.gz", {"software": "test", "operator": ""})
    record = _start(warc, body, content_type=content_type,
                    announced=-1 if announced else None, keep_body=keep_body)
    _feed(record, body)
    direct = not warc.spooled()
    meta = record.finish()
    response = record.write_response()
    request = warc.writer.request(URL, DATE, StatusAndHeaders(
        "GET /paper.pdf HTTP/1.1", [("Host", "example.org")], is_http_request=True),
        record.record_id)
    assert (record.spool is not None) == keep_body
    if keep_body:
        assert record.spool is not None and record.spool.read_bytes() == body
    else:
        assert not warc.spooled()  # nothing left in the spool
    assert direct == (announced and rewritable and not keep_body and content_type != "text/csv"
                      and bool(body))
    data = warc.data()

    members = _members(data)
    assert [(m[0], len(m[1])) for m in members] == [
        (p.offset, p.csize) for p in (info, response, request)]
    assert sum(len(m[1]) for m in members) == len(data)
    _, member, raw = members[1]
    assert gzip.decompress(member) == raw
    # a body that does not shrink is stored (BTYPE 00 in the first block), not deflated
    stored = content_type != "text/csv" and len(body) >= 4096
    assert (member[10] & 0b110 == 0) == stored
    if stored:
        assert len(body) < response.csize < len(body) * 1.01 + 200
    _, block = _record_at(data, response)
    assert block.startswith(_http(None if not announced else len(body),
                                  content_type).headers_buff)
    assert block.endswith(body)
    assert (meta.size_bytes, meta.sha1hex, meta.sha256hex, meta.md5hex) == (
        len(body), hashlib.sha1(body).hexdigest(), hashlib.sha256(body).hexdigest(),
        hashlib.md5(body).hexdigest())

    read = _warcio_records(data)
    assert [(offset, kind) for offset, kind, _, _ in read] == [
        (info.offset, "warcinfo"), (response.offset, "response"), (request.offset, "request")]
    assert read[1][3] == body
    assert read[1][2].passed is not False
    # and from the response's own offset, alone
    with io.BytesIO(data[response.offset:response.offset + response.csize]) as f:
        out = io.BytesIO()
        copy_payload(f, out, where="test", length=response.csize)
    assert out.getvalue() == body


@pytest.mark.parametrize("block_digest", [True, False])
def test_plain_records_follow_one_another(tmp_path: Path, block_digest: bool) -> None:
    """gzip level 0: no member framing, records back to back at their offsets."""
    warc = Warc(tmp_path, gzip_level=0, block_digest=block_digest)
    info = warc.writer.warcinfo("test.warc", {"software": "test"})
    big = _stream(warc, NOISE)
    text = _stream(warc, TEXT, content_type="text/csv")
    data = warc.data()
    assert data[:9] == b"WARC/1.1\r"
    assert [p.offset for p in (info, big, text)] == [0, info.csize, info.csize + big.csize]
    assert big.offset + big.csize == text.offset and text.offset + text.csize == len(data)
    assert [r[3] for r in _warcio_records(data)][1:] == [NOISE, TEXT]


@pytest.mark.parametrize("length", [0, 1, 4, 65535, 65536, 2**20 + 3, 10**7])
def test_crc32_combine_at_every_length(length: int) -> None:
    a = os.urandom(333)
    b = os.urandom(length)
    assert crc32_combine(zlib.crc32(a), zlib.crc32(b), length) == zlib.crc32(a + b)
    assert crc32_combine(zlib.crc32(b""), zlib.crc32(b), length) == zlib.crc32(b)


# -- digests and header fields ----------------------------------------------------------------


@pytest.mark.parametrize("block_digest", [True, False])
@pytest.mark.parametrize("route", ["direct", "spool", "memory"])
def test_digests_match_a_recomputation_and_fields_are_in_order(
        tmp_path: Path, block_digest: bool, route: str) -> None:
    warc = Warc(tmp_path, block_digest=block_digest)
    http = _http(len(NOISE))
    if route == "memory":
        record_id = new_record_id()
        placed = warc.writer.response(URL, DATE, http, NOISE, record_id=record_id,
                                      payload_sha1=hashlib.sha1(NOISE).hexdigest())
    else:
        record = _start(warc, NOISE, keep_body=route == "spool")
        _feed(record, NOISE)
        record.finish()
        placed = record.write_response()
        record_id = record.record_id
    fields, block = _record_at(warc.data(), placed)
    want = [f for f in RESPONSE_FIELDS if block_digest or f != "WARC-Block-Digest"]
    assert [name for name, _ in fields] == want
    got = dict(fields)
    assert block == http.headers_buff + NOISE
    assert got["WARC-Payload-Digest"] == _b32(NOISE)
    assert got.get("WARC-Block-Digest") == (_b32(block) if block_digest else None)
    assert (got["WARC-Record-ID"], got["WARC-Date"], got["WARC-Type"], got["WARC-Target-URI"],
            got["Content-Type"], got["Content-Length"]) == (
        record_id, DATE, "response", URL, "application/http; msgtype=response",
        str(len(block)))


@pytest.mark.parametrize("block_digest", [True, False])
def test_warcinfo_and_request_fields(tmp_path: Path, block_digest: bool) -> None:
    warc = Warc(tmp_path, block_digest=block_digest)
    info = warc.writer.warcinfo("x.warc.gz", {"software": "sandcrawler/1", "operator": "",
                                              "robots": "obey"})
    http = StatusAndHeaders("GET /paper.pdf?a=1 HTTP/1.1",
                            [("Host", "example.org"), ("User-Agent", "test")],
                            is_http_request=True)
    request = warc.writer.request(URL, DATE, http, "<urn:uuid:1>")
    data = warc.data()
    for placed, names in ((info, WARCINFO_FIELDS), (request, REQUEST_FIELDS)):
        fields, block = _record_at(data, placed)
        assert [n for n, _ in fields] == [n for n in names
                                         if block_digest or n != "WARC-Block-Digest"]
        got = dict(fields)
        assert got.get("WARC-Block-Digest") == (_b32(block) if block_digest else None)
    info_fields, info_block = _record_at(data, info)
    assert info_block == b"software: sandcrawler/1\r\nrobots: obey\r\n"  # empty values left out
    assert dict(info_fields)["WARC-Filename"] == "x.warc.gz"
    request_fields, request_block = _record_at(data, request)
    assert request_block == (b"GET /paper.pdf?a=1 HTTP/1.1\r\nHost: example.org\r\n"
                             b"User-Agent: test\r\n\r\n")
    got = dict(request_fields)
    assert (got["WARC-Concurrent-To"], got["WARC-Payload-Digest"], got["Content-Type"]) == (
        "<urn:uuid:1>", _b32(b""), "application/http; msgtype=request")
    assert [kind for _, kind, _, _ in _warcio_records(data)] == ["warcinfo", "request"]


# -- revisits -------------------------------------------------------------------------------


@pytest.mark.parametrize("block_digest", [True, False])
@pytest.mark.parametrize("keep_body", [False, True])
def test_a_revisit_replaces_the_record_streamed(tmp_path: Path, keep_body: bool,
                                                block_digest: bool) -> None:
    warc = Warc(tmp_path, block_digest=block_digest)
    warc.writer.warcinfo("test.warc.gz", {"software": "test"})
    before = warc.out.size
    record = _start(warc, NOISE, keep_body=keep_body)
    _feed(record, NOISE)
    assert record.sha1hex() == hashlib.sha1(NOISE).hexdigest()
    record.finish()
    placed = record.write_revisit("https://example.org/first.pdf", "2020-01-02T03:04:05Z")
    assert placed.offset == before  # the streamed record was cut off first
    assert warc.out.size == placed.offset + placed.csize
    data = warc.data()
    fields, block = _record_at(data, placed)
    assert [n for n, _ in fields] == [n for n in REVISIT_FIELDS
                                     if block_digest or n != "WARC-Block-Digest"]
    got = dict(fields)
    http = _http(len(NOISE)).headers_buff
    assert block == http  # the headers only
    assert (got["WARC-Type"], got["WARC-Profile"], got["WARC-Refers-To-Target-URI"],
            got["WARC-Refers-To-Date"], got["WARC-Payload-Digest"], got["Content-Length"]) == (
        "revisit", REVISIT_PROFILE, "https://example.org/first.pdf", "2020-01-02T03:04:05Z",
        _b32(NOISE), str(len(http)))
    assert got.get("WARC-Block-Digest") == (_b32(http) if block_digest else None)
    assert [kind for _, kind, _, _ in _warcio_records(data)] == ["warcinfo", "revisit"]
    assert (record.spool is not None) == keep_body


# -- nothing half-written -------------------------------------------------------------------


STAGES = ["new", "streaming", "ended", "finished", "written", "revisit"]


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("route", ["direct", "spool", "deflate"])
def test_an_aborted_record_leaves_nothing(tmp_path: Path, stage: str, route: str) -> None:
    warc = Warc(tmp_path)
    warc.writer.warcinfo("test.warc.gz", {"software": "test"})
    first = _stream(warc, NOISE[:100_000])
    before = warc.out.size
    body = TEXT if route == "deflate" else NOISE
    record = _start(warc, body, content_type="text/csv" if route == "deflate" else "image/png",
                    keep_body=route == "spool")
    steps = STAGES.index(stage)
    if steps >= 1:
        record.write(body[:2**20])
        assert (warc.out.size > before) == (route == "direct")  # straight into the file
    if steps >= 2:
        _feed(record, body[2**20:])
    if steps >= 3:
        record.finish()
    if stage == "written":
        record.write_response()
    if stage == "revisit":
        record.write_revisit("https://example.org/first.pdf", DATE)
    assert record.abort() is True
    assert warc.out.size == before
    assert not warc.spooled() and record.spool is None
    assert not warc.writer.damaged
    # the file goes on: the next record follows the last whole one
    after = _stream(warc, TEXT, content_type="text/csv")
    assert after.offset == before
    data = warc.data()
    read = _warcio_records(data)
    assert [offset for offset, _, _, _ in read] == [0, first.offset, after.offset]
    assert read[-1][3] == TEXT


def test_a_body_shorter_than_announced_is_refused(tmp_path: Path) -> None:
    warc = Warc(tmp_path)
    before = warc.out.size
    record = _start(warc, NOISE, announced=len(NOISE) + 1)
    _feed(record, NOISE)
    with pytest.raises(RecordError, match="not the 3,145,736 announced") as e:
        record.finish()
    assert e.value.status == FetchStatus.FETCH_ERROR
    record.abort()
    assert warc.out.size == before


def test_steps_out_of_turn_are_refused(tmp_path: Path) -> None:
    warc = Warc(tmp_path)
    record = _start(warc, NOISE)
    with pytest.raises(RuntimeError, match="new, not ended"):
        record.sha1hex()
    _feed(record, NOISE)
    with pytest.raises(RuntimeError, match="ended, not new"):
        record.write(b"more")
    with pytest.raises(RuntimeError, match="ended, not finished"):
        record.write_response()
    record.finish()
    record.write_response()
    with pytest.raises(RuntimeError, match="written, not finished"):
        record.write_revisit(URL, DATE)


def test_a_record_the_store_cannot_cut_off_damages_the_file(tmp_path: Path) -> None:
    warc = Warc(tmp_path, rewritable=False)
    before = warc.out.size
    record = _start(warc, NOISE)
    _feed(record, NOISE)
    assert warc.spooled()  # a writer that cannot overwrite: the spool route
    record.finish()
    record.write_response()  # then, say, its request record fails
    assert record.abort() is False
    assert warc.writer.damaged
    assert warc.out.size > before


# -- the session and the setting --------------------------------------------------------------


def _archive(tmp_path: Path, server: FileServer, *, block_digest: bool) -> WebArchive:
    engine = migrated_sqlite(tmp_path / "db.sqlite3")
    fetcher = HttpFetcher(routes={"https://example.org": server.url}, retries=0)
    return WebArchive(LocalBlobStore(tmp_path / "store"), engine, fetcher,
                      block_digest=block_digest, spool_dir=tmp_path / "spool")


@pytest.mark.parametrize("block_digest", [True, False])
def test_the_block_digest_setting_in_a_whole_session(tmp_path: Path,
                                                     block_digest: bool) -> None:
    """Every record of the file has WARC-Block-Digest or none has; warcio reads and
    checks both (the payload digest always there)."""
    www = tmp_path / "www"
    www.mkdir()
    files = {"a.pdf": b"%PDF-1.5\n" + NOISE, "t.csv": TEXT, "b.pdf": b"%PDF-1.5\n" + NOISE}
    for name, data in files.items():
        (www / name).write_bytes(data)
    with FileServer(www) as server:
        server.redirects["/moved"] = "/t.csv"
        archive = _archive(tmp_path, server, block_digest=block_digest)
        with archive.session() as session:
            for name in ("a.pdf", "moved", "b.pdf"):
                session.capture(f"https://example.org/{name}", max_bytes=10**8,
                                keep_body=False).close()
            rows = session.commit()
    assert [r.is_revisit for r in rows] == [False, False, False, True]
    data = archive.store.get(session.key)
    kinds = []
    for _, member, raw in _members(data):
        assert gzip.decompress(member) == raw
        ((fields, block),) = _records(raw)
        got = dict(fields)
        kinds.append(got["WARC-Type"])
        assert ("WARC-Block-Digest" in got) == block_digest
        if block_digest:
            assert got["WARC-Block-Digest"] == _b32(block)
        if got["WARC-Type"] == "response" and block.split(b" ", 2)[1] == b"200":
            assert got["WARC-Payload-Digest"] == _b32(block.partition(b"\r\n\r\n")[2])
    assert kinds == ["warcinfo"] + ["response", "request"] * 3 + ["revisit", "request"]
    read = _warcio_records(data)
    responses = [(checker, payload) for _, kind, checker, payload in read if kind == "response"]
    a_pdf, _redirect, t_csv = responses
    assert (a_pdf[1], t_csv[1]) == (files["a.pdf"], files["t.csv"])
    assert a_pdf[0].passed is True and t_csv[0].passed is True  # checked either way


@pytest.mark.parametrize(("given", "want"), [({}, True), ({"warc.block_digest": False}, False)])
def test_the_setting_reaches_the_archive(given: dict[str, Any], want: bool) -> None:
    services = Services(load_settings(given))
    try:
        assert services.web_archive.block_digest is want
    finally:
        services.close()


def test_a_damaged_session_does_not_commit(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A record written to a store that cannot cut it off (S3), whose request record
    then fails: the session refuses to commit a file with half a capture."""
    www = tmp_path / "www"
    www.mkdir()
    (www / "a.pdf").write_bytes(NOISE)
    with FileServer(www) as server:
        archive = _archive(tmp_path, server, block_digest=True)
        key = "warcs/2024/01/01/SANDCRAWLER-20240101000000-000000000000.warc.gz"
        session = WarcSession(archive, key, archive.store.open_write(key, hashes=("md5",)))

        def store_fails(*args: Any, **kw: Any) -> Placed:
            raise OSError("the store went away")

        monkeypatch.setattr(session._warc, "request", store_fails)
        with pytest.raises(OSError, match="went away"):
            session.capture("https://example.org/a.pdf", max_bytes=10**8, keep_body=False)
        with pytest.raises(ValueError, match="a record failed midway"):
            session.commit()
    assert not archive.store.exists(key)
    assert archive.lookup("https://example.org/a.pdf") is None


@pytest.mark.parametrize("block_digest", [True, False])
def test_a_body_the_caller_read_is_recorded(tmp_path: Path, block_digest: bool) -> None:
    """``record_read`` (robots.txt): the body in memory, ``WARC-Truncated`` when the
    caller read only part of it, a revisit for bytes already held (never when cut)."""
    www = tmp_path / "www"
    www.mkdir()
    robots = b"User-agent: *\nDisallow: /private\n"
    (www / "robots.txt").write_bytes(robots)
    with FileServer(www) as server:
        server.redirects["/old-robots.txt"] = "/robots.txt"
        archive = _archive(tmp_path, server, block_digest=block_digest)
        with archive.session() as session:
            rows = []
            for url, body, cut in (("https://example.org/old-robots.txt", robots, None),
                                   ("https://example.org/robots.txt", robots, None),
                                   ("https://example.org/robots.txt", robots[:10], "length")):
                opened = archive.fetcher.open(url)
                try:
                    rows += session.record_read(opened, body, truncated=cut)
                finally:
                    opened.close()
            session.commit()
    assert [(r.status_code, r.is_revisit, r.size) for r in rows] == [
        (302, False, 0), (200, False, len(robots)), (200, True, len(robots)), (200, False, 10)]
    data = archive.store.get(session.key)
    records = {}
    for row in rows:
        fields, block = _record_at(data, Placed(row.warc_offset, row.warc_csize))
        got = dict(fields)
        assert ("WARC-Block-Digest" in got) == block_digest
        if block_digest:
            assert got["WARC-Block-Digest"] == _b32(block)
        records[(row.url, row.size, row.is_revisit)] = (got, block)
    full, full_block = records[("https://example.org/robots.txt", len(robots), False)]
    assert full_block.endswith(b"\r\n\r\n" + robots) and "WARC-Truncated" not in full
    assert full["WARC-Payload-Digest"] == _b32(robots)
    revisit, _ = records[("https://example.org/robots.txt", len(robots), True)]
    assert revisit["WARC-Type"] == "revisit"
    assert revisit["WARC-Refers-To-Target-URI"] == "https://example.org/robots.txt"
    cut, cut_block = records[("https://example.org/robots.txt", 10, False)]
    assert cut["WARC-Truncated"] == "length" and cut_block.endswith(b"\r\n\r\n" + robots[:10])
    assert cut["WARC-Payload-Digest"] == _b32(robots[:10])
    assert [kind for _, kind, _, _ in _warcio_records(data)] == [
        "warcinfo", "response", "request", "response", "request", "revisit", "request",
        "response", "request"]
