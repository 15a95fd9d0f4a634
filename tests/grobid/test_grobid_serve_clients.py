"""GROBID's clients, unchanged, against ``sandcrawler grobid-serve`` on loopback:
grobid_client_python's command run as a user runs it (its services, its 503
retries), and the original system's ``GrobidClient`` run as a program of its own.
Every TEI they get is read back with ``grobid_tei_xml``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from grobid_tei_xml import parse_citation_list_xml, parse_document_xml

from sandcrawler.grobid.client import GrobidClient
from sandcrawler_testkit.original_sandcrawler import OriginalUnavailable, package
from sandcrawler_testkit.pdfs import make_pdf
from tests.grobid.serving import PDFS, Server, start
from tests.grobid.test_grobid_serve_api import CITATIONS
from tests.helpers.metrics import value
from tests.helpers.skips import unavailable
from tests.helpers.waiting import wait_until

LINE = ("Smith J, Doe A. A study of phosphorus in lakes and rivers of the world. "
        "J Limnol 12:100-120 (2001).")


def grobid_client() -> Path:
    """grobid_client_python's command (the test extra installs it)."""
    exe = Path(sys.executable).parent / "grobid_client"
    if not exe.exists():
        unavailable("grobid-client-python is not installed (pip install -e '.[test]')",
                    "GROBID_CLIENT")
    return exe


@pytest.fixture(scope="module")
def two_workers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = start(tmp_path_factory.mktemp("grobid-serve-clients"), "--concurrency", "2")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def pdf_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's three articles (real PDFs, their references included)."""
    directory = tmp_path_factory.mktemp("pdfs")
    for name, path in PDFS.items():
        shutil.copyfile(path, directory / f"{name}.pdf")
    return directory


