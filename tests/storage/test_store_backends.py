"""A third store backend is one module plus one line (issue 24, item 3): the test
kit's ``testgcs://`` store, registered by the ``store.schemes`` setting, used by
the commands through the composition root like the built-in ones."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.core.errors import ConfigError
from sandcrawler.storage.local import LocalBlobStore
from sandcrawler.storage.schemes import STORE_SCHEMES, open_blob_store
from sandcrawler_testkit.gcs_store import ROOT_VARIABLE, SCHEME_ENTRY, TestGcsBlobStore
from sandcrawler_testkit.pdfs import make_pdf
from tests.helpers.cli import invoke


@pytest.fixture
def testgcs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The one line (a setting), the store URL, and the directory of the buckets."""
    root = tmp_path / "gcs"
    root.mkdir()
    monkeypatch.setenv(ROOT_VARIABLE, str(root))
    monkeypatch.setenv("SANDCRAWLER_STORE_SCHEMES", orjson.dumps({"testgcs": SCHEME_ENTRY})
                       .decode())
    monkeypatch.setenv("SANDCRAWLER_STORE_URL", "testgcs://papers/run-1")
    return root


def test_documents_stored_and_read_through_the_commands(testgcs: Path, tmp_path: Path) -> None:
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(make_pdf(["A paper in a GCS-style bucket"]))

    init = invoke(["store", "init"])
    assert init.exit_code == 0, init.stderr
    assert init.stderr.strip() == "testgcs://papers/run-1: created"
    added = invoke(["store", "add", str(pdf)])
    assert added.exit_code == 0, added.stderr
    entry = orjson.loads(added.stdout)

    # the bytes are where the bucket is, under the URL's prefix, in the resource layout
    stored = sorted(p.relative_to(testgcs) for p in testgcs.rglob("*") if p.is_file())
    assert [str(p) for p in stored] == [f"papers/run-1/{key}" for key in
                                        sorted(entry["paths"].values())]

    cat = invoke(["store", "cat", entry["id"]])
    assert cat.exit_code == 0, cat.stderr
    assert cat.stdout_bytes == pdf.read_bytes()
    listed = [orjson.loads(line)["key"] for line in invoke(["store", "ls"]).stdout.splitlines()]
    assert listed == sorted(entry["paths"].values())


def test_the_services_build_it_from_the_settings(testgcs: Path) -> None:
    (testgcs / "papers").mkdir()
    with Services(load_settings()) as services:
        assert isinstance(services.blobs, TestGcsBlobStore)
        services.blobs.put("a/b.txt", b"hello")
        assert services.blobs.get("a/b.txt") == b"hello"
    assert (testgcs / "papers" / "run-1" / "a" / "b.txt").read_bytes() == b"hello"


def test_a_missing_bucket_is_one_line(testgcs: Path) -> None:
    result = invoke(["store", "ls"])
    assert result.exit_code == 1
    assert result.stderr == ("Error: testgcs://papers/run-1: no bucket 'papers' (sandcrawler "
                             "store init creates it)\n")


def test_unregistered_scheme_names_the_known_ones(testgcs: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SANDCRAWLER_STORE_SCHEMES")
    result = invoke(["store", "ls"])
    assert result.exit_code == 1
    assert result.stderr == ("Error: unsupported store.url 'testgcs://papers/run-1': use a "
                             "directory or one of file://, s3://\n")


@pytest.mark.parametrize(("entry", "message"), [
    ("sandcrawler_testkit.no_such_store:Store",
     "Error: cannot load 'sandcrawler_testkit.no_such_store:Store': no module "
     "'sandcrawler_testkit.no_such_store' (expected 'package.module:attribute')\n"),
    ("sandcrawler_testkit.gcs_store:NoSuchStore",
     "Error: cannot load 'sandcrawler_testkit.gcs_store:NoSuchStore': module "
     "'sandcrawler_testkit.gcs_store' has no 'NoSuchStore' (expected "
     "'package.module:attribute')\n"),
    ("sandcrawler_testkit/gcs_store.py",
     "Error: cannot load 'sandcrawler_testkit/gcs_store.py': not a name of that form "
     "(expected 'package.module:attribute')\n"),
])
def test_a_bad_entry_is_the_loaders_one_line(testgcs: Path, monkeypatch: pytest.MonkeyPatch,
                                             entry: str, message: str) -> None:
    monkeypatch.setenv("SANDCRAWLER_STORE_SCHEMES", orjson.dumps({"testgcs": entry}).decode())
    result = invoke(["store", "ls"])
    assert (result.exit_code, result.stderr) == (1, message)


def test_a_setting_cannot_replace_a_built_in_scheme(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"store\.schemes: s3 is a built-in scheme"):
        open_blob_store("s3://bucket", {}, {"s3": SCHEME_ENTRY})


def test_each_backend_gets_only_the_section_it_names(tmp_path: Path) -> None:
    """The local store asks for ``store`` (its fsync); asked for nothing else, it is
    given nothing else: an offer it does not name is never built."""
    settings = load_settings(store_fsync=False)
    built: list[str] = []

    def offer(name: str) -> object:
        built.append(name)
        return getattr(settings, name)

    offers = {name: (lambda n=name: offer(n)) for name in ("store", "s3", "grobid")}
    store = open_blob_store(f"file://{tmp_path / 'x'}", offers)
    assert isinstance(store, LocalBlobStore) and store.fsync is False
    assert built == ["store"]
    assert set(STORE_SCHEMES) == {"file", "s3"}
