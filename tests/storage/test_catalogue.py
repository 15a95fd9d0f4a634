"""The catalogue and the `store` / `catalogue` commands on SQLite and PostgreSQL, with the
local blob store (and the main flow once more on a real S3 server): persistent UUIDs,
identifier lookups, export, rebuild from the store alone, and schema upgrades."""

from __future__ import annotations

import gzip
import hashlib
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from sqlalchemy import Engine, delete, insert, select, update

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.core.errors import InvalidName, RecordError
from sandcrawler.core.identifiers import sha1_base32, sha1_hex
from sandcrawler.db import migrate
from sandcrawler.db.engine import make_engine
from sandcrawler.db.schema import catalogue, crossref
from sandcrawler.storage.catalogue import Catalogue, identifiers_from_metadata, parse_identifier
from sandcrawler.storage.docid import document_uuid, shard_dir
from sandcrawler.storage.local import LocalBlobStore
from sandcrawler.storage.resources import ResourceStore, resource_key
from sandcrawler_testkit.pdfs import make_pdf
from tests.helpers.cli import invoke
from tests.helpers.paths import FIXTURES, SHARED_DATA

# SQL: on SQLite and PostgreSQL
pytestmark = pytest.mark.both_backends

METADATA = {
    "DOI": "10.1234/ABC",
    "pmid": "12345678",
    "pmcid": "PMC7654321",
    "arxiv_id": "2101.00001v2",
    "title": ["A test document"],
    "author": [{"given": "Ada", "family": "Lovelace"}],
}


def file_sha1(path: Path) -> str:
    return hashlib.sha1(path.read_bytes()).hexdigest()


def lines(stdout: str | bytes) -> list[dict[str, Any]]:
    return [orjson.loads(ln) for ln in stdout.splitlines() if ln.strip()]


def rows(engine: Engine) -> list[dict[str, Any]]:
    """Every catalogue row but its ``updated`` time, in UUID order."""
    with engine.connect() as conn:
        got = conn.execute(select(catalogue).order_by(catalogue.c.uuid)).mappings().all()
    return [{k: v for k, v in r.items() if k != "updated"} for r in got]


def store_add(*args: str | Path) -> dict[str, Any]:
    result = invoke(["store", "add", *map(str, args)])
    assert result.exit_code == 0, result.stderr
    (out,) = lines(result.stdout)
    return out


def catalogue_get(identifier: str) -> list[dict[str, Any]]:
    result = invoke(["catalogue", "get", identifier])
    assert result.exit_code == 0, (identifier, result.stderr)
    return lines(result.stdout)


def open_cat(engine: Engine) -> Catalogue:
    return Catalogue(engine, ResourceStore(Services(load_settings()).blobs))


@pytest.fixture
def pdfs(shared_data: Path) -> list[Path]:
    found = [FIXTURES / "dummy.pdf", *sorted((SHARED_DATA / "pdfs").glob("*.pdf"))]
    # small ones first, keeps the suite quick
    found = sorted((p for p in found if p.stat().st_size < 200_000), key=lambda p: p.stat().st_size)
    assert len(found) >= 3 and found[0].name in ("dummy.pdf", "dehypenisation1.pdf")
    return found[:3]


@pytest.fixture
def metadata_file(tmp_path: Path) -> Path:
    path = tmp_path / "metadata.json"
    path.write_bytes(orjson.dumps(METADATA))
    return path


# -- the main flow: local store, and S3 --------------------------------------------------


