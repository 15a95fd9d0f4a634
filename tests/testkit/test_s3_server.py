"""The throwaway Swift/s3api server helper itself."""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Iterator

import pytest

from sandcrawler_testkit.s3_server import S3Server, swift_available
from tests.helpers.skips import unavailable

# starts a real S3 server of its own
pytestmark = pytest.mark.s3


@pytest.fixture(scope="module", autouse=True)
def _swift_installed() -> None:
    if not swift_available():
        unavailable("OpenStack Swift servers / memcached not installed (apt-get install "
                    "swift-proxy swift-account swift-container swift-object memcached)", "S3")

MIB = 1024 * 1024


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with S3Server() as server:
        yield server


def test_start_and_stop_cleans_up() -> None:
    server = S3Server()
    try:
        url = server.start()
        assert url == server.endpoint_url
        assert url.startswith("http://127.0.0.1:")
        assert server.client().list_buckets()["Buckets"] == []
        base = server.base
        procs = list(server._procs.values())
        assert base is not None and base.is_dir()
    finally:
        server.stop()
    assert not base.exists()
    assert all(proc.poll() is not None for proc in procs)


def test_bucket_put_get_roundtrip(s3: S3Server) -> None:
    s3.create_bucket("roundtrip")
    client = s3.client()
    body = b"hello swift " * 100
    md5 = base64.b64encode(hashlib.md5(body).digest()).decode()
    client.put_object(Bucket="roundtrip", Key="dir/a.txt", Body=body, ContentMD5=md5)

    assert client.get_object(Bucket="roundtrip", Key="dir/a.txt")["Body"].read() == body
    head = client.head_object(Bucket="roundtrip", Key="dir/a.txt")
    assert head["ContentLength"] == len(body)
    assert head["ETag"] == f'"{hashlib.md5(body).hexdigest()}"'
    part = client.get_object(Bucket="roundtrip", Key="dir/a.txt", Range="bytes=6-10")
    assert part["Body"].read() == body[6:11]
    listed = client.list_objects_v2(Bucket="roundtrip", Prefix="dir/")["Contents"]
    assert [o["Key"] for o in listed] == ["dir/a.txt"]
    deleted = client.delete_objects(Bucket="roundtrip", Delete={"Objects": [{"Key": "dir/a.txt"}]})
    assert deleted["Deleted"] == [{"Key": "dir/a.txt"}]
    assert client.list_objects_v2(Bucket="roundtrip").get("Contents", []) == []


def test_multipart_visible_only_after_completion(s3: S3Server) -> None:
    from botocore.exceptions import ClientError

    s3.create_bucket("multipart")
    client = s3.client()
    chunks = [os.urandom(5 * MIB + 1), os.urandom(5 * MIB + 2), b"last"]
    upload_id = client.create_multipart_upload(Bucket="multipart", Key="big")["UploadId"]
    parts = []
    for number, chunk in enumerate(chunks, 1):
        etag = client.upload_part(
            Bucket="multipart", Key="big", UploadId=upload_id, PartNumber=number, Body=chunk
        )["ETag"]
        parts.append({"PartNumber": number, "ETag": etag})

    with pytest.raises(ClientError) as excinfo:
        client.head_object(Bucket="multipart", Key="big")
    assert excinfo.value.response["Error"]["Code"] == "404"
    assert client.list_objects_v2(Bucket="multipart").get("Contents", []) == []

    client.complete_multipart_upload(
        Bucket="multipart", Key="big", UploadId=upload_id, MultipartUpload={"Parts": parts}
    )
    assert client.head_object(Bucket="multipart", Key="big")["ContentLength"] == sum(
        map(len, chunks)
    )
    assert client.get_object(Bucket="multipart", Key="big")["Body"].read() == b"".join(chunks)
    listed = client.list_objects_v2(Bucket="multipart")["Contents"]
    assert [o["Key"] for o in listed] == ["big"]
