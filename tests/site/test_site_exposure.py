"""Who may talk to ``sandcrawler serve``: the Host names it answers to (DNS
rebinding), the token (never echoed, never weak), and connections other than HTTP.
In-process through Starlette's test client, and once against the real
``sandcrawler serve`` process with raw HTTP."""

from __future__ import annotations

import http.client
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from starlette.testclient import TestClient
from starlette.websockets import WebSocket, WebSocketDisconnect

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.core.errors import ConfigError
from sandcrawler.site.app import Guard, create_app
from tests.helpers.cli import invoke, run_cli

TOKEN = "0123456789abcdefghijKLMN"  # 24 characters
BEARER = {"authorization": f"Bearer {TOKEN}"}
BASE = "http://127.0.0.1"


@pytest.fixture(scope="module")
def database(sqlite_template_path: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A database at the latest schema that the module's applications answer from (the
    pages are not what is tested here, and none writes): not one made per application."""
    path = tmp_path_factory.mktemp("exposure") / "site.sqlite3"
    shutil.copyfile(sqlite_template_path, path)
    return f"sqlite:///{path}"


@pytest.fixture
def app_for(database: str) -> Iterator[Any]:
    """create_app on the settings given (dotted names ``serve.*``), on the module's
    database; the services closed after."""
    opened: list[Services] = []

    def make(**settings: Any) -> Any:
        services = Services(load_settings({"database.url": database,
                                           **{f"serve.{k}": v for k, v in settings.items()}}))
        opened.append(services)
        return create_app(services)

    yield make
    for services in opened:
        services.close()


# (bound address, serve.allowed_hosts (None: not set), Host header sent, status)
HOSTS = [
    # bound to loopback: its address, localhost, loopback literals; any port or none
    ("127.0.0.1", None, "127.0.0.1", 200),
    ("127.0.0.1", None, "127.0.0.1:8080", 200),
    ("127.0.0.1", None, "localhost:8080", 200),
    ("127.0.0.1", None, "LocalHost", 200),
    ("127.0.0.1", None, "[::1]:8080", 200),
    ("localhost", None, "127.0.0.1:8080", 200),
    ("::1", None, "[::1]:8080", 200),
    # a name an attacker's DNS answers for with 127.0.0.1: DNS rebinding
    ("127.0.0.1", None, "evil.example", 421),
    ("127.0.0.1", None, "evil.example:8080", 421),
    ("127.0.0.1", None, "localhost.evil.example", 421),
    ("127.0.0.1", None, "127.0.0.1.nip.io", 421),
    ("127.0.0.1", None, "10.0.0.5", 421),
    ("127.0.0.1", None, "localhost.", 421),
    # malformed
    ("127.0.0.1", None, "", 400),
    ("127.0.0.1", None, "127.0.0.1:80:80", 400),
    ("127.0.0.1", None, "127.0.0.1:http", 400),
    ("127.0.0.1", None, "::1", 400),
    ("127.0.0.1", None, "[::1", 400),
    ("127.0.0.1", None, "[evil.example]", 400),
    # names allowed by setting (a proxy's public name); '*' is any
    ("127.0.0.1", ["crawler.example.org"], "Crawler.Example.Org:443", 200),
    ("127.0.0.1", ["Crawler.Example.Org"], "crawler.example.org", 200),
    ("127.0.0.1", ["crawler.example.org"], "evil.example", 421),
    ("127.0.0.1", ["*"], "anything.example", 200),
    # every interface (a token required): any IP address literal, localhost, names allowed
    ("0.0.0.0", None, "192.168.1.4:8080", 200),
    ("0.0.0.0", None, "[2001:db8::1]:8080", 200),
    ("::", None, "10.0.0.5", 200),
    ("0.0.0.0", None, "localhost", 200),
    ("0.0.0.0", None, "evil.example", 421),
    ("0.0.0.0", None, "crawler.example.org", 421),
    ("0.0.0.0", ["crawler.example.org"], "crawler.example.org", 200),
    # one other address: that address only
    ("192.168.1.4", None, "192.168.1.4:8080", 200),
    ("192.168.1.4", None, "10.0.0.5", 421),
    ("192.168.1.4", None, "localhost", 421),
]


@pytest.mark.parametrize(("bound", "allowed", "host", "status"), HOSTS)
def test_host_header(app_for: Any, bound: str, allowed: list[str] | None, host: str,
                     status: int) -> None:
    app = app_for(host=bound, token=TOKEN, allowed_hosts=allowed)
    with TestClient(app, base_url=BASE) as client:
        for path in ("/", "/search/", "/nowhere?token=" + TOKEN):
            answer = client.get(path, headers={**BEARER, "host": host},
                                follow_redirects=False)
            assert answer.status_code in ((200, 307, 404) if status == 200 else (status,)), \
                (path, answer.text)
            if status != 200:
                assert answer.headers["content-type"] == "text/plain; charset=utf-8"
                assert answer.text.count("\n") == 1 and answer.text.startswith(f"{status} ")
                assert "evil" not in answer.text and "example" not in answer.text
                assert answer.headers["x-frame-options"] == "DENY"
                assert "set-cookie" not in answer.headers
            elif answer.status_code == 307:  # /search/ -> /search, on the Host checked
                assert answer.headers["location"].endswith("/search")


def test_host_is_checked_before_the_token(app_for: Any) -> None:
    with TestClient(app_for(token=TOKEN), base_url=BASE) as client:
        answer = client.get("/", headers={"host": "evil.example"})
        assert answer.status_code == 421
        assert "www-authenticate" not in answer.headers


def test_one_host_header_only(app_for: Any) -> None:
    with TestClient(app_for(), base_url=BASE) as client:
        answer = client.get("/", headers=[("host", "127.0.0.1"), ("host", "evil.example")])
        assert answer.status_code == 400


def test_the_token_is_never_echoed(app_for: Any) -> None:
    with TestClient(app_for(token=TOKEN), base_url=BASE) as client:
        for path in ("/search?q=x&token=" + TOKEN, "/?token=" + TOKEN, "/nowhere?token=" + TOKEN):
            answer = client.get(path)
            assert answer.status_code in (200, 404)
            assert TOKEN not in answer.text, path
            assert "http://" not in answer.text.replace("http://www.w3.org/2000/svg", ""), path
        html = client.get("/search?q=x&format=html&token=" + TOKEN).text
        assert 'href="?q=x&amp;format=json">this page as JSON' in html
        # the link works (the cookie set above carries the token)
        assert client.get("/search?q=x&format=json").json()["query"] == "x"
        assert TOKEN not in client.get("/search?q=x&format=json&token=" + TOKEN).text


@pytest.mark.parametrize(("host", "token"), [
    ("0.0.0.0", "x"),
    ("0.0.0.0", " "),
    ("0.0.0.0", " " * 20),
    ("::", "a" * 15),
    ("192.168.1.4", "correct horse battery staple"),
    ("0.0.0.0", TOKEN + ";"),
    ("0.0.0.0", "é" * 20),
    ("127.0.0.1", "s3cret"),  # a token set on loopback is held to the same rule
])
def test_weak_tokens_are_refused(app_for: Any, host: str, token: str) -> None:
    with pytest.raises(ConfigError) as refused:
        app_for(host=host, token=token)
    message = str(refused.value)
    assert message.startswith("serve.token must be at least 16 characters")
    assert "\n" not in message
    if len(token.strip()) > 3:
        assert token.strip() not in message  # a secret stays out of the logs


@pytest.mark.parametrize("token", [TOKEN, "0123456789abcdef", "aGVsbG8gd29ybGQhIQ+/==",
                                   "Zm9v-YmFy_YmF6.cXV4~eHl6"])
def test_strong_tokens_are_taken(app_for: Any, token: str) -> None:
    with TestClient(app_for(host="0.0.0.0", token=token), base_url=BASE) as client:
        assert client.get("/").status_code == 401
        assert client.get("/", headers={"authorization": f"Bearer {token}"}).status_code == 200


def test_serve_refuses_a_weak_token() -> None:
    done = run_cli(["serve", "--host", "0.0.0.0", "--port", "0"],
                   env={"SANDCRAWLER_SERVE_TOKEN": "x"}, timeout=30)
    assert done.returncode == 1
    assert done.stderr.decode().startswith("Error: serve.token must be at least 16 characters")
    assert done.stderr.count(b"\n") == 1


@pytest.mark.parametrize("entry", ["crawler.example.org:8443", "[::1]:8080", "http://x.example",
                                   "user@x.example", "", "x.example/"])
def test_allowed_hosts_take_names_only(entry: str) -> None:
    with pytest.raises(ConfigError) as refused:
        load_settings({"serve.allowed_hosts": [entry]})
    assert str(refused.value).endswith(
        f"{entry!r} is not a host name: give a name or address without scheme or port, "
        'or "*"')


def test_allowed_hosts_are_normalised() -> None:
    settings = load_settings({"serve.allowed_hosts": [" Crawler.Example.ORG", "[::1]", "*"]})
    assert settings.serve.allowed_hosts == ["crawler.example.org", "::1", "*"]


async def _websocket_app(websocket: WebSocket) -> None:
    await websocket.accept()
    await websocket.send_text("reached the application")
    await websocket.close()


@pytest.mark.parametrize("headers", [{}, BEARER])
def test_websockets_are_refused(app_for: Any, headers: dict[str, str]) -> None:
    """The site has none, so none reaches the application, with or without the token."""
    inner = Starlette(routes=[WebSocketRoute("/ws", _websocket_app)])
    with TestClient(Guard(inner, token=TOKEN), base_url=BASE) as client, \
            pytest.raises(WebSocketDisconnect) as refused, \
            client.websocket_connect("/ws", headers=headers) as ws:
        ws.receive_text()
    assert refused.value.code == 1008  # policy violation (an HTTP 403 before the handshake)
    with TestClient(app_for(token=TOKEN), base_url=BASE) as client, \
            pytest.raises(WebSocketDisconnect) as refused, \
            client.websocket_connect("/", headers=headers):
        pass
    assert refused.value.code == 1008


def test_other_connections_never_reach_the_application() -> None:
    reached: list[str] = []
    sent: list[Any] = []

    async def inner(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope["type"])

    async def receive() -> Any:
        return {"type": "nothing"}

    async def send(message: Any) -> None:
        sent.append(message)

    guard = Guard(inner, token=TOKEN)
    anyio.run(guard, {"type": "webtransport", "headers": [(b"host", b"127.0.0.1")]},
              receive, send)
    assert reached == []
    anyio.run(guard, {"type": "lifespan"}, receive, send)  # not a client: passed on
    assert reached == ["lifespan"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _raw(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(request)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_real_server_refuses_a_hostile_host() -> None:
    """``sandcrawler serve`` itself (uvicorn) on loopback: a rebinding name is refused
    and never reflected; its own address and localhost are answered."""
    assert invoke(["db", "init"]).exit_code == 0
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "sandcrawler", "serve", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else b""
            assert time.monotonic() < deadline, "the server did not start"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)

        def get(host: str | None, path: str = "/") -> http.client.HTTPResponse:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.putrequest("GET", path, skip_host=True)
            if host is not None:
                conn.putheader("Host", host)
            conn.endheaders()
            return conn.getresponse()

        hostile = get(f"evil.example:{port}")
        body = hostile.read()
        assert hostile.status == 421, body
        assert b"evil" not in body and body.count(b"\n") == 1
        redirect = get(f"evil.example:{port}", "/search/")
        assert redirect.status == 421 and redirect.getheader("location") is None
        for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
            answer = get(host)
            page = answer.read()
            assert answer.status == 200, page
            assert b"evil" not in page and b"http://" not in page.replace(
                b"http://www.w3.org/2000/svg", b"")
        # a path like //evil.example/ must not become a protocol-relative link
        lost = get(f"127.0.0.1:{port}", "//evil.example/x?a=1")
        page = lost.read()
        assert lost.status == 404
        assert b'href="?a=1&amp;format=json"' in page and b'"//evil' not in page
        # HTTP/1.0 may leave Host out: refused too, not answered for any name
        assert _raw(port, b"GET / HTTP/1.0\r\n\r\n").startswith(b"HTTP/1.1 400 ")
    finally:
        proc.terminate()
        proc.wait(30)
        if proc.stderr:
            proc.stderr.close()