def main_flow(engine: Engine, pdf: Path, metadata_file: Path) -> None:
    digest = file_sha1(pdf)
    doc = document_uuid(sha1=digest)
    out = store_add("--metadata", metadata_file, pdf)
    assert out["path"] == str(pdf)
    assert out["id"] == doc and out["sha1"] == digest
    assert out["resources"] == ["metadata", "pdf"]
    assert (out["doi"], out["pmid"], out["pmcid"], out["arxiv"]) == (
        "10.1234/abc", "12345678", "PMC7654321", "2101.00001v2")
    assert out["paths"] == {"pdf": resource_key(doc, "pdf"),
                            "metadata": resource_key(doc, "metadata")}
    assert out["paths"]["pdf"] == f"{shard_dir(doc)}/{doc}.pdf"
    assert out["paths"]["metadata"] == f"{shard_dir(doc)}/{doc}.metadata.json.gz"
    # adding again changes nothing
    again = store_add("--metadata", metadata_file, pdf)
    assert {k: v for k, v in again.items() if k != "updated"} == {
        k: v for k, v in out.items() if k != "updated"}
    assert store_add(pdf)["id"] == doc
    before = rows(engine)
    assert len(before) == 1 and before[0]["uuid"] == doc and before[0]["sha1"] == digest
    assert before[0]["resources"] == ["metadata", "pdf"]

    # every identifier leads to the same document
    for identifier in ("doi:10.1234/abc", "doi:10.1234/ABC", "10.1234/ABC", "10.1234/abc",
                       "https://doi.org/10.1234/abc", "http://dx.doi.org/10.1234/ABC",
                       "pmid:12345678", "PMC7654321", "pmcid:PMC7654321", "pmc7654321",
                       "arxiv:2101.00001v2", digest, digest.upper(), f"sha1:{digest}",
                       sha1_base32(digest), sha1_base32(digest).lower(), doc, doc.upper()):
        (got,) = catalogue_get(identifier)
        assert got["id"] == doc, identifier
        assert got["sha1"] == digest and got["doi"] == "10.1234/abc"
        assert got["resources"] == ["metadata", "pdf"]
        assert got["paths"] == out["paths"]
        meta = got["metadata"]
        assert next(iter(meta)) == "id" and meta["id"] == doc
        assert meta["sha1"] == digest
        assert meta["DOI"] == "10.1234/ABC"  # the metadata keeps what was given
        assert meta["title"] == METADATA["title"] and meta["author"] == METADATA["author"]
    result = invoke(["catalogue", "get", "--no-metadata", doc])
    assert "metadata" not in orjson.loads(result.stdout)

    # the store holds exactly the two files, as given
    listed = lines(invoke(["store", "ls"]).stdout)
    assert sorted(x["key"] for x in listed) == sorted(out["paths"].values())
    size = {x["key"]: x["size"] for x in listed}
    assert size[out["paths"]["pdf"]] == pdf.stat().st_size
    assert lines(invoke(["store", "ls", shard_dir(doc)[:5]]).stdout) == listed
    assert lines(invoke(["store", "ls", "zz/"]).stdout) == []
    result = invoke(["store", "cat", out["paths"]["pdf"]])
    assert result.exit_code == 0 and result.stdout_bytes == pdf.read_bytes()
    stored_meta = invoke(["store", "cat", out["paths"]["metadata"]]).stdout_bytes
    assert orjson.loads(gzip.decompress(stored_meta))["id"] == doc

    # export, rows and metadata documents
    (exported,) = lines(invoke(["catalogue", "export"]).stdout)
    assert exported["id"] == doc and exported["paths"] == out["paths"]
    (meta_doc,) = lines(invoke(["catalogue", "export", "--metadata"]).stdout)
    assert meta_doc["id"] == doc and meta_doc["pmcid"] == "PMC7654321"

    # the table is an index: rebuilt from the store alone
    with engine.begin() as conn:
        conn.execute(delete(catalogue))
    assert rows(engine) == []
    result = invoke(["catalogue", "rebuild"])
    assert result.exit_code == 0, result.stderr
    assert "documents 1, with-metadata 1, corrupt-metadata 0, removed 0" in result.stderr
    assert rows(engine) == before


def test_main_flow_local_store(engine: Engine, pdfs: list[Path], metadata_file: Path,
                               isolated_env: Path) -> None:
    main_flow(engine, pdfs[0], metadata_file)
    store = isolated_env / "data" / "store"
    doc = document_uuid(sha1=file_sha1(pdfs[0]))
    assert (store / resource_key(doc, "pdf")).read_bytes() == pdfs[0].read_bytes()


