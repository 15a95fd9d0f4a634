"""``sandcrawler extract --consolidate``: the header matched against the catalog
(the demo's Crossref works, persisted and indexed), the page's values kept and
the matched work's filling what the page did not say; the same merge the
GROBID-compatible service's consolidateHeader uses (match/consolidate.py)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from grobid_tei_xml.types import GrobidAuthor, GrobidBiblio

from sandcrawler.demo.catalog import demo_works
from sandcrawler.match.consolidate import merge
from tests.grobid.serving import PDFS
from tests.helpers.cli import invoke
from tests.helpers.isolation import isolated


def test_extract_consolidate_fills_what_the_page_did_not_say(tmp_path: Path) -> None:
    with isolated(tmp_path):
        works = tmp_path / "works.jsonl"
        works.write_bytes(b"".join(orjson.dumps(w) + b"\n" for w in demo_works()))
        assert invoke(["persist", "crossref", str(works)]).exit_code == 0
        assert invoke(["match", "index"]).exit_code == 0
        plain = invoke(["extract", "--header-only", str(PDFS["plos"])])
        consolidated = invoke(["extract", "--header-only", "--consolidate",
                               str(PDFS["plos"]), str(PDFS["peerj"])])
    assert plain.exit_code == 0 and consolidated.exit_code == 0, consolidated.stderr
    before = orjson.loads(plain.stdout.splitlines()[0])
    plos, peerj = (orjson.loads(line) for line in consolidated.stdout.splitlines())
    assert "consolidation" not in before
    done = plos["consolidation"]
    assert done["doi"] == plos["header"]["doi"] == "10.1371/journal.pone.0213978"
    # the catalog's work adds its publisher, which the page did not print
    assert before["header"].get("publisher") is None
    assert plos["header"]["publisher"] == "Public Library of Science"
    assert "publisher" in done["filled"]
    # what the page said stands: its title and authors as read
    assert plos["header"]["title"] == before["header"]["title"]
    assert [a["full_name"] for a in plos["header"]["authors"]] == \
        [a["full_name"] for a in before["header"]["authors"]]
    assert peerj["consolidation"] is None or peerj["consolidation"]["doi"]


def test_process_stores_the_header_consolidated_with_the_identified_work(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``process`` with the cascade and a catalog: the document identified
    (``match0``), and its header with the work's metadata filled in where the
    page said nothing, in ``match0:minfo``."""
    with isolated(tmp_path, SANDCRAWLER_EXTRACT_ENABLED="1"):
        works = tmp_path / "works.jsonl"
        works.write_bytes(b"".join(orjson.dumps(w) + b"\n" for w in demo_works()))
        assert invoke(["persist", "crossref", str(works)]).exit_code == 0
        assert invoke(["match", "index"]).exit_code == 0
        result = invoke(["process", str(PDFS["plos"])])
        assert result.exit_code == 0, result.stderr
        sha1 = orjson.loads(result.stdout.splitlines()[0])["sha1hex"]
        row = orjson.loads(invoke(["pdftable", "get", sha1, "-c", "match0", "-c",
                                   "extract0"]).stdout)
    match0, extract0 = row["match0"], row["extract0"]
    assert match0["doi"] == "10.1371/journal.pone.0213978"
    info = match0["minfo"]
    assert info["consolidation"]["doi"] == match0["doi"]
    assert "publisher" in info["consolidation"]["filled"]
    header = info["header"]
    assert header["publisher"] == "Public Library of Science"
    # the page's title as the cascade read it, kept; the cascade's own cell untouched
    assert header["title"] == extract0["xheader"]["title"]
    assert "publisher" not in extract0["xheader"]


def test_extract_consolidate_without_a_catalog_says_so(tmp_path: Path) -> None:
    with isolated(tmp_path):
        result = invoke(["extract", "--consolidate", str(PDFS["plos"])])
    assert result.exit_code != 0
    assert "--consolidate needs a catalog" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("keep_read", [True, False])
def test_merge_keeps_or_replaces_what_the_page_said(keep_read: bool) -> None:
    read = GrobidBiblio(authors=[GrobidAuthor(full_name="R Howarth", surname="Howarth")],
                        title="Nitrogen fixation", journal="Limnol Oceanogr", volume="33")
    work = {"title": ["Nitrogen fixation in freshwater, estuarine and marine ecosystems"],
            "author": [{"given": "Robert W.", "family": "Howarth"}],
            "container-title": ["Limnology and Oceanography"], "volume": "33",
            "issue": "4", "page": "688-701", "issued": {"date-parts": [[1988, 7]]}}
    done = merge(read, work, "10.5555/x", keep_read=keep_read)
    assert done.doi == read.doi == "10.5555/x"
    assert {"doi", "issue", "pages", "first_page", "last_page", "date"} <= set(done.filled)
    assert set(done.differs) == {"title", "journal"}  # the volume agrees
    assert (read.issue, read.first_page, read.date) == ("4", "688", "1988-07")
    assert read.authors[0].given_name == "Robert W."
    if keep_read:
        assert (read.title, read.journal) == ("Nitrogen fixation", "Limnol Oceanogr")
        assert read.authors[0].full_name == "R Howarth"
    else:
        assert read.journal == "Limnology and Oceanography"
        assert read.title.startswith("Nitrogen fixation in freshwater")
