"""Document resources in the seed's layout, on both blob stores; document UUIDs."""

from __future__ import annotations

import gzip
import hashlib
import io
import random
import uuid

import pytest

from sandcrawler.core.errors import CorruptData, InvalidName, NotFound
from sandcrawler.storage.blobs import BlobStore
from sandcrawler.storage.docid import NAMESPACE, document_uuid, parse_uuid, shard_dir
from sandcrawler.storage.resources import (
    KINDS,
    ResourceStore,
    parse_resource_key,
    resource_key,
    resource_kind,
)

U = "98da17ff-bf7e-4d43-bdf2-4d8d831481e5"
DIR = f"98/da/17/ff/{U}"

#: every kind of the seed's layout with the exact name it is stored under
STORED_SUFFIXES = {
    "pdf": ".pdf",
    "nxml": ".nxml.gz",
    "xml": ".xml.gz",
    "html": ".html.gz",
    "docx": ".docx",
    "ps": ".ps",
    "grobid-tei": ".grobid.tei.xml.gz",
    "extract-tei": ".extract.tei.xml.gz",
    "pub2tei": ".pub2tei.tei.xml.gz",
    "text": ".txt.gz",  # ours: main text extracted from HTML full text (ingest)
    "ref-annotations": "-ref-annotations.json.gz",
    "thumb-small": "-thumb-small.png",
    "thumb-medium": "-thumb-medium.png",
    "thumb-large": "-thumb-large.png",
    "thumb-listing": "-thumb-listing.jpg",  # ours: the listing JPEG of issue 5
    "software": ".software.json.gz",
    "dataset": ".dataset.json.gz",
    "references": ".references.tei.xml.gz",
    "affiliations": ".affiliations.json.gz",
    "metadata": ".metadata.json.gz",
}
BINARY = {"pdf", "docx", "ps", "thumb-small", "thumb-medium", "thumb-large", "thumb-listing"}


@pytest.fixture
def resources(blob_store: BlobStore) -> ResourceStore:
    return ResourceStore(blob_store)


def _text(size: int, seed: int = 0) -> bytes:
    """Compressible but not trivial XML-ish text."""
    rng = random.Random(seed)
    words = [b"<ref>", b"</ref>", b"author", b"title", b"2021", b"journal", b"vol.", b"\xc3\xa9"]
    out = bytearray()
    while len(out) < size:
        out += rng.choice(words) + b" " + str(rng.randrange(10**6)).encode() + b"\n"
    return bytes(out[:size])


# -- the layout -------------------------------------------------------------------


def test_every_seed_kind_is_known() -> None:
    assert set(KINDS) == set(STORED_SUFFIXES)
    assert {name for name, k in KINDS.items() if k.binary} == BINARY
    assert {name for name, k in KINDS.items() if k.primary} == {
        "pdf", "nxml", "xml", "html", "docx", "ps"
    }


@pytest.mark.parametrize(("kind", "suffix"), sorted(STORED_SUFFIXES.items()))
def test_resource_key_layout(kind: str, suffix: str) -> None:
    key = resource_key(U, kind)
    assert key == f"{DIR}/{U}{suffix}"
    assert parse_resource_key(key) == (U, KINDS[kind])
    assert KINDS[kind].stored_suffix == suffix
    # the kind can also be named by its (uncompressed) suffix, or passed as itself
    assert resource_key(U, KINDS[kind].suffix) == key
    assert resource_key(U, KINDS[kind]) == key


def test_resource_key_examples_from_the_seed() -> None:
    assert resource_key(U, "pdf") == (
        "98/da/17/ff/98da17ff-bf7e-4d43-bdf2-4d8d831481e5/"
        "98da17ff-bf7e-4d43-bdf2-4d8d831481e5.pdf"
    )
    assert resource_key(U, "nxml") == (
        "98/da/17/ff/98da17ff-bf7e-4d43-bdf2-4d8d831481e5/"
        "98da17ff-bf7e-4d43-bdf2-4d8d831481e5.nxml.gz"
    )
    assert shard_dir(U) == DIR


def test_uppercase_uuid_names_the_same_resource() -> None:
    assert resource_key(U.upper(), "pdf") == resource_key(U, "pdf")
    assert parse_uuid(U.upper()) == U
    assert parse_uuid(uuid.UUID(U)) == U


