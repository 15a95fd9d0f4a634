"""The crawler on the open web: it fetches no internal address, however spelt
or reached; no server holds a request or a record past its deadline; hostile
answers get a status; what is recorded is safe to record.

The servers are real loopback servers: ``HostileServer`` answers with whatever
bytes a test scripts, as slowly as it likes; public host names reach it
through ``http.routes`` (the operator's choice, never checked), while a URL that
names the loopback address itself is what an outsider would send."""

from __future__ import annotations

import gzip
import io
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from sqlalchemy import select
from urllib3.exceptions import MaxRetryError, NameResolutionError
from warcio.archiveiterator import ArchiveIterator

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.core.errors import RecordError
from sandcrawler.db.engine import begin
from sandcrawler.db.schema import web_cdx
from sandcrawler.ingest.file_ingest import FileIngester
from sandcrawler.records.fileset import IngestRequest as DatasetRequest
from sandcrawler.records.ingest import IngestRequest
from sandcrawler.web.http.addresses import AddressPolicy
from sandcrawler.web.http.connections import ConnectRetry
from sandcrawler.web.http.fetch import HttpFetcher
from sandcrawler_testkit.hostile import HostileServer, Reply, raw_reply
from sandcrawler_testkit.platforms import PlatformServer
from tests.helpers.cli import run_cli
from tests.helpers.fileset import open_ingester

PDF = b"%PDF-1.4\n" + b"0123456789" * 200 + b"\n%%EOF\n"
HOST = "https://h.example"


def pdf_reply(body: bytes = PDF, **kw: Any) -> Reply:
    return Reply(raw_reply("200 OK", [("Content-Type", "application/pdf")], body), **kw)


def redirect(location: bytes | str) -> Reply:
    return Reply(raw_reply("302 Found", [("Location", location)]))


def page(html: str) -> Reply:
    return Reply(raw_reply("200 OK", [("Content-Type", "text/html; charset=utf-8")],
                           html.encode()))


@pytest.fixture
def server() -> Iterator[HostileServer]:
    with HostileServer() as srv:
        srv.script("/robots.txt", Reply(raw_reply("404 Not Found")))
        yield srv


class Crawl:
    """A file ingester whose public host ``h.example`` is routed to ``server``."""

    def __init__(self, server: HostileServer, **overrides: Any) -> None:
        settings = load_settings(**{"http_routes": {HOST: server.url}, "http_timeout": 5,
                                    "crawl_host_delay": 0, **overrides})
        self.services = Services(settings)
        self.ingester: FileIngester = self.services.file_ingester()

    def __call__(self, url: str, ingest_type: str = "pdf") -> dict[str, Any]:
        return self.ingester.ingest(IngestRequest(ingest_type=ingest_type,
                                                  base_url=url)).to_json()

    def cdx(self) -> list[Any]:
        with begin(self.services.engine) as conn:
            return list(conn.execute(select(web_cdx)))

    def warc_records(self) -> list[Any]:
        """(WARC-Target-URI, type, http status line, http headers) of every record."""
        out = []
        for blob in self.services.blobs.list("warcs/"):
            data = self.services.blobs.get(blob.key)
            for record in ArchiveIterator(io.BytesIO(data)):
                http = record.http_headers
                out.append((record.rec_headers.get_header("WARC-Target-URI") or "", record.rec_type,
                            http.statusline if http else None, http.headers if http else []))
        return out

    def close(self) -> None:
        self.ingester.close()
        self.services.close()


def crawl_once(server: HostileServer, url: str, **overrides: Any) -> dict[str, Any]:
    """One request on a file ingester of its own settings."""
    crawl = Crawl(server, **overrides)
    try:
        return crawl(url)
    finally:
        crawl.close()


@pytest.fixture
def crawl(server: HostileServer) -> Iterator[Crawl]:
    c = Crawl(server)
    yield c
    c.close()


# --- 1. no internal addresses ---------------------------------------------------------------

#: the loopback server's address, spelt every way an outsider could
SPELLINGS = ["127.0.0.1", "0x7f000001", "2130706433", "127.1", "0177.0.0.1", "localhost",
             "LOCALHOST", "[::1]", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "0.0.0.0"]
