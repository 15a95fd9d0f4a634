"""The item store under two writers of one item (issue 22, item 5).

A marker (``<item>_meta.json``) is only ever present beside every file it lists:
writers of one item take turns (a lock per item among every process that uses
the database: an advisory lock on PostgreSQL, a file lock on SQLite), a failed
attempt removes only what it created itself, and an ingest that arrives while
another writes the item waits for it. Each test runs on both databases (the lock
differs) with real writers: ingesters on their own services, fetching from
loopback platform servers, one of them held mid-write by a stalled download.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import orjson
import pytest
from sqlalchemy import Engine, text

from sandcrawler.app.settings import load_settings
from sandcrawler.core.errors import DatabaseUnavailable
from sandcrawler.db import migrate
from sandcrawler.db.engine import make_engine
from sandcrawler.fileset.ingest import FilesetIngester, IngestOutcome
from sandcrawler.records.fileset import IngestRequest
from sandcrawler_testkit.platforms import FakeFile, PlatformServer
from tests.helpers.cli import run_cli
from tests.helpers.fileset import open_ingester

# SQL: on SQLite and PostgreSQL
pytestmark = pytest.mark.both_backends

ITEM = "ia-two-writers"
URL = f"https://archive.org/details/{ITEM}"
DATA = {"a.txt": b"one\n" * 1000, "b.txt": b"two\n" * 1000}
#: b.txt, held: 10 bytes, then nothing until the server stops
HELD = {"stall_at": 10, "stall_seconds": 120}
#: ... and then the connection is dropped after 20 bytes: the download fails
DROPPED = {**HELD, "truncate_at": 20}
#: long enough for anything a test waits for (it ended rather than hung)
PATIENCE = 60.0


def files(**fault: Any) -> list[FakeFile]:
    """a.txt, then b.txt (direct, misbehaving as ``fault`` says)."""
    return [FakeFile("a.txt", DATA["a.txt"]),
            FakeFile("b.txt", DATA["b.txt"], redirects=0, **fault)]


@pytest.fixture
def ingesters() -> Iterator[Callable[..., FilesetIngester]]:
    made: list[FilesetIngester] = []

    def make(srv: PlatformServer, timeout: float = 10) -> FilesetIngester:
        ingester = open_ingester(load_settings(http_routes=srv.routes(), fetch_timeout=timeout))
        made.append(ingester)
        return ingester

    yield make
    for ingester in made:
        ingester.close()


def ingest(ingester: FilesetIngester, *, force: bool = False) -> IngestOutcome:
    return ingester.ingest(IngestRequest(ingest_type="dataset", base_url=URL,
                                         force_recrawl=force))


def downloads(srv: PlatformServer, name: str | None = None) -> list[str]:
    return [p for _, _, p in srv.requests
            if p.startswith(f"/1/items/{ITEM}/") and (name is None or p.endswith("/" + name))]


def wait_until(done: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + PATIENCE
    while not done():
        assert time.monotonic() < deadline, f"still waiting for {what}"
        time.sleep(0.02)


class LockWaits:
    """Whether a thread of this test waits for a lock, as the lock's owner sees
    it: the kernel lists a blocked ``flock`` as ``-> FLOCK`` in /proc/locks
    (SQLite); PostgreSQL lists an advisory lock not granted in ``pg_locks``."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine if engine.dialect.name == "postgresql" else None

    def __call__(self) -> bool:
        if self.engine is None:
            me = str(os.getpid())
            return any(line.split()[1:3] == ["->", "FLOCK"] and me in line.split()
                       for line in Path("/proc/locks").read_text().splitlines())
        with self.engine.connect() as conn:
            return bool(conn.execute(text(
                "SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database "
                "WHERE l.locktype = 'advisory' AND NOT l.granted "
                "AND d.datname = current_database()")).scalar())



@pytest.fixture
def lock_waits(engine: Engine) -> LockWaits:
    """On the test's database: ``engine`` (both backends) sets SANDCRAWLER_DATABASE_URL,
    at the latest schema, for every ingester and command of the test; they share
    the data dir's one local store."""
    return LockWaits(engine)


