"""``sandcrawler grobid-serve`` as a real process on loopback, and a small HTTP
client for it (urllib3, a dependency of the product: multipart forms as GROBID's
clients send them, urlencoded ones, raw sockets for what no client would send)."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import urllib3

from tests.helpers.isolation import isolated
from tests.helpers.metrics import Samples, parse
from tests.helpers.processes import alive, descendants

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "src" / "sandcrawler" / "demo" / "site"
PDFS = {name: DEMO / f"{name}.pdf" for name in ("plos", "peerj", "elife")}
_STARTED = re.compile(r"sandcrawler grobid-serve: (http://\S+)/api/ ")
Field = tuple[str, Any]


@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    url: str
    stderr: list[str] = field(default_factory=list)
    http: urllib3.PoolManager = field(default_factory=lambda: urllib3.PoolManager(
        retries=False, timeout=urllib3.Timeout(connect=10, read=180)))

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def get(self, path: str, **headers: str) -> urllib3.BaseHTTPResponse:
        return self.http.request("GET", self.url + path, headers=headers or None)

    def pdf(self, path: str, pdf: bytes | None, fields: Sequence[Field] = (), *,
            accept: str | None = None, filename: str = "paper.pdf",
            method: str = "POST") -> urllib3.BaseHTTPResponse:
        """A PDF service's request as GROBID's clients send it: ``input`` a file part."""
        parts: list[Field] = list(fields)
        if pdf is not None:
            parts.append(("input", (filename, pdf, "application/pdf")))
        headers = {"Accept": accept} if accept else {}
        return self.http.request(method, self.url + path, fields=parts, headers=headers,
                                 encode_multipart=True)

    def form(self, path: str, fields: Sequence[Field], *, accept: str | None = None,
             method: str = "POST") -> urllib3.BaseHTTPResponse:
        """An ``application/x-www-form-urlencoded`` request (the text services)."""
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        if accept:
            headers["Accept"] = accept
        return self.http.request(method, self.url + path, body=urlencode(list(fields)),
                                 headers=headers)

    def metrics(self) -> Samples:
        answer = self.get("/metrics")
        assert answer.status == 200
        return parse(answer.data.decode())

    def raw(self, request: bytes, *, pause: float = 0.0, chunks: Sequence[bytes] = (),
            timeout: float = 60) -> bytes:
        """Bytes sent as they are (then ``chunks``, ``pause`` s apart), the answer read
        to its end; a server closing early is fine."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as s:
            s.sendall(request)
            try:
                for chunk in chunks:
                    time.sleep(pause)
                    s.sendall(chunk)
            except OSError:
                pass  # answered and closed while we were still sending
            out = b""
            try:
                while data := s.recv(65536):
                    out += data
            except OSError:
                pass
        return out

    def stop(self) -> None:
        """SIGTERM, and nothing of the process tree left behind."""
        tree = descendants(self.proc.pid)
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        deadline = time.monotonic() + 10
        while any(alive(p) for p in tree) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = [p for p in tree if alive(p)]
        assert not left, f"grobid-serve left processes behind: {left}"
        self.http.clear()


def start(root: Path, *args: str, env: dict[str, str] | None = None,
          timeout: float = 180) -> Server:
    """``python -m sandcrawler grobid-serve --port 0 ARGS`` in an isolated
    environment under ``root`` (plus ``env``); returns once it says where it listens."""
    with isolated(root, **(env or {})):
        proc = subprocess.Popen([sys.executable, "-m", "sandcrawler", "grobid-serve",
                                 "--port", "0", *args],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    lines: list[str] = []
    found: list[str] = []
    ready = threading.Event()

    def drain() -> None:
        assert proc.stderr is not None
        for raw in proc.stderr:
            line = raw.decode("utf-8", "replace")
            lines.append(line)
            if not found and (m := _STARTED.search(line)):
                found.append(m.group(1))
                ready.set()
        ready.set()

    threading.Thread(target=drain, daemon=True).start()
    if not ready.wait(timeout) or not found:
        proc.kill()
        proc.wait(10)
        raise AssertionError("grobid-serve did not start: " + "".join(lines)[-3000:])
    return Server(proc, found[0], lines)