#: other networks that are not the public internet
ELSEWHERE = ["10.0.0.1", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1",
             "[fc00::1]", "[fe80::1]", "[64:ff9b::a00:1]", "[2002:a00:1::]", "224.0.0.1",
             "240.0.0.1", "255.255.255.255"]


@pytest.mark.parametrize("host", SPELLINGS)
def test_every_spelling_of_loopback_is_refused_before_anything_is_sent(
        server: HostileServer, host: str) -> None:
    server.script("/secret", Reply(raw_reply("200 OK", body=b"internal")))
    fetcher = HttpFetcher(timeout=2, retries=0)
    with pytest.raises(RecordError) as caught:
        fetcher.open(f"http://{host}:{server.port}/secret").close()
    assert caught.value.status == "blocked-address"
    assert "http.allow_networks" in str(caught.value)
    if host.startswith("[::ffff:"):  # said as one sentence, naming what it carries
        assert "::ffff:7f00:1 is an IPv6 address that carries 127.0.0.1, a loopback " \
            "address" in str(caught.value)
    assert server.connections == 0  # refused before connecting, not after


@pytest.mark.parametrize("host", ELSEWHERE)
def test_private_link_local_and_other_networks_are_refused(host: str) -> None:
    fetcher = HttpFetcher(timeout=1, retries=0)
    with pytest.raises(RecordError) as caught:
        fetcher.open(f"http://{host}/latest/meta-data/").close()
    assert caught.value.status == "blocked-address"


def test_an_allowed_network_is_fetched(server: HostileServer) -> None:
    server.script("/intranet.pdf", pdf_reply())
    fetcher = HttpFetcher(timeout=2, retries=0, addresses=AddressPolicy(["127.0.0.0/8"]))
    opened = fetcher.open(f"http://127.1:{server.port}/intranet.pdf")
    try:
        assert opened.status == 200 and opened.response.read() == PDF
    finally:
        opened.close()
    assert server.seen("/intranet.pdf") == 1


def test_a_routed_origin_is_the_operators_choice(server: HostileServer) -> None:
    server.script("/routed.pdf", pdf_reply())
    fetcher = HttpFetcher(timeout=2, retries=0, routes={HOST: server.url})
    opened = fetcher.open(f"{HOST}/routed.pdf")
    opened.close()
    assert opened.status == 200


def test_a_bad_network_setting_is_one_line() -> None:
    proc = run_cli(["config", "show"], env={"SANDCRAWLER_HTTP_ALLOW_NETWORKS": '["10.0.0.0/33"]'})
    assert proc.returncode == 1
    assert proc.stderr.decode().count("\n") == 1
    assert "allow_networks" in proc.stderr.decode()


@pytest.mark.parametrize("spelling", ["127.1", "0x7f000001", "[::ffff:127.0.0.1]", "localhost"])
def test_a_redirect_to_an_internal_address_is_refused_and_nothing_of_it_is_kept(
        server: HostileServer, crawl: Crawl, spelling: str) -> None:
    server.script("/secret.pdf", pdf_reply(b"%PDF-1.4 internal"))
    server.script("/article", redirect(f"http://{spelling}:{server.port}/secret.pdf"))
    result = crawl(f"{HOST}/article")
    assert result["status"] == "blocked-address", result
    assert server.seen("/secret.pdf") == 0
    assert all("secret" not in row.url for row in crawl.cdx())


@pytest.mark.parametrize("how", ["citation_pdf_url", "meta-refresh", "anchor"])
def test_a_landing_pages_link_to_an_internal_address_is_refused(
        server: HostileServer, crawl: Crawl, how: str) -> None:
    target = f"http://2130706433:{server.port}/secret.pdf"
    html = {
        "citation_pdf_url": f'<meta name="citation_title" content="A paper">'
                            f'<meta name="citation_pdf_url" content="{target}">',
        "meta-refresh": f'<meta http-equiv="refresh" content="0; url={target}">',
        "anchor": f'<h1>A paper</h1><a href="{target}">Download PDF</a>',
    }[how]
    server.script("/landing", page(f"<html><head>{html}</head><body>x</body></html>"))
    server.script("/secret.pdf", pdf_reply())
    result = crawl(f"{HOST}/landing")
    assert result["status"] == "blocked-address", result
    assert result["hops"] == [f"{HOST}/landing", target]
    assert server.seen("/secret.pdf") == 0