V = "0000aaaa-1111-4222-8333-444455556666"


@pytest.mark.parametrize(
    "key",
    [
        "",
        "notes.txt",
        f"{U}.pdf",
        f"{DIR}/{U}",  # no suffix
        f"{DIR}/{U}.exe",  # unknown suffix
        f"{DIR}/{U}.pdf.gz",  # binary kinds are not compressed
        f"{DIR}/{U}.grobid.tei.xml",  # text kinds always are
        f"{DIR}/{U}.pdf/extra",
        f"{DIR}/{V}.pdf",  # file named for another UUID
        f"98/da/17/fe/{U}/{U}.pdf",  # UUID dir does not match its shard dirs
        f"00/00/aa/ab/{V}/{V}.pdf",  # last shard dir off by one
        f"98/da/17/{U}/{U}.pdf",  # a shard level missing
        f"98/da/17/ff/00/{U}/{U}.pdf",  # one too many
        f"x/{DIR}/{U}.pdf",
        f"98/DA/17/FF/{U.upper()}/{U.upper()}.pdf",  # only the canonical lower-case form
        f"98/da/17/ff/{U[:-1]}/{U[:-1]}.pdf",  # not a UUID
    ],
)
def test_parse_resource_key_rejects_foreign_keys(key: str) -> None:
    assert parse_resource_key(key) is None


def test_parse_resource_key_is_the_inverse_for_other_uuids() -> None:
    for n in range(20):
        doc = str(uuid.UUID(int=random.Random(n).getrandbits(128)))
        for kind in KINDS:
            assert parse_resource_key(resource_key(doc, kind)) == (doc, KINDS[kind])


# -- storing and reading ---------------------------------------------------------


def test_round_trip_of_every_kind(resources: ResourceStore) -> None:
    blobs = resources.blobs
    for n, kind in enumerate(sorted(KINDS)):
        content = _text(5000 + n, seed=n) if kind not in BINARY else random.Random(n).randbytes(
            5000 + n
        )
        info = resources.put(U, kind, content)
        stored = blobs.get(resource_key(U, kind))

        # the info describes the stored bytes
        assert info.key == resource_key(U, kind)
        assert info.size == len(stored)
        assert info.hashes["sha1"] == hashlib.sha1(stored).hexdigest()
        if kind in BINARY:
            assert stored == content, kind
        else:
            assert stored[:2] == b"\x1f\x8b", kind
            assert gzip.decompress(stored) == content, kind
            assert len(stored) < len(content), kind
        assert resources.get(U, kind) == content, kind
        with resources.open(U, kind) as f:
            assert f.read() == content, kind
        assert resources.exists(U, kind)

    assert sorted(k.name for k in resources.kinds(U)) == sorted(KINDS)


def test_text_resource_streams_in_and_out(resources: ResourceStore) -> None:
    content = _text(3 * 1024 * 1024 + 11, seed=99)
    resources.put(U, "grobid-tei", io.BytesIO(content))

    stored = resources.blobs.get(resource_key(U, "grobid-tei"))
    assert gzip.decompress(stored) == content
    pieces = []
    with resources.open(U, "grobid-tei") as f:
        while piece := f.read(100_000):
            assert len(piece) <= 100_000
            pieces.append(piece)
    assert len(pieces) > 1
    assert b"".join(pieces) == content


def test_binary_resource_from_a_stream(resources: ResourceStore) -> None:
    content = random.Random(7).randbytes(200_000)
    info = resources.put(U, "pdf", io.BytesIO(content))
    assert info.hashes["sha1"] == hashlib.sha1(content).hexdigest()
    assert resources.blobs.get(resource_key(U, "pdf")) == content
    assert resources.get(U, "pdf") == content


def test_gzip_is_deterministic(resources: ResourceStore) -> None:
    other = "0123abcd-0000-4000-8000-000000000000"
    content = _text(50_000, seed=5)
    first = resources.put(U, "metadata", content)
    second = resources.put(other, "metadata", io.BytesIO(content))
    again = resources.put(U, "metadata", content)

    stored = resources.blobs.get(resource_key(U, "metadata"))
    assert resources.blobs.get(resource_key(other, "metadata")) == stored
    assert first.hashes == second.hashes == again.hashes
    assert first.hashes["sha1"] == hashlib.sha1(stored).hexdigest()
    # the header carries no time stamp and no file name
    assert stored[4:8] == b"\x00\x00\x00\x00"
    assert stored[3] & 0x08 == 0


