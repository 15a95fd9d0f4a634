"""The S3 blob store (boto3), for AWS or any S3-compatible server (Swift s3api, MinIO, Ceph).

An object is written with one ``PutObject`` when it fits in one part, else as a
multipart upload whose parts are sent while the next one fills. S3 makes an
object visible only when its PUT or ``CompleteMultipartUpload`` succeeds, which
gives the store its atomic writes; an upload whose writer died stays invisible
and ``cleanup`` aborts it.
"""

from __future__ import annotations

import contextlib
import io
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import IO, TYPE_CHECKING, cast

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from sandcrawler.config import S3Settings
from sandcrawler.core.errors import ConfigError, InvalidName, NotFound, StoreUnavailable
from sandcrawler.core.filemeta import new_hashers
from sandcrawler.core.paths import MAX_PATH_BYTES
from sandcrawler.records.statuses import StoreStatus
from sandcrawler.storage.blobs import (
    CHUNK,
    DEFAULT_HASHES,
    BlobInfo,
    BlobStore,
    BlobWriter,
    check_key,
    check_prefix,
    check_range,
)

if TYPE_CHECKING:
    from mypy_boto3_s3.type_defs import CompletedPartTypeDef

_MISSING = {"404", "NoSuchKey", "NotFound"}
_REFUSED = {
    "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "NoSuchBucket",
    "AllAccessDisabled", "InvalidBucketName", "403",
}


def _code(e: ClientError) -> str:
    return str(e.response.get("Error", {}).get("Code", ""))


@contextlib.contextmanager
def _mapped_errors(store: S3BlobStore, what: str) -> Iterator[None]:
    """boto errors onto the project's tree: refusals are configuration problems,
    transport failures and 5xx (after boto's own retries) an unavailable store."""
    try:
        yield
    except ClientError as e:
        code = _code(e)
        if code in _MISSING:
            raise NotFound(f"no blob {what!r} in {store.url}") from None
        message = e.response.get("Error", {}).get("Message") or code
        if code in _REFUSED:
            raise ConfigError(f"S3 store {store.url} refused {what!r}: {code}: {message}") from e
        raise StoreUnavailable(f"S3 store {store.url} failed on {what!r}: {code}: {message}") from e
    except BotoCoreError as e:
        raise StoreUnavailable(f"S3 store {store.url} unreachable: {e}") from e


MAX_SINGLE_PUT = 5 * 1024**3  # S3's limit for one PutObject