def test_main_flow_s3_store(engine: Engine, s3_bucket: str, pdfs: list[Path],
                            metadata_file: Path, isolated_env: Path) -> None:
    main_flow(engine, pdfs[1], metadata_file)
    # nothing went to the local default store
    assert not list((isolated_env / "data").glob("store/??"))
    assert load_settings().store.url == f"s3://{s3_bucket}/pre"


# -- persistent identifiers --------------------------------------------------------------


def test_different_files_get_different_uuids(engine: Engine, pdfs: list[Path]) -> None:
    result = invoke(["store", "add", *map(str, pdfs)])
    assert result.exit_code == 0, result.stderr
    outs = lines(result.stdout)
    assert [o["path"] for o in outs] == [str(p) for p in pdfs]
    assert [o["id"] for o in outs] == [document_uuid(sha1=file_sha1(p)) for p in pdfs]
    assert len({o["id"] for o in outs}) == len(pdfs)
    assert [r["uuid"] for r in rows(engine)] == sorted(o["id"] for o in outs)
    for pdf, o in zip(pdfs, outs, strict=True):
        (got,) = catalogue_get(file_sha1(pdf))
        assert got["id"] == o["id"]
        assert got["metadata"] == {"id": o["id"], "sha1": file_sha1(pdf)}
        assert got["doi"] is None


def test_uuid_given_to_metadata_first_is_kept(engine: Engine, pdfs: list[Path],
                                              tmp_path: Path) -> None:
    cat = open_cat(engine)
    doc = cat.assign_uuid(doi="https://doi.org/10.1234/ABC")
    assert doc == document_uuid(doi="10.1234/abc")
    entry = cat.put_metadata(doc, {"DOI": "10.1234/ABC", "title": ["Metadata first"]})
    assert entry.uuid == doc and entry.sha1 is None and entry.resources == ("metadata",)
    # later the file turns up, with the same DOI (another spelling)
    meta = tmp_path / "m.json"
    meta.write_bytes(orjson.dumps({"doi": "10.1234/abc", "pmid": "42"}))
    out = store_add("--metadata", meta, pdfs[0])
    assert out["id"] == doc != document_uuid(sha1=file_sha1(pdfs[0]))
    assert out["sha1"] == file_sha1(pdfs[0]) and out["pmid"] == "42"
    assert out["resources"] == ["metadata", "pdf"]
    assert len(rows(engine)) == 1
    merged = cat.metadata(doc)
    assert merged["title"] == ["Metadata first"]  # earlier keys kept
    assert merged["doi"] == "10.1234/abc" and merged["sha1"] == file_sha1(pdfs[0])
    # and from now on the file's sha1 names that document, also without metadata
    assert store_add(pdfs[0])["id"] == doc
    assert cat.assign_uuid(sha1=file_sha1(pdfs[0])) == doc
    assert cat.assign_uuid(pmid="42") == doc
    assert cat.resolve("pmid:42") == [doc]
    # an identifier met for the first time still gets its derived UUID
    assert cat.assign_uuid(doi="10.9999/new") == document_uuid(doi="10.9999/new")


def test_another_file_with_the_same_doi_is_another_document(engine: Engine,
                                                             pdfs: list[Path]) -> None:
    """A preprint and the published version share a DOI: neither overwrites the other."""
    cat = open_cat(engine)
    first = cat.add_file(pdfs[0], metadata={"DOI": "10.1234/Same"})
    second = cat.add_file(pdfs[1], metadata={"DOI": "10.1234/same"})
    assert first.uuid != second.uuid
    assert second.uuid == document_uuid(sha1=file_sha1(pdfs[1]))
    assert cat.resources.get(first.uuid, "pdf") == pdfs[0].read_bytes()
    assert cat.resources.get(second.uuid, "pdf") == pdfs[1].read_bytes()
    assert sorted(cat.resolve("doi:10.1234/same")) == sorted([first.uuid, second.uuid])
    assert cat.resolve(file_sha1(pdfs[0])) == [first.uuid]