def assert_complete(ingester: FilesetIngester) -> None:
    """The marker is there, and beside it every file it lists, with its bytes."""
    items = ingester.ctx.items
    meta = items.read_meta(ITEM)
    assert meta is not None, "no marker"
    listed = [e["path"] for e in meta["result"]["manifest"]]
    assert sorted(listed) == sorted(DATA)
    missing = [p for p in listed if not items.exists(ITEM, p)]
    assert not missing, f"the marker lists {missing}, which the item does not hold"
    for entry in meta["result"]["manifest"]:
        stored = items.store.get(f"items/{ITEM}/{entry['path']}")
        assert hashlib.sha1(stored).hexdigest() == entry["sha1"] == \
            hashlib.sha1(DATA[entry["path"]]).hexdigest()
    assert sorted(items.files(ITEM)) == sorted(DATA)


def start_held_writer(pool: ThreadPoolExecutor, held: PlatformServer,
                      writer: FilesetIngester, *, force: bool = False,
                      ) -> Future[IngestOutcome]:
    """The first writer, started and held inside the item: a.txt written, b.txt
    stalled until ``held`` stops."""
    first = pool.submit(ingest, writer, force=force)
    wait_until(lambda: bool(downloads(held, "b.txt")) or first.done(),
               "the first writer to reach b.txt")
    assert not first.done(), first.result().result
    return first


@pytest.mark.parametrize("first_writer", ["fails", "succeeds"])
def test_a_second_writer_waits_for_the_first(
        first_writer: str, lock_waits: LockWaits,
        ingesters: Callable[..., FilesetIngester]) -> None:
    """Two ingests of one item at once. The first is held mid-write (a.txt
    written, b.txt stalled), then its download is dropped (it fails) or
    completes. The second waits for it rather than writing beside it; after both,
    the marker is there with every file it lists, and a third ingest finds the
    item complete."""
    fails = first_writer == "fails"
    with ThreadPoolExecutor(2) as pool, PlatformServer() as good, PlatformServer() as held:
        good.add_archiveorg(ITEM, files())
        held.add_archiveorg(ITEM, files(**(DROPPED if fails else HELD)))
        first_ingester, second_ingester = ingesters(held, timeout=PATIENCE), ingesters(good)
        first = start_held_writer(pool, held, first_ingester)
        second = pool.submit(ingest, second_ingester)
        wait_until(lambda: second.done() or lock_waits(), "the second ingest to end or wait")
        second_ended_meanwhile = second.done()
        held.stop()  # the stalled download goes on: cut short, or to its end
        one, two = (first.result(PATIENCE).result.to_json(),
                    second.result(PATIENCE).result.to_json())
        assert one["status"] == ("error-platform-download" if fails else "success"), one
        if fails:
            assert "b.txt" in one["error_message"]
            assert two["status"] == "success", two
        else:
            # it waited for the first writer and found the item complete
            assert two["status"] == "success-existing", two
            assert not downloads(good)
        assert_complete(second_ingester)
        good.clear_requests()
        third = ingest(second_ingester).result.to_json()
        assert third["status"] == "success-existing", third
        assert not downloads(good)
        assert not second_ended_meanwhile, "the second ingest did not wait for the first writer"


def test_a_forced_rearchive_withdraws_the_marker_until_it_is_done(
        lock_waits: LockWaits,
        ingesters: Callable[..., FilesetIngester]) -> None:
    """A complete item, archived again (force_recrawl) by a writer held mid-write:
    an ingest arriving meanwhile does not report the item complete while it is
    written over; it waits, then finds it complete."""
    with ThreadPoolExecutor(2) as pool, PlatformServer() as good, PlatformServer() as held:
        good.add_archiveorg(ITEM, files())
        held.add_archiveorg(ITEM, files(**HELD))
        reader = ingesters(good)
        assert ingest(reader).status == "success"
        rewriter = start_held_writer(pool, held, ingesters(held, timeout=PATIENCE), force=True)
        assert reader.ctx.items.read_meta(ITEM) is None  # withdrawn while files are written
        good.clear_requests()
        second = pool.submit(ingest, reader)
        wait_until(lambda: second.done() or lock_waits(), "the second ingest to end or wait")
        second_ended_meanwhile = second.done()
        held.stop()
        assert rewriter.result(PATIENCE).status == "success"
        assert second.result(PATIENCE).status == "success-existing"
        assert not downloads(good)
        assert_complete(reader)
        assert not second_ended_meanwhile


