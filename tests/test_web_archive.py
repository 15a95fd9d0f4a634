"""Our web archive on its own: WARC records, gzip members, redirects, revisits."""

from __future__ import annotations

import io
import os
from pathlib import Path

from sandcrawler.db import migrate
from sandcrawler.db.engine import make_engine
from sandcrawler.storage.local import LocalBlobStore
from sandcrawler.web.archive import WebArchive
from sandcrawler.web.cdx import surt
from sandcrawler.web.fetch import HttpFetcher
from sandcrawler_testkit.http_files import FileServer


def _archive(tmp_path: Path, server: FileServer) -> WebArchive:
    engine = make_engine(f"sqlite:///{tmp_path / 'db.sqlite3'}")
    migrate.upgrade(engine)
    fetcher = HttpFetcher(routes={"https://example.org": server.url})
    return WebArchive(LocalBlobStore(tmp_path / "store"), engine, fetcher)


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