def test_identifier_edge_cases(engine: Engine, pdfs: list[Path]) -> None:
    cat = open_cat(engine)
    entry = cat.add_file(pdfs[0])
    # the same UUID in upper case is the same id
    assert cat.put_metadata(entry.uuid, {"id": entry.uuid.upper(), "x": 1}).uuid == entry.uuid
    assert cat.metadata(entry.uuid)["id"] == entry.uuid
    # a base32 sha1 that happens to start with "PMC" is still a sha1
    assert parse_identifier("PMC" + "A" * 29) == ("sha1", sha1_hex("PMC" + "A" * 29))
    assert parse_identifier("PMC123") == ("pmcid", "PMC123")


def test_rebuild_with_damaged_metadata_keeps_the_sha1(engine: Engine, pdfs: list[Path]) -> None:
    cat = open_cat(engine)
    entry = cat.add_file(pdfs[0], metadata={"DOI": "10.1234/abc"})
    key = resource_key(entry.uuid, "metadata")
    cat.resources.blobs.put(key, b"\x1f\x8b not really gzip")
    counts = cat.rebuild()
    assert counts["corrupt-metadata"] == 1
    rebuilt = cat.get(entry.uuid)
    assert rebuilt is not None and rebuilt.sha1 == file_sha1(pdfs[0])  # hashed from the PDF
    assert rebuilt.doi is None and rebuilt.resources == ("metadata", "pdf")


def test_assign_uuid_is_deterministic_across_workers(engine: Engine, pdfs: list[Path],
                                                     tmp_path: Path) -> None:
    """Two workers with their own empty databases and stores agree on UUIDs."""
    other_engine = make_engine(f"sqlite:///{tmp_path / 'other.sqlite3'}")
    migrate.upgrade(other_engine)  # components trust their engine's schema (the services check it)
    try:
        workers = [
            Catalogue(engine, ResourceStore(LocalBlobStore(tmp_path / "store-a"))),
            Catalogue(other_engine, ResourceStore(LocalBlobStore(tmp_path / "store-b"))),
        ]
        digest = file_sha1(pdfs[1])
        for ids in ({"sha1": digest}, {"sha1": digest.upper()}, {"sha1": sha1_base32(digest)},
                    {"doi": "10.1234/ABC"}, {"doi": "doi:10.1234/abc"}, {"pmid": "pmid:99"},
                    {"sha1": digest, "doi": "10.1234/abc", "pmid": "99"},
                    {"pmcid": "PMC5"}, {"arxiv": "arXiv:hep-th/9901001"}):
            got = {w.assign_uuid(**ids) for w in workers}
            assert len(got) == 1, ids
            assert got == {document_uuid(**ids)}
        assert workers[0].assign_uuid(sha1=digest, doi="10.1234/abc") == document_uuid(
            sha1=digest)
        entries = [w.add_file(pdfs[1], metadata={"DOI": "10.1234/ABC"}) for w in workers]
        assert entries[0].uuid == entries[1].uuid == document_uuid(sha1=digest)
        assert str(uuid.UUID(entries[0].uuid)) == entries[0].uuid
        assert uuid.UUID(entries[0].uuid).version == 5
        with pytest.raises(InvalidName):
            workers[0].assign_uuid()
    finally:
        other_engine.dispose()


def test_put_metadata_with_conflicting_id(engine: Engine, pdfs: list[Path]) -> None:
    cat = open_cat(engine)
    entry = cat.add_file(pdfs[0], metadata={"title": ["Original"]})
    key = resource_key(entry.uuid, "metadata")
    stored = cat.resources.blobs.get(key)
    other = document_uuid(doi="10.1/other")
    for bad_id in (other, "not-a-uuid", 7):
        with pytest.raises(RecordError) as exc:
            cat.put_metadata(entry.uuid, {"id": bad_id, "title": ["Changed"]})
        assert exc.value.status == "bad-metadata"
    assert cat.resources.blobs.get(key) == stored
    assert cat.metadata(entry.uuid)["title"] == ["Original"]
    assert not cat.resources.exists(other, "metadata")
    # the document's own id is fine, and other keys are merged in
    cat.put_metadata(entry.uuid, {"id": entry.uuid, "volume": "3"})
    assert cat.metadata(entry.uuid) == {
        "id": entry.uuid, "title": ["Original"], "sha1": entry.sha1, "volume": "3",
        "metadata_source": "user", "field_sources": {"title": "user", "volume": "user"}}


