"""Authoritative metadata is never overwritten by extraction (``storage.precedence``):
every pair of sources through the catalogue on a real database and store, in both
orders; the issue's reproduction through the CLI; GROBID under a landing page through
file ingest's PDF processor; and the precedence table of docs/storage.md."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.cli import main
from sandcrawler.core.filemeta import file_metadata
from sandcrawler.ingest.found import FoundFile
from sandcrawler.ingest.pdf import PdfIngestProcessor
from sandcrawler.records.capture import CdxRecord
from sandcrawler.records.html_biblio import HtmlBiblio
from sandcrawler.records.ingest import IngestRequest
from sandcrawler.refs.reading import RefsWriter
from sandcrawler.storage.catalogue import Catalogue
from sandcrawler.storage.local import LocalBlobStore
from sandcrawler.storage.precedence import AUTHORITATIVE, Source
from sandcrawler.storage.resources import ResourceStore
from sandcrawler_testkit.grobid_server import FakeGrobid
from sandcrawler_testkit.pdfs import make_pdf
from tests.helpers.db import migrated_sqlite
from tests.helpers.paths import FIXTURES, REPO

# SQL: on SQLite and PostgreSQL
pytestmark = pytest.mark.both_backends

EXAMPLES = REPO / "examples"
#: every (higher, lower) pair of sources
PAIRS = list(itertools.combinations(Source, 2))


def _json_lines(text: str) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in text.splitlines() if line.strip()]


@pytest.fixture
def catalogue(tmp_path: Path) -> Iterator[Catalogue]:
    engine = migrated_sqlite(tmp_path / "precedence.sqlite3")
    yield Catalogue(engine, ResourceStore(LocalBlobStore(tmp_path / "store")))
    engine.dispose()


def test_the_ranking() -> None:
    assert list(Source) == ["user", "crossref", "jats", "request", "landing_page", "grobid",
                            "extract", "html", "pdf"]
    assert set(list(Source)[:5]) == AUTHORITATIVE
    assert [s.rank for s in Source] == list(range(9))


@pytest.mark.parametrize("higher_first", [True, False], ids=["higher-first", "lower-first"])
@pytest.mark.parametrize(("higher", "lower"), PAIRS, ids=[f"{h}>{lo}" for h, lo in PAIRS])
def test_a_higher_source_is_never_replaced_by_a_lower_one(
        catalogue: Catalogue, higher: Source, lower: Source, higher_first: bool) -> None:
    doc = catalogue.assign_uuid(doi="10.5555/pair")
    writes = [
        (higher, {"title": [f"{higher}'s title"], "DOI": "10.5555/pair", "volume": "1"}),
        # the same DOI in another case and the same volume agree: no conflict
        (lower, {"title": [f"{lower}'s title"], "DOI": "10.5555/PAIR", "volume": " 1 ",
                 "abstract": f"{lower}'s abstract"}),
    ]
    for source, fields in writes if higher_first else writes[::-1]:
        entry = catalogue.put_metadata(doc, fields, source=source)
    md = catalogue.metadata(doc)
    assert md["title"] == [f"{higher}'s title"] and md["DOI"] == "10.5555/pair"
    assert md["volume"] == "1"
    assert md["abstract"] == f"{lower}'s abstract"  # what the higher one left out: enriched
    assert md["conflicts"] == {lower: {"title": [f"{lower}'s title"]}}
    assert md["field_sources"] == {"title": higher, "DOI": higher, "volume": higher,
                                   "abstract": lower}
    # the request's identifiers alone never name the metadata
    assert md["metadata_source"] == (lower if higher == Source.REQUEST else higher)
    assert entry.title == f"{higher}'s title" and entry.doi == "10.5555/pair"


def test_the_same_source_again_replaces_its_own_word(catalogue: Catalogue) -> None:
    doc = catalogue.assign_uuid(doi="10.5555/again")
    catalogue.put_metadata(doc, {"title": ["Given"]})
    catalogue.put_metadata(doc, {"title": ["First reading"], "pdf_author": "X"},
                           source=Source.PDF)
    catalogue.put_metadata(doc, {"title": ["Second reading"]}, source=Source.PDF)
    catalogue.put_metadata(doc, {"title": ["Corrected"]})
    md = catalogue.metadata(doc)
    assert md["title"] == ["Corrected"] and md["pdf_author"] == "X"
    # a source's conflicts are those of its latest write
    assert md["conflicts"] == {"pdf": {"title": ["Second reading"]}}
    # a conflict that no longer disagrees is dropped
    catalogue.put_metadata(doc, {"title": ["Second  reading"]})
    assert "conflicts" not in catalogue.metadata(doc)


def test_an_identifier_under_another_name_is_the_same_field(catalogue: Catalogue) -> None:
    doc = catalogue.assign_uuid(doi="10.5555/given")
    catalogue.put_metadata(doc, {"doi": "10.5555/given"})
    entry = catalogue.put_metadata(doc, {"DOI": "10.5555/extracted"}, source=Source.GROBID)
    md = catalogue.metadata(doc)
    assert md["doi"] == "10.5555/given" and "DOI" not in md
    assert md["conflicts"] == {"grobid": {"DOI": "10.5555/extracted"}}
    assert entry.doi == "10.5555/given"  # the index reads the user's, not GROBID's


def test_metadata_written_before_the_rule_is_the_users(catalogue: Catalogue,
                                                       tmp_path: Path) -> None:
    pdf = tmp_path / "a.pdf"
    pdf.write_bytes(make_pdf(["old"], title="The PDF's own"))
    entry = catalogue.add_file(pdf)
    # as `store add --metadata` wrote it before: no metadata_source, no field_sources
    old = {"id": entry.uuid, "title": ["Given before"], "sha1": entry.sha1}
    catalogue.resources.put(entry.uuid, "metadata", orjson.dumps(old))
    catalogue.put_metadata(entry.uuid, {"title": ["The PDF's own"]}, source=Source.PDF)
    md = catalogue.metadata(entry.uuid)
    assert md["title"] == ["Given before"] and md["metadata_source"] == "user"
    assert md["conflicts"] == {"pdf": {"title": ["The PDF's own"]}}


def test_a_layer_cannot_claim_the_merges_own_keys(catalogue: Catalogue) -> None:
    doc = catalogue.assign_uuid(doi="10.5555/own")
    catalogue.put_metadata(doc, {"title": ["Given"]})
    catalogue.put_metadata(doc, {"title": ["Read"], "metadata_source": "user",
                                 "field_sources": {"title": "user"}, "conflicts": {}},
                           source=Source.PDF)
    md = catalogue.metadata(doc)
    assert md["title"] == ["Given"] and md["metadata_source"] == "user"
    assert md["field_sources"] == {"title": "user"}
    assert md["conflicts"] == {"pdf": {"title": ["Read"]}}


def test_store_add_then_process_force_keeps_the_given_title(cli: CliRunner,
                                                            tmp_path: Path) -> None:
    # the issue's reproduction, with a title of the user's that is not the PDF's own
    given = orjson.loads((EXAMPLES / "paper.metadata.json").read_bytes())
    given["title"] = ["The title the user gave"]
    meta = tmp_path / "meta.json"
    meta.write_bytes(orjson.dumps(given))
    pdf = str(EXAMPLES / "paper.pdf")
    added = cli.invoke(main, ["store", "add", pdf, "--metadata", str(meta)],
                       catch_exceptions=False)
    assert added.exit_code == 0, added.output
    (entry,) = _json_lines(added.stdout)
    processed = cli.invoke(main, ["process", pdf, "--force"], catch_exceptions=False)
    assert processed.exit_code == 0 and processed.stdout, processed.stderr
    (result,) = _json_lines(processed.stdout)
    assert result["status"] == "success" and result["uuid"] == entry["id"]
    got = cli.invoke(main, ["catalogue", "get", entry["id"]], catch_exceptions=False)
    (doc,) = _json_lines(got.stdout)
    metadata = doc["metadata"]
    assert metadata["title"] == ["The title the user gave"]
    assert metadata["author"] == given["author"] and metadata["DOI"] == given["DOI"]
    assert metadata["metadata_source"] == "user"
    # the PDF's own info title, recorded beside the given one
    assert metadata["conflicts"] == {"pdf": {"title": ["An example paper"]}}
    # what the PDF adds and the user did not say is kept (enrichment)
    assert metadata["pdf_author"] == "A. N. Author"
    assert metadata["field_sources"]["pdf_author"] == "pdf"
    assert metadata["field_sources"]["title"] == "user"
    assert metadata["pdf"]["page_count"] == 1  # the extraction's own record


def test_grobid_fills_under_a_landing_page(shared_data: Path, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """File ingest's PDF processor: the landing page's title and the request's DOI
    stay, GROBID's header fills what they do not say and its title is kept beside."""
    with FakeGrobid(fulltext_tei=FIXTURES / "grobid-0.4.1-sample2.tei.fulltext.xml",
                    slow_seconds=0.1) as grobid:
        monkeypatch.setenv("SANDCRAWLER_GROBID_URL", grobid.url)
        services = Services(load_settings())
        pdf = tmp_path / "paper.pdf"
        pdf.write_bytes(make_pdf(["A paper that GROBID will read"], title="PDF's own title"))
        meta = file_metadata(pdf)
        url = "https://example.org/paper.pdf"
        cdx = CdxRecord(surt="org,example)/paper.pdf", datetime="20200102030405", url=url,
                        mimetype=meta.mimetype, status_code=200, sha1hex=meta.sha1hex,
                        warc_csize=100, warc_offset=0, warc_path="crawl.warc.gz")
        found = FoundFile(path=pdf, file_meta=meta, cdx=cdx,
                          request=IngestRequest(ingest_type="pdf", base_url=url),
                          biblio=HtmlBiblio(title="The landing page's title",
                                            contrib_raw_names=["A. Author"]),
                          identifiers={"doi": "10.5555/landing"},
                          landing_url="https://example.org/paper")
        processor = PdfIngestProcessor(services.pdf_processor(), RefsWriter(services.engine))
        try:
            out = processor.process(found)
            assert out.status == "success" and out.grobid_status == "success"
            md = services.catalogue.metadata(out.uuid or "")
        finally:
            processor.close()
            services.close()
    grobid_title = ("A Virtual Machine Introspection Based Architecture for "
                    "Intrusion Detection")
    assert md["title"] == ["The landing page's title"]
    assert md["author"] == [{"name": "A. Author"}] and md["DOI"] == "10.5555/landing"
    assert md["metadata_source"] == "landing_page"
    assert md["abstract"] and md["field_sources"]["abstract"] == "grobid"
    assert md["conflicts"]["grobid"]["title"] == [grobid_title]
    assert [a["family"] for a in md["conflicts"]["grobid"]["author"]] == [
        "Garfinkel", "Rosenblum"]
    assert md["conflicts"]["pdf"] == {"title": ["PDF's own title"]}
    assert md["ingest"]["terminal_url"] == url


def test_docs_state_the_precedence() -> None:
    text = (REPO / "docs" / "storage.md").read_text(encoding="utf-8")
    section = text.split("### Precedence of sources", 1)[1].split("\n#", 1)[0]
    rows = re.findall(r"^\| (\d) \| `([a-z_]+)` \|", section, flags=re.MULTILINE)
    assert rows == [(str(i + 1), str(s)) for i, s in enumerate(Source)]
