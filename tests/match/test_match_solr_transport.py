"""The Solr client's transport (match/solr/connections.py) against loopback servers
that are not Solr: HTTPS with the operator's CA or without verification, HTTP
basic authentication, a keep-alive connection the server closed while it was
idle, and hostile servers dripping their headers or sending a body without end.
The same client against the real SolrCloud is in the other test_match_solr*
modules; TLS and authentication are the transport's alone, so a plain server
shows them without a second cluster.
"""

from __future__ import annotations

import base64
import gzip
import shutil
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import orjson
import pytest

from sandcrawler.core.errors import ConfigError, SearchUnavailable
from sandcrawler.core.retry import RetryPolicy
from sandcrawler.match.solr.client import SolrClient
from sandcrawler_testkit.hostile import HostileServer, Reply, raw_reply
from tests.helpers.skips import unavailable

ONCE = RetryPolicy(attempts=1)
ANSWER = {"responseHeader": {"status": 0}, "response": {"numFound": 1, "docs": [{"id": "x"}]}}


class _SolrLike(ThreadingHTTPServer):
    daemon_threads = True
    password = "s3cret"
    #: close every connection after its answer, without saying so (an idle
    #: keep-alive connection a server or a proxy dropped)
    drop_idle = False

    def __init__(self, context: ssl.SSLContext | None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.context = context
        self.bodies: list[dict[str, list[str]]] = []
        self.connections = 0

    def get_request(self) -> tuple[Any, Any]:
        sock, addr = super().get_request()
        self.connections += 1
        if self.context is not None:
            # the handshake is made by the handler's thread, on first read
            sock = self.context.wrap_socket(sock, server_side=True,
                                            do_handshake_on_connect=False)
        return sock, addr

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client refusing our certificate hangs up mid-handshake: expected


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _SolrLike

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        expected = "Basic " + base64.b64encode(f"reader:{self.server.password}".encode()).decode()
        if self.headers.get("Authorization") != expected:
            self._send(401, {"error": {"msg": "require authentication", "code": 401}})
            return
        self.server.bodies.append(parse_qs(body.decode()))
        self._send(200, ANSWER)
        if self.server.drop_idle:
            self.close_connection = True

    def _send(self, status: int, obj: object) -> None:
        data = orjson.dumps(obj)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _serve(context: ssl.SSLContext | None) -> Iterator[_SolrLike]:
    server = _SolrLike(context)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                     daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _url(server: _SolrLike, scheme: str = "http") -> str:
    return f"{scheme}://127.0.0.1:{server.server_address[1]}/solr"


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed key and certificate for 127.0.0.1, made with openssl."""
    openssl = shutil.which("openssl")
    if openssl is None:
        unavailable("no openssl here to make a test certificate", "OPENSSL")
    directory = tmp_path_factory.mktemp("tls")
    key, cert = directory / "key.pem", directory / "cert.pem"
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=60)
    return key, cert


@pytest.fixture
def https_server(certificate: tuple[Path, Path]) -> Iterator[_SolrLike]:
    key, cert = certificate
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    yield from _serve(context)


@pytest.fixture
def http_server() -> Iterator[_SolrLike]:
    yield from _serve(None)


def test_https_with_the_operators_ca_and_basic_auth(https_server: _SolrLike,
                                                    certificate: tuple[Path, Path]) -> None:
    _, cert = certificate
    with SolrClient([_url(https_server, "https")], timeout=5, policy=ONCE,
                    options={"ca_file": str(cert), "username": "reader",
                             "password": "s3cret"}) as client:
        for i in range(3):
            assert client.request("/works/select", {"q": f"t:w{i}"}) == ANSWER
    # the parameters went as a form body, over one kept-alive connection
    assert [b["q"] for b in https_server.bodies] == [["t:w0"], ["t:w1"], ["t:w2"]]
    assert https_server.connections == 1


def test_https_not_trusted_is_a_settings_error(https_server: _SolrLike) -> None:
    with (SolrClient([_url(https_server, "https")], timeout=5,
                     options={"username": "reader", "password": "s3cret"}) as client,
          pytest.raises(ConfigError, match=r"TLS certificate is not trusted.*ca_file")):
        client.request("/works/select", {"q": "t:w"})
    # said at once, not retried as an outage (the default policy tries 4 times);
    # nothing reached the handler
    assert https_server.connections == 1
    assert https_server.bodies == []
    # verify off (a test cluster's own certificate) goes through
    with SolrClient([_url(https_server, "https")], timeout=5, policy=ONCE,
                    options={"verify": "false", "username": "reader",
                             "password": "s3cret"}) as client:
        assert client.request("/works/select", {"q": "t:w"}) == ANSWER


def test_wrong_password_is_a_settings_error(http_server: _SolrLike) -> None:
    with (SolrClient([_url(http_server)], timeout=5,
                     options={"username": "reader", "password": "wrong"}) as client,
          pytest.raises(ConfigError, match=r"HTTP 401.*username and password")):
        client.request("/works/select", {"q": "t:w"})


def test_an_idle_connection_the_server_dropped_is_replaced(http_server: _SolrLike) -> None:
    http_server.drop_idle = True
    with SolrClient([_url(http_server)], timeout=5, policy=ONCE,
                    options={"username": "reader", "password": "s3cret"}) as client:
        for i in range(4):
            assert client.request("/works/select", {"q": f"t:w{i}"}) == ANSWER
        # each on a new connection, and the node never counted as down
        assert http_server.connections == 4
        assert len(http_server.bodies) == 4
        assert client._order() == client.urls


@pytest.mark.parametrize("reply", [
    # the head a byte every 0.2 s: each read is within the 0.5 s timeout
    Reply(raw_reply("200 OK", [("Content-Type", "application/json")],
                    orjson.dumps(ANSWER)), drip=0.2),
    # a head, then a body without a length that never ends (over loopback the
    # size cap may end it before the deadline)
    Reply(raw_reply("200 OK", [("Content-Type", "application/json")], b"{", length=-1),
          endless=b" " * 4096),
    # a 200 whose body is not JSON (gzip that was not asked for): never an empty answer
    Reply(raw_reply("200 OK", [("Content-Encoding", "gzip")],
                    gzip.compress(orjson.dumps(ANSWER)))),
], ids=["headers-dripped", "endless-body", "not-json"])
def test_a_hostile_server_at_a_nodes_address_is_an_outage(reply: Reply) -> None:
    with HostileServer() as server:
        server.script("/solr/works/select", reply)
        started = time.monotonic()
        with (SolrClient([server.url + "/solr"], timeout=0.5, policy=ONCE) as client,
              pytest.raises(SearchUnavailable, match=r"within its deadline|bytes|not Solr's JSON")):
            client.request("/works/select", {"q": "t:w"})
        # the whole answer is due within twice the read timeout (the dripped
        # answer takes over 30 s, the endless one for ever)
        assert time.monotonic() - started < 10
        assert server.seen("/solr/works/select") == 1


def test_a_ca_file_that_is_not_there_is_a_settings_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"ca_file.*not a readable PEM"):
        SolrClient(["https://127.0.0.1:1/solr"], options={"ca_file": str(tmp_path / "no.pem")})
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate")
    with pytest.raises(ConfigError, match=r"ca_file.*not a readable PEM"):
        SolrClient(["https://127.0.0.1:1/solr"], options={"ca_file": str(garbage)})


def test_a_redirect_is_not_followed_but_said() -> None:
    """A node's address answering "go to 127.0.0.1:1/internal": nothing is
    fetched there, and the settings are named as what is wrong."""
    with HostileServer() as server:
        server.script("/solr/works/select", Reply(raw_reply(
            "302 Found", [("Location", "http://127.0.0.1:1/internal")])))
        with (SolrClient([server.url + "/solr"], timeout=1, policy=ONCE) as client,
              pytest.raises(ConfigError, match=r"redirect \(HTTP 302\).*match.engine_urls")):
            client.request("/works/select", {"q": "t:w"})
        assert [r.target for r in server.requests] == ["/solr/works/select"]
