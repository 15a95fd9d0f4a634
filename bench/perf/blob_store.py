"""The blob stores (``LocalBlobStore``, ``S3BlobStore``) against the plainest code that
moves the same bytes: Python file calls for the local store, raw boto3 calls for S3.

Input (fixed seed, generated in memory before anything is timed):

  small  N objects (``--small``, default 10,000) of 2-20 kB random bytes (uniform), keys
         in the resource layout ``98/da/17/ff/<uuid>/<uuid>.grobid.tei.xml.gz``;
  large  N objects (``--large``, default 20) of ``--large-mb`` MB (default 50, 1 MB =
         10^6 bytes) of random bytes, keys ``.../<uuid>/<uuid>.pdf``; also written to
         source files (for the from-a-file variants) before anything is timed.

Variants compared (each store variant with its baseline; ratio = store time / baseline
time, > 1: the store is slower):

  local  put: ``LocalBlobStore(dir, fsync=False)`` / ``fsync=True``, ``put(key, bytes)``
         (large: also ``put(key, open(src))``), vs ``os.makedirs`` + ``open(path, "wb")
         .write``, the same plus ``os.fsync`` of the file and of its directory (as the
         store does; also file-only), and for large objects ``shutil.copyfile`` from the
         source file (with and without the fsyncs);
         get: ``store.get(key)`` vs ``open(path, "rb").read()``, on the same files.
  s3     a fresh ``S3Server`` (OpenStack Swift + s3api on loopback, on this same machine)
         put: ``S3BlobStore.put(key, bytes)`` (one PutObject) vs ``client.put_object``
         (large: also ``put(key, open(src))``, multipart, vs ``client.upload_fileobj``);
         get: ``store.get`` vs ``client.get_object(...)["Body"].read()`` on the same
         objects (large: also ``download_fileobj``).
  hash   sha1 + sha256 over the same bytes with ``hashlib.new``: what the store computes
         on every write and plain code does not.

The objects are split into blocks (10 for small objects, one per 4 large objects) and
the variants take turns block by block, in rotating order, each into its own directory
or bucket, with ``os.sync()`` (untimed) before each turn: drift (a filesystem or Swift
container filling up, other load on the machine) and the flushing of one variant's
dirty pages then hit all variants alike. Before each turn of a get (and of a put from
source files) an untimed read of the same objects brings them into the page cache, so
gets measure the read path, not the disk: page cache left idle does not stay (a VM may
reclaim it; this one runs DAMON pageout of memory idle for ~30 s). Small-object S3 gets
only get one untimed pass before them (at ~5 ms of Swift CPU per GET, cache state
hardly matters).

Printed per variant: seconds, objects/s, MB/s, CPU seconds of this process (all threads),
for S3 the CPU of the Swift servers and memcached, and the ratio to the baseline.

Run:  python bench/perf/blob_store.py [--small 10000] [--large 20] [--large-mb 50]
                                 [--only local|s3] [--dir DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import random
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
from _common import print_header, rate, skip

from sandcrawler.storage.blobs import DEFAULT_HASHES, BlobStore
from sandcrawler.storage.docid import shard_dir
from sandcrawler.storage.local import LocalBlobStore

SEED = 20261122
SMALL_MIN, SMALL_MAX = 2_000, 20_000
SMALL_BLOCKS = 10
LARGE_PER_BLOCK = 4
MB = 1_000_000


@dataclass(frozen=True)
class Obj:
    key: str
    data: bytes
    src: Path | None = None  # the same bytes in a source file (large objects)


Objects = Sequence[Obj]


def total_bytes(objs: Objects) -> int:
    return sum(len(o.data) for o in objs)


def make_objects(rng: random.Random, n: int, size: Callable[[], int], suffix: str) -> list[Obj]:
    out = []
    for _ in range(n):
        u = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        out.append(Obj(f"{shard_dir(u)}/{u}{suffix}", rng.randbytes(size())))
    return out


# --- measuring -----------------------------------------------------------------------------


def live_children_cpu() -> float:
    """CPU seconds so far of this process's live children: the Swift servers and
    memcached (each a single process: ``workers = 0``). 0 where /proc is missing."""
    if not os.path.isdir("/proc"):
        return 0.0
    me = str(os.getpid())
    ticks = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            text = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # After "pid (comm) ": state, ppid, ...; utime and stime are fields 14 and 15.
        fields = text[text.rindex(")") + 2 :].split()
        if fields[1] == me:
            ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


@dataclass
class Variant:
    label: str
    #: moves the bytes of these objects (put or get); returns how many bytes it moved
    run: Callable[[Objects], int]
    baseline: str | None = None  # label of the variant it is compared with
    #: untimed, before each turn: bring what the variant reads into the page cache
    prepare: Callable[[Objects], Any] | None = None


@dataclass
class Row:
    label: str
    n: int = 0
    nbytes: int = 0
    wall: float = 0.0
    cpu: float = 0.0
    server_cpu: float = 0.0


def blocks_of(objs: Objects, blocks: int) -> list[Objects]:
    size = -(-len(objs) // blocks)
    return [objs[i : i + size] for i in range(0, len(objs), size)]


def measure(variants: Sequence[Variant], blocks: Sequence[Objects], *,
            server: bool = False, sync: bool = True) -> dict[str, Row]:
    """Every variant over every block, taking turns in rotating order; totals per variant.
    Exits if a variant moves other than the blocks' bytes."""
    rows = {v.label: Row(v.label) for v in variants}
    for b, block in enumerate(blocks):
        shift = b % len(variants)
        for v in [*variants[shift:], *variants[:shift]]:
            if sync:
                os.sync()
            if v.prepare is not None:
                v.prepare(block)
            s0 = live_children_cpu() if server else 0.0
            t0, c0 = time.perf_counter(), time.process_time()
            moved = v.run(block)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            s1 = live_children_cpu() if server else 0.0
            if moved != total_bytes(block):
                sys.exit(f"{v.label}: moved {moved:,} bytes, expected {total_bytes(block):,}")
            row = rows[v.label]
            row.n += len(block)
            row.nbytes += moved
            row.wall += wall
            row.cpu += cpu
            row.server_cpu += s1 - s0
    return rows


