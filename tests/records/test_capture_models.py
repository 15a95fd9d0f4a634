"""The records results carry about one file: CdxRecord, Terminal, FileMeta."""

from __future__ import annotations

import base64
import hashlib

import pytest
from pydantic import ValidationError

from sandcrawler.records.capture import CdxRecord
from sandcrawler.records.files import FileMeta, Terminal
from sandcrawler.records.fileset import FilesetFile
from sandcrawler.web.archive.cdx import parse_cdx_line

DIGEST = hashlib.sha1(b"sandcrawler").digest()
HEX = DIGEST.hex()
B32 = base64.b32encode(DIGEST).decode()
LINE = (f"org,example)/a.pdf 20170706005950 http://example.org/a.pdf application/pdf 200 "
        f"{B32} - - 361006 17120058 CRAWL/file.warc.gz")


def test_a_cdx_line_in_every_form() -> None:
    cdx = parse_cdx_line(LINE)
    assert cdx.to_cdx() == {
        "surt": "org,example)/a.pdf", "datetime": "20170706005950",
        "url": "http://example.org/a.pdf", "mimetype": "application/pdf", "status_code": 200,
        "sha1b32": B32, "sha1hex": HEX, "warc_csize": 361006, "warc_offset": 17120058,
        "warc_path": "CRAWL/file.warc.gz"}
    assert cdx.to_terminal().to_json() == {
        "terminal_url": "http://example.org/a.pdf", "terminal_dt": "20170706005950",
        "terminal_status_code": 200, "terminal_sha1hex": HEX}
    assert cdx.cell() == {"surt": "org,example)/a.pdf", "url": "http://example.org/a.pdf",
                          "dt": "20170706005950", "warc": "CRAWL/file.warc.gz",
                          "offset": "17120058", "c_size": "361006"}
    row = cdx.to_row()
    assert row["sha1hex"] == HEX and row["location"] is None and "sha1b32" not in row
    assert CdxRecord.from_row({**row, "row_created": "ignored"}) == cdx
    # the cdx object reads back: sha1b32 is the sha1 in another form
    assert CdxRecord.model_validate(cdx.to_cdx()) == cdx
    assert CdxRecord.model_validate({**cdx.to_cdx(), "sha1hex": None}) == cdx


@pytest.mark.parametrize("change", [
    {"sha1hex": "0" * 40},  # disagrees with sha1b32
    {"sha1b32": "NOT-A-SHA1"},
    {"datetime": "2017-07-06"},
    {"warc_offset": -1},
    {"url": ""},
    {"colour": "red"},
])
def test_bad_cdx_records(change: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        CdxRecord.model_validate({**parse_cdx_line(LINE).to_cdx(), **change})


def test_file_meta_json_and_its_old_size_name() -> None:
    meta = FileMeta(size_bytes=3, sha1hex=HEX, sha256hex="a" * 64, md5hex="b" * 32,
                    mimetype="text/csv")
    assert meta.to_json() == {"size_bytes": 3, "sha1hex": HEX, "sha256hex": "a" * 64,
                              "md5hex": "b" * 32, "mimetype": "text/csv"}
    old = {**meta.to_json()}
    old["size"] = old.pop("size_bytes")
    assert FileMeta.model_validate(old) == meta  # results and item records written before
    for bad in ({"sha1hex": B32}, {"size_bytes": -1}, {"md5hex": "B" * 32}):
        with pytest.raises(ValidationError):
            FileMeta.model_validate({**meta.to_json(), **bad})


def test_objects_in_results_keep_their_null_keys() -> None:
    """Results leave out fields that are None; the objects inside them do not."""
    terminal = Terminal(terminal_url="https://example.org/x", terminal_dt="20200102030405")
    out = FilesetFile(terminal=terminal).to_json()
    assert out == {"terminal": {"terminal_url": "https://example.org/x",
                                "terminal_dt": "20200102030405",
                                "terminal_status_code": None, "terminal_sha1hex": None}}
    assert FilesetFile.model_validate(out).terminal == terminal