def test_a_platforms_download_url_to_an_internal_address_is_refused(
        server: HostileServer, tmp_path: Path) -> None:
    server.script("/secret.bin", Reply(raw_reply("200 OK", body=b"internal")))
    with PlatformServer() as platforms:
        record = {
            "id": 77, "recid": "77", "conceptrecid": "76", "doi": "10.5281/zenodo.77",
            "metadata": {"title": "t", "access_right": "open", "version": "1",
                         "resource_type": {"type": "dataset"}},
            "files": [{"id": "f", "key": "secret.bin", "size": 8,
                       "checksum": "md5:" + "0" * 32,
                       "links": {"self": f"http://127.0.0.1:{server.port}/secret.bin"}}],
            "links": {"html": "https://zenodo.org/records/77"},
        }
        platforms.add_page("zenodo.org", "/api/records/77", json.dumps(record).encode(),
                           content_type="application/json")
        ingester = open_ingester(load_settings(http_routes=platforms.routes(), http_timeout=2))
        try:
            out = ingester.ingest(DatasetRequest(ingest_type="dataset",
                                                 base_url="https://zenodo.org/records/77"))
        finally:
            ingester.close()
    assert out.result.to_json()["status"] == "error-platform-download", out.result
    assert "127.0.0.1 is a loopback address" in out.result.to_json()["error_message"], out.result
    assert server.seen("/secret.bin") == 0


def test_credentials_in_a_url_are_never_sent_nor_recorded(
        server: HostileServer, crawl: Crawl) -> None:
    server.script("/paper.pdf", pdf_reply())
    server.script("/start", redirect("https://joe:hunter2@h.example/paper.pdf"))
    result = crawl("https://joe:hunter2@h.example/start")
    assert result["status"] == "success", result
    assert result["hops"] == [f"{HOST}/start"]
    assert result["terminal"]["terminal_url"] == f"{HOST}/paper.pdf"
    recorded = json.dumps([result["hops"], result["terminal"], result["cdx"]])
    assert "hunter2" not in recorded
    assert all("hunter2" not in row.url and "hunter2" not in (row.location or "")
               for row in crawl.cdx())
    assert all("hunter2" not in uri for uri, *_ in crawl.warc_records())
    assert all("hunter2" not in r.line for r in server.requests)


# --- 2. deadlines ---------------------------------------------------------------------------


@pytest.mark.parametrize("reply", [
    Reply(raw_reply("200 OK", [("Content-Type", "application/pdf")], PDF), drip=0.3),
    Reply(raw_reply("200 OK", [("Content-Type", "application/pdf")], PDF)[:40], drip=0.3),
    Reply(silent=True),
], ids=["body-drips", "headers-drip", "silent"])
def test_a_server_that_holds_a_request_ends_with_a_status(
        server: HostileServer, reply: Reply) -> None:
    server.script("/held.pdf", reply)
    started = time.monotonic()
    result = crawl_once(server, f"{HOST}/held.pdf", http_timeout=30, http_request_timeout=2,
                        http_min_bytes_per_second=1000)
    took = time.monotonic() - started
    assert result["status"] == "fetch-timeout", result
    assert "within 2 s" in result["error_message"] or "slower than" in result["error_message"]
    assert took < 25  # ended by the 2 s deadline, not by the 30 s read timeout


def test_a_slow_but_steady_download_completes(server: HostileServer) -> None:
    body = b"%PDF-1.4\n" + bytes(range(256)) * 800 + b"\n%%EOF\n"  # 200 KiB
    server.script("/steady.pdf", pdf_reply(body, drip=0.05, piece=4096))  # ~80 KiB/s, 2.5 s
    result = crawl_once(server, f"{HOST}/steady.pdf", http_request_timeout=1,
                        http_min_bytes_per_second=8192)
    assert result["status"] == "success", result
    assert result["file_meta"]["size_bytes"] == len(body)


def test_a_record_ends_at_its_own_deadline(server: HostileServer) -> None:
    """Each hop answers within the request deadline; the chain does not."""
    for i in range(4):  # some 0.75 s each
        server.script(f"/hop{i}", Reply(raw_reply("302 Found", [("Location", f"/hop{i + 1}")]),
                                        drip=0.05, piece=4))
    result = crawl_once(server, f"{HOST}/hop0", crawl_record_timeout=1.5, crawl_max_hops=20)
    assert result["status"] == "fetch-timeout", result
    assert "crawl.record_timeout" in result["error_message"]