def show_header(title: str, server: bool = False) -> None:
    extra = f" {'Swift CPU':>11}" if server else ""
    print(f"   {title:<52} {'seconds':>8} {'objects/s':>10} {'MB/s':>8} {'CPU s':>7}{extra}"
          "   ratio")


def show(variants: Sequence[Variant], rows: dict[str, Row], server: bool = False) -> None:
    for v in variants:
        row = rows[v.label]
        extra = f" {row.server_cpu:9.1f} s" if server else ""
        ratio = ""
        if v.baseline is not None:
            ratio = f"   {row.wall / rows[v.baseline].wall:5.2f}x {v.baseline.split(':')[0]}"
        print(f"   {row.label:<52} {row.wall:8.2f} {rate(row.n, row.wall):10,.0f} "
              f"{rate(row.nbytes, row.wall) / MB:8.1f} {row.cpu:7.2f}{extra}{ratio}", flush=True)


def run_section(title: str, variants: Sequence[Variant], blocks: Sequence[Objects], *,
                server: bool = False, sync: bool = True) -> dict[str, Row]:
    show_header(title, server)
    rows = measure(variants, blocks, server=server, sync=sync)
    show(variants, rows, server)
    return rows


# --- the work ------------------------------------------------------------------------------


def hash_all(objs: Objects, names: Sequence[str]) -> int:
    for o in objs:
        for name in names:
            h = hashlib.new(name)
            h.update(o.data)
            h.hexdigest()
    return total_bytes(objs)


def hash_section(objs: Objects) -> None:
    run_section("hashing alone (hashlib.new, as the store)", [
        Variant("sha1 + sha256", lambda part: hash_all(part, DEFAULT_HASHES)),
        *(Variant(name, lambda part, name=name: hash_all(part, [name]))
          for name in DEFAULT_HASHES),
    ], [objs], sync=False)


def fsync_path(path: str, *, directory: bool = False) -> None:
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if directory else 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def plain_put(root: Path, *, fsync_file: bool = False,
              fsync_dir: bool = False) -> Callable[[Objects], int]:
    base = str(root)

    def run(objs: Objects) -> int:
        for o in objs:
            path = os.path.join(base, o.key)
            parent = os.path.dirname(path)
            os.makedirs(parent, exist_ok=True)
            with open(path, "wb") as f:
                f.write(o.data)
                if fsync_file:
                    f.flush()
                    os.fsync(f.fileno())
            if fsync_dir:
                fsync_path(parent, directory=True)
        return total_bytes(objs)

    return run