def run_client(server: Server, service: str, input_dir: Path, out: Path, *extra: str,
               config: dict[str, object] | None = None) -> subprocess.CompletedProcess[str]:
    args = [str(grobid_client()), "--server", server.url, "--input", str(input_dir),
            "--output", str(out), "--n", "4", *extra]
    if config is not None:
        path = out.parent / f"{out.name}-config.json"
        path.write_text(json.dumps(config))
        args += ["--config", str(path)]
    done = subprocess.run([*args, service], capture_output=True, text=True, timeout=600,
                          cwd=out.parent, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not list(out.glob("*_[0-9][0-9][0-9].txt")), (  # its error files
        [(p.name, p.read_text()) for p in out.glob("*.txt")], done.stderr)
    return done


@pytest.mark.parametrize("extra", [(), ("--include_raw_citations", "--include_raw_affiliations",
                                        "--tei_coordinates", "--segment_sentences",
                                        "--generate_ids", "--consolidate_header")],
                         ids=["plain", "every-option"])
def test_grobid_client_fulltext(two_workers: Server, pdf_dir: Path, tmp_path: Path,
                                extra: tuple[str, ...]) -> None:
    out = tmp_path / "tei"
    run_client(two_workers, "processFulltextDocument", pdf_dir, out, *extra)
    written = {p.name: p for p in out.iterdir()}
    assert sorted(written) == [f"{n}.grobid.tei.xml" for n in sorted(PDFS)]
    for path in written.values():
        doc = parse_document_xml(path.read_bytes())
        assert doc.header.title and doc.header.authors, path.name
        assert doc.citations, path.name
        if extra:
            assert all(c.unstructured for c in doc.citations)
    plos = parse_document_xml((out / "plos.grobid.tei.xml").read_bytes())
    assert plos.header.doi == "10.1371/journal.pone.0213978"


def test_grobid_client_header_and_references(two_workers: Server, pdf_dir: Path,
                                              tmp_path: Path) -> None:
    headers = tmp_path / "headers"
    run_client(two_workers, "processHeaderDocument", pdf_dir, headers)
    for name in PDFS:
        doc = parse_document_xml((headers / f"{name}.grobid.tei.xml").read_bytes())
        assert doc.header.title and not doc.citations, name
    refs = tmp_path / "refs"
    run_client(two_workers, "processReferences", pdf_dir, refs, "--include_raw_citations")
    for name in PDFS:
        parsed = parse_citation_list_xml((refs / f"{name}.grobid.tei.xml").read_bytes())
        assert parsed and all(r.unstructured for r in parsed), name


def test_grobid_client_citation_list(two_workers: Server, tmp_path: Path) -> None:
    """Its processCitationList: a text file, one reference a line."""
    texts = tmp_path / "texts"
    texts.mkdir()
    (texts / "refs.txt").write_text("\n".join(CITATIONS) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    run_client(two_workers, "processCitationList", texts, out, "--include_raw_citations")
    parsed = parse_citation_list_xml((out / "refs.grobid.tei.xml").read_bytes())
    assert [r.unstructured for r in parsed] == CITATIONS


def test_grobid_client_retries_its_503s(tmp_path: Path, pdf_dir: Path) -> None:
    """One worker, busy with a long PDF: the client's requests are answered 503, it
    waits (sleep_time, from its config file) and sends again, and every document
    is done in the end."""
    server = start(tmp_path / "server", "--concurrency", "1")
    try:
        slow = make_pdf(["\n".join([LINE] * 50)] * 60)
        thread = threading.Thread(target=lambda: server.pdf("/api/processFulltextDocument",
                                                            slow))
        thread.start()
        wait_until(lambda: value(server.metrics(),
                                 "sandcrawler_grobid_serve_workers_busy") == 1,
                   30, "the worker to be busy")
        out = tmp_path / "tei"
        done = run_client(server, "processFulltextDocument", pdf_dir, out,
                          config={"grobid_server": server.url, "sleep_time": 1,
                                  "timeout": 300})
        thread.join(300)
        assert "Server busy (503)" in done.stderr
        for name in PDFS:
            doc = parse_document_xml((out / f"{name}.grobid.tei.xml").read_bytes())
            assert doc.header.title, name
        rejected = value(server.metrics(), "sandcrawler_grobid_serve_busy_rejections_total",
                         endpoint="processFulltextDocument")
        assert rejected and rejected >= 1
    finally:
        server.stop()


# --- the original system's client ------------------------------------------------------

DRIVER = '''
import json, sys

import sandcrawler
from sandcrawler.grobid import GrobidClient

assert not sandcrawler.__file__.startswith(sys.argv[5]), sandcrawler.__file__
url, pdf, citations, record = sys.argv[1:5]
client = GrobidClient(host_url=url)
result = client.process_fulltext(open(pdf, "rb").read())
meta = client.metadata(result)
refs = client.process_citation_list(json.load(open(citations)))
crossref = client.crossref_refs(json.load(open(record)))
print(json.dumps({"result": result, "metadata": meta,
                  "citations": [r.to_dict() for r in refs], "crossref": crossref}))
'''


def test_the_original_systems_client(two_workers: Server, tmp_path: Path) -> None:
    try:
        path = package(tmp_path / "original")
    except OriginalUnavailable as e:
        unavailable(f"the original system's grobid.py: {e}", "ORIGINAL_SANDCRAWLER")
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER, encoding="utf-8")
    (tmp_path / "citations.json").write_text(json.dumps(CITATIONS))
    record = {"DOI": "10.5555/Citing.Work", "indexed": {"date-time": "2024-03-01T00:00:00Z"},
              "reference": [{"key": f"ref{i}", "unstructured": c}
                            for i, c in enumerate(CITATIONS)]
              + [{"key": "has-doi", "DOI": "10.1000/x", "unstructured": "skipped: a DOI"}]}
    (tmp_path / "record.json").write_text(json.dumps(record))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, str(driver), two_workers.url, str(PDFS["plos"]),
         str(tmp_path / "citations.json"), str(tmp_path / "record.json"),
         str(Path(__file__).resolve().parents[2] / "src")],
        env={**env, "PYTHONPATH": str(path)}, capture_output=True, text=True, timeout=300,
        cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    out = orjson.loads(done.stdout)
    result = out["result"]
    assert (result["status"], result["status_code"]) == ("success", 200)
    doc = parse_document_xml(result["tei_xml"])
    assert doc.header.doi == "10.1371/journal.pone.0213978"
    assert all(c.unstructured for c in doc.citations or [])  # it asks includeRawCitations=1
    biblio = out["metadata"]["biblio"]
    assert biblio["title"] == doc.header.title and biblio["doi"] == doc.header.doi
    assert [a["name"] for a in biblio["authors"]][:2] == ["Yang Li", "Tuanjie Wang"]
    assert [c["unstructured"] for c in out["citations"]] == CITATIONS
    assert out["citations"][0]["title"] == (
        "Phosphorus limitation of primary production in temperate lakes")
    crossref = out["crossref"]
    assert crossref["source_id"] == "10.5555/citing.work"
    assert [r["id"] for r in crossref["refs_json"]] == [f"ref{i}" for i in range(5)]
    assert crossref["refs_json"][3]["journal"] == "Nature"


def test_sandcrawler_s_own_grobid_client(two_workers: Server) -> None:
    """``grobid.url`` may name this service: our client and GROBID citation parser
    work against it as against GROBID."""
    with GrobidClient(two_workers.url, timeout=120) as client:
        assert client.isalive() is True
        assert '"version"' in client.version()
        tei = client.process_citation_list(CITATIONS)
        assert tei is not None
        assert [r.unstructured for r in parse_citation_list_xml(tei)] == CITATIONS
        status, document = client.process_fulltext(
            PDFS["plos"].read_bytes(), options=[("consolidateHeader", "1"),
                                                ("teiCoordinates", "ref")])
        assert status == 200 and document is not None
        assert parse_document_xml(document).header.doi == "10.1371/journal.pone.0213978"
