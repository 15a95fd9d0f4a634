"""consolidateHeader and consolidateCitations against our own catalog: the demo's
Crossref works in the database and the match index, a server started on them."""

from __future__ import annotations

from collections.abc import Iterator

import orjson
import pytest
from grobid_tei_xml import parse_citation_list_xml, parse_citation_xml, parse_document_xml

from sandcrawler.demo.catalog import STAND_IN_PREFIX, demo_works
from tests.grobid.serving import PDFS, Server, start
from tests.helpers.cli import invoke
from tests.helpers.isolation import isolated

PLOS = PDFS["plos"].read_bytes()
#: the first reference of the PLOS article, as printed (its work is in the catalog)
FIRST = ("Cheng Z, Shi Y, Zhang L, Zhu G, Diao X, Cui Z. Occurrence of reticuloendotheliosis "
         "in Chinese partridge. J Vet Med Sci. 2007;69(12):1295-8.")


@pytest.fixture(scope="module")
def with_catalog(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("grobid-serve-catalog")
    with isolated(root):
        works = root / "works.jsonl"
        works.write_bytes(b"".join(orjson.dumps(w) + b"\n" for w in demo_works()))
        assert invoke(["persist", "crossref", str(works)]).exit_code == 0
        assert invoke(["match", "index"]).exit_code == 0
    server = start(root, "--concurrency", "1")
    assert "consolidation on the match index" in "".join(server.stderr)
    yield server
    server.stop()


def _refs(server: Server, level: str) -> list[tuple[str | None, str | None]]:
    answer = server.pdf("/api/processReferences", PLOS, [("consolidateCitations", level)])
    assert answer.status == 200, answer.data
    return [(r.doi, r.title) for r in parse_citation_list_xml(answer.data)]


def test_references_take_the_matched_works(with_catalog: Server) -> None:
    read = _refs(with_catalog, "0")
    merged = _refs(with_catalog, "1")
    doi_only = _refs(with_catalog, "2")
    assert all(doi is None for doi, _ in read)
    found = [doi for doi, _ in merged if doi]
    assert len(found) >= 6 and all(d.startswith(STAND_IN_PREFIX + ".plos.") for d in found)
    assert [d for d, _ in doi_only] == [d for d, _ in merged]  # the same works found
    assert [t for _, t in doi_only] == [t for _, t in read]  # level 2: the DOI alone
    works = {w["DOI"]: w["title"][0] for w in demo_works()}
    assert all(title == works[doi] for doi, title in merged if doi)  # level 1: its metadata


def test_a_citation_and_the_fulltext_are_consolidated_too(with_catalog: Server) -> None:
    one = with_catalog.form("/api/processCitation",
                            [("citations", FIRST), ("consolidateCitations", "1")])
    biblio = parse_citation_xml(one.data)
    assert biblio is not None and biblio.doi == f"{STAND_IN_PREFIX}.plos.0"
    assert biblio.journal == "J Vet Med Sci" and biblio.last_page == "1298"
    doc = parse_document_xml(with_catalog.pdf("/api/processFulltextDocument", PLOS, [
        ("consolidateCitations", "2")]).data)
    assert sum(1 for c in doc.citations or [] if c.doi) >= 6


@pytest.mark.parametrize("level", ["1", "3"])
def test_the_header_takes_its_work(with_catalog: Server, level: str) -> None:
    """1: found by matching (title, authors); 3: by the DOI the header gives."""
    plain = parse_document_xml(with_catalog.pdf("/api/processHeaderDocument", PLOS).data)
    assert plain.header.publisher is None
    answer = with_catalog.pdf("/api/processHeaderDocument", PLOS,
                              [("consolidateHeader", level)])
    doc = parse_document_xml(answer.data)
    assert doc.header.publisher == "Public Library of Science"
    assert doc.header.doi == "10.1371/journal.pone.0213978"
    assert [a.given_name for a in doc.header.authors][:2] == ["Yang", "Tuanjie"]
