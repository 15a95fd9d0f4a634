"""The fake dataset platforms server itself (Zenodo, figshare, Dataverse, archive.org)."""

from __future__ import annotations

import hashlib
import io
import time
import zipfile
import zlib
from collections.abc import Iterator
from urllib.parse import quote, urlsplit

import pytest
import urllib3
from urllib3.exceptions import ProtocolError, ReadTimeoutError

from sandcrawler_testkit.platforms import FakeFile, PlatformServer

DV = "dataverse.example.org"
PID = "doi:10.7910/DVN/ABC123"
HTML = "text/html; charset=utf-8"


@pytest.fixture
def server() -> Iterator[PlatformServer]:
    with PlatformServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def http() -> urllib3.PoolManager:
    return urllib3.PoolManager(retries=False)


def get(
    http: urllib3.PoolManager,
    server: PlatformServer,
    url: str,
    *,
    method: str = "GET",
    **kw: object,
) -> urllib3.BaseHTTPResponse:
    """Request ``https://host/path`` the way the client under test does: to the
    loopback port, with the real Host header; no redirects followed."""
    split = urlsplit(url)
    target = split.path + (f"?{split.query}" if split.query else "")
    return http.request(
        method,
        server.url + target,
        headers={"Host": split.netloc},
        redirect=False,
        **kw,  # type: ignore[arg-type]
    )


