"""A loopback HTTP server that plays GROBID with real GROBID answers.

Loaded with TEI a real GROBID returned from ``processCitationList``, it answers
known citation strings with those biblStructs, renumbered in request order;
unknown strings get only the raw string. Markers in a citation (``#500``,
``#garbage``, ``#drop``, ``#204``, ``#slow``) and ``busy`` script failures
(docs/testing.md, "The GROBID stand-in").
"""

from __future__ import annotations

import email.parser
import email.policy
import html
import re
import threading
import time
import urllib.parse
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from sandcrawler_testkit import _cli
from sandcrawler_testkit.loopback import LoopbackHTTPServer

_BIBL = re.compile(r"<biblStruct\b[^>]*>.*?</biblStruct>", re.S)
_RAW = re.compile(r'<note type="raw_reference">(.*?)</note>', re.S)
_ID = re.compile(r'^<biblStruct\b[^>]*?xml:id="[^"]*"')

TEI_HEAD = (
    '<TEI xmlns="http://www.tei-c.org/ns/1.0" xmlns:xlink="http://www.w3.org/1999/xlink"\n'
    ' xmlns:mml="http://www.w3.org/1998/Math/MathML">\n\t<teiHeader/>\n\t<text>\n\t\t<front/>\n'
    "\t\t<body/>\n\t\t<back>\n\t\t\t<div>\n\t\t\t\t<listBibl>\n"
)
TEI_TAIL = "\t\t\t\t</listBibl>\n\t\t\t</div>\n\t\t</back>\n\t</text>\n</TEI>\n"


def normalise_raw(text: str) -> str:
    return " ".join(text.split())


def index_tei(tei: str) -> dict[str, str]:
    """raw citation string -> its biblStruct (id attribute stripped)."""
    found = {}
    for block in _BIBL.findall(tei):
        raw = _RAW.search(block)
        if raw:
            body = re.sub(r'\sxml:id="[^"]*"', "", block, count=1)
            found[normalise_raw(html.unescape(raw.group(1)))] = body
    return found


def parse_multipart(content_type: str, body: bytes) -> tuple[dict[str, list[str]], bytes]:
    """(text fields, the ``input`` file's bytes) of a multipart/form-data body."""
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body
    )
    fields: dict[str, list[str]] = {}
    pdf = b""
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True) or b""
        if name == "input":
            pdf = payload
        elif name:
            fields.setdefault(str(name), []).append(payload.decode("utf-8"))
    return fields, pdf