def test_metadata_identifiers() -> None:
    assert identifiers_from_metadata(METADATA) == {
        "doi": "10.1234/abc", "pmid": "12345678", "pmcid": "PMC7654321",
        "arxiv": "2101.00001v2"}
    # malformed identifiers are left out of the index; other spellings of the fields
    assert identifiers_from_metadata({"DOI": "nope", "PMID": 123, "pmc": "PMC9",
                                      "arxiv": "arXiv:2101.00001", "sha1": "xyz"}) == {
        "pmid": "123", "pmcid": "PMC9", "arxiv": "2101.00001"}
    assert parse_identifier("https://doi.org/10.1234/ABC") == ("doi", "10.1234/abc")
    assert parse_identifier("PMC12") == ("pmcid", "PMC12")


# -- export and rebuild ------------------------------------------------------------------


def test_export(engine: Engine, pdfs: list[Path], metadata_file: Path) -> None:
    assert invoke(["catalogue", "export"]).stdout == ""
    first = store_add("--metadata", metadata_file, pdfs[0])
    cat = open_cat(engine)
    meta_only = cat.put_metadata(cat.assign_uuid(doi="10.5555/meta-only"),
                                 {"DOI": "10.5555/meta-only"})
    others = [store_add(p) for p in pdfs[1:]]
    exported = lines(invoke(["catalogue", "export"]).stdout)
    ids = sorted([first["id"], meta_only.uuid, *(o["id"] for o in others)])
    assert [e["id"] for e in exported] == ids
    for e in exported:
        assert set(e["paths"]) == set(e["resources"])
        assert e["paths"] == {k: resource_key(e["id"], k) for k in e["resources"]}
        assert set(e) == {"id", "sha1", "doi", "pmid", "pmcid", "arxiv", "resources", "paths",
                          "updated"}
    by_id = {e["id"]: e for e in exported}
    assert by_id[meta_only.uuid]["resources"] == ["metadata"]
    assert by_id[meta_only.uuid]["sha1"] is None
    assert by_id[first["id"]]["doi"] == "10.1234/abc"
    metas = lines(invoke(["catalogue", "export", "--metadata"]).stdout)
    assert [m["id"] for m in metas] == ids
    assert all(next(iter(m)) == "id" for m in metas)
    assert {m["id"]: m.get("DOI") for m in metas}[meta_only.uuid] == "10.5555/meta-only"