@pytest.mark.usefixtures("engine")
@pytest.mark.slow  # seconds: real processes, killed or side by side
def test_a_writer_killed_mid_write_leaves_no_marker_and_no_lock(
        ingesters: Callable[..., FilesetIngester]) -> None:
    """``sandcrawler ingest fileset --force-recrawl`` of a complete item, SIGKILLed
    while it writes: the marker is not there (nothing claims the item complete),
    and the next ingest is not kept waiting by the dead writer's lock: it
    archives the item again."""
    with PlatformServer() as good, PlatformServer() as held:
        good.add_archiveorg(ITEM, files())
        held.add_archiveorg(ITEM, files(**HELD))
        checker = ingesters(good)
        assert ingest(checker).status == "success"
        proc = subprocess.Popen(
            [sys.executable, "-m", "sandcrawler", "ingest", "fileset", "--force-recrawl", URL],
            env={**os.environ, "SANDCRAWLER_HTTP_ROUTES": json.dumps(held.routes()),
                 "SANDCRAWLER_HTTP_TIMEOUT": str(PATIENCE)},
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            wait_until(lambda: bool(downloads(held, "b.txt")) or proc.poll() is not None,
                       "the command to reach b.txt")
            assert proc.poll() is None, proc.communicate()[1].decode()
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.communicate(timeout=PATIENCE)
        assert proc.returncode == -signal.SIGKILL
        assert checker.ctx.items.read_meta(ITEM) is None
        good.clear_requests()
        done = run_cli(["ingest", "fileset", URL],
                       env={"SANDCRAWLER_HTTP_ROUTES": json.dumps(good.routes())},
                       timeout=PATIENCE)
        assert done.returncode == 0, done.stderr.decode()
        assert orjson.loads(done.stdout)["status"] == "success"
        assert sorted(downloads(good)) == [f"/1/items/{ITEM}/{n}" for n in sorted(DATA)]
        assert_complete(checker)


def test_a_writer_that_lost_its_lock_writes_no_marker(
        pg_url: str, monkeypatch: pytest.MonkeyPatch,
        ingesters: Callable[..., FilesetIngester]) -> None:
    """PostgreSQL: the connection holding a writer's lock is ended mid-write
    (a server restart, a failover, an idle-in-transaction timeout). Another
    writer may hold the item now, so the first does not mark it complete: the
    ingest fails as the database being unavailable, and no marker is there."""
    monkeypatch.setenv("SANDCRAWLER_DATABASE_URL", pg_url)
    admin = make_engine(pg_url)
    migrate.upgrade(admin)
    with ThreadPoolExecutor(1) as pool, PlatformServer() as held:
        held.add_archiveorg(ITEM, files(**HELD))
        writer = ingesters(held, timeout=PATIENCE)
        first = start_held_writer(pool, held, writer)
        try:
            with admin.connect() as conn:
                ended = conn.execute(text(
                    "SELECT pg_terminate_backend(l.pid) FROM pg_locks l "
                    "JOIN pg_database d ON d.oid = l.database "
                    "WHERE l.locktype = 'advisory' AND l.granted "
                    "AND d.datname = current_database()")).scalars().all()
        finally:
            admin.dispose()
            held.stop()
        assert ended == [True]
        with pytest.raises(DatabaseUnavailable, match="lock"):
            first.result(PATIENCE)
        assert writer.ctx.items.read_meta(ITEM) is None