class FakeGrobid(LoopbackHTTPServer):
    """Start with ``start()`` (or as a context manager); ``url`` is the base URL."""

    version = "0.7.3-fake"

    def __init__(
        self, tei_files: Iterable[Path | str] = (), slow_seconds: float = 5.0, port: int = 0,
        fulltext_tei: Path | str | None = None,
    ) -> None:
        super().__init__(port)
        self.known: dict[str, str] = {}
        for path in tei_files:
            self.known.update(index_tei(Path(path).read_text(encoding="utf-8")))
        self.slow_seconds = slow_seconds
        #: what processFulltextDocument answers (real GROBID output, from a fixture)
        self.fulltext_tei = (Path(fulltext_tei).read_text(encoding="utf-8")
                             if fulltext_tei else None)
        self.busy = 0
        self.requests: list[dict[str, list[str]]] = []
        self._lock = threading.Lock()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # One buffered write per response and no Nagle: otherwise headers and body
            # leave as two segments and delayed ACKs add ~40 ms to every request.
            wbufsize = 1 << 16
            disable_nagle_algorithm = True

            def log_message(self, *args: object) -> None:
                pass

            def _send(self, code: int, body: str = "", ctype: str = "text/plain") -> None:
                data = body.encode("utf-8")
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path == "/api/isalive":
                    self._send(200, "true")
                elif self.path == "/api/version":
                    self._send(200, fake.version)
                else:
                    self._send(404, "not found")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if self.path == "/api/processFulltextDocument":
                    form, pdf = parse_multipart(self.headers.get("Content-Type", ""), raw)
                    with fake._lock:
                        fake.requests.append(form)
                        busy = fake.busy > 0
                        fake.busy -= busy
                    if busy:
                        self._send(503, "busy")
                        return
                    code, body = fake.answer_fulltext(pdf)
                    self._send(code, body, "application/xml")
                    return
                form = urllib.parse.parse_qs(raw.decode("utf-8"), keep_blank_values=True)
                with fake._lock:
                    fake.requests.append(form)
                    if fake.busy > 0:
                        fake.busy -= 1
                        self._send(503, "busy")
                        return
                if self.path != "/api/processCitationList":
                    self._send(404, "not found")
                    return
                code, body = fake.answer(form.get("citations", []))
                self._send(code, body, "application/xml")

        return Handler

    def answer_fulltext(self, pdf: bytes) -> tuple[int, str]:
        """The fulltext TEI given at start-up; markers in the PDF's bytes pick errors:
        ``GROBID-500``, ``GROBID-204``, ``GROBID-SLOW`` (sleeps ``slow_seconds``)."""
        if b"GROBID-500" in pdf:
            return 500, "[GENERAL] An exception occurred while running Grobid."
        if b"GROBID-204" in pdf:
            return 204, ""
        if b"GROBID-SLOW" in pdf:
            time.sleep(self.slow_seconds)
        if self.fulltext_tei is None:
            return 500, "[NO_FULLTEXT_FIXTURE]"
        return 200, self.fulltext_tei

    def answer(self, citations: list[str]) -> tuple[int, str]:
        joined = " ".join(citations)
        if "#500" in joined:
            return 500, "[GENERAL] An exception occurred while running Grobid."
        if "#204" in joined:
            return 204, ""
        if "#slow" in joined:
            time.sleep(self.slow_seconds)
        if "#garbage" in joined:
            return 200, "<TEI><listBibl><biblStruct>unclosed"
        blocks = []
        for i, citation in enumerate(citations):
            body = self.known.get(normalise_raw(citation))
            if body is None:
                body = (
                    "<biblStruct>\n\t<monogr>\n\t\t<imprint/>\n\t</monogr>\n"
                    f'\t<note type="raw_reference">{html.escape(citation, quote=False)}</note>\n'
                    "</biblStruct>"
                )
            blocks.append(body.replace("<biblStruct", f'<biblStruct xml:id="b{i}"', 1) + "\n\n")
        if "#drop" in joined:
            blocks = blocks[:-1]
        return 200, TEI_HEAD + "".join(blocks) + TEI_TAIL


def main(argv: list[str] | None = None) -> None:
    """``python -m sandcrawler_testkit.grobid_server [TEI...]``: used by the benchmarks
    as a separate process."""
    parser = _cli.parser(
        "sandcrawler_testkit.grobid_server",
        "Answer as GROBID on loopback with the real GROBID output in the TEI files\n"
        "given (processCitationList answers; --fulltext-tei for processFulltextDocument),\n"
        "and print the base URL (SANDCRAWLER_GROBID_URL). Serves until stdin closes\n"
        "(Ctrl-D), SIGTERM or Ctrl-C.")
    parser.add_argument("tei", nargs="*", type=Path,
                        help="TEI that GROBID returned from processCitationList")
    parser.add_argument("--fulltext-tei", type=Path, metavar="TEI",
                        help="TEI that GROBID returned from processFulltextDocument")
    parser.add_argument("--slow-seconds", type=float, default=5.0,
                        help="how long a #slow citation waits (default: 5)")
    _cli.add_port(parser, 0)
    args = parser.parse_args(argv)
    stop = _cli.stop_requested(stdin_eof=True)
    try:
        server = FakeGrobid(args.tei, slow_seconds=args.slow_seconds, port=args.port,
                            fulltext_tei=args.fulltext_tei)
    except (OSError, UnicodeDecodeError) as e:
        _cli.fail(parser, f"cannot read TEI: {e}")
    try:
        server.start()
    except OSError as e:
        _cli.fail(parser, _cli.listen_error(args.port, e))
    try:
        print(server.url, flush=True)
        stop.wait()
    finally:
        server.stop()


if __name__ == "__main__":  # pragma: no cover
    main()
