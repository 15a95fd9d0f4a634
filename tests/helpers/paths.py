"""Where the tests find the repository, their own data and the shared real data."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: data recorded for the tests, in the repository (tests/data)
TEST_DATA = REPO / "tests" / "data"
#: real data beside the repository (../shared/data), never copied in: tests skip without it
SHARED_DATA = Path(os.environ.get("SANDCRAWLER_SHARED_DATA", REPO.parent / "shared" / "data"))
FIXTURES = SHARED_DATA / "sandcrawler-fixtures"
PDFS = SHARED_DATA / "pdfs"
CROSSREF_WORKS = {
    "10.1007/978-3-030-64953-1_4": "crossref_api_work_978-3-030-64953-1_4.json",
    "10.1017/s1047951103000064": "crossref_api_work_s1047951103000064.json",
}
GROBID_TEI = ["grobid_refs_978-3-030-64953-1_4.tei.xml", "grobid_refs_s1047951103000064.tei.xml"]
