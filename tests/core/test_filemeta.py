"""File metadata: one pass of sha1/sha256/md5/size, and MIME types sniffed from bytes."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import lzma
import os
import random
import sqlite3
import struct
import tarfile
import zipfile
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest
from PIL import Image
from warcio.warcwriter import WARCWriter

from sandcrawler.core.errors import RecordError
from sandcrawler.core.filemeta import CHUNK, file_metadata, hash_chunks
from sandcrawler.core.mime import DOCX, SNIFF_BYTES, is_jats, sniff_mime
from tests.helpers.paths import FIXTURES, SHARED_DATA

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


# --- a real sample of every type we name ----------------------------------------------------


def _zip(members: list[tuple[str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members:
            # EPUB's mimetype entry is stored, first (as the standard asks)
            z.writestr(name, data, zipfile.ZIP_STORED if name == "mimetype" else None)
    return buf.getvalue()


def _image(fmt: str) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 6), (200, 30, 30)).save(buf, fmt)
    return buf.getvalue()


def _tar() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        data = b"a,b\n1,2\n"
        info = tarfile.TarInfo("dataset/table.csv")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _warc() -> bytes:
    buf = io.BytesIO()
    writer = WARCWriter(buf, gzip=False)
    writer.write_record(writer.create_warcinfo_record("x.warc", {"software": "test"}))
    return buf.getvalue()


def _sqlite(tmp: Path) -> bytes:
    with closing(sqlite3.connect(tmp / "t.sqlite3")) as db:
        db.execute("CREATE TABLE t (a)")
        db.commit()
    return (tmp / "t.sqlite3").read_bytes()


#: HDF5 superblock version 0 (HDF5 File Format Specification, "Superblock"): the
#: signature, versions 0, offsets and lengths of 8 bytes, group K 4/16, no flags
HDF5 = (b"\x89HDF\r\n\x1a\n" + bytes([0, 0, 0, 0, 0, 8, 8, 0]) + struct.pack("<HHI", 4, 16, 0)
        + struct.pack("<Q", 0) + b"\xff" * 8 + struct.pack("<Q", 2048) + b"\xff" * 8)
#: an empty NetCDF classic file (NetCDF Classic Format Specification): magic,
#: numrecs 0, then dim_list, gatt_list and var_list ABSENT (ZERO ZERO each)
NETCDF = b"CDF\x01" + b"\x00" * 4 + b"\x00" * 24
#: Parquet (Apache Parquet File Format): "PAR1", then the first page header (Thrift)
PARQUET = b"PAR1\x15\x00\x15\x1c\x15\x1c,\x15\x04\x15\x00\x15\x06\x15\x06\x00\x00"
#: an OLE2 compound file header (MS-CFB 2.2) as Word 97-2003 writes it
OLE2 = (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 16
        + struct.pack("<HHHHH", 0x3E, 3, 0xFFFE, 9, 6) + b"\x00" * 478)
JATS = (b'<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE article PUBLIC "-//NLM//DTD JATS '
        b'(Z39.96) Journal Publishing DTD v1.2 20190208//EN" "JATS-journalpublishing1.dtd">\n'
        b'<article article-type="research-article"><front><journal-meta/></front></article>\n')
CSV = b'site,year,"count, adjusted"\n' + b"".join(b'a%d,20%02d,"%d,5"\n' % (i, i, i)
                                               for i in range(800))

SAMPLES: list[tuple[str, bytes | Callable[[Path], bytes], str]] = [
    ("pdf", b"%PDF-1.5\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n",
     "application/pdf"),
    ("pdf after junk", b"HTTP/1.0 200 OK\r\n\r\n%PDF-1.4\n", "application/pdf"),
    ("postscript", b"%!PS-Adobe-3.0\n%%Creator: dvips\n", "application/postscript"),
    ("eps, DOS binary header", b"\xc5\xd0\xd3\xc6\x1e\x00\x00\x00", "application/postscript"),
    ("xml (TEI)", b'<?xml version="1.0"?>\n<TEI xmlns="http://www.tei-c.org/ns/1.0"/>',
     "application/xml"),
    ("jats", JATS, "application/xml"),
    ("html", b"<!DOCTYPE html>\n<html lang=en><head><title>x</title>", "text/html"),
    ("html in latin-1", b"<html><body>caf\xe9 cr\xe8me</body></html>", "text/html"),
    ("xhtml", b'<?xml version="1.0"?>\n<html xmlns="http://www.w3.org/1999/xhtml">', "text/html"),
    ("word .doc", OLE2, "application/msword"),
    ("word .docx", _zip([("[Content_Types].xml", b"<Types/>"),
                         ("word/document.xml", b"<w:document/>")]), DOCX),
    ("epub", _zip([("mimetype", b"application/epub+zip"),
                   ("META-INF/container.xml", b"<container/>")]), "application/epub+zip"),
    ("zip", _zip([("data/table.csv", b"a,b\n1,2\n")]), "application/zip"),
    ("gzip", gzip.compress(b"some text\n" * 100), "application/gzip"),
    ("png", _image("PNG"), "image/png"),
    ("jpeg", _image("JPEG"), "image/jpeg"),
    ("gif", _image("GIF"), "image/gif"),
    ("tiff", _image("TIFF"), "image/tiff"),
    ("webp", _image("WEBP"), "image/webp"),
    ("json", b'{"title": "A dataset", "files": [1, 2]}\n', "application/json"),
    ("json lines", b'{"a": 1}\n{"a": 2}\n', "application/json"),
    ("plain text", b"Just some words,\nand more words.\n", "text/plain"),
    ("text that starts like a magic number", b"Article 1. The parties agree.\n",
     "text/plain"),
    ("csv", CSV, "text/csv"),
    ("csv starting like a bitmap", b"BMI,age\n21.5,30\n19.0,41\n", "text/csv"),
    ("tsv", b"site\tyear\tcount\na, b\t2001\t3\nc\t2002\t4\n", "text/tab-separated-values"),
    ("hdf5", HDF5, "application/x-hdf5"),
    ("hdf5 after a user block", b"\x00" * 512 + HDF5, "application/x-hdf5"),
    ("netcdf classic", NETCDF, "application/x-netcdf"),
    ("netcdf 64-bit offset", b"CDF\x02" + NETCDF[4:], "application/x-netcdf"),
    ("parquet", PARQUET, "application/vnd.apache.parquet"),
    ("tar", _tar(), "application/x-tar"),
    ("tar.gz", gzip.compress(_tar()), "application/gzip"),
    ("rtf", b"{\\rtf1\\ansi\\deff0 {\\fonttbl}}", "application/rtf"),
    ("warc", _warc(), "application/warc"),
    ("bzip2", bz2.compress(b"x" * 1000), "application/x-bzip2"),
    ("xz", lzma.compress(b"x" * 1000), "application/x-xz"),
    ("sqlite", _sqlite, "application/x-sqlite3"),
    ("empty", b"", "application/octet-stream"),
]


@pytest.mark.parametrize(("sample", "mime"), [(s[1], s[2]) for s in SAMPLES],
                         ids=[s[0] for s in SAMPLES])
def test_every_type_we_name(sample: bytes | Callable[[Path], bytes], mime: str,
                            tmp_path: Path) -> None:
    data = sample if isinstance(sample, bytes) else sample(tmp_path)
    assert sniff_mime(data) == mime
    assert file_metadata(data).mimetype == mime
    assert file_metadata(io.BytesIO(data)).mimetype == mime


def test_jats_sample_is_jats() -> None:
    assert is_jats(JATS)
    assert not is_jats(b'<?xml version="1.0"?>\n<TEI xmlns="http://www.tei-c.org/ns/1.0"/>')


def test_only_the_head_is_sniffed() -> None:
    # a table longer than the sample: its last line, cut by the sample, does not count
    assert len(CSV) > SNIFF_BYTES and sniff_mime(CSV) == "text/csv"
    wide = b"name,value\n" + b"".join(b"%s,%d\n" % (b"x" * 300, i) for i in range(40))
    assert len(wide) > SNIFF_BYTES and sniff_mime(wide) == "text/csv"
    # a signature past the sample is not seen
    assert sniff_mime(b"\x00" * SNIFF_BYTES + b"%PDF-1.4") == "application/octet-stream"


def test_random_bytes_are_not_named() -> None:
    """Magic numbers shorter than three bytes match random data; they are not used."""
    rng = random.Random(13)
    for _ in range(300):
        data = rng.randbytes(4096)
        assert sniff_mime(data) == "application/octet-stream", data[:16]


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
