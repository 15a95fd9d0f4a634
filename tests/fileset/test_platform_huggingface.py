"""Hugging Face datasets (``fileset/platforms/huggingface.py``): a recorded real
tree listing of the Hub, then invented datasets for what it cannot show (paged
and looping listings, gated, private and missing datasets, file links), and
whole ingests whose LFS file (sha256) and plain file (git blob id) are verified.

Every invented answer has the shape the Hub's API gives (``/api/datasets/{id}``:
``sha``, ``gated``, ``private``, ``disabled``; tree entries ``type``, ``oid``,
``size``, ``path``, ``lfs``) and is built here, never presented as recorded."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from sandcrawler.fileset.platforms.base import file_item_name
from sandcrawler_testkit.platforms import PlatformServer
from sandcrawler_testkit.recorded import RECORDED
from tests.fileset.test_platform_answers import Platforms
from tests.helpers.platforms import ingest_result

HUB = "huggingface.co"
CDN = "cas-bridge.xethub.hf.co"
JSON = "application/json; charset=utf-8"
SHA = "0123456789abcdef0123456789abcdef01234567"
BERT_SHA = "dd4bc8b21efa05ec961e3efc4ee5e3832a3679c7"


def info(dataset: str, sha: str = SHA, **fields: Any) -> bytes:
    """An invented ``/api/datasets/{id}`` answer."""
    author = dataset.split("/")[0] if "/" in dataset else None
    return json.dumps({"_id": "65f0c0ffee", "id": dataset, "author": author, "sha": sha,
                       "lastModified": "2025-03-01T12:00:00.000Z", "private": False,
                       "gated": False, "disabled": False, "downloads": 3, "likes": 0,
                       "tags": [], "cardData": {"license": "cc-by-4.0"}, **fields}).encode()


def git_blob(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def entry(path: str, data: bytes, *, lfs: bool = False) -> dict[str, Any]:
    """An invented tree entry: a plain file (its git blob id), or an LFS file whose
    git blob is the pointer and whose ``lfs.oid`` is the sha256 of the bytes."""
    if not lfs:
        return {"type": "file", "oid": git_blob(data), "size": len(data), "path": path}
    pointer = (f"version https://git-lfs.github.com/spec/v1\noid sha256:"
               f"{hashlib.sha256(data).hexdigest()}\nsize {len(data)}\n").encode()
    return {"type": "file", "oid": git_blob(pointer), "size": len(data), "path": path,
            "lfs": {"oid": hashlib.sha256(data).hexdigest(), "size": len(data),
                    "pointerSize": len(pointer)}}


def add_dataset(srv: PlatformServer, dataset: str, entries: list[dict[str, Any]],
                revision: str | None = None, **fields: Any) -> None:
    api = f"/api/datasets/{dataset}"
    srv.add_page(HUB, f"{api}/revision/{revision}" if revision else api,
                 info(dataset, **fields), content_type=JSON)
    srv.add_page(HUB, f"{api}/tree/{revision or 'main'}?recursive=true",
                 json.dumps(entries).encode(), content_type=JSON)


# --- the recorded tree ----------------------------------------------------------------------


def test_recorded_tree_lfs_and_plain_files(srv: PlatformServer) -> None:
    srv.add_page(HUB, f"/api/datasets/google-bert/bert-base-uncased/revision/{BERT_SHA}",
                 info("google-bert/bert-base-uncased", sha=BERT_SHA), content_type=JSON)
    p = Platforms(srv)
    url = f"https://huggingface.co/datasets/google-bert/bert-base-uncased/tree/{BERT_SHA}"
    item = p.process(url)
    tree = RECORDED["huggingface-tree-bert-base-uncased"].json()
    assert len(tree) == 5
    rows = [(f.path, f.size, f.sha256, f.checksums) for f in item.manifest]
    assert rows == [
        (".gitattributes", 345, None, {"git-sha1": "dc08351d4dc0732d9c8af04070ced089b201ce2f"}),
        ("config.json", 313, None, {"git-sha1": "fca794a5f07ff8f963fe8b61e3694b0fb7f955df"}),
        ("pytorch_model.bin", 440473133,
         "097417381d6c7230bd9e3557456d726de6e83245ec8b24f529f60198a67b203a", None),
        ("tf_model.h5", 536063208,
         "a7a17d6d844b5de815ccab5f42cad6d24496db3850a2a43d8258221018ce87d2", None),
        ("vocab.txt", 231508, None, {"git-sha1": "fb140275c155a9c7c5a3b3e0e77a9e839594a938"}),
    ]
    # an LFS file's own oid is its pointer's blob, never taken for the bytes'
    assert "ba5d19791be1dd7992e33bd61f20207b0f7f50a5" not in json.dumps(item.to_json())
    assert item.manifest[2].extra == {
        "xet_hash": "2d8408d3a894d02517d04956e2f7546ff08362594072f3527ce144b5212a3296"}
    assert item.manifest[1].platform_url == (
        f"https://huggingface.co/datasets/google-bert/bert-base-uncased/resolve/{BERT_SHA}/"
        "config.json")
    assert (item.platform_id, item.archiveorg_item_name) == (
        "google-bert/bert-base-uncased",
        "huggingface.co-google-bert_bert-base-uncased-vdd4bc8b21efa")
    assert item.archiveorg_item_meta["sha"] == BERT_SHA
    assert p.strategy(url) == "archiveorg-fileset"  # files over web_max_file_size


# --- invented datasets ----------------------------------------------------------------------


def test_dataset_at_main_is_pinned_to_its_commit(srv: PlatformServer) -> None:
    add_dataset(srv, "someone/tables", [
        {"type": "directory", "oid": "a" * 40, "size": 0, "path": "data"},
        entry("data/train.csv", b"a,b\n1,2\n"), entry("README.md", b"# tables\n")])
    item = Platforms(srv).process("https://huggingface.co/datasets/someone/tables")
    assert [f.path for f in item.manifest] == ["data/train.csv", "README.md"]
    assert {f.platform_url for f in item.manifest} == {
        f"https://huggingface.co/datasets/someone/tables/resolve/{SHA}/data/train.csv",
        f"https://huggingface.co/datasets/someone/tables/resolve/{SHA}/README.md"}
    meta = item.archiveorg_item_meta
    assert (meta["revision"], meta["sha"], meta["license"], meta["creator"]) == (
        "main", SHA, "cc-by-4.0", "someone")
    assert [p for h, _, p in srv.requests if h == HUB] == [
        "/api/datasets/someone/tables", "/api/datasets/someone/tables/tree/main?recursive=true"]


def test_legacy_name_file_links_and_an_escaped_revision(srv: PlatformServer) -> None:
    add_dataset(srv, "squad", [entry("plain_text/train.json", b"{}"), entry("x y.txt", b"x")],
                revision="refs/convert/parquet")
    p = Platforms(srv)
    base = "https://huggingface.co/datasets/squad"
    for kind in ("blob", "resolve"):
        item = p.process(f"{base}/{kind}/refs%2Fconvert%2Fparquet/x%20y.txt")
        assert [f.path for f in item.manifest] == ["x y.txt"]
        dataset_item = f"huggingface.co-squad-v{SHA[:12]}"
        assert item.archiveorg_dataset_item == dataset_item
        assert item.archiveorg_item_name == file_item_name(dataset_item, "x y.txt")
    assert item.manifest[0].platform_url == (
        f"https://huggingface.co/datasets/squad/resolve/{SHA}/x%20y.txt")
    assert (HUB, "GET", "/api/datasets/squad/revision/refs/convert/parquet") in srv.requests
    assert p.status(f"{base}/blob/refs%2Fconvert%2Fparquet/missing.txt") == "platform-404"
    assert p.strategy(f"{base}/resolve/refs%2Fconvert%2Fparquet/x%20y.txt") == "web-file"


def test_a_paged_tree_follows_the_link_header(srv: PlatformServer) -> None:
    srv.add_page(HUB, "/api/datasets/o/many", info("o/many"), content_type=JSON)
    pages = [[entry(f"f{i:03d}.txt", b"%d" % i) for i in range(j, j + 50)] for j in (0, 50, 100)]
    first = "/api/datasets/o/many/tree/main?recursive=true"
    nexts = [f"/api/datasets/o/many/tree/main?recursive=true&cursor=c{n}" for n in (1, 2)]
    for path, page, following in zip([first, *nexts], pages, [*nexts, None], strict=True):
        link = {"Link": f'<https://{HUB}{following}>; rel="next"'} if following else None
        srv.add_page(HUB, path, json.dumps(page).encode(), content_type=JSON, headers=link)
    item = Platforms(srv).process("https://huggingface.co/datasets/o/many")
    assert [f.path for f in item.manifest] == [f"f{i:03d}.txt" for i in range(150)]
    assert [p for h, _, p in srv.requests if h == HUB][1:] == [first, *nexts]


def test_a_tree_whose_next_link_repeats_ends(srv: PlatformServer) -> None:
    srv.add_page(HUB, "/api/datasets/o/loop", info("o/loop"), content_type=JSON)
    first = "/api/datasets/o/loop/tree/main?recursive=true"
    again = "/api/datasets/o/loop/tree/main?recursive=true&cursor=c1"
    srv.add_page(HUB, first, json.dumps([entry("a.txt", b"a")]).encode(), content_type=JSON,
                 headers={"Link": f'<https://{HUB}{again}>; rel="next"'})
    # the cursor's page is a new one, but it points back to itself for ever
    srv.add_page(HUB, again, json.dumps([entry("b.txt", b"b")]).encode(), content_type=JSON,
                 headers={"Link": f'<https://{HUB}{again}>; rel="next"'})
    assert Platforms(srv).status("https://huggingface.co/datasets/o/loop") == "error-platform-api"
    assert len([p for h, _, p in srv.requests if p == again]) == 1


@pytest.mark.parametrize(("fields", "status"), [
    ({"gated": "auto"}, "platform-restricted"),
    ({"gated": "manual"}, "platform-restricted"),
    ({"private": True}, "platform-restricted"),
    ({"disabled": True}, "platform-restricted"),
    ({"sha": None}, "error-platform-api"),
])
def test_gated_private_disabled_and_odd_answers(srv: PlatformServer, fields: dict[str, Any],
                                                status: str) -> None:
    add_dataset(srv, "o/d", [entry("a.txt", b"a")], **fields)
    assert Platforms(srv).status("https://huggingface.co/datasets/o/d") == status
    # nothing is listed for a dataset we may not archive
    assert not [p for h, _, p in srv.requests if "/tree/" in p]


@pytest.mark.parametrize(("answer", "status"), [
    (401, "platform-restricted"),  # private, or no such dataset: the Hub does not say which
    (404, "platform-404"),
])
def test_hub_errors(srv: PlatformServer, answer: int, status: str) -> None:
    srv.add_page(HUB, "/api/datasets/o/d/revision/v9", b'{"error":"Repository Not Found"}',
                 status=answer, content_type=JSON)
    assert Platforms(srv).status("https://huggingface.co/datasets/o/d/tree/v9") == status


# --- whole ingests --------------------------------------------------------------------------


def add_downloads(srv: PlatformServer, dataset: str, lfs: dict[str, bytes],
                  plain: dict[str, bytes], served: dict[str, bytes] | None = None) -> None:
    """LFS files redirect to the CDN host, plain files are served by the Hub."""
    served = served or {}
    for i, (path, data) in enumerate(lfs.items()):
        target = f"/xet-bridge-us/{i}?X-Amz-Signature=x"
        srv.add_page(HUB, f"/datasets/{dataset}/resolve/{SHA}/{path}", b"", status=302,
                     location=f"https://{CDN}{target}")
        srv.add_page(CDN, target, served.get(path, data), content_type="application/octet-stream")
    for path, data in plain.items():
        srv.add_page(HUB, f"/datasets/{dataset}/resolve/{SHA}/{path}", served.get(path, data),
                     content_type="text/plain; charset=utf-8")
    srv.add_page(HUB, f"/datasets/{dataset}", b"<html><title>a dataset</title></html>")


def test_ingest_verifies_the_lfs_sha256_and_the_git_blob_id(srv: PlatformServer) -> None:
    big, readme = bytes(range(256)) * 64, b"# A dataset\n\nTwo files.\n"
    add_dataset(srv, "o/two", [entry("data/train.parquet", big, lfs=True),
                               entry("README.md", readme)])
    add_downloads(srv, "o/two", {"data/train.parquet": big}, {"README.md": readme})
    r = ingest_result(srv, "https://huggingface.co/datasets/o/two")
    assert (r["status"], r["hit"], r["platform_name"], r["ingest_strategy"]) == (
        "success", True, "huggingface", "web-fileset")
    by_path = {f["path"]: f for f in r["manifest"]}
    assert by_path["data/train.parquet"]["sha256"] == hashlib.sha256(big).hexdigest()
    assert by_path["README.md"]["checksums"] == {"git-sha1": git_blob(readme)}
    assert {f["status"] for f in r["manifest"]} == {"success"}
    assert (CDN, "GET", "/xet-bridge-us/0?X-Amz-Signature=x") in srv.requests


@pytest.mark.parametrize(("path", "status"), [("data/train.parquet", "mismatch-sha256"),
                                              ("README.md", "mismatch-checksum")])
def test_ingest_with_other_bytes_of_the_same_size(srv: PlatformServer, path: str,
                                                   status: str) -> None:
    big, readme = bytes(range(256)) * 64, b"# A dataset\n\nTwo files.\n"
    add_dataset(srv, "o/two", [entry("data/train.parquet", big, lfs=True),
                               entry("README.md", readme)])
    wrong = {"data/train.parquet": big[::-1], "README.md": readme.upper()}
    add_downloads(srv, "o/two", {"data/train.parquet": big}, {"README.md": readme},
                  served={path: wrong[path]})
    r = ingest_result(srv, "https://huggingface.co/datasets/o/two")
    assert (r["status"], r["hit"]) == (status, False)