@pytest.mark.slow  # the defaults' 30 s deadline, twice (in parallel with the rest of the suite)
@pytest.mark.parametrize("how", ["drips-a-byte-every-2s", "never-answers"])
def test_with_the_defaults_a_holding_host_ends_within_60s(
        server: HostileServer, tmp_path: Path, how: str) -> None:
    """The README's ``ingest file`` against a host that holds its robots.txt (the
    first request to it), dripping it a byte at a time, each within the read
    timeout, or never answering at all: one result line, one line of error, no
    urllib3 noise."""
    dripping = raw_reply("200 OK", [("Content-Type", "text/plain")], b"User-agent: *\n" * 50)
    server.script("/robots.txt", Reply(silent=True) if how == "never-answers"
                  else Reply(dripping, drip=2.0))
    server.script("/paper.pdf", pdf_reply())
    started = time.monotonic()
    proc = run_cli(["ingest", "file", f"{HOST}/paper.pdf"],
                   env={"SANDCRAWLER_HTTP_ROUTES": json.dumps({HOST: server.url}),
                        "SANDCRAWLER_DATA_DIR": str(tmp_path / "data")}, timeout=90)
    took = time.monotonic() - started
    assert took < 60, took
    assert proc.stdout, proc.stderr.decode()
    result = orjson.loads(proc.stdout)
    assert result["status"] == "fetch-timeout", result
    stderr = proc.stderr.decode()
    assert "Retrying" not in stderr and "HTTPConnectionPool" not in stderr, stderr
    # while it waits, it says what for
    assert f"waiting for {HOST}/robots.txt: " in stderr, stderr
    assert "HTTPConnectionPool" not in result["error_message"]
    assert server.seen("/robots.txt") == 1  # asked once, not four times


def test_a_slow_host_does_not_hold_the_batch(server: HostileServer, crawl: Crawl) -> None:
    server.script("/slow.pdf", Reply(silent=True))
    for i in range(3):
        server.script(f"/fast{i}.pdf", pdf_reply(PDF + str(i).encode()))
    crawl.close()
    crawl = Crawl(server, http_request_timeout=4)
    try:
        requests = [IngestRequest(ingest_type="pdf", base_url=f"{HOST}/slow.pdf")]
        requests += [IngestRequest(ingest_type="pdf", base_url=f"{HOST}/fast{i}.pdf")
                     for i in range(3)]
        results = crawl.ingester.ingest_batch(requests)
    finally:
        crawl.close()
    assert [r.status for r in results] == ["fetch-timeout", "success", "success", "success"]
    slow = next(r for r in server.requests if r.target == "/slow.pdf")
    fast = [r for r in server.requests if r.target.startswith("/fast")]
    # the fast ones were answered while the slow one was still being waited for
    assert slow.end is not None
    assert all(r.end is not None and r.end < slow.end for r in fast)


def test_a_compression_bomb_stops_at_the_limit_on_disk(
        server: HostileServer, crawl: Crawl, tmp_path: Path) -> None:
    bomb = gzip.compress(b"%PDF-1.4\n" + bytes(64 * 2**20), 9)  # 64 MiB from ~64 KiB
    server.script("/bomb.pdf", Reply(raw_reply(
        "200 OK", [("Content-Type", "application/pdf"), ("Content-Encoding", "gzip")], bomb)))
    result = crawl(f"{HOST}/bomb.pdf")
    assert result["status"] == "too-large", result
    assert "compression bomb" in result["error_message"]
    written = [p.stat().st_size for p in (tmp_path / "data").rglob("*") if p.is_file()
               and p.suffix != ".sqlite3"]
    assert max(written, default=0) < 100 * len(bomb) + 2 * 2**20


# --- 3. hostile answers ---------------------------------------------------------------------


def test_raw_utf8_in_location_is_followed_percent_encoded(
        server: HostileServer, crawl: Crawl) -> None:
    server.script("/start", redirect("/päper.pdf".encode()))
    server.script("/p%C3%A4per.pdf", pdf_reply())
    result = crawl(f"{HOST}/start")
    assert result["status"] == "success", result
    assert result["terminal"]["terminal_url"] == f"{HOST}/p%C3%A4per.pdf"