def test_rebuild(engine: Engine, pdfs: list[Path], metadata_file: Path) -> None:
    cat = open_cat(engine)
    blobs = cat.resources.blobs
    a = store_add("--metadata", metadata_file, pdfs[0])["id"]
    b = store_add(pdfs[1])["id"]
    gone = store_add(pdfs[2])["id"]
    cat.resources.put(a, "grobid-tei", b"<TEI/>")
    cat.refresh(a)
    meta_only = cat.put_metadata(cat.assign_uuid(pmid="777"), {"pmid": "777"}).uuid
    # foreign files sharing the store: not documents
    blobs.put("README.txt", b"hello")
    blobs.put("foreign/data.json", b"{}")
    blobs.put(f"{shard_dir(a)}/{a}.unknown-kind", b"?")
    blobs.put(f"{shard_dir(a)}/notes.txt", b"?")
    blobs.put(f"{shard_dir(b)}/{a}.pdf", b"misplaced")  # a's name in b's directory
    before = rows(engine)
    assert [r["uuid"] for r in before] == sorted([a, b, gone, meta_only])
    assert {r["uuid"]: r["resources"] for r in before}[a] == ["grobid-tei", "metadata", "pdf"]

    with engine.begin() as conn:
        conn.execute(delete(catalogue))
    counts = cat.rebuild()
    assert counts == {"documents": 4, "with-metadata": 4, "corrupt-metadata": 0, "removed": 0,
                      "changed": 4}
    assert rows(engine) == before

    # stale details in rows are corrected too
    with engine.begin() as conn:
        conn.execute(update(catalogue).where(catalogue.c.uuid == b)
                     .values(doi="10.1/wrong", resources=["pdf"]))
    cat.rebuild()
    assert rows(engine) == before

    # a document put in the store by other means, its metadata without a sha1
    digest = file_sha1(pdfs[2])
    c = document_uuid(doi="10.7777/no-sha1")
    cat.resources.put(c, "metadata", orjson.dumps({"id": c, "DOI": "10.7777/NO-SHA1"}))
    with pdfs[2].open("rb") as f:
        cat.resources.put(c, "pdf", f)
    # a document deleted from the store
    for kind in ("pdf", "metadata"):
        assert cat.resources.delete(gone, kind)
    # a document whose metadata is damaged
    blobs.put(resource_key(b, "metadata"), b"this is not gzip")

    result = invoke(["catalogue", "rebuild"])
    assert result.exit_code == 0, result.stderr
    assert ("documents 4, with-metadata 4, corrupt-metadata 1, removed 1"
            in result.stderr), result.stderr
    after = {r["uuid"]: r for r in rows(engine)}
    assert set(after) == {a, b, c, meta_only}
    assert after[c]["sha1"] == digest and after[c]["doi"] == "10.7777/no-sha1"
    assert after[c]["resources"] == ["metadata", "pdf"]
    assert after[b]["resources"] == ["metadata", "pdf"]  # still listed
    assert after[a] == next(r for r in before if r["uuid"] == a)
    assert cat.resolve(digest) == [c]
    result = invoke(["catalogue", "get", gone])
    assert result.exit_code == 1 and "no document" in result.stderr
    # foreign files are left alone
    assert blobs.get("README.txt") == b"hello" and blobs.exists("foreign/data.json")
    exported = [e["id"] for e in lines(invoke(["catalogue", "export"]).stdout)]
    assert exported == sorted([a, b, c, meta_only])


def test_rebuild_keeps_when_each_document_changed(engine: Engine, pdfs: list[Path]) -> None:
    """``updated`` says when a document last changed: a rebuild rewrites only rows
    that differ from the store (issue 23: every row's time became the rebuild's,
    so the pages' recent activity listed everything at once)."""
    cat = open_cat(engine)
    a = store_add(pdfs[0])["id"]
    b = store_add(pdfs[1])["id"]
    with engine.begin() as conn:  # written long ago
        conn.execute(update(catalogue).values(updated=datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC)))
        conn.execute(update(catalogue).where(catalogue.c.uuid == b).values(doi="10.1/stale"))
    counts = cat.rebuild()
    times = {e.uuid: e.updated for e in cat.entries()}
    assert times[a] == datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC)  # unchanged: kept
    assert times[b] is not None and times[b].year > 2020  # corrected: now
    assert cat.get(b).doi is None
    assert counts["documents"] == 2 and counts["changed"] == 1

    # into an empty table: each row gets the time its files were written
    entry = cat.get(a)
    assert entry is not None and "pdf" in entry.resources
    with engine.begin() as conn:
        conn.execute(delete(catalogue))
    stamp = datetime(2021, 6, 7, 8, 9, 10, tzinfo=UTC).timestamp()
    for kind in entry.resources:  # the store is a local directory here
        os.utime(Path(cat.resources.blobs.url) / resource_key(a, kind), (stamp, stamp))
    counts = cat.rebuild()
    times = {e.uuid: e.updated for e in cat.entries()}
    assert times[a] == datetime(2021, 6, 7, 8, 9, 10, tzinfo=UTC)
    assert counts["changed"] == 2
    assert cat.rebuild()["changed"] == 0
    assert {e.uuid: e.updated for e in cat.entries()} == times