class _S3Writer(BlobWriter):
    def __init__(self, store: S3BlobStore, key: str, hashes: Iterable[str]) -> None:
        super().__init__(key, hashes)
        self._store = store
        self._object_key = store.object_key(key)
        # Written data as received; joined once per part (one copy of each byte).
        self._chunks: list[bytes] = []
        self._buffered = 0
        self._upload_id: str | None = None
        self._parts: list[CompletedPartTypeDef] = []
        self._pending: deque[Future[None]] = deque()
        self._next_part = 1
        self._executor: ThreadPoolExecutor | None = None

    def _write(self, data: bytes) -> None:
        self._chunks.append(data if type(data) is bytes else bytes(data))
        self._buffered += len(data)
        size = self._store.part_size
        if self._buffered >= size:
            joined = b"".join(self._chunks)
            full = len(joined) - len(joined) % size
            for start in range(0, full, size):
                self._send_part(joined[start : start + size])
            rest = joined[full:]
            self._chunks = [rest] if rest else []
            self._buffered = len(rest)

    def _writev(self, buffers: Sequence[bytes | memoryview]) -> None:
        self._write(b"".join(buffers))  # one copy (the caller may reuse its buffers)

    def _send_part(self, part: bytes) -> None:
        client = self._store.client
        if self._upload_id is None:
            with _mapped_errors(self._store, self.key):
                created = client.create_multipart_upload(
                    Bucket=self._store.bucket, Key=self._object_key
                )
            self._upload_id = created["UploadId"]
            self._executor = ThreadPoolExecutor(
                self._store.upload_concurrency, thread_name_prefix="s3-part"
            )
        # Bounded memory: at most upload_concurrency parts in flight while the next fills.
        while len(self._pending) >= self._store.upload_concurrency:
            self._pending.popleft().result()
        assert self._executor is not None
        self._pending.append(self._executor.submit(self._upload_part, self._next_part, part))
        self._next_part += 1

    def _upload_part(self, number: int, part: bytes) -> None:
        # parts are sent only once the upload was created
        assert self._upload_id is not None
        with _mapped_errors(self._store, self.key):
            answer = self._store.client.upload_part(
                Bucket=self._store.bucket,
                Key=self._object_key,
                UploadId=self._upload_id,
                PartNumber=number,
                Body=part,
            )
        self._parts.append({"PartNumber": number, "ETag": answer["ETag"]})

    def _wait_pending(self) -> None:
        while self._pending:
            self._pending.popleft().result()

    def _commit(self) -> datetime | None:
        store = self._store
        try:
            if self._upload_id is None:
                with _mapped_errors(store, self.key):
                    store.client.put_object(
                        Bucket=store.bucket, Key=self._object_key, Body=b"".join(self._chunks)
                    )
            else:
                if self._buffered or not self._parts:
                    self._send_part(b"".join(self._chunks))
                self._wait_pending()
                with _mapped_errors(store, self.key):
                    store.client.complete_multipart_upload(
                        Bucket=store.bucket,
                        Key=self._object_key,
                        UploadId=self._upload_id,
                        MultipartUpload={
                            "Parts": sorted(self._parts, key=lambda p: p["PartNumber"])
                        },
                    )
        except BaseException:
            self._abort()
            raise
        finally:
            self._chunks, self._buffered = [], 0
            self._shutdown()
        return datetime.now(UTC)

    def _abort(self) -> None:
        self._chunks, self._buffered = [], 0
        while self._pending:
            with contextlib.suppress(Exception):
                self._pending.popleft().result()
        self._shutdown()
        if self._upload_id is not None:
            upload_id, self._upload_id = self._upload_id, None
            with contextlib.suppress(ClientError, BotoCoreError):
                self._store.client.abort_multipart_upload(
                    Bucket=self._store.bucket, Key=self._object_key, UploadId=upload_id
                )

    def _shutdown(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None


class S3BlobStore(BlobStore):
    def __init__(
        self,
        bucket: str,
        prefix: str = "",
        *,
        endpoint_url: str | None = None,
        region: str = "us-east-1",
        access_key_id: str | None = None,
        secret_access_key: str | None = None,
        part_size: int = 8 * 1024 * 1024,
        upload_concurrency: int = 4,
    ) -> None:
        if not bucket:
            raise ConfigError("S3 store needs a bucket: store_url = s3://BUCKET[/PREFIX]")
        self.bucket = bucket
        self.prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
        if self.prefix:
            check_prefix(self.prefix)
        self.url = f"s3://{bucket}/{self.prefix}"
        self.part_size = part_size
        self.upload_concurrency = upload_concurrency
        config = Config(
            signature_version="s3v4",
            # S3-compatible servers are addressed by path; AWS itself by virtual host.
            s3={"addressing_style": "path" if endpoint_url else "auto"},
            # 3 tries in all (max_attempts would count retries): an unreachable
            # endpoint is reported in seconds, and workers back off above this.
            retries={"total_max_attempts": 3, "mode": "standard"},
            connect_timeout=5,
            read_timeout=120,
            # The newer default CRC trailers are not understood by every
            # S3-compatible server; send checksums only where the API requires them.
            request_checksum_calculation="when_required",
            response_checksum_validation="when_required",
            max_pool_connections=32,
        )
        session = boto3.session.Session()
        self.client = session.client(
            "s3",
            endpoint_url=endpoint_url,
            region_name=region,
            aws_access_key_id=access_key_id,
            aws_secret_access_key=secret_access_key,
            config=config,
        )

    @classmethod
    def from_url(cls, rest: str, s3: S3Settings) -> S3BlobStore:
        """``s3://BUCKET[/PREFIX]``, with the endpoint and credentials of ``s3``."""
        bucket, _, prefix = rest.partition("/")
        return cls(bucket, prefix, endpoint_url=s3.endpoint_url, region=s3.region,
                   access_key_id=s3.access_key_id, secret_access_key=s3.secret_access_key,
                   part_size=s3.part_size, upload_concurrency=s3.upload_concurrency)

    def object_key(self, key: str) -> str:
        full = self.prefix + check_key(key)
        if len(full.encode("utf-8")) > MAX_PATH_BYTES:
            raise InvalidName(
                f"blob key too long for S3 with prefix {self.prefix!r} "
                f"(over {MAX_PATH_BYTES} bytes in all)",
                status=StoreStatus.BAD_KEY,
            )
        return full

    def open_write(self, key: str, *, hashes: Iterable[str] = DEFAULT_HASHES) -> BlobWriter:
        return _S3Writer(self, check_key(key), hashes)

    def put(
        self, key: str, data: bytes | IO[bytes], *, hashes: Iterable[str] = DEFAULT_HASHES
    ) -> BlobInfo:
        """Bytes already in memory go up in one PutObject, without copies, hashed on
        another core meanwhile (hashlib releases the GIL); streams go through the
        multipart writer."""
        if not isinstance(data, bytes | bytearray | memoryview) or len(data) > MAX_SINGLE_PUT:
            return super().put(key, data, hashes=hashes)
        key = check_key(key)
        object_key = self.object_key(key)
        hashers = new_hashers(hashes)

        def digest() -> dict[str, str]:
            for h in hashers.values():
                h.update(data)
            return {name: h.hexdigest() for name, h in hashers.items()}

        def send() -> None:
            with _mapped_errors(self, key):
                self.client.put_object(Bucket=self.bucket, Key=object_key, Body=data)

        if len(data) < CHUNK:  # not worth a thread
            digests = digest()
            send()
        else:
            with ThreadPoolExecutor(1) as pool:
                hashing = pool.submit(digest)
                send()
                digests = hashing.result()
        return BlobInfo(key, len(data), datetime.now(UTC), digests)

    def open_read(self, key: str) -> IO[bytes]:
        with _mapped_errors(self, key):
            answer = self.client.get_object(Bucket=self.bucket, Key=self.object_key(key))
        # botocore's StreamingBody: a streaming, closeable io.IOBase of bytes
        return cast(IO[bytes], answer["Body"])

    def open_range(self, key: str, offset: int, length: int) -> IO[bytes]:
        check_range(offset, length)
        with _mapped_errors(self, key):
            try:
                answer = self.client.get_object(Bucket=self.bucket, Key=self.object_key(key),
                                                Range=f"bytes={offset}-{offset + length - 1}")
            except ClientError as e:
                if _code(e) != "InvalidRange":
                    raise
                return io.BytesIO()  # the range starts past the end: nothing there
        return cast(IO[bytes], answer["Body"])

    def stat(self, key: str) -> BlobInfo | None:
        key = check_key(key)
        try:
            with _mapped_errors(self, key):
                head = self.client.head_object(Bucket=self.bucket, Key=self.object_key(key))
        except NotFound:
            return None
        return BlobInfo(key, int(head["ContentLength"]), head.get("LastModified"))

    def list(self, prefix: str = "") -> Iterator[BlobInfo]:
        prefix = check_prefix(prefix)
        paginator = self.client.get_paginator("list_objects_v2")
        with _mapped_errors(self, prefix):
            for page in paginator.paginate(Bucket=self.bucket, Prefix=self.prefix + prefix):
                for obj in page.get("Contents", []):
                    key = obj["Key"][len(self.prefix) :]
                    yield BlobInfo(key, int(obj["Size"]), obj.get("LastModified"))

    def delete(self, key: str) -> bool:
        if self.stat(key) is None:
            return False
        with _mapped_errors(self, key):
            self.client.delete_object(Bucket=self.bucket, Key=self.object_key(key))
        return True

    def cleanup(self, older_than: float = 86400.0) -> int:
        cutoff = datetime.now(UTC) - timedelta(seconds=older_than)
        removed = 0
        paginator = self.client.get_paginator("list_multipart_uploads")
        with _mapped_errors(self, self.prefix):
            for page in paginator.paginate(Bucket=self.bucket, Prefix=self.prefix):
                for upload in page.get("Uploads", []):
                    if upload["Initiated"] < cutoff:
                        self.client.abort_multipart_upload(
                            Bucket=self.bucket, Key=upload["Key"], UploadId=upload["UploadId"]
                        )
                        removed += 1
        return removed

    def _bucket_exists(self) -> bool:
        try:
            with _mapped_errors(self, "(bucket)"):
                self.client.head_bucket(Bucket=self.bucket)
        except NotFound:
            return False
        return True

    def check(self) -> None:
        if not self._bucket_exists():
            raise ConfigError(
                f"bucket {self.bucket!r} does not exist at {self.client.meta.endpoint_url} "
                "(`sandcrawler store init` creates it)"
            )

    def create(self) -> bool:
        """Create the bucket if it does not exist; True if created."""
        if self._bucket_exists():
            return False
        with _mapped_errors(self, "(bucket)"):
            self.client.create_bucket(Bucket=self.bucket)
        return True

    def close(self) -> None:
        self.client.close()