def plain_copy(root: Path, *, fsync: bool = False) -> Callable[[Objects], int]:
    base = str(root)

    def run(objs: Objects) -> int:
        for o in objs:
            assert o.src is not None
            path = os.path.join(base, o.key)
            parent = os.path.dirname(path)
            os.makedirs(parent, exist_ok=True)
            shutil.copyfile(o.src, path)
            if fsync:
                fsync_path(path)
                fsync_path(parent, directory=True)
        return total_bytes(objs)

    return run


def read_sources(objs: Objects) -> int:
    return sum(len(o.src.read_bytes()) for o in objs if o.src is not None)


def plain_get(root: Path) -> Callable[[Objects], int]:
    base = str(root)

    def run(objs: Objects) -> int:
        got = 0
        for o in objs:
            with open(os.path.join(base, o.key), "rb") as f:
                got += len(f.read())
        return got

    return run


def store_put(store: BlobStore, prefix: str = "") -> Callable[[Objects], int]:
    def run(objs: Objects) -> int:
        return sum(store.put(prefix + o.key, o.data).size for o in objs)

    return run


def store_put_files(store: BlobStore, prefix: str = "") -> Callable[[Objects], int]:
    def run(objs: Objects) -> int:
        size = 0
        for o in objs:
            assert o.src is not None
            with open(o.src, "rb") as f:
                size += store.put(prefix + o.key, f).size
        return size

    return run


def store_get(store: BlobStore, prefix: str = "") -> Callable[[Objects], int]:
    def run(objs: Objects) -> int:
        return sum(len(store.get(prefix + o.key)) for o in objs)

    return run


def check_store(store: BlobStore, objs: Objects, prefix: str = "") -> None:
    """Untimed: the first and last objects read back as written; the hashes the store
    computes while writing are hashlib's."""
    for o in (objs[0], objs[-1]):
        if store.get(prefix + o.key) != o.data:
            sys.exit(f"{store.url}: {prefix + o.key} does not read back as written")
        info = store.put(f"check/{o.key}", o.data)
        want = {name: hashlib.new(name, o.data).hexdigest() for name in DEFAULT_HASHES}
        if info.hashes != want:
            sys.exit(f"{store.url}: hashes of {o.key} differ from hashlib's")
        store.delete(f"check/{o.key}")


# --- local ---------------------------------------------------------------------------------


def local_section(work: Path, objs: Objects, blocks: Sequence[Objects], large: bool) -> None:
    size = f"{len(objs):,} x {len(objs[0].data) / MB:,.0f} MB" if large else f"{len(objs):,}"
    print(f"-- local, {'large' if large else 'small'} objects: {size} "
          f"({total_bytes(objs) / MB:,.1f} MB) in {len(blocks)} blocks")
    hash_section(objs)
    d = work / ("large" if large else "small")
    store = LocalBlobStore(d / "store", fsync=False)
    store_fs = LocalBlobStore(d / "store_fs", fsync=True)
    plain, plain_fsd = "plain: makedirs + open().write", "plain+fsync: ... + fsync file, dir"
    puts = [
        Variant(plain, plain_put(d / "plain")),
        Variant("store fsync=False: put(key, bytes)", store_put(store), plain),
        Variant(plain_fsd, plain_put(d / "plain_fsd", fsync_file=True, fsync_dir=True)),
        Variant("store fsync=True: put(key, bytes)", store_put(store_fs), plain_fsd),
    ]
    if large:
        copy = "copyfile: makedirs + shutil.copyfile"
        copy_fs = "copyfile+fsync: ... + fsync file, dir"
        puts += [
            Variant(copy, plain_copy(d / "copy"), prepare=read_sources),
            Variant("store fsync=False: put(key, open(src))",
                    store_put_files(LocalBlobStore(d / "store_f", fsync=False)), copy,
                    prepare=read_sources),
            Variant(copy_fs, plain_copy(d / "copy_fs", fsync=True), prepare=read_sources),
            Variant("store fsync=True: put(key, open(src))",
                    store_put_files(LocalBlobStore(d / "store_f_fs", fsync=True)), copy_fs,
                    prepare=read_sources),
        ]
    else:
        puts.append(Variant("plain+fsync file only", plain_put(d / "plain_fs", fsync_file=True)))
    run_section("put", puts, blocks)
    # Gets read the files the fsync=False store wrote, each turn after an untimed read.
    warm = plain_get(d / "store")
    run_section("get (the fsync=False store's files, warm)", [
        Variant("plain: open().read()", plain_get(d / "store"), prepare=warm),
        Variant("store: get(key)", store_get(store), "plain: open().read()", prepare=warm),
    ], blocks)
    check_store(store, objs)
    check_store(store_fs, objs)
    shutil.rmtree(d)


