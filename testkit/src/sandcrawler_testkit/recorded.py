"""Answers the platforms' APIs really gave, and where the loopback platform
server serves them.

The files are under ``data/platforms/<platform>/`` as recorded
(``data/platforms/SOURCES.md`` gives source and licence). ``RECORDED`` names each
and the requests it answers; serve them with
``PlatformServer.add_recorded(*RECORDED.values())``. Their checksums describe
files we do not have, so they test what the helpers read, not downloads
(docs/testing.md, "Recorded platform answers").
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "platforms"
JSON = "application/json"


@dataclass(frozen=True)
class Served:
    """One request a recorded answer is served for: ``host``, then ``path`` with
    its query as a client sends it (percent-decoded), and the answer's status."""

    host: str
    path: str
    status: int = 200
    content_type: str = JSON
    derive: Callable[[bytes], bytes] | None = None  # what the endpoint makes of the file


@dataclass(frozen=True)
class Recorded:
    """A recorded answer (``file`` under ``data/platforms``) and where it is served."""

    file: str
    served: tuple[Served, ...]

    @property
    def raw(self) -> bytes:
        return (DATA / self.file).read_bytes()

    def json(self) -> Any:
        return json.loads(self.raw)

    def body(self, served: Served) -> bytes:
        return served.derive(self.raw) if served.derive else self.raw


def dataverse_version(raw: bytes) -> bytes:
    """A dataset answer (``/api/datasets/:persistentId``) as the version endpoint
    (``/api/datasets/:persistentId/versions/{v}``) gives it: the same envelope
    around ``data.latestVersion``. Dataverse prints both with one JSON printer
    for a dataset version; this is a re-serialisation, not the bytes it sent."""
    answer = json.loads(raw)
    return json.dumps({"status": answer["status"], "data": answer["data"]["latestVersion"]},
                      ensure_ascii=False).encode()


def _zenodo(record_id: int) -> Recorded:
    return Recorded(f"zenodo/record-{record_id}.json",
                    (Served("zenodo.org", f"/api/records/{record_id}"),))


def _dataverse(file: str, host: str, pid: str, version: str) -> Recorded:
    """A dataset answer: served as recorded, and as the version endpoint both for
    ``:latest-published`` and for its own version number."""
    query = f"?persistentId={pid}"
    return Recorded(f"dataverse/{file}", (
        Served(host, f"/api/datasets/:persistentId{query}"),
        Served(host, f"/api/datasets/:persistentId/versions/:latest-published{query}",
               derive=dataverse_version),
        Served(host, f"/api/datasets/:persistentId/versions/{version}{query}",
               derive=dataverse_version),
    ))


def dryad_listed_dataset(doi: str) -> Callable[[bytes], bytes]:
    """A dataset answer (``/api/v2/datasets/{doi}``) taken from a page of Dryad's
    dataset listing (``/api/v2/datasets``), which embeds each dataset as the same
    presenter draws it. A re-serialisation, not the bytes Dryad sent for that request."""
    def derive(raw: bytes) -> bytes:
        (dataset,) = [d for d in json.loads(raw)["_embedded"]["stash:datasets"]
                      if d["identifier"] == doi]
        return json.dumps(dataset, ensure_ascii=False).encode()
    return derive


def _dryad_listing(*dois: str) -> Recorded:
    return Recorded("dryad/datasets-page-1-2020-06-24.json", (
        Served("datadryad.org", "/api/v2/datasets", content_type="application/json; charset=utf-8"),
        *(Served("datadryad.org", f"/api/v2/datasets/{doi}",
                 content_type="application/json; charset=utf-8", derive=dryad_listed_dataset(doi))
          for doi in dois)))


def _osf_test(file: str, *paths: str) -> Recorded:
    """An answer of OSF's test server (api.test.osf.io), recorded by osfr."""
    return Recorded(f"osf/{file}", tuple(
        Served("api.test.osf.io", path, content_type="application/vnd.api+json; charset=utf-8")
        for path in paths))


def djehuty_article_embargo(raw: bytes) -> bytes:
    """A version's embargo answer (``/v2/articles/{uuid}/versions/{v}/embargo``) as the
    version endpoint (``/v2/articles/{uuid}/versions/{v}``) gives a dataset under a
    whole-dataset ("article") embargo: djehuty's ``format_dataset_details_record``
    then answers only these four of the six fields, from the same values. A
    re-serialisation, not bytes djehuty sent for that request."""
    answer = json.loads(raw)
    return json.dumps({k: answer[k] for k in ("embargo_date", "embargo_type", "embargo_title",
                                              "embargo_reason")}, ensure_ascii=False).encode()


def _b2share_trng(file: str, path: str, status: int = 200) -> Recorded:
    """An answer of B2SHARE's training instance, printed in EUDAT's API training guides."""
    return Recorded(f"b2share/{file}", (Served("trng-b2share.eudat.eu", path, status=status),))