def test_a_non_ascii_reason_phrase_is_recorded_as_the_standard_one(
        server: HostileServer, crawl: Crawl) -> None:
    server.script("/paper.pdf", Reply(raw_reply(
        "200 Ökay ✓".encode(), [("Content-Type", "application/pdf")], PDF)))
    result = crawl(f"{HOST}/paper.pdf")
    assert result["status"] == "success", result
    assert ("200 OK" in [r[2] for r in crawl.warc_records() if r[1] == "response"])


@pytest.mark.parametrize("location", [b"http://[::1", b"http://h.example:99999/x",
                                      b"javascript:alert(1)", b"http://ex\x00ample.org/",
                                      b"http://exa mple.org/"])
def test_a_redirect_to_what_is_not_a_url_is_bad_url(
        server: HostileServer, crawl: Crawl, location: bytes) -> None:
    server.script("/start", redirect(location))
    result = crawl(f"{HOST}/start")
    assert result["status"] == "bad-url", result
    assert "\x00" not in result["error_message"]


@pytest.mark.parametrize(("location", "encoded"), [
    (b"/pa\x00per.pdf", "/pa%00per.pdf"),
    (b"/pa\x1b[31mper.pdf", "/pa%1B%5B31mper.pdf"),
    (b"/pa per.pdf", "/pa%20per.pdf"),
    (b" \x01/paper.pdf\x7f ", "/paper.pdf%7F"),
])
def test_control_characters_in_a_redirect_never_reach_the_index_or_the_warc(
        server: HostileServer, location: bytes, encoded: str, migrated_db_url: str) -> None:
    server.script("/start", redirect(location))
    server.script(encoded, pdf_reply())
    crawl = Crawl(server, database_url=migrated_db_url)
    try:
        result = crawl(f"{HOST}/start")
        assert result["status"] == "success", result
        assert result["terminal"]["terminal_url"] == f"{HOST}{encoded}"
        rows = crawl.cdx()
        records = crawl.warc_records()
    finally:
        crawl.close()
    urls = {row.url for row in rows}
    assert urls == {f"{HOST}/robots.txt", f"{HOST}/start", f"{HOST}{encoded}"}
    # every indexed URL is exactly a record's WARC-Target-URI
    assert urls <= {uri for uri, *_ in records}
    for uri, _, status, headers in records:
        text = uri + (status or "") + "".join(f"{k}{v}" for k, v in headers)
        assert not any(ord(c) < 0x20 or ord(c) == 0x7F for c in text), text


def test_hostile_answers_in_one_batch_each_get_a_result_and_are_fetched_once(
        server: HostileServer, tmp_path: Path) -> None:
    server.script("/utf8", redirect("/päper.pdf".encode()))
    server.script("/p%C3%A4per.pdf", pdf_reply())
    server.script("/reason", Reply(raw_reply("200 Ökay".encode(),
                                             [("Content-Type", "application/pdf")], PDF + b"1")))
    server.script("/ipv6", redirect(b"http://[::1"))
    server.script("/nul", redirect(b"/n\x00ul.pdf"))
    server.script("/n%00ul.pdf", pdf_reply(PDF + b"2"))
    server.script("/short", Reply(raw_reply("200 OK", [("Content-Type", "application/pdf")],
                                            PDF[:755], length=2000)))
    server.script("/garbage", Reply(b"garbage\r\n\r\n"))
    server.script("/ok", pdf_reply(PDF + b"3"))
    paths = ["/utf8", "/reason", "/ipv6", "/nul", "/short", "/garbage", "/ok"]
    lines = b"".join(orjson.dumps({"ingest_type": "pdf", "base_url": f"{HOST}{p}"}) + b"\n"
                     for p in paths)
    proc = run_cli(["ingest", "requests", "--no-progress", "-"], input=lines,
                   env={"SANDCRAWLER_HTTP_ROUTES": json.dumps({HOST: server.url}),
                        "SANDCRAWLER_DATA_DIR": str(tmp_path / "data")})
    assert proc.returncode == 0, proc.stderr.decode()
    results = [orjson.loads(line) for line in proc.stdout.splitlines()]
    statuses = {r["request"]["base_url"].removeprefix(HOST): r["status"] for r in results}
    assert statuses == {"/utf8": "success", "/reason": "success", "/ipv6": "bad-url",
                        "/nul": "success", "/short": "fetch-error", "/garbage": "fetch-error",
                        "/ok": "success"}, results
    short = next(r for r in results if r["request"]["base_url"].endswith("/short"))
    assert "after 755 of 2,000 bytes" in short["error_message"]
    assert "Traceback" not in proc.stderr.decode()
    for path in paths:  # no batch retry fetched anything twice; no protocol error resent
        assert server.seen(path) == 1, path


