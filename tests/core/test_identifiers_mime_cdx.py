"""Small normalisers every storage path relies on: sha1 forms, ids, MIME types, CDX lines."""

from __future__ import annotations

import base64
import hashlib

import pytest

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.core.errors import ConfigError, InvalidName, RecordError
from sandcrawler.core.identifiers import (
    normalize_arxiv,
    normalize_pmcid,
    normalize_pmid,
    sha1_base32,
    sha1_hex,
    sha1_key,
)
from sandcrawler.core.mime import normalize_mime
from sandcrawler.storage.local import LocalBlobStore
from sandcrawler.web.archive.cdx import CdxError, is_cdx_header, parse_cdx_line

DIGEST = hashlib.sha1(b"sandcrawler").digest()
HEX = DIGEST.hex()
B32 = base64.b32encode(DIGEST).decode()


@pytest.mark.parametrize("form", [HEX, HEX.upper(), B32, B32.lower(), f"sha1:{HEX}",
                                  f"SHA1:{B32}", DIGEST, f"  {HEX} "])
def test_sha1_forms_agree(form: object) -> None:
    assert sha1_key(form) == DIGEST
    assert sha1_hex(form) == HEX
    assert sha1_base32(form) == B32


@pytest.mark.parametrize("bad", [HEX[:-1], HEX + "0", "g" * 40, B32[:-1], B32[:-1] + "1",
                                 B32[:-1] + "8", DIGEST[:19], DIGEST + b"\0", None, 12345, ""])
def test_sha1_bad_forms(bad: object) -> None:
    with pytest.raises(InvalidName) as e:
        sha1_key(bad)
    assert e.value.status == "bad-sha1"


def test_pmid_pmcid_arxiv() -> None:
    assert normalize_pmid("pmid: 12345") == "12345"
    assert normalize_pmcid("pmc123") == normalize_pmcid("PMCID:PMC123") == "PMC123"
    assert normalize_pmcid("123") == "PMC123"
    assert normalize_arxiv("arXiv:2101.00001v2") == "2101.00001v2"
    assert normalize_arxiv("hep-th/9901001") == "hep-th/9901001"
    for fn, bad in [(normalize_pmid, "12a"), (normalize_pmid, "0123"), (normalize_pmcid, "PMC"),
                    (normalize_arxiv, "2101.1"), (normalize_arxiv, "../etc")]:
        with pytest.raises(InvalidName):
            fn(bad)


@pytest.mark.parametrize(("raw", "norm"), [
    ("application/pdf", "application/pdf"),
    ("Application/PDF; charset=binary", "application/pdf"),
    ("application/x-pdf", "application/pdf"),
    ("application/x-postscript", "application/postscript"),
    ("text/xml", "application/xml"),
    ("application/jats+xml", "application/xml"),
    ("text/html; charset=utf-8", "text/html"),
    ("application/xhtml+xml", "text/html"),
    ("unk", "application/octet-stream"),
    ("-", "application/octet-stream"),
    ("", "application/octet-stream"),
    (None, "application/octet-stream"),
    ("binary/octet-stream", "application/octet-stream"),
    ("not a mime", "application/octet-stream"),
    ("image/png", "image/png"),
    # dataset formats: the names servers use, onto the ones the sniffer gives
    ("application/x-gzip", "application/gzip"),
    ("application/csv", "text/csv"),
    ("text/tsv", "text/tab-separated-values"),
    ("application/x-parquet", "application/vnd.apache.parquet"),
    ("application/netcdf", "application/x-netcdf"),
    ("application/tar", "application/x-tar"),
    ("application/x-hdf5", "application/x-hdf5"),
])
def test_normalize_mime(raw: str | None, norm: str) -> None:
    assert normalize_mime(raw) == norm


GOOD = (f"org,example)/a.pdf 20170706005950 http://example.org/a.pdf application/pdf 200 "
        f"{B32} - - 361006 17120058 CRAWL/file.warc.gz")