RECORDED: dict[str, Recorded] = {
    "zenodo-3463499": _zenodo(3463499),
    "zenodo-3459420": _zenodo(3459420),
    # B2SHARE's training instance (data/platforms/SOURCES.md): a published record (its bucket not
    # printed), two records as their draft answered publishing (each with its own
    # bucket), and the API's 404 answer, served for a record and that bucket (our choice)
    "b2share-trng-record-a1c2ef96": _b2share_trng(
        "record-a1c2ef96a1e446fa9bd7a2a46d2242d4.json",
        "/api/records/a1c2ef96a1e446fa9bd7a2a46d2242d4"),
    "b2share-trng-draft-b43a0e69": _b2share_trng(
        "draft-b43a0e6914e34de8bd19613bcdc0d364.json",
        "/api/records/b43a0e6914e34de8bd19613bcdc0d364"),
    "b2share-trng-bucket-0163d244": _b2share_trng(
        "bucket-0163d244-5845-40ca-899c-d1d0025f68aa.json",
        "/api/files/0163d244-5845-40ca-899c-d1d0025f68aa"),
    "b2share-trng-draft-2ff3f581": _b2share_trng(
        "draft-2ff3f5815db3494a840e6b3f1e6a6542.json",
        "/api/records/2ff3f5815db3494a840e6b3f1e6a6542"),
    "b2share-trng-bucket-c01247ac": _b2share_trng(
        "bucket-c01247ac-b129-4764-8b91-ee9646f2794d.json",
        "/api/files/c01247ac-b129-4764-8b91-ee9646f2794d"),
    "b2share-trng-not-found": Recorded("b2share/not-found.json", (
        Served("trng-b2share.eudat.eu", "/api/records/00000000000000000000000000000000", 404),
        Served("trng-b2share.eudat.eu", "/api/files/f1fa180a-4db8-439e-9ccd-89422e27708e", 404),
    )),
    # djehuty's API docs (data.4tu.nl): a dataset's versions; a version under a
    # whole-dataset embargo (also served, derived, as that version's own answer)
    "djehuty-versions-342efadc": Recorded(
        "djehuty/versions-342efadc-66f8-4e9b-9d27-da7b28b849d2.json",
        (Served("data.4tu.nl", "/v2/articles/342efadc-66f8-4e9b-9d27-da7b28b849d2/versions"),)),
    "djehuty-embargo-c1274889": Recorded(
        "djehuty/embargo-c1274889-b797-43bd-a3b1-ee0611d58fd7-v2.json", (
            Served("data.4tu.nl", "/v2/articles/c1274889-b797-43bd-a3b1-ee0611d58fd7/versions/2"
                   "/embargo"),
            Served("data.4tu.nl", "/v2/articles/c1274889-b797-43bd-a3b1-ee0611d58fd7/versions/2",
                   derive=djehuty_article_embargo))),
    # what data.4tu.nl's v2 API answers (200) in a maintenance window; the dataset
    # it is served for is our choice
    "djehuty-maintenance": Recorded("djehuty/maintenance.json", (
        Served("data.4tu.nl", "/v2/articles/7b024697-659a-47ad-95a4-0497bf52b432"),)),
    # GET /v2/articles/123456; the answer is its version 1, which the versions
    # endpoint answers with the same article presenter
    "figshare-123456": Recorded("figshare/article-123456.json", (
        Served("api.figshare.com", "/v2/articles/123456"),
        Served("api.figshare.com", "/v2/articles/123456/versions/1"),
    )),
    # figshare's documented answer for a version that does not exist; the request
    # it is served for (a version 2 of article 123456) is our choice
    "figshare-version-not-found": Recorded("figshare/version-not-found.json", (
        Served("api.figshare.com", "/v2/articles/123456/versions/2", status=404),
    )),
    "dataverse-harvard-TJCLKP": _dataverse(
        "dataset-harvard-DVN-TJCLKP.json", "dataverse.harvard.edu", "doi:10.7910/DVN/TJCLKP",
        "4.0"),
    "dataverse-harvard-RLMYMR": _dataverse(
        "dataset-harvard-DVN-RLMYMR.json", "dataverse.harvard.edu", "doi:10.7910/DVN/RLMYMR",
        "2.0"),
    "dataverse-harvard-26721": _dataverse(
        "dataset-harvard-DVN-26721.json", "dataverse.harvard.edu", "doi:10.7910/DVN/26721",
        "2.2"),
    "dataverse-harvard-CR02PG": _dataverse(
        "dataset-harvard-DVN-CR02PG.json", "dataverse.harvard.edu", "doi:10.7910/DVN/CR02PG",
        "9.0"),
    "dataverse-icrisat-TCCVS7": _dataverse(
        "dataset-icrisat-D2-TCCVS7.json", "dataverse.icrisat.org", "doi:10.21421/D2/TCCVS7",
        "1.0"),
    "dataverse-demo-P1TO3S": _dataverse(
        "dataset-demo-FK2-P1TO3S.json", "demo.dataverse.org", "doi:10.70122/FK2/P1TO3S", "3.0"),
    # the default download of the tabular file "Test Data Alpha.tab" of P1TO3S
    "dataverse-demo-datafile-2353203": Recorded("dataverse/datafile-2353203.tab", (
        Served("demo.dataverse.org", "/api/access/datafile/2353203",
               content_type=('text/tab-separated-values; name="Test%20Data%20Alpha.tab";'
                             "charset=UTF-8")),
    )),
    "archiveorg-nasa": Recorded("archiveorg/metadata-nasa.json", (
        Served("archive.org", "/metadata/nasa"),
    )),
    # what the metadata API answers for an identifier that names no item; the
    # identifier it is served for is our choice
    "archiveorg-unknown-identifier": Recorded("archiveorg/metadata-unknown-identifier.json", (
        Served("archive.org", "/metadata/no-such-item-here"),
    )),
    # GET /repos/cambiata-team/buri/releases/110756292 (the release by its id); the
    # by-tag endpoint answers the same release object
    "github-buri-0.2.0": Recorded("github/release-buri-0.2.0.json", (
        Served("api.github.com", "/repos/cambiata-team/buri/releases/tags/0.2.0",
               content_type="application/json; charset=utf-8"),
    )),
    # a release recorded before its one asset was uploaded: no assets
    "github-octokit-fixture-v1.0.0": Recorded("github/release-octokit-fixture-v1.0.0.json", (
        Served("api.github.com", "/repos/octokit-fixture-org/"
               "tmp-scenario-release-assets-20220719044014639-1reww/releases/tags/v1.0.0",
               content_type="application/json; charset=utf-8"),
    )),
    # the Hub's tree of the model google-bert/bert-base-uncased at a commit (five files
    # at its root, so recursive or not alike), served as a dataset's tree: the tree
    # endpoint answers the same entries for every repository type
    "huggingface-tree-bert-base-uncased": Recorded(
        "huggingface/tree-google-bert-bert-base-uncased-dd4bc8b2.json", (
            Served("huggingface.co", "/api/datasets/google-bert/bert-base-uncased/tree/"
                   "dd4bc8b21efa05ec961e3efc4ee5e3832a3679c7?recursive=true"),
        )),
    # Dryad: a page of the dataset listing (each dataset also served as its own answer)
    "dryad-datasets-2020": _dryad_listing("doi:10.5061/dryad.7rh4625", "doi:10.5061/dryad.77b2422"),
    # the documented answer of GET /versions/32/files (Dryad's API docs)
    "dryad-docs-version-32-files": Recorded("dryad/docs-example-version-32-files.json", (
        Served("datadryad.org", "/api/v2/versions/32/files"),
    )),
    # the bytes of Dryad file 61858 (a CSV), as its download answered in 2020
    "dryad-file-61858": Recorded("dryad/file-61858-download.csv", (
        Served("datadryad.org", "/api/v2/files/61858/download", content_type="text/csv"),
    )),
    # OSF's test server: osfr's fixture project y8t6r, its component 4fjxr, the
    # root of its OSF Storage, the folder many-files (two of its four pages) and
    # that folder's own answer; recorded with ?page=1, which OSF's first page is
    "osf-test-node-y8t6r": _osf_test("test-node-y8t6r.json", "/v2/nodes/y8t6r/"),
    "osf-test-node-4fjxr": _osf_test("test-node-4fjxr.json", "/v2/nodes/4fjxr/"),
    "osf-test-files-y8t6r": _osf_test(
        "test-files-y8t6r-osfstorage.json", "/v2/nodes/y8t6r/files/osfstorage/?page=1",
        "/v2/nodes/y8t6r/files/osfstorage/"),
    "osf-test-files-many-files-1": _osf_test(
        "test-files-y8t6r-many-files-page-1.json",
        "/v2/nodes/y8t6r/files/osfstorage/5d4ef2104e90e100146f7e53/?page=1",
        "/v2/nodes/y8t6r/files/osfstorage/5d4ef2104e90e100146f7e53/"),
    "osf-test-files-many-files-2": _osf_test(
        "test-files-y8t6r-many-files-page-2.json",
        "/v2/nodes/y8t6r/files/osfstorage/5d4ef2104e90e100146f7e53/?page=2"),
    "osf-test-folder-many-files": _osf_test(
        "test-file-5d4ef2104e90e100146f7e53.json", "/v2/files/5d4ef2104e90e100146f7e53/"),
}