@pytest.mark.parametrize("url", ["", "http://[::1", "ftp://example.org/x", "http://a\nb.org/",
                                 "10.", "doi:nonsense"])
@pytest.mark.parametrize("kind", ["file", "fileset"])
def test_an_argument_that_is_not_a_url_or_doi_is_one_error_line(
        kind: str, url: str, tmp_path: Path) -> None:
    proc = run_cli(["ingest", kind, url], env={"SANDCRAWLER_DATA_DIR": str(tmp_path)})
    assert proc.returncode == 1
    assert proc.stdout == b""
    stderr = proc.stderr.decode()
    assert stderr.count("\n") == 1 and stderr.startswith(repr(url)), stderr
    assert not (tmp_path / "sandcrawler.sqlite3").exists()  # nothing opened, nothing recorded


def test_requests_whose_url_is_not_one_each_get_bad_request_in_a_batch(tmp_path: Path) -> None:
    urls = ["", "http://[::1", "ftp://example.org/x"]
    lines = b"".join(orjson.dumps({"ingest_type": kind, "base_url": url}) + b"\n"
                     for kind in ("pdf", "dataset") for url in urls)
    proc = run_cli(["ingest", "requests", "--no-progress", "-"], input=lines,
                   env={"SANDCRAWLER_DATA_DIR": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr.decode()
    results = [orjson.loads(line) for line in proc.stdout.splitlines()]
    assert [(r["request"]["ingest_type"], r["request"]["base_url"], r["status"])
            for r in results] == [(kind, url, "bad-request")
                                  for kind in ("pdf", "dataset") for url in urls]
    assert "Traceback" not in proc.stderr.decode()


def _lookup_failure(errno: int) -> NameResolutionError:
    try:
        raise socket.gaierror(errno, "lookup failed")
    except socket.gaierror as e:
        try:
            raise NameResolutionError("h.example", None, e) from e  # type: ignore[arg-type]
        except NameResolutionError as failure:
            return failure


def test_a_name_that_does_not_exist_is_not_looked_up_again() -> None:
    retry = ConnectRetry(total=3, read=0, other=0)
    with pytest.raises(MaxRetryError):
        retry.increment("GET", "/", error=_lookup_failure(socket.EAI_NONAME))
    # a resolver that did not answer may answer the next time
    again = retry.increment("GET", "/", error=_lookup_failure(socket.EAI_AGAIN))
    assert isinstance(again, ConnectRetry) and again.total == 2


@pytest.mark.slow  # two commands, each retrying with back-off
def test_retried_connections_are_not_a_warning_per_try(tmp_path: Path) -> None:
    # a port bound and never listened on refuses every connection, and is nobody
    # else's while the test holds it (a port closed again may be taken meanwhile)
    with socket.socket() as refusing:
        refusing.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{refusing.getsockname()[1]}/x.pdf"
        env = {"SANDCRAWLER_DATA_DIR": str(tmp_path),
               "SANDCRAWLER_HTTP_ALLOW_NETWORKS": '["127.0.0.0/8"]'}
        proc = run_cli(["ingest", "file", url], env=env)
        verbose = run_cli(["-v", "ingest", "file", url], env=env)
    assert orjson.loads(proc.stdout)["status"] == "fetch-error"
    stderr = proc.stderr.decode()
    # the miss, in one line (a "waiting for" line may come before it on a slow machine)
    assert [line for line in stderr.splitlines() if not line.startswith("waiting for ")] == [
        f"{url}: fetch-error: {orjson.loads(proc.stdout)['error_message']}"], stderr
    assert "Retrying" in verbose.stderr.decode()