def test_parse_cdx_line() -> None:
    cdx = parse_cdx_line(GOOD.encode())
    assert (cdx.surt, cdx.datetime, cdx.url, cdx.mimetype, cdx.status_code) == (
        "org,example)/a.pdf", "20170706005950", "http://example.org/a.pdf", "application/pdf", 200)
    assert (cdx.sha1hex, cdx.warc_csize, cdx.warc_offset, cdx.warc_path) == (
        HEX, 361006, 17120058, "CRAWL/file.warc.gz")
    assert not cdx.is_revisit
    revisit = parse_cdx_line(GOOD.replace("application/pdf 200", "warc/revisit -"))
    assert revisit.is_revisit and revisit.status_code is None
    assert is_cdx_header(" CDX N b a m s k r M S V g") and not is_cdx_header(GOOD)


@pytest.mark.parametrize(("line", "why"), [
    (GOOD.rsplit(" ", 1)[0], "10 space-separated fields"),
    (GOOD + " extra", "12 space-separated fields"),
    (GOOD.replace("20170706005950", "2017-07-06"), "timestamp"),
    (GOOD.replace(" 200 ", " OK "), "status"),
    (GOOD.replace(B32, "NOTASHA1"), "digest"),
    (GOOD.replace("361006", "-"), "compressed size"),
    (GOOD.replace("17120058", "12x"), "offset"),
    (GOOD.replace("CRAWL/file.warc.gz", "-"), "WARC"),
    (GOOD.encode().replace(b"example", b"ex\xffample"), "UTF-8"),
])
def test_bad_cdx_lines(line: str | bytes, why: str) -> None:
    with pytest.raises(CdxError) as e:
        parse_cdx_line(line)
    assert e.value.status == "bad-cdx" and why in str(e.value)
    assert isinstance(e.value, RecordError)


def test_store_url_picks_the_backend(tmp_path) -> None:  # type: ignore[no-untyped-def]
    store = Services(load_settings()).blobs
    assert isinstance(store, LocalBlobStore)
    assert store.root == (tmp_path / "data" / "store")  # default: data_dir/store
    store = Services(load_settings(store_url=f"file://{tmp_path}/elsewhere")).blobs
    assert isinstance(store, LocalBlobStore) and store.root == tmp_path / "elsewhere"
    with pytest.raises(ConfigError, match=r"unsupported store\.url"):
        _ = Services(load_settings(store_url="ftp://host/x")).blobs
    with pytest.raises(ConfigError, match="bucket"):
        _ = Services(load_settings(store_url="s3://")).blobs


def test_pdftable_name_from_settings() -> None:
    assert Services(load_settings(env="prod", pdftable_version=0)).pdftable_name == (
        "wbgrp-journal-extract-0-prod")
    assert Services(load_settings()).pdftable_name == "wbgrp-journal-extract-0-dev"


@pytest.mark.parametrize(("line", "why"), [
    (f"org,example)/ 20200101000000 http://example.org/ application/pdf 200 {'A' * 32} - - "
     f"{'9' * 5000} 0 a.warc.gz", "5,000 digits"),
    (f"org,example)/ 20200101000000 http://example.org/\x00 application/pdf 200 {'A' * 32} - - "
     "10 0 a.warc.gz", "control characters"),
    (f"org,example)/ 20200101000000 http://example.org/ application/pdf 200 {'A' * 32} - - "
     "10 0 a\x01.warc.gz", "control characters"),
])
def test_cdx_numbers_and_control_characters_are_bad_cdx(line: str, why: str) -> None:
    """Issue 14 B4: a 5,000-digit offset raised ValueError (internal-error); a NUL
    in a field was accepted."""
    with pytest.raises(RecordError) as e:
        parse_cdx_line(line)
    assert e.value.status == "bad-cdx" and why in str(e.value)
