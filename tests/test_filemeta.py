"""File metadata: one pass of sha1/sha256/md5/size, and MIME types sniffed from bytes."""

from __future__ import annotations

import hashlib
import io
import os
from pathlib import Path

import pytest

from sandcrawler.errors import RecordError
from sandcrawler.filemeta import CHUNK, DOCX, file_metadata, hash_chunks, is_jats, sniff_mime
from tests.conftest import FIXTURES, SHARED_DATA

PDFS = sorted((SHARED_DATA / "pdfs").glob("*.pdf")) if SHARED_DATA.is_dir() else []


def expected(data: bytes) -> tuple[int, str, str, str]:
    return (len(data), hashlib.sha1(data).hexdigest(), hashlib.sha256(data).hexdigest(),
            hashlib.md5(data).hexdigest())


@pytest.mark.parametrize("size", [0, 1, 65535, 65536, CHUNK - 1, CHUNK, 3 * CHUNK + 17])
def test_hashes_in_one_pass(size: int, tmp_path: Path) -> None:
    data = os.urandom(size)
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    for source in (path, str(path), data, io.BytesIO(data)):
        meta = file_metadata(source)
        assert (meta.size_bytes, meta.sha1hex, meta.sha256hex, meta.md5hex) == expected(data)


def test_hash_chunks_any_split() -> None:
    data = os.urandom(700_000)
    pieces = [data[:1], data[1:100_000], data[100_000:100_001], data[100_001:]]
    assert hash_chunks(pieces, ["sha1", "md5"]) == {
        "sha1": hashlib.sha1(data).hexdigest(), "md5": hashlib.md5(data).hexdigest()}


@pytest.mark.skipif(not PDFS, reason="../shared/data/pdfs not present")
def test_real_pdfs() -> None:
    for pdf in PDFS:
        data = pdf.read_bytes()
        meta = file_metadata(pdf)
        assert meta.mimetype == "application/pdf", pdf.name
        assert (meta.size_bytes, meta.sha1hex, meta.sha256hex, meta.md5hex) == expected(data)


@pytest.mark.skipif(not FIXTURES.is_dir(), reason="../shared/data not present")
@pytest.mark.parametrize(("name", "mime"), [
    ("dummy.pdf", "application/pdf"),
    ("scielo_article.jats.xml", "application/xml"),
    ("grobid-0.4.1-sample2.tei.fulltext.xml", "application/xml"),
    ("plos_one_article.html", "text/html"),
    ("elife_article.html", "text/html"),
    ("dlib_05vanhyning.html", "text/html"),
    ("crossref_api_work_s1047951103000064.json", "application/json"),
    ("example.cdx", "text/plain"),
])
def test_real_fixtures(name: str, mime: str) -> None:
    assert file_metadata(FIXTURES / name).mimetype == mime


@pytest.mark.skipif(not FIXTURES.is_dir(), reason="../shared/data not present")
def test_jats_is_told_from_other_xml() -> None:
    assert is_jats((FIXTURES / "scielo_article.jats.xml").read_bytes())
    assert not is_jats((FIXTURES / "grobid-0.4.1-sample2.tei.fulltext.xml").read_bytes())
    pmc = (b'<?xml version="1.0"?>\n<!DOCTYPE article PUBLIC "-//NLM//DTD JATS (Z39.96) '
           b'Journal Archiving and Interchange DTD v1.2 20190208//EN" "JATS-archivearticle1.dtd">'
           b"\n<article><front/></article>")
    assert sniff_mime(pmc) == "application/xml" and is_jats(pmc)


@pytest.mark.parametrize(("head", "mime"), [
    (b"%PDF-1.7\n%\xe2\xe3", "application/pdf"),
    (b"\r\n\r\njunk before the header %PDF-1.4\n", "application/pdf"),  # common in crawls
    (b"%!PS-Adobe-3.0\n", "application/postscript"),
    (b"\x04%!PS-Adobe-2.0\n", "application/postscript"),
    (b"\xc5\xd0\xd3\xc6\x1e\x00\x00\x00", "application/postscript"),
    (b"\x1f\x8b\x08\x00", "application/gzip"),
    (b"\x89PNG\r\n\x1a\n\x00\x00", "image/png"),
    (b"\xff\xd8\xff\xe0\x00\x10JFIF", "image/jpeg"),
    (b"PK\x03\x04" + b"\x00" * 26 + b"mimetypeapplication/epub+zip", "application/epub+zip"),
    (b"PK\x03\x04" + b"\x00" * 26 + b"[Content_Types].xml....word/document.xml", DOCX),
    (b"PK\x03\x04" + b"\x00" * 26 + b"data.csv", "application/zip"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "application/msword"),
    (b"<!DOCTYPE html>\n<html><head>", "text/html"),
    (b"\xef\xbb\xbf  <html lang=en>", "text/html"),
    (b"<!-- a comment -->\n<HTML>", "text/html"),
    (b'<?xml version="1.0"?>\n<html xmlns="http://www.w3.org/1999/xhtml">', "text/html"),
    (b'<?xml version="1.0"?>\n<TEI xmlns="http://www.tei-c.org/ns/1.0">', "application/xml"),
    (b"<article article-type='research-article'>", "application/xml"),
    (b'{"a": 1}', "application/json"),
    (b"Just some words.\n", "text/plain"),
    (b"caf\xc3", "text/plain"),  # UTF-8 cut inside the sample
    (b"", "application/octet-stream"),
    (b"\x00\x01\x02\x03binary", "application/octet-stream"),
    (b"\xff\xfe\xfd not utf-8 at all \x80\x81", "application/octet-stream"),
])
def test_sniff(head: bytes, mime: str) -> None:
    assert sniff_mime(head) == mime


def test_mime_never_comes_from_the_name(tmp_path: Path) -> None:
    html = tmp_path / "paper.pdf"
    html.write_bytes(b"<!DOCTYPE html><html><body>Access denied</body></html>")
    assert file_metadata(html).mimetype == "text/html"
    pdf = tmp_path / "download.html"
    pdf.write_bytes(b"%PDF-1.4\n" + os.urandom(100))
    assert file_metadata(pdf).mimetype == "application/pdf"
    noise = tmp_path / "random.pdf"
    noise.write_bytes(b"\x00" + os.urandom(5000))
    assert file_metadata(noise).mimetype == "application/octet-stream"


def test_unreadable_sources(tmp_path: Path) -> None:
    with pytest.raises(RecordError) as e:
        file_metadata(tmp_path / "missing.pdf")
    assert e.value.status == "unreadable"
    with pytest.raises(RecordError) as e:
        file_metadata(tmp_path)
    assert e.value.status == "not-a-file"