# --- S3 ------------------------------------------------------------------------------------


def raw_put(client: Any, bucket: str, prefix: str = "") -> Callable[[Objects], int]:
    def run(objs: Objects) -> int:
        for o in objs:
            client.put_object(Bucket=bucket, Key=prefix + o.key, Body=o.data)
        return total_bytes(objs)

    return run


def raw_upload_files(client: Any, bucket: str, prefix: str = "") -> Callable[[Objects], int]:
    def run(objs: Objects) -> int:
        for o in objs:
            assert o.src is not None
            with open(o.src, "rb") as f:
                client.upload_fileobj(f, bucket, prefix + o.key)
        return total_bytes(objs)

    return run


def raw_get(client: Any, bucket: str, prefix: str = "") -> Callable[[Objects], int]:
    def run(objs: Objects) -> int:
        got = 0
        for o in objs:
            got += len(client.get_object(Bucket=bucket, Key=prefix + o.key)["Body"].read())
        return got

    return run


def raw_download(client: Any, bucket: str, prefix: str = "") -> Callable[[Objects], int]:
    def run(objs: Objects) -> int:
        got = 0
        for o in objs:
            buf = io.BytesIO()
            client.download_fileobj(bucket, prefix + o.key, buf)
            got += buf.getbuffer().nbytes
        return got

    return run


@contextmanager
def s3_server() -> Iterator[Any]:
    from sandcrawler_testkit.s3_server import S3Server, swift_available

    if not swift_available():
        skip("Swift servers and memcached not installed (see sandcrawler_testkit.s3_server)")
    with S3Server() as server:
        yield server