def test_rebuild_into_a_new_database(engine: Engine, pdfs: list[Path], tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    for p in pdfs:
        store_add(p)
    before = rows(engine)
    fresh_url = f"sqlite:///{tmp_path / 'fresh.sqlite3'}"
    monkeypatch.setenv("SANDCRAWLER_DATABASE_URL", fresh_url)
    result = invoke(["catalogue", "rebuild"])
    assert result.exit_code == 0, result.stderr
    fresh = make_engine(fresh_url)
    try:
        assert rows(fresh) == before
    finally:
        fresh.dispose()


# -- errors and the store commands -------------------------------------------------------


@pytest.mark.parametrize("identifier", [
    "hello", "pmid:abc", "pmid:0123", "PMC0", "PMCabc", "a" * 39, "a" * 41, "doi:nope",
    "arxiv:xyz", "sha1:abc", "x" * 36, "", "10.1234",
])
def test_catalogue_get_bad_identifier(engine: Engine, identifier: str) -> None:
    result = invoke(["catalogue", "get", identifier])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith("Error: ") and "Traceback" not in result.stderr
    assert "no document" not in result.stderr


@pytest.mark.parametrize("identifier", [
    "10.9999/nothing", "doi:10.9999/nothing", "pmid:999", "PMC999", "arxiv:2101.99999",
    "0" * 40, "A" * 32, "4f62596b-4fe9-4455-ba33-572c50358f3a",
])
def test_catalogue_get_unknown(engine: Engine, pdfs: list[Path], identifier: str) -> None:
    store_add(pdfs[0])
    result = invoke(["catalogue", "get", identifier])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "no document" in result.stderr and identifier in result.stderr


def test_store_add_errors(engine: Engine, pdfs: list[Path], tmp_path: Path,
                          metadata_file: Path) -> None:
    result = invoke(["store", "add", str(tmp_path / "missing.pdf")])
    assert result.exit_code == 2 and "does not exist" in result.stderr
    result = invoke(["store", "add", "--kind", "grobid-tei", str(pdfs[0])])
    assert result.exit_code == 2 and "grobid-tei" in result.stderr
    result = invoke(["store", "add", "--metadata", str(metadata_file), str(pdfs[0]),
                     str(pdfs[1])])
    assert result.exit_code == 2 and "exactly one FILE" in result.stderr
    for bad in (b"{not json", b"[1, 2]"):
        (tmp_path / "bad.json").write_bytes(bad)
        result = invoke(["store", "add", "--metadata", str(tmp_path / "bad.json"),
                         str(pdfs[0])])
        assert result.exit_code == 2 and "--metadata" in result.stderr
    result = invoke(["store", "add", str(tmp_path)])
    assert result.exit_code == 2
    assert invoke(["store", "ls"]).stdout == ""  # nothing was stored
    assert rows(engine) == []
    with pytest.raises(InvalidName) as exc:
        open_cat(engine).add_file(pdfs[0], kind="grobid-tei")
    assert exc.value.status == "bad-kind"
    with pytest.raises(RecordError) as rec:
        open_cat(engine).add_file(tmp_path / "missing.pdf")
    assert rec.value.status == "unreadable"
    assert rows(engine) == []


def test_store_commands(engine: Engine, pdfs: list[Path], isolated_env: Path) -> None:
    out = store_add(pdfs[0])
    result = invoke(["store", "cat", out["paths"]["pdf"]])
    assert result.exit_code == 0 and result.stdout_bytes == pdfs[0].read_bytes()
    result = invoke(["store", "cat", "00/00/nothing.pdf"])
    assert result.exit_code == 1 and "no blob" in result.stderr
    result = invoke(["store", "cat", "../etc/passwd"])
    assert result.exit_code == 1 and result.stdout == ""
    listed = lines(invoke(["store", "ls"]).stdout)
    assert [x["key"] for x in listed] == sorted(out["paths"].values())
    assert all(x["modified"] and x["size"] > 0 for x in listed)

    kinds = invoke(["store", "kinds"])
    assert kinds.exit_code == 0
    table = {ln.split()[0]: ln.split()[1:3] for ln in kinds.stdout.splitlines()}
    assert table["pdf"] == ["<uuid>.pdf", "primary"]
    assert table["grobid-tei"] == ["<uuid>.grobid.tei.xml.gz", "secondary"]
    assert table["metadata"] == ["<uuid>.metadata.json.gz", "secondary"]

    # leftovers of interrupted writes: only old ones are removed
    tmp_dir = isolated_env / "data" / "store" / ".tmp"
    old, young = tmp_dir / "w-old", tmp_dir / "w-young"
    old.write_bytes(b"partial")
    young.write_bytes(b"partial")
    day_ago = time.time() - 2 * 86400
    os.utime(old, (day_ago, day_ago))
    result = invoke(["store", "cleanup"])
    assert result.exit_code == 0 and "1 leftover(s) removed" in result.stderr
    assert not old.exists() and young.exists()
    result = invoke(["store", "cleanup", "--older-than", "0"])
    assert "1 leftover(s) removed" in result.stderr and not young.exists()
    # leftovers are never listed as blobs, and the documents are untouched
    assert lines(invoke(["store", "ls"]).stdout) == listed


# -- schema upgrade of an existing embedded database -------------------------------------


@pytest.fixture
def sqlite_at_0001(isolated_env: Path) -> Iterator[Engine]:
    url = load_settings().database.url
    assert url.startswith("sqlite:///") and str(isolated_env) in url
    engine = make_engine(url)
    migrate.upgrade(engine, "0001")
    yield engine
    engine.dispose()


def test_sqlite_at_0001_is_upgraded_on_first_use(sqlite_at_0001: Engine,
                                                 pdfs: list[Path]) -> None:
    engine = sqlite_at_0001
    record = {"DOI": "10.1234/old", "title": ["Kept"]}
    indexed = datetime(2021, 3, 4, 5, 6, 7, tzinfo=UTC)
    with engine.begin() as conn:
        conn.execute(insert(crossref).values(doi="10.1234/old", indexed=indexed, record=record))
    assert migrate.current_revision(engine) == "0001"
    out = store_add(pdfs[0])
    assert migrate.current_revision(engine) == migrate.head_revision() != "0001"
    with engine.connect() as conn:
        kept = conn.execute(select(crossref)).all()
    assert [(r.doi, r.indexed, r.record) for r in kept] == [("10.1234/old", indexed, record)]
    assert [r["uuid"] for r in rows(engine)] == [out["id"]]
    assert catalogue_get(out["sha1"])[0]["id"] == out["id"]


def test_store_add_refuses_bytes_of_another_kind(engine, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Issue 14 C4: `store add` stored HTML as a .pdf."""
    page = tmp_path / "landing.pdf"
    page.write_bytes(b"<!DOCTYPE html><html><head><title>x</title></head><body>no</body></html>")
    result = invoke(["store", "add", str(page)])
    assert result.exit_code == 1
    assert "wrong-kind" in result.stderr and "text/html" in result.stderr
    assert open_cat(engine).count() == 0
    result = invoke(["store", "add", "--kind", "html", str(page)])
    assert result.exit_code == 0, result.stderr


@pytest.mark.parametrize("store", ["local", "s3"])
@pytest.mark.slow  # waits out timeouts, retries or stalls
def test_concurrent_metadata_writes_lose_nothing(engine, tmp_path: Path, store: str,  # type: ignore[no-untyped-def]
                                                 request: pytest.FixtureRequest) -> None:
    """Issue 14 B1: `store add F --metadata` run at once on one file lost fields from
    metadata.json and the catalogue row (read-merge-write without a lock). Every
    writer's key must survive, on both stores and both databases."""
    if store == "s3":
        request.getfixturevalue("s3_bucket")
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(make_pdf(["one paper, many writers"]))
    writers = 8
    procs = []
    for i in range(writers):
        meta = tmp_path / f"meta{i}.json"
        meta.write_bytes(orjson.dumps({f"key{i}": i, "title": [f"writer {i}"]}))
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "sandcrawler", "store", "add", str(pdf), "--metadata",
             str(meta)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
    results = [(p.wait(timeout=120), p.stderr.read().decode()) for p in procs]  # type: ignore[union-attr]
    assert all(code == 0 for code, _ in results), results
    cat = Services(load_settings()).catalogue
    [doc] = cat.resolve(f"sha1:{hashlib.sha1(pdf.read_bytes()).hexdigest()}")
    stored = cat.metadata(doc)
    assert {f"key{i}" for i in range(writers)} <= set(stored), stored
    entry = cat.get(doc)
    assert entry is not None and entry.sha1 == hashlib.sha1(pdf.read_bytes()).hexdigest()
