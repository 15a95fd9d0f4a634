"""Where `process` finds a file's bytes: CDX lines over WARCs (a directory or an
HTTP server answering Range requests), files named by sha1, URLs, and the store."""

from __future__ import annotations

import hashlib
import socket
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.core.errors import ConfigError
from sandcrawler.pipeline.sources import JsonLinesSource
from sandcrawler_testkit.http_files import FileServer
from sandcrawler_testkit.pdfs import make_pdf
from sandcrawler_testkit.warcs import Capture, write_warc
from tests.helpers.cli import invoke, run_cli
from tests.pdf.test_process import assert_result_lines

ONE = make_pdf(["The first captured paper"], title="First")
TWO = make_pdf(["The second captured paper, sent in chunks"])
THREE = make_pdf(["The third captured paper, gzip content encoding"])
HTML = b"<!DOCTYPE html><html><body>landing page</body></html>"


def sha1(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def lines_of(stdout: str) -> list[dict]:
    return [orjson.loads(line) for line in stdout.splitlines()]


@pytest.fixture
def crawl(tmp_path: Path) -> tuple[Path, list[str]]:
    """A directory with one gzipped WARC of varied captures, and its CDX lines."""
    root = tmp_path / "warcs"
    (root / "crawl-1").mkdir(parents=True)
    cdx = write_warc(root / "crawl-1" / "A.warc.gz", [
        Capture("http://example.org/one.pdf", ONE),
        Capture("http://example.org/two.pdf", TWO, chunked=True),
        Capture("http://example.org/three.pdf", THREE, gzip_encoded=True),
        Capture("http://example.org/landing", HTML, content_type="text/html"),
        Capture("http://example.org/one-again.pdf", ONE, revisit=True),
        Capture("http://example.org/gone.pdf", b"not here", status=404,
                content_type="text/html"),
        Capture("http://example.org/liar.pdf", ONE + b"tampered", digest=None),
    ], warc_name="crawl-1/A.warc.gz")
    # the last capture's CDX line claims another file's digest
    fields = cdx[-1].split(" ")
    fields[5] = _b32(sha1(b"something else"))
    cdx[-1] = " ".join(fields)
    return root, cdx


def _b32(hexdigest: str) -> str:
    from sandcrawler.core.identifiers import sha1_base32

    return sha1_base32(hexdigest)


def _edit(line: str, **fields: str) -> str:
    names = ["surt", "dt", "url", "mime", "status", "digest", "redirect", "meta", "c_size",
             "offset", "warc"]
    parts = line.split(" ")
    for name, value in fields.items():
        parts[names.index(name)] = value
    return " ".join(parts)


def _cdx_file(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "captures.cdx"
    path.write_text(" CDX N b a m s k r M S V g\n" + "\n".join(lines) + "\n")
    return path


def _check_captures(result, cdx: list[str]) -> None:  # type: ignore[no-untyped-def]
    assert result.exit_code == 0, result.stderr
    assert_result_lines(result.stdout)
    got = {r["path"]: r for r in lines_of(result.stdout)}
    assert {u: r["status"] for u, r in got.items()} == {
        "http://example.org/one.pdf": "success",
        "http://example.org/two.pdf": "success",
        "http://example.org/three.pdf": "success",
        "http://example.org/landing": "not-pdf",
        "http://example.org/one-again.pdf": "skip-revisit",
        "http://example.org/gone.pdf": "skip-status",
        # the bytes are not the ones the CDX line names: a line, keyed by the digest
        # the line names (the file asked for), nothing stored
        "http://example.org/liar.pdf": "sha1-mismatch",
    }
    liar = got["http://example.org/liar.pdf"]
    assert liar["sha1hex"] != sha1(ONE + b"tampered") and "uuid" not in liar
    assert "sha1-mismatch" in result.stderr and "liar.pdf" in result.stderr
    settings = load_settings()
    table, cat = Services(settings).pdftable, Services(settings).catalogue
    for data, line in ((ONE, cdx[0]), (TWO, cdx[1]), (THREE, cdx[2])):
        r = got[line.split(" ")[2]]
        assert r["sha1hex"] == sha1(data) and r["dt"] == "20200102030405"
        assert cat.resources.get(r["uuid"], "pdf") == data  # the payload, decoded
        row = table.get(sha1(data))
        assert row is not None
        fields = line.split(" ")
        assert row.cells["file"]["cdx"] == {
            "surt": fields[0], "url": fields[2], "dt": fields[1], "warc": "crawl-1/A.warc.gz",
            "offset": fields[9], "c_size": fields[8]}
    # nothing was written for the tampered capture, under either digest
    assert table.get(sha1(ONE + b"tampered")) is None
    assert table.get(sha1(b"something else")) is None
    assert table.count_rows() == 4  # three PDFs and the landing page


def test_cdx_from_a_warc_directory(engine, tmp_path: Path, crawl) -> None:  # type: ignore[no-untyped-def]
    root, cdx = crawl
    result = invoke(["process", "--cdx", str(_cdx_file(tmp_path, cdx)), "--source", str(root)])
    _check_captures(result, cdx)
    assert "process: 8 records" in result.stderr  # the header line is counted as a skip

    # again: every capture with a known digest is recognised before it is read
    (root / "crawl-1" / "A.warc.gz").unlink()
    again = invoke(["process", "--cdx", str(_cdx_file(tmp_path, cdx[:3])), "--source",
                    str(root)])
    assert [r["status"] for r in lines_of(again.stdout)] == ["exists"] * 3


def test_cdx_from_an_http_warc_source(engine, tmp_path: Path, crawl) -> None:  # type: ignore[no-untyped-def]
    root, cdx = crawl
    with FileServer(root) as server:
        server.busy["/crawl-1/A.warc.gz"] = 1  # one 503, then answers: retried
        result = invoke(["process", "--cdx", str(_cdx_file(tmp_path, cdx)), "--source",
                         server.url + "/"])
        _check_captures(result, cdx)
        # one request per capture read (revisit and 404 lines are never fetched), + the 503
        assert server.requests.count("/crawl-1/A.warc.gz") == 6


@pytest.mark.slow  # waits out timeouts, retries or stalls
def test_warc_source_down_stops_the_run(engine, tmp_path: Path, crawl) -> None:  # type: ignore[no-untyped-def]
    _, cdx = crawl
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once closed
    result = invoke(["process", "--cdx", str(_cdx_file(tmp_path, cdx[:1])), "--source",
                     f"http://127.0.0.1:{port}"])
    assert result.exit_code == 3, result.stderr
    assert "WARC source not reachable" in result.stderr
    assert Services(load_settings()).pdftable.count_rows() == 0  # nothing marked done


def test_bad_cdx_lines_and_warc_records(engine, tmp_path: Path, crawl) -> None:  # type: ignore[no-untyped-def]
    root, cdx = crawl
    first = cdx[0].split(" ")
    bad = [
        "not a cdx line",
        _edit(cdx[0], offset=str(int(first[9]) + 7)),  # into the middle of the record
        _edit(cdx[0], warc="crawl-1/missing.warc.gz"),
        _edit(cdx[0], warc="../outside.warc.gz"),
        _edit(cdx[0], c_size="40"),  # record cut short
        cdx[1],
    ]
    result = invoke(["process", "--cdx", str(_cdx_file(tmp_path, bad)), "--source", str(root)])
    assert result.exit_code == 0, result.stderr
    # a capture that cannot be read has a result line (a line that is not CDX has
    # nothing to name, and only stderr says so), keyed by the digest the CDX names
    assert_result_lines(result.stdout)
    lines = lines_of(result.stdout)
    assert [r["status"] for r in lines] == ["bad-warc", "not-found", "bad-name", "bad-warc",
                                            "success"]
    assert all(r["sha1hex"] == sha1(ONE) and r["error"] for r in lines[:4])
    err = result.stderr
    for status in ("bad-cdx", "bad-warc", "not-found", "bad-name"):
        assert status in err, status
    assert err.count("bad-warc") >= 2
    assert Services(load_settings()).pdftable.count_rows() == 1


def test_directory_of_files_named_by_sha1(engine, tmp_path: Path, crawl) -> None:  # type: ignore[no-untyped-def]
    _, cdx = crawl
    dump = tmp_path / "dump"
    dump.mkdir()
    (dump / sha1(ONE)).write_bytes(ONE)
    (dump / f"{sha1(TWO)}.pdf").write_bytes(TWO)
    result = invoke(["process", "--cdx", str(_cdx_file(tmp_path, cdx[:3])), "--source",
                     str(dump)])
    assert result.exit_code == 0, result.stderr
    assert [r["status"] for r in lines_of(result.stdout)] == ["success", "success",
                                                              "not-found"]
    assert "not-found" in result.stderr and "three.pdf" in result.stderr


def test_cdx_usage_errors(engine, tmp_path: Path, crawl) -> None:  # type: ignore[no-untyped-def]
    _, cdx = crawl
    cdx_path = str(_cdx_file(tmp_path, cdx))
    no_source = invoke(["process", "--cdx", cdx_path])
    assert no_source.exit_code == 2 and "--source" in no_source.stderr
    nowhere = invoke(["process", "--cdx", cdx_path, "--source", str(tmp_path / "nope")])
    assert nowhere.exit_code == 1 and "neither a directory nor" in nowhere.stderr
    both = invoke(["process", "--cdx", cdx_path, "--source", str(tmp_path), "x.pdf"])
    assert both.exit_code == 2


@pytest.fixture
def web(tmp_path: Path) -> Iterator[FileServer]:
    root = tmp_path / "web"
    root.mkdir()
    (root / "one.pdf").write_bytes(ONE)
    (root / "big.bin").write_bytes(b"\0" * (2 * 2**20 + 1))
    with FileServer(root) as server:
        yield server


@pytest.mark.slow  # waits out timeouts, retries or stalls
def test_file_records_by_url(engine, web: FileServer, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("SANDCRAWLER_FETCH_MAX_MB", "2")
    monkeypatch.setenv("SANDCRAWLER_FETCH_TIMEOUT", "5")
    # the loopback server stands for an intranet the operator allows
    monkeypatch.setenv("SANDCRAWLER_HTTP_ALLOW_NETWORKS", '["127.0.0.0/8"]')
    web.redirects["/moved.pdf"] = "/one.pdf"
    web.busy["/one.pdf"] = 2
    web.lie_length["/short.pdf"] = 10_000
    (web.root / "short.pdf").write_bytes(TWO)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/x.pdf"
    records = [
        {"url": f"{web.url}/one.pdf"},
        {"url": f"{web.url}/moved.pdf", "name": "moved"},
        {"url": f"{web.url}/missing.pdf"},
        {"url": f"{web.url}/big.bin"},
        {"url": f"{web.url}/short.pdf"},
        {"url": dead},
        {"url": "ftp://example.org/x.pdf"},
        {"url": f"{web.url}/one.pdf", "sha1": sha1(TWO), "name": "wrong digest"},
    ]
    stdin = "\n".join(orjson.dumps(r).decode() for r in records) + "\n"
    result = invoke(["process", "--force", "-"], input=stdin)
    assert result.exit_code == 0, result.stderr
    assert_result_lines(result.stdout)
    got = {r["path"]: r for r in lines_of(result.stdout)}
    assert got[f"{web.url}/one.pdf"]["status"] == "success"
    assert got[f"{web.url}/one.pdf"]["url"] == f"{web.url}/one.pdf"
    assert got["moved"]["sha1hex"] == sha1(ONE)
    assert len(got) == len(records)
    err = result.stderr
    for status, where, name in (
            ("http-error", "missing.pdf", f"{web.url}/missing.pdf"),
            ("too-large", "big.bin", f"{web.url}/big.bin"),
            ("fetch-error", "short.pdf", f"{web.url}/short.pdf"),
            ("fetch-error", dead, dead), ("bad-url", "ftp://", "ftp://example.org/x.pdf"),
            ("sha1-mismatch", "wrong digest", "wrong digest")):
        assert any(status in line and where in line for line in err.splitlines()), (status, err)
        # every failed record has its result line: status, the URL it was, why
        assert (got[name]["status"], got[name]["url"]) == (status, records[
            [r.get("name", r["url"]) for r in records].index(name)]["url"])
        assert got[name]["error"]
    # a digest that does not match: the line is keyed by the one asked for, and
    # says what the bytes were
    assert got["wrong digest"]["sha1hex"] == sha1(TWO)
    assert sha1(ONE) in got["wrong digest"]["error"]
    assert Services(load_settings()).pdftable.count_rows() == 1


def test_file_records_by_sha1_from_the_store(engine, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pdf = tmp_path / "one.pdf"
    pdf.write_bytes(ONE)
    assert invoke(["process", str(pdf)]).exit_code == 0
    pdf.unlink()  # from now on only the store has it
    stdin = (f'{{"sha1": "{sha1(ONE)}"}}\n{{"sha1": "{_b32(sha1(ONE))}"}}\n'
             f'{{"sha1": "{sha1(b"unknown")}"}}\n{{"sha1": "xyz"}}\n')
    result = invoke(["process", "--force", "-"], input=stdin)
    assert result.exit_code == 0, result.stderr
    assert [(r["path"], r["status"]) for r in lines_of(result.stdout)] == [
        (sha1(ONE), "success"), (sha1(ONE), "success"),  # named by the normalised sha1
        (sha1(b"unknown"), "not-found"), ("line 4", "bad-sha1")]
    # a sha1 not in the store: its line carries the sha1 (the results topic's key)
    assert lines_of(result.stdout)[2]["sha1hex"] == sha1(b"unknown")
    assert "not-found" in result.stderr and sha1(b"unknown") in result.stderr
    assert "bad-sha1" in result.stderr
    assert Services(load_settings()).catalogue.count() == 1


@pytest.mark.parametrize("record,status", [
    ('{"warc_path": "a.warc.gz", "warc_offset": "12", "warc_csize": 5}', "bad-record"),
    ('{"warc_path": "a.warc.gz", "warc_offset": 0, "warc_csize": 5}', "no-warc-source"),
    ('{"path": 5}', "bad-record"),
    ('{"sha1": 5}', "bad-sha1"),
    ('{"url": ["http://example.org/"]}', "bad-record"),
    ("{}", "missing-path"),
    ('{"name": "only a name"}', "missing-path"),
    ("{not json", "bad-json"),
])
def test_bad_file_records(engine, record: str, status: str) -> None:  # type: ignore[no-untyped-def]
    result = invoke(["process", "-"], input=record + "\n")
    assert result.exit_code == 0, result.stderr
    assert status in result.stderr
    # its result line says the same; a record that cannot name itself is its line
    assert_result_lines(result.stdout)
    [line] = lines_of(result.stdout)
    assert line["status"] == status and line["error"]
    assert line["path"] == ("a.warc.gz" if status == "no-warc-source" else "line 1")
    assert Services(load_settings()).pdftable.count_rows() == 0


def test_backfilled_captures_are_still_processed(engine, tmp_path: Path, crawl) -> None:  # type: ignore[no-untyped-def]
    """A row that backfill-cdx wrote (file:cdx only) is not 'done': process --cdx
    fetches and processes it, and keeps the cdx cell."""
    root, cdx = crawl
    cdx_path = str(_cdx_file(tmp_path, cdx[:1]))
    assert invoke(["pdftable", "backfill-cdx", cdx_path]).exit_code == 0
    result = invoke(["process", "--cdx", cdx_path, "--source", str(root)])
    assert [r["status"] for r in lines_of(result.stdout)] == ["success"]
    row = Services(load_settings()).pdftable.get(sha1(ONE))
    assert row is not None and row.cells["pdf0"]["pdf_status"] == "success"
    assert row.cells["file"]["cdx"]["url"] == "http://example.org/one.pdf"


@pytest.mark.parametrize("where", ["missing.cdx", "."])
def test_cdx_file_that_cannot_be_read_is_a_usage_error(where: str) -> None:
    """Issue 14 C2: a missing CDX file or a directory printed a traceback."""
    result = run_cli(["process", "--cdx", where, "--source", "."])
    err = result.stderr.decode()
    assert result.returncode == 2
    assert "Invalid value for '--cdx'" in err and "Traceback" not in err


def test_json_lines_source_names_an_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read input"):
        JsonLinesSource(tmp_path)
