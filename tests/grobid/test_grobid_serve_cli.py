"""The command itself: help with examples, one-line errors before it serves
(a busy port, an unprotected exposure, a weak token), and its token."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.grobid.serving import start
from tests.helpers.cli import invoke, run_cli


def test_help_has_examples() -> None:
    result = invoke(["grobid-serve", "--help"])
    assert result.exit_code == 0
    assert "curl --form input=@paper.pdf localhost:8070/api/processFulltextDocument" \
        in result.stdout
    assert "grobid_client --server http://127.0.0.1:8070" in result.stdout
    assert "--concurrency" in result.stdout


def test_a_busy_port_is_one_line() -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        done = run_cli(["grobid-serve", "--port", str(port)], timeout=60)
    assert done.returncode == 1
    assert done.stderr.decode() == (
        f"Error: cannot listen on 127.0.0.1:{port}: Address already in use: another "
        "program listens there; choose another with --port\n")


@pytest.mark.parametrize(("env", "message"), [
    ({}, "Error: refusing to listen on 0.0.0.0 without a token: set "
         "SANDCRAWLER_GROBID_SERVE_TOKEN (or token in the [grobid_serve] table), or listen "
         "on 127.0.0.1\n"),
    ({"SANDCRAWLER_GROBID_SERVE_TOKEN": "short"},
     "Error: grobid_serve.token must be at least 16 characters"),
], ids=["no-token", "weak-token"])
def test_an_unprotected_exposure_is_refused(env: dict[str, str], message: str) -> None:
    done = run_cli(["grobid-serve", "--host", "0.0.0.0", "--port", "0"], env=env, timeout=60)
    assert done.returncode == 1
    assert done.stderr.decode().startswith(message)
    assert done.stderr.count(b"\n") == 1


def test_with_a_token_every_request_needs_it(tmp_path: Path) -> None:
    token = "0123456789abcdefghijKLMN"
    server = start(tmp_path, "--concurrency", "1",
                   env={"SANDCRAWLER_GROBID_SERVE_TOKEN": token})
    try:
        assert server.get("/api/isalive").status == 401
        answer = server.get("/api/isalive", Authorization=f"Bearer {token}")
        assert (answer.status, answer.data) == (200, b"true")
        assert token.encode() not in server.get("/metrics").data
    finally:
        server.stop()