def test_empty_text_resource(resources: ResourceStore) -> None:
    resources.put(U, "software", b"")
    stored = resources.blobs.get(resource_key(U, "software"))
    assert stored[:2] == b"\x1f\x8b"
    assert resources.get(U, "software") == b""


def test_overwrite_and_delete(resources: ResourceStore) -> None:
    resources.put(U, "nxml", b"<article>one</article>")
    resources.put(U, "nxml", b"<article>two</article>")
    assert resources.get(U, "nxml") == b"<article>two</article>"
    assert resources.delete(U, "nxml") is True
    assert resources.delete(U, "nxml") is False
    assert not resources.exists(U, "nxml")
    with pytest.raises(NotFound):
        resources.get(U, "nxml")
    with pytest.raises(NotFound):
        resources.open(U, "pdf")
    assert list(resources.blobs.list("")) == []


def _truncated(raw: bytes) -> bytes:
    return raw[: len(raw) // 2]


def _flipped(raw: bytes) -> bytes:
    middle = len(raw) // 2
    damaged = bytearray(raw)
    for i in range(middle, middle + 16):
        damaged[i] ^= 0xFF
    return bytes(damaged)


def _no_trailer(raw: bytes) -> bytes:
    return raw[:-4]


def _not_gzip(raw: bytes) -> bytes:
    return b"<TEI>this was never compressed</TEI>\n" * 100


def _bad_header(raw: bytes) -> bytes:
    return b"\x1f\x8b\x09" + raw[3:]  # unknown compression method


def _emptied(raw: bytes) -> bytes:
    return b""  # gzip itself would read this as empty content


@pytest.mark.parametrize("damage", [_truncated, _flipped, _no_trailer, _not_gzip, _bad_header,
                                    _emptied])
def test_corrupt_gzip_is_corrupt_data(resources: ResourceStore, damage) -> None:  # type: ignore[no-untyped-def]
    content = _text(300_000, seed=11)
    pdf = random.Random(12).randbytes(10_000)
    metadata = b'{"id": "%s"}' % U.encode()
    resources.put(U, "grobid-tei", content)
    resources.put(U, "pdf", pdf)
    resources.put(U, "metadata", metadata)
    key = resource_key(U, "grobid-tei")
    raw = resources.blobs.get(key)
    resources.blobs.put(key, damage(raw))

    with pytest.raises(CorruptData) as excinfo:
        resources.get(U, "grobid-tei")
    assert key in str(excinfo.value)
    assert excinfo.value.status == "corrupt-data"

    with pytest.raises(CorruptData) as excinfo, resources.open(U, "grobid-tei") as f:
        while f.read(8192):
            pass
    assert key in str(excinfo.value)

    # the document's other resources are unaffected
    assert resources.get(U, "pdf") == pdf
    assert resources.get(U, "metadata") == metadata
    with resources.open(U, "metadata") as f:
        assert f.read() == metadata


# -- bad names -------------------------------------------------------------------


UNKNOWN_KINDS = ["pdf2", "../pdf", "", "PDF", ".pdf.gz", "grobid.tei.xml", "pdf/../pdf", "thumb"]


def test_unknown_kind(resources: ResourceStore) -> None:
    for kind in UNKNOWN_KINDS:
        calls = {
            "resource_kind": lambda k=kind: resource_kind(k),
            "resource_key": lambda k=kind: resource_key(U, k),
            "put": lambda k=kind: resources.put(U, k, b"data"),
            "get": lambda k=kind: resources.get(U, k),
            "open": lambda k=kind: resources.open(U, k),
            "exists": lambda k=kind: resources.exists(U, k),
            "delete": lambda k=kind: resources.delete(U, k),
        }
        for name, call in calls.items():
            with pytest.raises(InvalidName) as excinfo:
                call()
            assert excinfo.value.status == "unknown-resource-kind", (name, kind)
            assert repr(kind) in str(excinfo.value), (name, kind)
    assert list(resources.blobs.list("")) == []


BAD_UUIDS = [
    "../../etc",
    "not-a-uuid",
    "zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz",  # 36 characters of garbage
    "x" * 36,
    "../../../../../../../../../../../etc",  # 36 characters
    U.replace("-", ""),  # 32 hex digits, no hyphens
    "{" + U + "}",
    "urn:uuid:" + U,
    U + "\n",
    " " + U,
    U[:8] + U[9] + "-" + U[10:],  # a hyphen moved: uuid.UUID would accept it
    "",
]


def test_bad_uuid(resources: ResourceStore) -> None:
    for bad in BAD_UUIDS:
        calls = {
            "parse_uuid": lambda b=bad: parse_uuid(b),
            "shard_dir": lambda b=bad: shard_dir(b),
            "resource_key": lambda b=bad: resource_key(b, "pdf"),
            "put-binary": lambda b=bad: resources.put(b, "pdf", b"data"),
            "put-text": lambda b=bad: resources.put(b, "metadata", b"{}"),
            "get": lambda b=bad: resources.get(b, "pdf"),
            "exists": lambda b=bad: resources.exists(b, "pdf"),
            "delete": lambda b=bad: resources.delete(b, "pdf"),
            "kinds": lambda b=bad: resources.kinds(b),
        }
        for name, call in calls.items():
            with pytest.raises(InvalidName) as excinfo:
                call()
            assert excinfo.value.status == "bad-uuid", (name, bad)
    assert list(resources.blobs.list("")) == []


# -- kinds and documents ---------------------------------------------------------

DOCS = {
    # sharing 98/da/17/ff with U, and sorting around it
    "98da17ff-0000-4000-8000-000000000000": ["pdf", "grobid-tei"],
    U: ["pdf", "thumb-small", "grobid-tei", "metadata", "ref-annotations"],
    "98da1800-aaaa-4bbb-8ccc-dddddddddddd": ["nxml"],
    "0123abcd-0000-4000-8000-000000000000": ["html", "metadata"],
    "ffffffff-ffff-4fff-bfff-ffffffffffff": ["thumb-large"],
}


def _expected_kinds(doc: str) -> list[str]:
    """Kinds in the order their stored names sort, as a listing yields them."""
    return sorted(DOCS[doc], key=lambda k: resource_key(doc, k).encode())


@pytest.fixture
def populated(resources: ResourceStore) -> ResourceStore:
    for doc, kinds in DOCS.items():
        for kind in kinds:
            resources.put(doc, kind, f"{doc} {kind}".encode())
    blobs = resources.blobs
    # other data sharing the store
    blobs.put("README", b"not a document")
    blobs.put(f"{DIR}/{U}.exe", b"unknown suffix")
    blobs.put(f"{DIR}/notes.txt", b"not named for the document")
    blobs.put(f"98/da/17/fe/{U}/{U}.pdf", b"shard dirs do not match")
    blobs.put(f"{DIR}/{U}.pdf.gz", b"binary kind with .gz")
    blobs.put("98/da/17/ff/other", b"a file among the shard dirs")
    return resources


def test_kinds(populated: ResourceStore) -> None:
    for doc in DOCS:
        assert [k.name for k in populated.kinds(doc)] == _expected_kinds(doc), doc
    assert [k.name for k in populated.kinds(U)] == [
        "ref-annotations", "thumb-small", "grobid-tei", "metadata", "pdf"
    ]
    assert populated.kinds(U.upper()) == populated.kinds(U)
    assert populated.kinds("00000000-0000-4000-8000-000000000000") == []

    assert populated.delete(U, "thumb-small")
    assert "thumb-small" not in [k.name for k in populated.kinds(U)]


def test_documents(populated: ResourceStore) -> None:
    found = [(doc, [k.name for k in kinds]) for doc, kinds in populated.documents()]
    assert [doc for doc, _ in found] == sorted(DOCS)
    assert found == [(doc, _expected_kinds(doc)) for doc in sorted(DOCS)]

    under = [doc for doc, _ in populated.documents("98/da/17/ff/")]
    assert under == ["98da17ff-0000-4000-8000-000000000000", U]
    assert [doc for doc, _ in populated.documents("ff/")] == [
        "ffffffff-ffff-4fff-bfff-ffffffffffff"
    ]
    assert list(populated.documents("77/")) == []


def test_documents_of_an_empty_or_foreign_store(resources: ResourceStore) -> None:
    assert list(resources.documents()) == []
    resources.blobs.put("some/other/data.bin", b"x")
    resources.blobs.put(f"98/da/17/fe/{U}/{U}.pdf", b"y")
    assert list(resources.documents()) == []


# -- document UUIDs ------------------------------------------------------------------

SHA1_HEX = hashlib.sha1(b"sandcrawler test pdf").hexdigest()
SHA1_B32 = "L3372DZ7OGFKFFQOZ54U3VK6QLA6TVJ7"
SHA1_UUID = "2c31f26a-32d3-523d-bdfb-7fa37eebc5ca"


def test_document_uuid_from_sha1_is_stable() -> None:
    assert SHA1_HEX == "5ef7fd0f3f718aa2960ecf794dd55e82c1e9d53f"
    doc = document_uuid(sha1=SHA1_HEX)
    assert doc == SHA1_UUID
    assert doc == str(
        uuid.uuid5(uuid.UUID("5c1b0a52-7d2e-4f43-9a4c-2f0e6d3b8a11"), f"sha1:{SHA1_HEX}")
    )
    assert uuid.UUID("5c1b0a52-7d2e-4f43-9a4c-2f0e6d3b8a11") == NAMESPACE
    assert uuid.UUID(doc).version == 5
    assert parse_uuid(doc) == doc
    assert document_uuid(sha1=SHA1_HEX) == doc  # same answer every time


@pytest.mark.parametrize(
    "form", [SHA1_HEX, SHA1_HEX.upper(), SHA1_B32, SHA1_B32.lower(), f"sha1:{SHA1_HEX}",
             f"SHA1:{SHA1_B32}", f" {SHA1_HEX} "],
)
def test_document_uuid_same_for_every_sha1_form(form: str) -> None:
    assert document_uuid(sha1=form) == SHA1_UUID


@pytest.mark.parametrize(
    "others",
    [
        {"doi": "10.1234/abc"},
        {"pmid": "12345"},
        {"doi": "10.9999/xyz", "pmid": "777", "pmcid": "PMC42", "arxiv": "2101.00001"},
        {"doi": None, "pmid": None},
    ],
)
def test_document_uuid_sha1_wins_over_other_identifiers(others: dict[str, str | None]) -> None:
    assert document_uuid(sha1=SHA1_HEX, **others) == SHA1_UUID
    assert document_uuid(**others, sha1=SHA1_B32) == SHA1_UUID


@pytest.mark.parametrize(
    "doi",
    ["https://doi.org/10.1234/ABC", "10.1234/abc", "10.1234/ABC", "doi:10.1234/abc",
     "http://dx.doi.org/10.1234/Abc", " 10.1234/abc "],
)
def test_document_uuid_normalises_dois(doi: str) -> None:
    expected = str(uuid.uuid5(NAMESPACE, "doi:10.1234/abc"))
    assert document_uuid(doi=doi) == expected
    assert document_uuid(doi=doi, pmid="12345") == expected
    assert expected != SHA1_UUID
    assert uuid.UUID(expected).version == 5


def test_document_uuid_scheme_order() -> None:
    by_pmid = document_uuid(pmid="12345")
    assert by_pmid == str(uuid.uuid5(NAMESPACE, "pmid:12345"))
    assert document_uuid(pmid="12345", pmcid="PMC1", arxiv="2101.00001") == by_pmid
    assert document_uuid(pmcid="1") == document_uuid(pmcid="PMC1")
    assert document_uuid(arxiv="arXiv:2101.00001") == document_uuid(arxiv="2101.00001")
    assert len({by_pmid, document_uuid(pmcid="PMC1"), document_uuid(arxiv="2101.00001")}) == 3


@pytest.mark.parametrize(
    "identifiers", [{}, {"sha1": None}, {"sha1": "", "doi": ""}, {"doi": None, "pmid": None}]
)
def test_document_uuid_needs_an_identifier(identifiers: dict[str, str | None]) -> None:
    with pytest.raises(InvalidName) as excinfo:
        document_uuid(**identifiers)
    assert excinfo.value.status == "missing-identifier"


def test_document_uuid_rejects_unknown_schemes_and_bad_values() -> None:
    with pytest.raises(ValueError, match="isbn"):
        document_uuid(isbn="978-3-16-148410-0")
    with pytest.raises(InvalidName) as excinfo:
        document_uuid(sha1="not-a-sha1")
    assert excinfo.value.status == "bad-sha1"