def follow(
    http: urllib3.PoolManager, server: PlatformServer, url: str, max_hops: int = 10
) -> tuple[urllib3.BaseHTTPResponse, list[str]]:
    """Follow Location headers (each must be an https URL of a routed host)."""
    routes = server.routes()
    chain = [url]
    for _ in range(max_hops):
        response = get(http, server, url)
        if response.status not in (301, 302, 303, 307, 308):
            return response, chain
        url = response.headers["Location"]
        split = urlsplit(url)
        assert split.scheme == "https" and "127.0.0.1" not in url
        assert f"https://{split.netloc}" in routes
        chain.append(url)
    raise AssertionError(f"more than {max_hops} redirects: {chain}")


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def members(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


# --- the server -----------------------------------------------------------------------------


def test_routes_cover_fixed_dataverse_and_page_hosts(server: PlatformServer) -> None:
    server.add_dataverse(DV, PID, [FakeFile("a.txt", b"a")])
    server.add_page("example.com", "/landing", b"<html></html>")
    routes = server.routes()
    assert set(routes) == {
        "https://zenodo.org",
        "https://figshare.com",
        "https://api.figshare.com",
        "https://ndownloader.figshare.com",
        "https://archive.org",
        "https://ia800100.us.archive.org",
        f"https://{DV}",
        "https://example.com",
    }
    assert set(routes.values()) == {server.url}
    assert server.url.startswith("http://127.0.0.1:")


def test_requests_log_and_clear(server: PlatformServer, http: urllib3.PoolManager) -> None:
    server.add_dataverse(DV, PID, [FakeFile("a.txt", b"a")])
    get(http, server, "https://zenodo.org/api/records/1")
    get(http, server, f"https://{DV}/api/datasets/:persistentId/?persistentId={quote(PID)}")
    http.request("HEAD", server.url + "/x", headers={"Host": "Archive.org:443"})
    assert server.requests == [
        ("zenodo.org", "GET", "/api/records/1"),
        (DV, "GET", f"/api/datasets/:persistentId/?persistentId={PID}"),
        ("archive.org", "HEAD", "/x"),
    ]
    server.clear_requests()
    assert server.requests == []


def test_unknown_host_and_path_are_404(server: PlatformServer, http: urllib3.PoolManager) -> None:
    assert get(http, server, "https://unknown.example/").status == 404
    assert get(http, server, "https://zenodo.org/nothing/here").status == 404
    assert get(http, server, "https://api.figshare.com/v3/foo").status == 404
    assert get(http, server, "https://archive.org/").status == 404


def test_add_page_plain_redirect_and_override(
    server: PlatformServer, http: urllib3.PoolManager
) -> None:
    server.add_page("example.com", "/a", b"<p>hello</p>")
    server.add_page("example.com", "/b?x=1", b"", status=302, location="https://example.com/a")
    server.add_page("zenodo.org", "/records/7", b"", status=302, location="https://zenodo.org/r/8")
    server.add_page("example.com", "/data.json", b"{}", content_type="application/json")
    response = get(http, server, "https://example.com/a")
    assert (response.status, response.data) == (200, b"<p>hello</p>")
    assert response.headers["Content-Type"] == HTML
    response = get(http, server, "https://example.com/b?x=1")
    assert (response.status, response.headers["Location"]) == (302, "https://example.com/a")
    server.add_zenodo(7, [FakeFile("a", b"a")])
    assert get(http, server, "https://zenodo.org/records/7").status == 302
    assert get(http, server, "https://example.com/data.json").headers["Content-Type"] == (
        "application/json"
    )
    assert get(http, server, "https://example.com/other").status == 404


def test_head_is_get_without_body(server: PlatformServer, http: urllib3.PoolManager) -> None:
    server.add_zenodo(1, [FakeFile("a.bin", b"abc" * 1000, redirects=0)])
    url = "https://zenodo.org/api/records/1/files/a.bin/content"
    response = get(http, server, url, method="HEAD")
    assert response.status == 200
    assert response.headers["Content-Length"] == "3000"
    assert response.data == b""
    assert get(http, server, url).data == b"abc" * 1000  # the connection is still usable


# --- Zenodo ---------------------------------------------------------------------------------


def test_zenodo_landing_pages(server: PlatformServer, http: urllib3.PoolManager) -> None:
    server.add_zenodo(123, [FakeFile("a.csv", b"1,2\n")], title="Rock & <roll> data")
    for path in ("/records/123", "/record/123"):
        response = get(http, server, f"https://zenodo.org{path}")
        assert response.status == 200
        assert response.headers["Content-Type"] == HTML
        page = response.data.decode()
        assert "<title>Rock &amp; &lt;roll&gt; data</title>" in page
        assert '<meta name="citation_title" content="Rock &amp; &lt;roll&gt; data">' in page
        assert '<meta name="citation_doi" content="10.5281/zenodo.123">' in page
    response = get(http, server, "https://zenodo.org/records/999")
    assert response.status == 404
    assert response.headers["Content-Type"] == HTML


def test_zenodo_record_json(server: PlatformServer, http: urllib3.PoolManager) -> None:
    a, b = b"a,b\n1,2\n", bytes(range(256)) * 10
    server.add_zenodo(
        123,
        [FakeFile("a.csv", a, mimetype="text/csv"), FakeFile("b b.bin", b)],
        concept_id=100,
        version="2.1",
        title="Tides",
    )
    response = get(http, server, "https://zenodo.org/api/records/123")
    assert response.status == 200
    assert response.headers["Content-Type"] == "application/json"
    record = response.json()
    assert record["id"] == 123
    assert record["conceptrecid"] == "100"
    assert record["doi"] == "10.5281/zenodo.123"
    assert record["conceptdoi"] == "10.5281/zenodo.100"
    meta = record["metadata"]
    assert meta["title"] == "Tides"
    assert meta["version"] == "2.1"
    assert meta["access_right"] == "open"
    assert meta["publication_date"] == "2021-01-01"
    assert meta["resource_type"]["type"] == "dataset"
    assert meta["creators"] == [{"name": "Doe, Jane"}]
    assert meta["license"] == {"id": "cc-by-4.0"}
    assert record["links"]["self"] == "https://zenodo.org/api/records/123"
    assert record["links"]["html"] == "https://zenodo.org/records/123"
    assert record["links"]["archive"] == "https://zenodo.org/api/records/123/files-archive"
    files = record["files"]
    assert [f["key"] for f in files] == ["a.csv", "b b.bin"]
    assert [f["size"] for f in files] == [len(a), len(b)]
    assert [f["checksum"] for f in files] == [f"md5:{md5(a)}", f"md5:{md5(b)}"]
    assert all(isinstance(f["id"], str) and len(f["id"]) == 36 for f in files)
    assert files[0]["links"]["self"] == "https://zenodo.org/api/records/123/files/a.csv/content"
    assert files[1]["links"]["self"] == (
        "https://zenodo.org/api/records/123/files/b%20b.bin/content"
    )
    # every link works, through the redirect to the bucket URL
    for f, data in zip(files, (a, b), strict=True):
        response, chain = follow(http, server, f["links"]["self"])
        assert (response.status, response.data) == (200, data)
        assert len(chain) == 2 and chain[1].startswith("https://zenodo.org/api/files/")
        assert "?hop=1" in chain[1]


def test_zenodo_record_without_concept(server: PlatformServer, http: urllib3.PoolManager) -> None:
    server.add_zenodo(5, [])
    record = get(http, server, "https://zenodo.org/api/records/5").json()
    assert record["conceptrecid"] == "5"
    assert record["conceptdoi"] == "10.5281/zenodo.5"
    assert record["files"] == []


def test_zenodo_lies_about_size_and_md5(server: PlatformServer, http: urllib3.PoolManager) -> None:
    server.add_zenodo(1, [FakeFile("a", b"real", reported_size=99, reported_md5="0" * 32)])
    (f,) = get(http, server, "https://zenodo.org/api/records/1").json()["files"]
    assert (f["size"], f["checksum"]) == (99, "md5:" + "0" * 32)
    response, _ = follow(http, server, f["links"]["self"])
    assert response.data == b"real"


def test_zenodo_concept_redirects_to_latest(
    server: PlatformServer, http: urllib3.PoolManager
) -> None:
    server.add_zenodo(11, [], concept_id=10, version="1")
    server.add_zenodo(13, [], concept_id=10, version="3")
    server.add_zenodo(12, [], concept_id=10, version="2")
    response = get(http, server, "https://zenodo.org/api/records/10")
    assert (response.status, response.headers["Location"]) == (
        302,
        "https://zenodo.org/api/records/13",
    )
    response = get(http, server, "https://zenodo.org/records/10")
    assert (response.status, response.headers["Location"]) == (302, "https://zenodo.org/records/13")
    response = get(http, server, "https://zenodo.org/api/records/11/versions/latest")
    assert response.headers["Location"] == "https://zenodo.org/api/records/13"
    response, _ = follow(http, server, "https://zenodo.org/api/records/10")
    assert response.json()["metadata"]["version"] == "3"


def test_zenodo_unknown_and_deleted(server: PlatformServer, http: urllib3.PoolManager) -> None:
    response = get(http, server, "https://zenodo.org/api/records/404")
    assert response.status == 404
    assert response.json() == {
        "status": 404,
        "message": "The persistent identifier does not exist.",
    }
    server.add_zenodo(410, [FakeFile("a", b"a")], status=410)
    response = get(http, server, "https://zenodo.org/api/records/410")
    assert response.status == 410
    assert response.json() == {"status": 410, "message": "The record has been deleted."}


@pytest.mark.parametrize("status", [429, 500, 503])
def test_zenodo_api_status(server: PlatformServer, http: urllib3.PoolManager, status: int) -> None:
    server.add_zenodo(1, [FakeFile("a", b"a")], status=status)
    response = get(http, server, "https://zenodo.org/api/records/1")
    assert response.status == status
    assert response.json()["status"] == status
    if status in (429, 503):
        assert response.headers["Retry-After"] == "0"


def test_zenodo_restricted_record_hides_files(
    server: PlatformServer, http: urllib3.PoolManager
) -> None:
    server.add_zenodo(1, [FakeFile("a", b"a")], access_right="restricted")
    record = get(http, server, "https://zenodo.org/api/records/1").json()
    assert record["metadata"]["access_right"] == "restricted"
    assert record["files"] == []
    assert get(http, server, "https://zenodo.org/api/records/1/files/a/content").status == 403


def test_zenodo_files_archive(server: PlatformServer, http: urllib3.PoolManager) -> None:
    server.add_zenodo(1, [FakeFile("a.csv", b"1,2\n"), FakeFile("b.txt", b"hi" * 5000)])
    response = get(http, server, "https://zenodo.org/api/records/1/files-archive")
    assert response.status == 200
    assert response.headers["Content-Type"] == "application/zip"
    assert members(response.data) == {"a.csv": b"1,2\n", "b.txt": b"hi" * 5000}
    with zipfile.ZipFile(io.BytesIO(response.data)) as zf:
        assert {i.compress_type for i in zf.infolist()} == {zipfile.ZIP_DEFLATED}
    server.add_zenodo(2, [FakeFile("a", b"a")], bundle=b"PK not really a zip")
    response = get(http, server, "https://zenodo.org/api/records/2/files-archive")
    assert response.data == b"PK not really a zip"
    assert get(http, server, "https://zenodo.org/api/records/3/files-archive").status == 404


# --- download misbehaviours (shared by all platforms; exercised through Zenodo) -------------


def zenodo_file(server: PlatformServer, f: FakeFile) -> str:
    server.add_zenodo(1, [f])
    return f"https://zenodo.org/api/records/1/files/{quote(f.name)}/content"


def test_download_direct(server: PlatformServer, http: urllib3.PoolManager) -> None:
    data = bytes(range(256)) * 1000  # several 64 KiB pieces
    url = zenodo_file(server, FakeFile("a.bin", data, redirects=0, mimetype="text/csv"))
    response = get(http, server, url)
    assert response.status == 200
    assert response.data == data
    assert response.headers["Content-Length"] == str(len(data))
    assert response.headers["Content-Type"] == "text/csv"


def test_download_redirect_hops(server: PlatformServer, http: urllib3.PoolManager) -> None:
    url = zenodo_file(server, FakeFile("a.bin", b"data", redirects=3))
    response, chain = follow(http, server, url)
    assert response.data == b"data"
    assert len(chain) == 4
    assert [urlsplit(u).query for u in chain[1:]] == ["hop=1", "hop=2", "hop=3"]
    assert all(u.startswith("https://zenodo.org/") for u in chain)


def test_download_redirect_loop(server: PlatformServer, http: urllib3.PoolManager) -> None:
    url = zenodo_file(server, FakeFile("a.bin", b"data", redirect_loop=True))
    first = get(http, server, url)
    assert first.status == 302
    second = get(http, server, first.headers["Location"])
    assert (second.status, second.headers["Location"]) == (302, url)
    with pytest.raises(AssertionError, match="more than 10 redirects"):
        follow(http, server, url)


@pytest.mark.parametrize("status", [404, 410, 429, 500, 503])
def test_download_status(server: PlatformServer, http: urllib3.PoolManager, status: int) -> None:
    url = zenodo_file(server, FakeFile("a.bin", b"data", status=status))
    response, chain = follow(http, server, url)
    assert response.status == status
    assert len(chain) == 2  # the redirect hop still happens
    assert response.data != b"data" and len(response.data) < 100
    assert (response.headers.get("Retry-After") == "0") == (status in (429, 503))


def test_download_wrong_content(server: PlatformServer, http: urllib3.PoolManager) -> None:
    url = zenodo_file(server, FakeFile("a.bin", b"right", served=b"wrong bytes"))
    response, _ = follow(http, server, url)
    assert response.data == b"wrong bytes"
    assert response.headers["Content-Length"] == "11"


def test_download_truncated(server: PlatformServer, http: urllib3.PoolManager) -> None:
    data = b"x" * 200_000
    url = zenodo_file(server, FakeFile("a.bin", data, truncate_at=70_000, redirects=0))
    response = get(http, server, url, preload_content=False)
    assert response.headers["Content-Length"] == str(len(data))
    got = bytearray()
    with pytest.raises(ProtocolError, match="IncompleteRead"):
        for piece in response.stream(8192):
            got += piece
    assert len(got) < len(data)
    assert got == data[: len(got)]


def test_download_chunked(server: PlatformServer, http: urllib3.PoolManager) -> None:
    data = bytes(range(256)) * 700
    url = zenodo_file(server, FakeFile("a.bin", data, chunked=True, redirects=0))
    response = get(http, server, url)
    assert response.headers["Transfer-Encoding"] == "chunked"
    assert "Content-Length" not in response.headers
    assert response.data == data
    empty = zenodo_file(server, FakeFile("empty", b"", chunked=True, redirects=0))
    assert get(http, server, empty).data == b""


@pytest.mark.slow  # waits out timeouts, retries or stalls
def test_download_stall_times_out(server: PlatformServer, http: urllib3.PoolManager) -> None:
    f = FakeFile("a.bin", b"0123456789" * 10, stall_at=10, stall_seconds=2, redirects=0)
    url = zenodo_file(server, f)
    started = time.monotonic()
    with pytest.raises(ReadTimeoutError):
        get(http, server, url, timeout=urllib3.Timeout(connect=5, read=0.5))
    assert time.monotonic() - started < 1.9
    # a patient client gets everything
    response = get(http, server, url, timeout=urllib3.Timeout(connect=5, read=5))
    assert response.data == f.data


# --- figshare -------------------------------------------------------------------------------


def test_figshare_landing(server: PlatformServer, http: urllib3.PoolManager) -> None:
    server.add_figshare(777, 1, [FakeFile("a.csv", b"a")], title="Old")
    server.add_figshare(777, 2, [FakeFile("a.csv", b"b")], title="New")
    for path, title, version in [
        ("/articles/dataset/anything/777/1", "Old", 1),
        ("/articles/dataset/New/777/2", "New", 2),
        ("/articles/dataset/whatever_slug/777", "New", 2),
    ]:
        response = get(http, server, f"https://figshare.com{path}")
        assert response.status == 200
        assert response.headers["Content-Type"] == HTML
        page = response.data.decode()
        assert f"<title>{title}</title>" in page
        assert f'<meta name="citation_title" content="{title}">' in page
        doi = f"10.6084/m9.figshare.777.v{version}"
        assert f'<meta name="citation_doi" content="{doi}">' in page
    assert get(http, server, "https://figshare.com/articles/dataset/x/777/3").status == 404
    assert get(http, server, "https://figshare.com/articles/dataset/x/1").status == 404


def test_figshare_article_json(server: PlatformServer, http: urllib3.PoolManager) -> None:
    a, b = b"1,2\n", b"\x00" * 1000
    server.add_figshare(
        777,
        1,
        [FakeFile("a.csv", a, mimetype="text/csv"), FakeFile("b.bin", b, reported_md5="f" * 32)],
        title="Some data set",
    )
    response = get(http, server, "https://api.figshare.com/v2/articles/777/versions/1")
    assert response.status == 200
    assert response.headers["Content-Type"] == "application/json"
    article = response.json()
    assert article["id"] == 777
    assert article["title"] == "Some data set"
    assert article["doi"] == "10.6084/m9.figshare.777.v1"
    assert article["version"] == 1
    assert article["url_public_html"] == (
        "https://figshare.com/articles/dataset/Some_data_set/777/1"
    )
    assert article["defined_type_name"] == "dataset"
    assert article["is_embargoed"] is False
    assert article["embargo_date"] is None
    assert article["published_date"] == "2021-01-01T00:00:00Z"
    assert article["license"] == {
        "value": 1,
        "name": "CC BY 4.0",
        "url": "https://creativecommons.org/licenses/by/4.0/",
    }
    assert article["authors"] == [{"full_name": "Jane Doe"}]
    fa, fb = article["files"]
    assert isinstance(fa["id"], int) and fa["id"] != fb["id"]
    assert fa["name"] == "a.csv"
    assert fa["size"] == len(a)
    assert fa["is_link_only"] is False
    assert fa["download_url"] == f"https://ndownloader.figshare.com/files/{fa['id']}"
    assert fa["supplied_md5"] == ""
    assert fa["computed_md5"] == md5(a)
    assert fa["mimetype"] == "text/csv"
    assert fb["computed_md5"] == "f" * 32  # a lie
    assert get(http, server, article["url_public_html"]).status == 200
    for f, data in ((fa, a), (fb, b)):
        response, chain = follow(http, server, f["download_url"])
        assert (response.status, response.data) == (200, data)
        assert chain[1] == f"{f['download_url']}/hop/1"


def test_figshare_latest_and_versions(server: PlatformServer, http: urllib3.PoolManager) -> None:
    server.add_figshare(5, 2, [], title="two")
    server.add_figshare(5, 1, [], title="one")
    latest = get(http, server, "https://api.figshare.com/v2/articles/5").json()
    assert (latest["version"], latest["title"]) == (2, "two")
    assert get(http, server, "https://api.figshare.com/v2/articles/5/versions").json() == [
        {"version": 1, "url": "https://api.figshare.com/v2/articles/5/versions/1"},
        {"version": 2, "url": "https://api.figshare.com/v2/articles/5/versions/2"},
    ]


def test_figshare_not_found_and_status(server: PlatformServer, http: urllib3.PoolManager) -> None:
    server.add_figshare(5, 1, [])
    server.add_figshare(6, 1, [], status=500)
    not_found = {"message": "Entity not found: article", "code": "EntityNotFound"}
    for path in ("/v2/articles/5/versions/9", "/v2/articles/4/versions/1", "/v2/articles/4"):
        response = get(http, server, f"https://api.figshare.com{path}")
        assert (response.status, response.json()) == (404, not_found)
    assert get(http, server, "https://api.figshare.com/v2/articles/6/versions/1").status == 500
    assert get(http, server, "https://ndownloader.figshare.com/files/1").status == 404


def test_figshare_embargo(server: PlatformServer, http: urllib3.PoolManager) -> None:
    server.add_figshare(5, 1, [FakeFile("a", b"a")], is_embargoed=True)
    article = get(http, server, "https://api.figshare.com/v2/articles/5/versions/1").json()
    assert article["is_embargoed"] is True
    assert article["embargo_date"] == "2099-01-01"
    assert article["files"] == []
    response = get(http, server, "https://ndownloader.figshare.com/articles/5/versions/1")
    assert response.status == 403


def test_figshare_bundle(server: PlatformServer, http: urllib3.PoolManager) -> None:
    server.add_figshare(5, 1, [FakeFile("a.csv", b"1"), FakeFile("b.csv", b"2")])
    server.add_figshare(5, 2, [FakeFile("a.csv", b"1")], bundle=b"hostile")
    response = get(http, server, "https://ndownloader.figshare.com/articles/5/versions/1")
    assert response.status == 200
    assert response.headers["Content-Type"] == "application/zip"
    assert members(response.data) == {"a.csv": b"1", "b.csv": b"2"}
    response = get(http, server, "https://ndownloader.figshare.com/articles/5/versions/2")
    assert response.data == b"hostile"
    assert get(http, server, "https://ndownloader.figshare.com/articles/5/versions/3").status == (
        404
    )


# --- Dataverse ------------------------------------------------------------------------------


def dv(path: str, pid: str = PID, extra: str = "") -> str:
    return f"https://{DV}{path}?persistentId={quote(pid, safe='')}{extra}"


@pytest.fixture
def dataverse(server: PlatformServer) -> PlatformServer:
    server.add_dataverse(
        DV,
        PID,
        [
            FakeFile("readme.txt", b"read me\n", mimetype="text/plain"),
            FakeFile("data.csv", b"1,2\n", directory="data/raw", mimetype="text/csv"),
            FakeFile("secret.bin", b"secret", restricted=True),
            FakeFile("later.bin", b"later", embargoed_until="2099-12-31"),
        ],
        title="Version one",
    )
    server.add_dataverse(
        DV,
        PID,
        [FakeFile("readme.txt", b"read me v2\n", reported_size=3, reported_md5="1" * 32)],
        version=(2, 0),
        title="Version two",
    )
    return server


def test_dataverse_dataset_json(dataverse: PlatformServer, http: urllib3.PoolManager) -> None:
    response = get(http, dataverse, dv("/api/datasets/:persistentId/"))
    assert response.status == 200
    body = response.json()
    assert body["status"] == "OK"
    data = body["data"]
    assert isinstance(data["id"], int)
    assert data["identifier"] == "DVN/ABC123"
    assert data["persistentUrl"] == "https://doi.org/10.7910/DVN/ABC123"
    assert data["protocol"] == "doi"
    assert data["authority"] == "10.7910"
    latest = data["latestVersion"]
    assert (latest["versionNumber"], latest["versionMinorNumber"]) == (2, 0)
    assert latest["datasetId"] == data["id"]
    assert latest["datasetPersistentId"] == PID
    assert latest["versionState"] == "RELEASED"
    assert latest["releaseTime"] == "2021-01-01T00:00:00Z"
    assert latest["license"] == {
        "name": "CC0 1.0",
        "uri": "http://creativecommons.org/publicdomain/zero/1.0",
    }
    assert latest["metadataBlocks"]["citation"]["fields"] == [
        {"typeName": "title", "multiple": False, "typeClass": "primitive", "value": "Version two"}
    ]
    (f,) = latest["files"]
    assert f["dataFile"]["filesize"] == 3  # lies
    assert f["dataFile"]["md5"] == "1" * 32
    assert f["dataFile"]["checksum"] == {"type": "MD5", "value": "1" * 32}


def test_dataverse_version_json(dataverse: PlatformServer, http: urllib3.PoolManager) -> None:
    path = "/api/datasets/:persistentId/versions/{}"
    one = get(http, dataverse, dv(path.format("1.0"))).json()["data"]
    assert (one["versionNumber"], one["versionMinorNumber"]) == (1, 0)
    files = one["files"]
    assert [f["label"] for f in files] == ["readme.txt", "data.csv", "secret.bin", "later.bin"]
    readme, data, _secret, later = files
    assert "directoryLabel" not in readme
    assert data["directoryLabel"] == "data/raw"
    assert [f["restricted"] for f in files] == [False, False, True, False]
    assert all(f["version"] == 1 and f["datasetVersionId"] == one["id"] for f in files)
    df = data["dataFile"]
    assert isinstance(df["id"], int)
    assert df["persistentId"] == f"{PID}/F2"
    assert df["filename"] == "data.csv"
    assert df["contentType"] == "text/csv"
    assert df["filesize"] == 4
    assert df["description"] == ""
    assert df["md5"] == md5(b"1,2\n")
    assert df["checksum"] == {"type": "MD5", "value": md5(b"1,2\n")}
    assert "embargo" not in df
    assert later["dataFile"]["embargo"]["dateAvailable"] == "2099-12-31"
    assert later["dataFile"]["embargo"]["reason"]
    assert [f["dataFile"]["persistentId"] for f in files] == [f"{PID}/F{i}" for i in range(1, 5)]
    for version, title in [
        ("2", "Version two"),
        ("2.0", "Version two"),
        (":latest", "Version two"),
    ]:
        response = get(http, dataverse, dv(path.format(version)))
        data = response.json()["data"]
        assert data["metadataBlocks"]["citation"]["fields"][0]["value"] == title
    published = get(http, dataverse, dv(path.format(":latest-published"))).json()["data"]
    assert published["versionNumber"] == 2
    response = get(http, dataverse, dv(path.format("3.0")))
    assert response.status == 404
    assert response.json()["status"] == "ERROR"
    assert response.json()["message"].startswith("Dataset version 3.0 of dataset ")


def test_dataverse_unknown_pid_and_status(
    server: PlatformServer, http: urllib3.PoolManager
) -> None:
    server.add_dataverse(DV, "doi:10.5072/FK2/ERR", [], status=500)
    other = "doi:10.7910/DVN/NOPE"
    for path in ("/api/datasets/:persistentId/", "/api/datasets/:persistentId/versions/1.0"):
        response = get(http, server, dv(path, other))
        assert response.status == 404
        assert response.json() == {
            "status": "ERROR",
            "message": f"Dataset with Persistent ID {other} not found.",
        }
    response = get(http, server, dv("/api/datasets/:persistentId/", "doi:10.5072/FK2/ERR"))
    assert (response.status, response.json()["status"]) == (500, "ERROR")
    assert get(http, server, dv("/dataset.xhtml", other)).status == 404


def test_dataverse_file_pid_endpoint(dataverse: PlatformServer, http: urllib3.PoolManager) -> None:
    response = get(http, dataverse, dv("/api/files/:persistentId/", f"{PID}/F2"))
    # F2 is only in version 1.0 (version 2.0 has one file), so that is the one described
    body = response.json()
    assert body["status"] == "OK"
    assert body["data"]["label"] == "data.csv"
    assert body["data"]["directoryLabel"] == "data/raw"
    assert body["data"]["datasetPersistentId"] == PID
    assert body["data"]["dataFile"]["persistentId"] == f"{PID}/F2"
    latest = get(http, dataverse, dv("/api/files/:persistentId/", f"{PID}/F1")).json()["data"]
    assert latest["dataFile"]["filesize"] == 3  # the 2.0 readme
    response = get(http, dataverse, dv("/api/files/:persistentId/", f"{PID}/F9"))
    assert (response.status, response.json()["status"]) == (404, "ERROR")


def test_dataverse_downloads(dataverse: PlatformServer, http: urllib3.PoolManager) -> None:
    files = get(http, dataverse, dv("/api/datasets/:persistentId/versions/1.0")).json()["data"]
    _readme, data, secret, later = (f["dataFile"] for f in files["files"])
    response, chain = follow(http, dataverse, f"https://{DV}/api/access/datafile/{data['id']}")
    assert (response.status, response.data) == (200, b"1,2\n")
    assert urlsplit(chain[1]).netloc == DV and urlsplit(chain[1]).path.startswith("/s3/")
    by_pid = dv("/api/access/datafile/:persistentId/", data["persistentId"])
    response, chain = follow(http, dataverse, by_pid)
    assert (response.status, response.data) == (200, b"1,2\n")
    for denied in (secret, later):
        for url in (
            f"https://{DV}/api/access/datafile/{denied['id']}",
            dv("/api/access/datafile/:persistentId/", denied["persistentId"]),
        ):
            response = get(http, dataverse, url)
            assert response.status == 403
            assert response.json()["status"] == "ERROR"
            assert response.json()["message"].startswith("Not authorized to access this object")
    assert get(http, dataverse, f"https://{DV}/api/access/datafile/1").status == 404


def test_dataverse_bundle(dataverse: PlatformServer, http: urllib3.PoolManager) -> None:
    url = dv("/api/access/dataset/:persistentId/versions/1.0")
    response = get(http, dataverse, url)
    assert response.status == 200
    assert response.headers["Content-Type"] == "application/zip"
    got = members(response.data)
    assert set(got) == {"readme.txt", "data/raw/data.csv", "MANIFEST.TXT"}
    assert got["data/raw/data.csv"] == b"1,2\n"
    manifest = got["MANIFEST.TXT"].decode()
    assert "data/raw/data.csv" in manifest and "secret.bin" in manifest
    latest = members(get(http, dataverse, dv("/api/access/dataset/:persistentId/")).data)
    assert latest["readme.txt"] == b"read me v2\n"
    dataverse.add_dataverse(DV, "doi:10.5072/FK2/BAD", [], bundle=b"../../etc/passwd")
    response = get(http, dataverse, dv("/api/access/dataset/:persistentId/", "doi:10.5072/FK2/BAD"))
    assert response.data == b"../../etc/passwd"


def test_dataverse_landing_pages(dataverse: PlatformServer, http: urllib3.PoolManager) -> None:
    response = get(http, dataverse, dv("/dataset.xhtml"))
    assert response.status == 200
    assert response.headers["Content-Type"] == HTML
    page = response.data.decode()
    assert "<title>Version two</title>" in page
    assert '<meta name="citation_title" content="Version two">' in page
    assert '<meta name="citation_doi" content="10.7910/DVN/ABC123">' in page
    page = get(http, dataverse, dv("/dataset.xhtml", extra="&version=1.0")).data.decode()
    assert "<title>Version one</title>" in page
    response = get(http, dataverse, dv("/file.xhtml", f"{PID}/F2"))
    assert response.status == 200 and "<title>data.csv</title>" in response.data.decode()


# --- archive.org ----------------------------------------------------------------------------


def test_archiveorg_metadata(server: PlatformServer, http: urllib3.PoolManager) -> None:
    csv, blob = b"a,b\n", b"\x01" * 5000
    server.add_archiveorg(
        "my-item",
        [FakeFile("table.csv", csv), FakeFile("sub/dir/blob.bin", blob, reported_sha1="2" * 40)],
    )
    response = get(http, server, "https://archive.org/metadata/my-item")
    assert response.status == 200
    item = response.json()
    assert isinstance(item["created"], int)
    assert item["d1"] == item["server"] == "ia800100.us.archive.org"
    assert item["dir"] == "/1/items/my-item"
    assert item["metadata"] == {
        "identifier": "my-item",
        "mediatype": "data",
        "collection": ["opensource"],
        "title": "An archive.org dataset",
    }
    files = {f["name"]: f for f in item["files"]}
    assert item["files_count"] == len(files) == 6
    assert files["table.csv"] == {
        "name": "table.csv",
        "source": "original",
        "format": "Comma-Separated Values",
        "size": str(len(csv)),
        "md5": md5(csv),
        "sha1": hashlib.sha1(csv).hexdigest(),
        "crc32": f"{zlib.crc32(csv):08x}",
        "mtime": "1600000000",
    }
    assert files["sub/dir/blob.bin"]["format"] == "Data"
    assert files["sub/dir/blob.bin"]["sha1"] == "2" * 40
    assert (files["my-item_meta.xml"]["source"], files["my-item_meta.xml"]["format"]) == (
        "original",
        "Metadata",
    )
    assert (files["my-item_files.xml"]["source"], files["my-item_files.xml"]["format"]) == (
        "original",
        "Metadata",
    )
    torrent = files["my-item_archive.torrent"]
    assert (torrent["source"], torrent["format"]) == ("metadata", "Archive BitTorrent")
    thumb = files["__ia_thumb.jpg"]
    assert (thumb["source"], thumb["format"]) == ("derivative", "Item Tile")
    sized = [int(f["size"]) for f in item["files"] if "size" in f]
    assert item["item_size"] >= sum(sized) >= len(csv) + len(blob)


def test_archiveorg_downloads(server: PlatformServer, http: urllib3.PoolManager) -> None:
    blob = b"\x01" * 5000
    server.add_archiveorg("my-item", [FakeFile("sub/dir/blob bin", blob)])
    url = "https://archive.org/download/my-item/sub/dir/blob%20bin"
    response = get(http, server, url)
    assert response.status == 302
    assert response.headers["Location"] == (
        "https://ia800100.us.archive.org/1/items/my-item/sub/dir/blob%20bin"
    )
    response, _ = follow(http, server, url)
    assert (response.status, response.data) == (200, blob)
    for name in item_files(http, server, "my-item"):
        response, _ = follow(http, server, f"https://archive.org/download/my-item/{quote(name)}")
        assert response.status == 200 and response.data, name
    meta = follow(http, server, "https://archive.org/download/my-item/my-item_meta.xml")[0]
    assert b"<identifier>my-item</identifier>" in meta.data
    assert get(http, server, "https://archive.org/download/my-item/nope").status == 404


def item_files(http: urllib3.PoolManager, server: PlatformServer, identifier: str) -> list[str]:
    response = get(http, server, f"https://archive.org/metadata/{identifier}")
    return [f["name"] for f in response.json()["files"]]


def test_archiveorg_redirect_hops(server: PlatformServer, http: urllib3.PoolManager) -> None:
    server.add_archiveorg(
        "it",
        [
            FakeFile("direct", b"d", redirects=0),
            FakeFile("three", b"3", redirects=3),
            FakeFile("loop", b"l", redirect_loop=True),
        ],
    )
    response, chain = follow(http, server, "https://archive.org/download/it/direct")
    assert response.data == b"d" and len(chain) == 2  # archive.org always redirects once
    response, chain = follow(http, server, "https://archive.org/download/it/three")
    assert response.data == b"3" and len(chain) == 4
    assert all(urlsplit(u).netloc == "ia800100.us.archive.org" for u in chain[1:])
    with pytest.raises(AssertionError, match="redirects"):
        follow(http, server, "https://archive.org/download/it/loop")


def test_archiveorg_unknown_dark_restricted(
    server: PlatformServer, http: urllib3.PoolManager
) -> None:
    response = get(http, server, "https://archive.org/metadata/nothing-here")
    assert (response.status, response.json()) == (200, {})
    server.add_archiveorg("dark", [FakeFile("a", b"a")], is_dark=True)
    dark = get(http, server, "https://archive.org/metadata/dark").json()
    assert dark["is_dark"] is True and isinstance(dark["created"], int)
    assert "files" not in dark and "metadata" not in dark
    assert get(http, server, "https://archive.org/download/dark/a").status == 403
    server.add_archiveorg("locked", [FakeFile("a", b"a")], restricted=True)
    locked = get(http, server, "https://archive.org/metadata/locked").json()
    assert locked["metadata"]["access-restricted-item"] == "true"
    assert "a" in [f["name"] for f in locked["files"]]
    assert get(http, server, "https://archive.org/download/locked/a").status == 403
    server.add_archiveorg("broken", [], status=503)
    response = get(http, server, "https://archive.org/metadata/broken")
    assert (response.status, response.headers["Retry-After"]) == (503, "0")


def test_archiveorg_details(server: PlatformServer, http: urllib3.PoolManager) -> None:
    server.add_archiveorg("it", [], title="Item title")
    response = get(http, server, "https://archive.org/details/it")
    assert response.status == 200
    assert response.headers["Content-Type"] == HTML
    assert "<title>" in response.data.decode() and "Item title" in response.data.decode()
    assert get(http, server, "https://archive.org/details/other").status == 404
