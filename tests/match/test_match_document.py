"""Documents identified against the catalog and their references resolved
(docs/matching-documents.md): ``process`` with real GROBID output from the
loopback GROBID, JATS ingest of a real SciELO article, on SQLite and
PostgreSQL; conflicts, sources that disagree, no catalog, junk PDF titles.

The catalog is Crossref-shaped works persisted with ``persist crossref``: the
two real Crossref records of the shared test data, and records written here
for the works the fixtures describe (their title, authors and year as the
fixtures give them). Those carry DOIs under Crossref's test prefix 10.5555,
stand-ins: the NDSS paper of the GROBID fixture has no DOI."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from sqlalchemy import Engine, select

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.db.schema import citation
from sandcrawler.ingest.jats import JatsProcessor
from sandcrawler.match.document import (
    DocumentMatcher,
    Origin,
    SourceAnswer,
    SourceBiblio,
    combine,
    grobid_source,
    junk_title,
    landing_source,
    pdf_sources,
    printed_dois,
    references_tei,
)
from sandcrawler.records.html_biblio import HtmlBiblio
from sandcrawler.records.match import MatchResult
from sandcrawler.records.statuses import DocumentMatchStatus, MatchStatus
from sandcrawler.refs.reading import RefsWriter, refs_from_tei
from sandcrawler_testkit.grobid_server import FakeGrobid
from sandcrawler_testkit.pdfs import make_pdf
from tests.helpers.cli import invoke
from tests.helpers.paths import CROSSREF_WORKS, FIXTURES
from tests.ingest.test_ingest_processors import found

# SQL: on SQLite and PostgreSQL
pytestmark = pytest.mark.both_backends

FULLTEXT = FIXTURES / "grobid-0.4.1-sample2.tei.fulltext.xml"

VMI_DOI = "10.5555/test.vmi-ids"
VMI_TITLE = "A Virtual Machine Introspection Based Architecture for Intrusion Detection"
OTHER_DOI = "10.5555/test.other-work"
OTHER_TITLE = "Hierarchical clustering of bird song repertoires in urban parks"
#: reference targets of the GROBID fixture's list: (DOI, title, authors, year, container)
REF_TARGETS = [
    ("10.5555/test.hypervisor-ft", "Hypervisor-based fault tolerance",
     [("T. C.", "Bressoud"), ("F. B.", "Schneider")], 1996,
     "ACM Transactions on Computer Systems", "14", "80-107"),
    ("10.5555/test.disco", "Disco: running commodity operating systems on scalable "
     "multiprocessors", [("E.", "Bugnion"), ("S.", "Devine"), ("M.", "Rosenblum")], 1997,
     "Proceedings of the Sixteenth ACM Symposium on Operating System Principles", None, None),
    ("10.5555/test.vm370", "A security retrofit for VM/370",
     [("B.", "Gold"), ("R.", "Linde"), ("R. J.", "Peller"), ("M.", "Schaefer"),
      ("J.", "Scheid"), ("P. D.", "Ward")], 1979, "AFIPS National Computer Conference",
     None, "335-344"),
]
SCIELO_DOI = "10.18004/ped.2015.agosto.102-107"
SCIELO_TITLE = ("Prevalencia de desnutrición y hábitos alimentarios en niños menores de 5 años "
                "en las comunidades indígenas de Yby Yau y Azote’y, 2011")


def work(doi: str, title: str, authors: list[tuple[str, str]], year: int | None,
         container: str | None = None, volume: str | None = None,
         page: str | None = None) -> dict[str, Any]:
    """A work as the Crossref REST API gives it (the fields matching reads)."""
    w: dict[str, Any] = {"DOI": doi, "type": "journal-article", "title": [title],
                         "author": [{"given": g, "family": f} for g, f in authors],
                         "indexed": {"date-time": "2026-11-01T00:00:00Z"}}
    if year:
        w["issued"] = {"date-parts": [[year]]}
    if container:
        w["container-title"] = [container]
    if volume:
        w["volume"] = volume
    if page:
        w["page"] = page
    return w


def catalog_works() -> list[dict[str, Any]]:
    works = [work(VMI_DOI, VMI_TITLE, [("Tal", "Garfinkel"), ("Mendel", "Rosenblum")], 2003,
                  "Network and Distributed System Security Symposium"),
             work(OTHER_DOI, OTHER_TITLE, [("Ana", "Lindqvist"), ("Omar", "Haddad")], 2011,
                  "Journal of Avian Acoustics", "12", "101-119"),
             # Crossref holds junk deposits like this one: a PDF's junk title must not find it
             work("10.5555/test.junk", "Microsoft Word - x.doc", [("", "Administrator")], 2009),
             work(SCIELO_DOI, SCIELO_TITLE, [("Syntia Carolina", "Ruiz Valiente"),
                                             ("Manuel", "Ruiz Cañete"),
                                             ("Bartola", "Cohene Velazquez")], 2015,
                  "Pediatría (Asunción)", "42", "102-107")]
    works += [work(*t) for t in REF_TARGETS]
    for name in CROSSREF_WORKS.values():  # two real Crossref records, as neighbours
        real = orjson.loads((FIXTURES / name).read_bytes())
        works.append(real.get("message", real))
    return works


def persist(works: list[dict[str, Any]]) -> None:
    lines = b"".join(orjson.dumps(w) + b"\n" for w in works)
    result = invoke(["persist", "crossref", "-"], input=lines)
    assert result.exit_code == 0, result.stderr


@pytest.fixture
def catalog(engine: Engine, shared_data: Path) -> None:
    persist(catalog_works())


@pytest.fixture
def grobid(shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGrobid]:
    with FakeGrobid(fulltext_tei=FULLTEXT, slow_seconds=0.1) as server:
        monkeypatch.setenv("SANDCRAWLER_GROBID_URL", server.url)
        yield server


@pytest.fixture
def services(engine: Engine) -> Iterator[Services]:
    with Services(load_settings()) as s:
        yield s


def process(pdf: Path) -> dict[str, Any]:
    result = invoke(["process", str(pdf)])
    assert result.exit_code == 0, result.stderr
    lines = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert len(lines) == 1, result.stderr
    (out,) = lines
    assert out["status"] == "success", out
    return out


def match0(services: Services, sha1: str) -> dict[str, Any] | None:
    row = services.pdftable.get(sha1, ["match0"])
    return row.cells.get("match0") if row is not None else None


def citations(services: Services, citing: str) -> list[dict[str, Any]]:
    with services.engine.connect() as conn:
        return [dict(r) for r in conn.execute(
            select(citation).where(citation.c.citing == citing)
            .order_by(citation.c.ref_index)).mappings()]


# -- process: GROBID's header and references -----------------------------------------------


def test_grobid_header_identifies_the_pdf_and_its_references_resolve(
        catalog: None, grobid: FakeGrobid, services: Services, tmp_path: Path) -> None:
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(make_pdf(["A paper that GROBID will read"], title="Microsoft Word - vmi.doc"))
    out = process(pdf)
    cells = match0(services, out["sha1hex"])
    assert cells is not None
    assert (cells["mstatus"], cells["doi"]) == ("strong", VMI_DOI) or \
        (cells["mstatus"], cells["doi"]) == ("exact", VMI_DOI)
    info = cells["minfo"]
    assert info["source"] == "grobid" and "title:same" in info["reasons"]
    # every source tried is there; the junk PDF title was not one of them
    assert [s["source"] for s in info["sources"]] == ["grobid"]
    # the catalogue has the DOI now, as Crossref's
    entry = services.catalogue.get(out["uuid"])
    assert entry is not None and entry.doi == VMI_DOI
    metadata = services.catalogue.metadata(out["uuid"])
    assert metadata["field_sources"]["DOI"] == "crossref"
    assert "references" in entry.resources and "references" in out["resources"]

    # *.references.tei.xml: the 47 references of GROBID's TEI, three of them matched
    tei = services.catalogue.resources.get(out["uuid"], "references")
    assert services.catalogue.paths(entry)["references"].endswith(
        f"{out['uuid']}.references.tei.xml.gz")
    back = refs_from_tei(tei)
    originals = refs_from_tei(FULLTEXT.read_bytes())
    assert len(back) == len(originals) == 47
    def titles(refs: list[dict[str, Any]]) -> list[str]:
        return [" ".join((r.get("title") or "").split()) for r in refs]

    assert titles(back) == titles(originals)
    matched = {r["doi"] for r in back if r.get("doi")}
    assert matched == {t[0] for t in REF_TARGETS}
    assert b'<note type="match" subtype="' in tei and b'type="DOI">10.5555/test.disco<' in tei

    rows = citations(services, f"uuid:{out['uuid']}")
    assert [r["ref_index"] for r in rows] == list(range(47))
    by_doi = {r["cited_doi"]: r for r in rows if r["cited_doi"]}
    assert set(by_doi) == {t[0] for t in REF_TARGETS}
    assert all(r["status"] in ("exact", "strong") for r in by_doi.values())
    assert all(r["status"] not in ("exact", "strong") for r in rows if not r["cited_doi"])

    # processing again changes nothing: the same cells, the same rows, one per reference
    invoke(["process", "--force", str(pdf)])
    assert match0(services, out["sha1hex"]) == cells
    assert len(citations(services, f"uuid:{out['uuid']}")) == 47


def test_without_a_catalog_nothing_is_written(engine: Engine, grobid: FakeGrobid,
                                              services: Services, tmp_path: Path) -> None:
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(make_pdf(["A paper that GROBID will read"]))
    out = process(pdf)
    assert match0(services, out["sha1hex"]) is None
    assert "references" not in out["resources"]
    assert citations(services, f"uuid:{out['uuid']}") == []
    assert services.document_matcher() is None
    # and no index was built just to find it empty
    assert not (services.settings.data_dir / "match" / "index.sqlite3").exists()


def test_a_doi_the_document_has_is_never_overwritten(catalog: None, grobid: FakeGrobid,
                                                     services: Services,
                                                     tmp_path: Path) -> None:
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(make_pdf(["A paper that GROBID will read"]))
    meta = tmp_path / "meta.json"
    meta.write_text(orjson.dumps({"DOI": OTHER_DOI}).decode())
    added = invoke(["store", "add", str(pdf), "--metadata", str(meta)])
    assert added.exit_code == 0, added.stderr
    out = process(pdf)
    cells = match0(services, out["sha1hex"])
    assert cells is not None and cells["mstatus"] == "doi-conflict" and "doi" not in cells
    info = cells["minfo"]
    assert (info["document_doi"], info["matched_doi"]) == (OTHER_DOI, VMI_DOI)
    entry = services.catalogue.get(out["uuid"])
    assert entry is not None and entry.doi == OTHER_DOI
    assert services.catalogue.metadata(out["uuid"])["field_sources"]["DOI"] == "user"


def test_a_junk_pdf_title_matches_nothing(catalog: None, services: Services,
                                          tmp_path: Path) -> None:
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(make_pdf(["Some words of text with no title and no DOI at all."],
                             title="Microsoft Word - x.doc"))
    out = process(pdf)
    cells = match0(services, out["sha1hex"])
    assert cells is not None
    assert cells["mstatus"] == "too-little" and "doi" not in cells
    assert cells["minfo"]["sources"] == [] and cells["minfo"]["reasons"] == ["sources:none"]
    entry = services.catalogue.get(out["uuid"])
    assert entry is not None and entry.doi is None


def test_a_doi_printed_on_the_first_page_is_verified_against_the_page(
        catalog: None, services: Services, tmp_path: Path) -> None:
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(make_pdf([f"{VMI_TITLE}\nTal Garfinkel, Mendel Rosenblum\n"
                              f"Stanford University, 2003\ndoi:{VMI_DOI}."]))
    out = process(pdf)
    cells = match0(services, out["sha1hex"])
    assert cells is not None and cells["doi"] == VMI_DOI
    assert cells["mstatus"] in ("exact", "strong") and cells["minfo"]["source"] == "first_page"
    assert "doi:verified" in cells["minfo"]["reasons"]


def test_a_printed_doi_of_another_work_identifies_nothing(catalog: None, services: Services,
                                                          tmp_path: Path) -> None:
    # the page is the VMI paper, the DOI printed on it names another work
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(make_pdf([f"{VMI_TITLE}\nTal Garfinkel, Mendel Rosenblum, 2003\n"
                              f"https://doi.org/{OTHER_DOI}"]))
    out = process(pdf)
    cells = match0(services, out["sha1hex"])
    assert cells is not None and "doi" not in cells
    (answer,) = cells["minfo"]["sources"]
    # the page's text does not hold the other work: its DOI is not verified
    assert answer["source"] == "first_page"
    assert {"doi:wrong", "doi:unverified"} & set(answer["reasons"])
    # the search on the page's words found the VMI paper: not counted, since a
    # page quoting a title is no identification
    assert (answer["status"], answer["doi"], answer["used"]) == ("strong", VMI_DOI, False)
    entry = services.catalogue.get(out["uuid"])
    assert entry is not None and entry.doi is None


# -- sources that disagree, DOIs refuted -----------------------------------------------------


def _document(services: Services, tmp_path: Path) -> str:
    pdf = tmp_path / "doc.pdf"
    pdf.write_bytes(make_pdf(["text"]))
    return services.catalogue.add_file(pdf).uuid


def _header() -> dict[str, Any]:
    return {"title": VMI_TITLE, "authors": [{"full_name": "Tal Garfinkel", "surname": "Garfinkel"},
                                            {"full_name": "Mendel Rosenblum",
                                             "surname": "Rosenblum"}]}


def test_landing_page_and_pdf_describing_different_works(catalog: None, services: Services,
                                                         tmp_path: Path) -> None:
    documents = services.document_matcher()
    assert isinstance(documents, DocumentMatcher)
    uuid = _document(services, tmp_path)
    page = HtmlBiblio(title=OTHER_TITLE, doi=OTHER_DOI, release_date="2011",
                      contrib_raw_names=["Lindqvist, Ana"],
                      container_name="Journal of Avian Acoustics")
    sources = [s for s in (landing_source(page), grobid_source(_header())) if s]
    found = documents.identify(uuid, sources)
    assert found.status == DocumentMatchStatus.SOURCES_DISAGREE and found.doi is None
    assert (found.page_doi, found.file_doi) == (OTHER_DOI, VMI_DOI)
    cells = found.cells()
    assert cells["mstatus"] == "sources-disagree" and "doi" not in cells
    assert [a["status"] for a in cells["minfo"]["sources"]] in (
        [s1, s2] for s1 in ("exact", "strong") for s2 in ("exact", "strong"))
    entry = services.catalogue.get(uuid)
    assert entry is not None and entry.doi is None  # nothing written

    # the same page with the PDF agreeing: identified by the page, the DOI verified
    agree = documents.identify(uuid, [s for s in (landing_source(page),) if s])
    assert agree.doi == OTHER_DOI and agree.origin == Origin.LANDING_PAGE
    assert "doi:verified" in agree.reasons


def test_an_extraction_doi_the_matcher_refutes_is_replaced(catalog: None, services: Services,
                                                           tmp_path: Path) -> None:
    # GROBID's header says the VMI paper but carries the other work's DOI (as
    # consolidation gets wrong), and the catalogue took it from GROBID
    documents = services.document_matcher()
    assert documents is not None
    uuid = _document(services, tmp_path)
    from sandcrawler.storage.precedence import Source

    services.catalogue.put_metadata(uuid, {"DOI": OTHER_DOI}, source=Source.GROBID)
    header = {**_header(), "doi": OTHER_DOI}
    found = documents.identify(uuid, [grobid_source(header)])  # type: ignore[list-item]
    assert found.doi == VMI_DOI and found.replaces == OTHER_DOI
    assert "doi:wrong" in found.reasons
    metadata = services.catalogue.metadata(uuid)
    assert metadata["DOI"] == VMI_DOI and metadata["conflicts"]["grobid"]["DOI"] == OTHER_DOI
    # a DOI the user gave is never replaced: a conflict
    services.catalogue.put_metadata(uuid, {"DOI": OTHER_DOI})
    again = documents.identify(uuid, [grobid_source(header)])  # type: ignore[list-item]
    assert again.status == DocumentMatchStatus.DOI_CONFLICT
    assert services.catalogue.metadata(uuid)["DOI"] == OTHER_DOI


# -- JATS ingest -------------------------------------------------------------------------------


def test_jats_ingest_identifies_the_article_and_resolves_its_references(
        catalog: None, services: Services) -> None:
    documents = services.document_matcher()
    assert documents is not None
    jats = JatsProcessor(services.catalogue, RefsWriter(services.engine), documents=documents)
    try:
        out = jats.process(found(FIXTURES / "scielo_article.jats.xml",
                                 "http://scielo.iics.una.py/x.xml", "xml"))
    finally:
        jats.close()
    assert out.status == "success" and out.uuid is not None
    assert out.resources is not None and "references" in out.resources
    sha1 = services.catalogue.get(out.uuid).sha1  # type: ignore[union-attr]
    assert sha1 is not None
    cells = match0(services, sha1)
    assert cells is not None and cells["doi"] == SCIELO_DOI and cells["mstatus"] == "exact"
    assert cells["minfo"]["source"] == "jats"
    rows = citations(services, f"uuid:{out.uuid}")
    assert len(rows) == out.references == 12
    assert all(r["cited_doi"] is None for r in rows)  # none of its references is in the catalog


# -- the pieces --------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "dois"), [
    ("see doi:10.1371/journal.pone.0213978.", ["10.1371/journal.pone.0213978"]),
    ("(https://doi.org/10.7554/eLife.44753)", ["10.7554/elife.44753"]),
    ("10.1016/0014-5793(91)81229-J, and 10.1000/xyz;", ["10.1016/0014-5793(91)81229-j",
                                                       "10.1000/xyz"]),
    ("“10.5210/fm.v25i10.10274”", ["10.5210/fm.v25i10.10274"]),
    ("no identifier here, 10.12 is a number", []),
])
def test_printed_dois(text: str, dois: list[str]) -> None:
    assert printed_dois(text) == dois


@pytest.mark.parametrize(("title", "junk"), [
    ("Microsoft Word - x.doc", True), ("Microsoft PowerPoint - talk", True),
    ("manuscript.dvi", True), ("Untitled", True), ("Layout 1", True),
    ("doi:10.1000/xyz", True), ("JCB_201803007", True), ("Editorial", True),
    (VMI_TITLE, False), ("Hypervisor-based fault tolerance", False),
])
def test_junk_titles(title: str, junk: bool) -> None:
    assert junk_title(title) is junk


def test_pdf_sources_leave_junk_out() -> None:
    assert pdf_sources({"title": "Microsoft Word - x.doc", "author": "Administrator"}, {},
                       "Some text") == []
    (own,) = pdf_sources({"title": VMI_TITLE, "author": "Tal Garfinkel; Administrator"}, {}, "")
    assert own.biblio == {"title": VMI_TITLE, "authors": [{"full_name": "Tal Garfinkel"}]}


def _answer(origin: Origin, status: MatchStatus, doi: str | None, score: float = 0.9,
            **kw: Any) -> SourceAnswer:
    return SourceAnswer(origin, MatchResult(status, doi=doi, score=score), **kw)


def test_combining_answers() -> None:
    # the most trusted source names the work; the best answer naming it is reported
    found = combine([_answer(Origin.GROBID, MatchStatus.STRONG, "10.1/a"),
                     _answer(Origin.PDF, MatchStatus.EXACT, "10.1/a")])
    assert (found.status, found.doi, found.origin) == (MatchStatus.EXACT, "10.1/a", Origin.PDF)
    found = combine([_answer(Origin.GROBID, MatchStatus.STRONG, "10.1/a"),
                     _answer(Origin.PDF, MatchStatus.EXACT, "10.1/b")])
    assert (found.status, found.doi, found.origin) == (MatchStatus.STRONG, "10.1/a",
                                                       Origin.GROBID)
    # two file sources naming two works: the better one, the other as runner-up
    found = combine([_answer(Origin.GROBID, MatchStatus.STRONG, "10.1/a"),
                     _answer(Origin.PDF, MatchStatus.STRONG, "10.1/b")])
    assert found.doi == "10.1/a" and found.runner_up is not None
    assert found.runner_up.doi == "10.1/b"
    # the page agrees with one of the file's answers: no disagreement
    found = combine([_answer(Origin.LANDING_PAGE, MatchStatus.EXACT, "10.1/b"),
                     _answer(Origin.GROBID, MatchStatus.STRONG, "10.1/a"),
                     _answer(Origin.FIRST_PAGE, MatchStatus.EXACT, "10.1/b")])
    assert found.doi == "10.1/b"
    # the PDF's own metadata alone does not contradict the page
    found = combine([_answer(Origin.LANDING_PAGE, MatchStatus.STRONG, "10.1/b"),
                     _answer(Origin.PDF, MatchStatus.EXACT, "10.1/a")])
    assert (found.status, found.doi) == (MatchStatus.STRONG, "10.1/b")
    assert found.runner_up is not None and found.runner_up.doi == "10.1/a"
    found = combine([_answer(Origin.LANDING_PAGE, MatchStatus.STRONG, "10.1/b"),
                     _answer(Origin.PDF, MatchStatus.EXACT, "10.1/a"),
                     _answer(Origin.GROBID, MatchStatus.STRONG, "10.1/a")])
    assert found.status == DocumentMatchStatus.SOURCES_DISAGREE
    assert (found.page_doi, found.file_doi) == ("10.1/b", "10.1/a")
    # nothing matched: the most telling status
    found = combine([_answer(Origin.GROBID, MatchStatus.NO_MATCH, None),
                     _answer(Origin.PDF, MatchStatus.WEAK, None)])
    assert found.status == MatchStatus.WEAK and found.doi is None and found.origin == Origin.PDF
    # a printed DOI's answer that named another work is not counted
    found = combine([_answer(Origin.FIRST_PAGE, MatchStatus.STRONG, "10.1/c", used=False)])
    assert found.status == MatchStatus.NO_MATCH and found.doi is None
    assert found.cells()["minfo"]["sources"][0]["used"] is False


def test_references_tei_round_trip() -> None:
    refs = [{"title": "Hypervisor-based fault tolerance", "journal": "ACM TOCS",
             "authors": [{"given_name": "T", "surname": "Bressoud"}], "date": "1996",
             "volume": "14", "first_page": "80", "last_page": "107", "id": "b3",
             "doi": "10.9999/cited"},
            {"unstructured": "Smith J. A title nobody has. 2001 \x01"}]
    results = [MatchResult(MatchStatus.STRONG, doi="10.5555/test.hypervisor-ft", score=0.97,
                           reasons=("title:same", "year:same")),
               MatchResult(MatchStatus.NO_MATCH, score=0.1,
                           parsed={"title": "A title nobody has", "date": "2001",
                                   "authors": [{"surname": "Smith"}]})]
    tei = references_tei("98da17ff-bf7e-4d43-bdf2-4d8d831481e5", refs, results)
    first, second = refs_from_tei(tei)
    assert first["title"] == "Hypervisor-based fault tolerance" and first["journal"] == "ACM TOCS"
    assert first["doi"] == "10.5555/test.hypervisor-ft" and first["volume"] == "14"
    assert second["title"] == "A title nobody has"
    assert b'<note type="match" subtype="strong" n="0.97">title:same year:same</note>' in tei
    assert b'<idno type="DOI" subtype="cited">10.9999/cited</idno>' in tei
    assert b'n="b3"' in tei and b"\x01" not in tei


def test_source_biblios() -> None:
    page = HtmlBiblio(title=" A  title ", doi="10.1/x", contrib_raw_names=["Doe, J."],
                      release_date="2001-02", container_name="J", first_page="5")
    assert landing_source(page) == SourceBiblio(Origin.LANDING_PAGE, {
        "title": "A title", "date": "2001-02", "journal": "J", "first_page": "5",
        "doi": "10.1/x", "authors": [{"full_name": "Doe, J."}]})
    assert landing_source(HtmlBiblio(publisher="P")) is None
    assert grobid_source({"title": None, "authors": []}) is None


# -- the offline demo --------------------------------------------------------------------------


@pytest.mark.slow  # seconds: real processes, killed or side by side
def test_the_demo_identifies_its_documents_and_resolves_references(tmp_path: Path) -> None:
    from sandcrawler.demo.catalog import STAND_IN_PREFIX, articles, demo_works
    from tests.helpers.cli import run_cli

    works = demo_works()
    dois = [w["DOI"] for w in works]
    assert len(set(dois)) == len(dois)
    assert dois[:5] == [a["doi"] for a in articles()]  # the articles, with their real DOIs
    assert all(d.startswith(STAND_IN_PREFIX) for d in dois[5:])  # targets: stand-ins
    demo = tmp_path / "demo"
    run = run_cli(["ingest", "demo", "--dir", str(demo)], timeout=300)
    stderr = run.stderr.decode()
    assert run.returncode == 0, stderr
    assert f"catalog    {len(works)} Crossref works persisted and indexed" in stderr
    for article in articles():  # all five, whichever file type they were ingested as
        assert f"identified exact {article['doi'].lower()} (match0; by " in stderr
    # PLOS ONE's 23 citation_reference tags: every other one's work is in the catalog
    assert "resolved   12 exact, 11 no-match (citation rows, citing uuid:" in stderr
    # SciELO's 12 JATS references: two of the six targets have a title to be found by
    assert "resolved   2 exact, 10 no-match" in stderr
    stored = sorted((demo / "store").rglob("*.references.tei.xml.gz"))
    refs = sorted((refs_from_tei(gzip.decompress(p.read_bytes())) for p in stored), key=len)
    assert [len(r) for r in refs] == [12, 23]
    assert [sum(1 for r in found if r.get("doi")) for found in refs] == [2, 12]