def s3_section(small: Objects, large: Objects) -> None:
    from sandcrawler.storage.s3 import S3BlobStore

    with s3_server() as server:
        print(f"-- S3: Swift s3api at {server.endpoint_url}, started in "
              f"{server.startup_seconds:.1f} s; its 4 servers and memcached share this "
              f"machine's {os.cpu_count()} CPUs with the client")

        def store_in(bucket: str, **kw: Any) -> S3BlobStore:
            server.create_bucket(bucket)
            return S3BlobStore(bucket, endpoint_url=server.endpoint_url, region=server.region,
                               access_key_id=server.access_key,
                               secret_access_key=server.secret_key, **kw)

        store = store_in("bench-store")
        server.create_bucket("bench-raw")
        raw = server.client()
        print(f"   store: bytes in one PutObject; streams in parts of "
              f"{store.part_size / 2**20:g} MiB, {store.upload_concurrency} in flight; "
              "upload_fileobj/download_fileobj: boto3's defaults (8 MiB parts, 10 threads)")
        # Warm up: connections, credentials, first-request imports of both clients.
        warm = [Obj("warmup/x", b"x" * 1000)]
        for run in (store_put(store), store_get(store), raw_put(raw, "bench-raw"),
                    raw_get(raw, "bench-raw")):
            run(warm)
        if small:
            blocks = blocks_of(small, SMALL_BLOCKS)
            print(f"-- S3, small objects: {len(small):,} ({total_bytes(small) / MB:,.1f} MB) "
                  f"in {len(blocks)} blocks")
            run_section("put", [
                Variant("raw: client.put_object", raw_put(raw, "bench-raw")),
                Variant("store: put(key, bytes)", store_put(store), "raw: client.put_object"),
            ], blocks, server=True)
            raw_get(raw, "bench-store")(small)  # one untimed pass
            run_section("get (the objects the store wrote)", [
                Variant("raw: get_object()['Body'].read()", raw_get(raw, "bench-store")),
                Variant("store: get(key)", store_get(store), "raw: get_object()['Body'].read()"),
            ], blocks, server=True)
            check_store(store, small)
        if large:
            blocks = blocks_of(large, -(-len(large) // LARGE_PER_BLOCK))
            print(f"-- S3, large objects: {len(large):,} x {len(large[0].data) / MB:,.0f} MB "
                  f"({total_bytes(large) / MB:,.0f} MB) in {len(blocks)} blocks")
            put1, up = "raw: client.put_object (one PUT)", "raw: upload_fileobj(open(src))"
            run_section("put", [
                Variant(put1, raw_put(raw, "bench-raw")),
                Variant("store: put(key, bytes) (one PutObject)", store_put(store), put1),
                Variant(up, raw_upload_files(raw, "bench-raw", "up/"), prepare=read_sources),
                Variant("store: put(key, open(src)) (multipart)", store_put_files(store, "file/"),
                        up, prepare=read_sources),
            ], blocks, server=True)
            get = "raw: get_object()['Body'].read()"
            warm = raw_get(raw, "bench-store")
            run_section("get (the objects store.put(key, bytes) wrote, warm)", [
                Variant(get, raw_get(raw, "bench-store"), prepare=warm),
                Variant("store: get(key)", store_get(store), get, prepare=warm),
                Variant("raw: download_fileobj (ranged GETs, 10 threads)",
                        raw_download(raw, "bench-store"), get, prepare=warm),
            ], blocks, server=True)
            check_store(store, large)
        store.close()


# --- main ----------------------------------------------------------------------------------


@contextmanager
def bench_dir(parent: Path | None) -> Iterator[Path]:
    """A fresh directory (under ``parent`` or the system temp dir), removed at the end."""
    if parent is not None:
        parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="sandcrawler-bench-blobs-", dir=parent))
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def filesystem_of(path: Path) -> str:
    best = ("?", "?", "", "")
    with open("/proc/mounts") as f:
        for line in f:
            dev, mnt, fstype, options = line.split()[:4]
            if str(path).startswith(mnt) and len(mnt) >= len(best[2]):
                best = (dev, fstype, mnt, options)
    return f"{best[1]} on {best[0]}, {best[3]}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", type=int, default=10_000, metavar="N",
                        help="number of 2-20 kB objects (default: 10000)")
    parser.add_argument("--large", type=int, default=20, metavar="N",
                        help="number of large objects (default: 20)")
    parser.add_argument("--large-mb", type=int, default=50, metavar="MB",
                        help="size of a large object, 10^6 bytes (default: 50)")
    parser.add_argument("--only", choices=("local", "s3"), default=None,
                        help="only the local store or only the S3 store (default: both)")
    parser.add_argument("--dir", type=Path, default=None, metavar="DIR",
                        help="work in a fresh subdirectory of DIR, removed at the end "
                        "(default: one in the system temp dir)")
    args = parser.parse_args()

    rng = random.Random(SEED)
    small = make_objects(rng, args.small, lambda: rng.randint(SMALL_MIN, SMALL_MAX),
                         ".grobid.tei.xml.gz")
    large = make_objects(rng, args.large, lambda: args.large_mb * MB, ".pdf")
    print_header(f"blob stores: {args.small:,} small objects, {args.large:,} x "
                 f"{args.large_mb} MB; {args.only or 'local and s3'}")
    t_start = time.perf_counter()
    with bench_dir(args.dir) as work:
        print(f"   work directory {work} ({filesystem_of(work)}); seed {SEED}")
        if large:
            (work / "src").mkdir()
            for i, o in enumerate(large):
                src = work / "src" / f"{i}.bin"
                src.write_bytes(o.data)
                large[i] = Obj(o.key, o.data, src)
        if args.only in (None, "local"):
            if small:
                local_section(work, small, blocks_of(small, SMALL_BLOCKS), large=False)
            if large:
                blocks = blocks_of(large, -(-len(large) // LARGE_PER_BLOCK))
                local_section(work, large, blocks, large=True)
        if args.only in (None, "s3"):
            s3_section(small, large)
        print(f"-- total run time {time.perf_counter() - t_start:,.0f} s (with clean-up)")


if __name__ == "__main__":
    main()
