"""What our platform helpers make of answers the platforms really gave.

The answers are recorded in the test kit (``sandcrawler_testkit/data/platforms``,
sources in its ``SOURCES.md``) and served by the loopback platform server; each
helper's ``process_request`` reads them over real HTTP. Their checksums describe
files we do not have, so downloads and verification stay with the invented
datasets of ``test_fileset_platforms.py``.

Where a real answer showed a helper wrong (issue 14: Dataverse tabular files,
archive.org collections), the test says what is right.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import pytest

from sandcrawler.app.settings import load_settings, platform_sections
from sandcrawler.core.errors import RecordError
from sandcrawler.fileset.platforms import platform_helpers
from sandcrawler.fileset.platforms.base import LandingPage, PlatformHelper
from sandcrawler.records.fileset import FilesetPlatformItem, IngestRequest
from sandcrawler.web.http.fetch import HttpFetcher
from sandcrawler_testkit.platforms import PlatformServer
from sandcrawler_testkit.recorded import RECORDED

FIGSHARE_123456 = (
    "https://plos.figshare.com/articles/dataset/Transcriptome_Sequencing_and_Comparative_"
    "Analysis_of_Saccharina_japonica_Laminariales_Phaeophyceae_under_Blue_Light_Induction/123456")


class Platforms:
    """The loopback server with every recorded answer, and helpers routed to it."""

    def __init__(self, server: PlatformServer) -> None:
        self.server = server
        self.settings = load_settings(http_routes=server.routes(), fetch_timeout=2)
        http = self.settings.http
        self.fetcher = HttpFetcher(timeout=http.timeout, routes=http.routes, retries=0)
        self.helpers: list[PlatformHelper] = platform_helpers(
            platform_sections(self.settings), self.fetcher, self.settings.fileset)

    def helper(self, url: str) -> PlatformHelper:
        request, page = self.request(url)
        (helper,) = [h for h in self.helpers if h.match_request(request, page, None)]
        return helper

    @staticmethod
    def request(url: str) -> tuple[IngestRequest, LandingPage]:
        return (IngestRequest(ingest_type="dataset", base_url=url),
                LandingPage(url=url, terminal_url=url))

    def process(self, url: str) -> FilesetPlatformItem:
        request, page = self.request(url)
        return self.helper(url).process_request(request, page, None)

    def status(self, url: str) -> str:
        """The record status process_request fails with."""
        with pytest.raises(RecordError) as caught:
            self.process(url)
        return caught.value.status

    def strategy(self, url: str) -> str:
        return self.helper(url).choose_strategy(self.process(url))


@pytest.fixture(scope="module")
def platforms() -> Iterator[Platforms]:
    with PlatformServer() as server:
        server.add_recorded(*RECORDED.values())
        p = Platforms(server)
        try:
            yield p
        finally:
            p.fetcher.close()


def answer(name: str) -> Any:
    return RECORDED[name].json()


def rows(item: FilesetPlatformItem) -> list[tuple[str, int | None, str | None, str | None]]:
    return [(f.path, f.size, f.md5, f.platform_url) for f in item.manifest or []]


# --- Zenodo ---------------------------------------------------------------------------------


def test_zenodo_record_one_file_whose_key_has_a_slash(platforms: Platforms) -> None:
    item = platforms.process("https://zenodo.org/records/3463499")
    assert (item.platform_name, item.platform_status, item.platform_domain, item.platform_id) == (
        "zenodo", "success", "zenodo.org", "3463499")
    assert rows(item) == [(
        "jbferet/biodivMapR-v1.0.1.zip", 24692383, "131225ba8fd81a5a2f4f50a191a1504e",
        "https://zenodo.org/api/records/3463499/files/jbferet/biodivMapR-v1.0.1.zip/content")]
    assert item.manifest[0].extra == {"file_id": "81bcbaa7-5c0e-4598-a08f-a31023c2b820"}
    assert item.web_bundle_url == "https://zenodo.org/api/records/3463499/files-archive"
    # the version label is "v1.0.1", so the item name reads "-vv1.0.1"
    assert item.archiveorg_item_name == "zenodo.org-3463499-vv1.0.1"
    assert item.archiveorg_item_meta == {
        "title": "jbferet/biodivMapR: v1.0.1", "date": "2019-09-27",
        "doi": "10.5281/zenodo.3463499", "version": "v1.0.1",
        "source": "https://zenodo.org/records/3463499", "license": "other-open",
        "creator": ["floriandeboissieu"]}
    assert platforms.strategy("https://zenodo.org/records/3463499") == "web-file"


def test_zenodo_file_level_url_with_a_slash_in_the_key(platforms: Platforms) -> None:
    url = "https://zenodo.org/records/3463499/files/jbferet/biodivMapR-v1.0.1.zip"
    item = platforms.process(url)
    assert [f.path for f in item.manifest] == ["jbferet/biodivMapR-v1.0.1.zip"]
    assert item.web_bundle_url is None
    assert platforms.status("https://zenodo.org/records/3463499/files/biodivMapR-v1.0.1.zip") == (
        "platform-404")


def test_zenodo_record_twelve_large_files_no_version(platforms: Platforms) -> None:
    item = platforms.process("https://zenodo.org/records/3459420")
    files = answer("zenodo-3459420")["files"]
    assert len(files) == 12
    assert rows(item) == [
        (f["key"], f["size"], f["checksum"].removeprefix("md5:"), f["links"]["self"])
        for f in files]
    assert rows(item)[0] == (
        "part-ii-dependency-paths-chemical-disease-sorted.txt.gz", 1552310509,
        "ade2bbbb9624f7afdad254a66c653177",
        "https://zenodo.org/api/records/3459420/files/"
        "part-ii-dependency-paths-chemical-disease-sorted.txt.gz/content")
    # no version label: the record id alone names the item
    assert "version" not in answer("zenodo-3459420")["metadata"]
    assert item.archiveorg_item_name == "zenodo.org-3459420"
    assert item.archiveorg_item_meta["license"] == "cc-by-4.0"
    assert item.archiveorg_item_meta["creator"] == ["Percha, Bethany", "Altman, Russ B."]
    # files of 1.5 GB and more go to the item store; twelve files and a bundle URL
    assert platforms.strategy("https://zenodo.org/records/3459420") == (
        "archiveorg-fileset-bundled")


# --- figshare -------------------------------------------------------------------------------


def test_figshare_article_version_on_an_institutional_subdomain(platforms: Platforms) -> None:
    item = platforms.process(f"{FIGSHARE_123456}/1")
    assert (item.platform_name, item.platform_domain, item.platform_id) == (
        "figshare", "figshare.com", "123456")
    assert rows(item) == [("2011-02-15_14-24-56-228.png", 470683,
                           "eb5c9c6b278b533f98aa02feae57c266",
                           "https://ndownloader.figshare.com/files/3074543")]
    # this answer's files carry no mimetype
    assert item.manifest[0].mimetype is None
    assert item.manifest[0].extra == {"file_id": 3074543}
    assert item.archiveorg_item_name == "figshare.com-123456-v1"
    assert item.web_bundle_url == "https://ndownloader.figshare.com/articles/123456/versions/1"
    meta = item.archiveorg_item_meta
    # the "doi" of a PLOS supplement is the article's, not a figshare DOI
    assert (meta["doi"], meta["date"], meta["license"]) == (
        "10.1371/journal.pone.0039704", "2012-06-27", "CC BY 4.0")
    assert meta["creator"] == ["Yunyan Deng", "Jianting Yao", "Xiuliang Wang", "Hui Guo",
                               "Delin Duan"]
    assert platforms.strategy(f"{FIGSHARE_123456}/1") == "web-file"


def test_figshare_without_version_is_scope_and_asks_nothing(platforms: Platforms) -> None:
    platforms.server.clear_requests()
    assert platforms.status(FIGSHARE_123456) == "platform-scope"
    assert platforms.server.requests == []


def test_figshare_version_not_found_is_404(platforms: Platforms) -> None:
    assert answer("figshare-version-not-found") == {
        "message": "Entity not found: ArticleVersion", "code": "EntityNotFound"}
    assert platforms.status(f"{FIGSHARE_123456}/2") == "platform-404"


# --- Dataverse ------------------------------------------------------------------------------

DATAVERSE = {
    # name: (landing page, version label, item name, strategy)
    "dataverse-harvard-TJCLKP": (
        "https://dataverse.harvard.edu/dataset.xhtml?persistentId=doi:10.7910/DVN/TJCLKP",
        "4.0", "dataverse.harvard.edu-doi_10.7910_DVN_TJCLKP-v4.0", "web-fileset"),
    "dataverse-harvard-RLMYMR": (
        "https://dataverse.harvard.edu/dataset.xhtml?persistentId=doi:10.7910/DVN/RLMYMR",
        "2.0", "dataverse.harvard.edu-doi_10.7910_DVN_RLMYMR-v2.0", "web-fileset"),
    "dataverse-harvard-26721": (
        "https://dataverse.harvard.edu/dataset.xhtml?persistentId=doi:10.7910/DVN/26721",
        "2.2", "dataverse.harvard.edu-doi_10.7910_DVN_26721-v2.2", "web-fileset-bundled"),
    "dataverse-harvard-CR02PG": (
        "https://dataverse.harvard.edu/dataset.xhtml?persistentId=doi:10.7910/DVN/CR02PG",
        "9.0", "dataverse.harvard.edu-doi_10.7910_DVN_CR02PG-v9.0",
        "archiveorg-fileset-bundled"),
    # an installation not in settings.dataverse.hosts: matched by its page's shape
    "dataverse-icrisat-TCCVS7": (
        "https://dataverse.icrisat.org/dataset.xhtml?persistentId=doi:10.21421/D2/TCCVS7",
        "1.0", "dataverse.icrisat.org-doi_10.21421_D2_TCCVS7-v1.0",
        "archiveorg-fileset-bundled"),
    "dataverse-demo-P1TO3S": (
        "https://demo.dataverse.org/dataset.xhtml?persistentId=doi:10.70122/FK2/P1TO3S"
        "&version=3.0",
        "3.0", "demo.dataverse.org-doi_10.70122_FK2_P1TO3S-v3.0", "web-fileset"),
}
TABULAR = [name for name in DATAVERSE
           if any(f["dataFile"].get("originalFileName")
                  for f in answer(name)["data"]["latestVersion"]["files"])]


def dataverse_files(name: str) -> list[dict[str, Any]]:
    return answer(name)["data"]["latestVersion"]["files"]


def expected_path(entry: dict[str, Any], filename: str) -> str:
    directory = (entry.get("directoryLabel") or "").strip("/")
    return f"{directory}/{filename}" if directory else filename


@pytest.mark.parametrize("name", list(DATAVERSE))
def test_dataverse_dataset_version(platforms: Platforms, name: str) -> None:
    url, version, item_name, strategy = DATAVERSE[name]
    data = answer(name)["data"]
    latest = data["latestVersion"]
    assert latest["versionState"] == "RELEASED"
    assert f"{latest['versionNumber']}.{latest['versionMinorNumber']}" == version
    item = platforms.process(url)
    host = url.split("/")[2]
    pid = f"{data['protocol']}:{data['authority']}/{data['identifier']}"
    assert (item.platform_name, item.platform_status, item.platform_domain, item.platform_id) == (
        "dataverse", "success", host, pid)
    assert item.archiveorg_item_name == item_name
    assert item.archiveorg_item_meta["version"] == version
    assert item.archiveorg_item_meta["date"] == latest["releaseTime"][:10]
    # Dataverse 5.10+ gives {"name": ..., "uri": ...}; older installations a string
    # ("NONE" on ICRISAT's), and none at all for custom terms of use (CR02PG)
    license_ = latest.get("license")
    assert item.archiveorg_item_meta.get("license") == (
        license_["name"] if isinstance(license_, dict) else None)
    assert item.web_bundle_url == (
        f"https://{host}/api/access/dataset/:persistentId/versions/{version}"
        f"?persistentId={pid.replace(':', '%3A')}"
        + ("&format=original" if name in TABULAR else ""))
    # every file is in the manifest, in order, with its id, checksum and directory
    files = dataverse_files(name)
    assert len(item.manifest) == len(files)
    for entry, got in zip(files, item.manifest, strict=True):
        df = entry["dataFile"]
        assert df["checksum"] == {"type": "MD5", "value": df["md5"]}
        assert got.md5 == df["md5"]
        assert got.platform_url == f"https://{host}/api/access/datafile/{df['id']}" + (
            "?format=original" if df.get("originalFileName") else "")
        assert got.extra["file_id"] == df["id"]
        if not df.get("originalFileName"):  # tabular files: see the test below
            assert (got.path, got.size, got.mimetype) == (
                expected_path(entry, df["filename"]), df["filesize"], df["contentType"])
    assert platforms.strategy(url) == strategy


def test_dataverse_licence_shapes() -> None:
    licences = {name: answer(name)["data"]["latestVersion"].get("license") for name in DATAVERSE}
    assert licences["dataverse-icrisat-TCCVS7"] == "NONE"
    assert licences["dataverse-harvard-CR02PG"] is None
    assert licences["dataverse-demo-P1TO3S"]["name"] == "CC0 1.0"


def test_dataverse_directories_become_paths(platforms: Platforms) -> None:
    item = platforms.process(DATAVERSE["dataverse-harvard-TJCLKP"][0])
    assert [f.path for f in item.manifest][1:] == ["code/language.py",
                                                   "data/primary/primary-data.zip"]
    item = platforms.process(DATAVERSE["dataverse-demo-P1TO3S"][0])
    assert [f.path for f in item.manifest] == [
        "Project/Images/BarChart.jpg", "Project/Images/ImageChart.png",
        # ingested tables under their uploaded names (the .tab names are in extra)
        "Project/Data/Test Data Alpha.dta", "Project/Data/Test Data Beta.dta",
        "Project/Test Document 1.pdf", "Project/Test Document 2.docx"]


def test_dataverse_tabular_checksum_is_not_of_the_tab_download(platforms: Platforms) -> None:
    """The recorded default download of the ingested tabular file "Test Data
    Alpha.tab" matches neither the size nor the md5 the dataset answer gives for
    it, with or without the header row Dataverse adds: that md5 describes the
    uploaded original (``originalFileName`` "Test Data Alpha.dta", 9090 bytes)."""
    (entry,) = [f for f in dataverse_files("dataverse-demo-P1TO3S")
                if f["dataFile"]["id"] == 2353203]
    df = entry["dataFile"]
    assert (df["filename"], df["filesize"], df["md5"]) == (
        "Test Data Alpha.tab", 6394, "faeb19ec96a34523e4fd0defea0cebda")
    assert (df["originalFileName"], df["originalFileSize"], df["originalFileFormat"]) == (
        "Test Data Alpha.dta", 9090, "application/x-stata")
    status, body = fetch(platforms, "https://demo.dataverse.org/api/access/datafile/2353203")
    assert status == 200
    assert (len(body), hashlib.md5(body).hexdigest()) == (
        6586, "4aedd28b289c3ad5013857e4bea85dfa")
    _header, rows_only = body.split(b"\n", 1)
    assert (len(rows_only), hashlib.md5(rows_only).hexdigest()) == (
        6394, "5aafd495bac80eeb2d1adcb574a189be")
    assert df["md5"] not in (hashlib.md5(body).hexdigest(), hashlib.md5(rows_only).hexdigest())


def fetch(platforms: Platforms, url: str) -> tuple[int, bytes]:
    opened = platforms.fetcher.open(url)
    try:
        return opened.status, opened.response.read()
    finally:
        opened.close()


@pytest.mark.parametrize("name", TABULAR)
def test_dataverse_tabular_files_are_described_by_their_checksums(
        platforms: Platforms, name: str) -> None:
    item = platforms.process(DATAVERSE[name][0])
    for entry, got in zip(dataverse_files(name), item.manifest, strict=True):
        df = entry["dataFile"]
        if not df.get("originalFileName"):
            continue
        assert got.path == expected_path(entry, df["originalFileName"])
        assert got.size == df["originalFileSize"]
        assert got.md5 == df["md5"]
        assert got.platform_url.endswith(f"/api/access/datafile/{df['id']}?format=original")
        assert got.mimetype == df["originalFileFormat"]
        # the derived .tab Dataverse serves by default is named in extra
        assert (got.extra["derived_filename"], got.extra["derived_size"]) == (
            df["filename"], df["filesize"])
    # its "download all" zip is asked for the originals too
    assert item.web_bundle_url.endswith("&format=original")


def test_dataverse_recorded_answers_have_tabular_files() -> None:
    """What the test above covers: every recorded dataset but CR02PG has some."""
    assert sorted(set(DATAVERSE) - set(TABULAR)) == ["dataverse-harvard-CR02PG"]


# --- archive.org ----------------------------------------------------------------------------


def test_archiveorg_unknown_identifier_is_404(platforms: Platforms) -> None:
    assert answer("archiveorg-unknown-identifier") == {}
    assert platforms.status("https://archive.org/details/no-such-item-here") == "platform-404"


def test_archiveorg_collection_answer() -> None:
    """What the test below reads: the answer for ``nasa`` is a collection's."""
    nasa = answer("archiveorg-nasa")
    assert nasa["is_collection"] is True
    assert nasa["metadata"]["mediatype"] == "collection"
    assert [(f["name"], f["source"], f.get("format")) for f in nasa["files"]] == [
        ("NASAarchiveLogo.jpg", "original", "Collection Header"),
        ("globe_west_540.jpg", "original", "JPEG"),
        ("nasa_reviews.xml", "metadata", "Metadata"),
        ("nasa_meta.xml", "metadata", "Metadata"),
        ("nasa_archive.torrent", "metadata", "Archive BitTorrent"),
        ("nasa_files.xml", "metadata", "Metadata")]


def test_archiveorg_collection_is_scope(platforms: Platforms) -> None:
    assert platforms.status("https://archive.org/details/nasa") == "platform-scope"
