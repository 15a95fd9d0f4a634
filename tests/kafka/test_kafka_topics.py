"""Topics as code: the registry (``kafka_topics``), the workers that name its
entries, its table in docs/operations.md, and ``sandcrawler kafka topics``
against a real broker (shared by the tests, each in an env of its own: the
``kafka`` fixture)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import orjson
import pytest
from confluent_kafka import TopicCollection
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic, ResourceType

from sandcrawler.app.workers import WORKERS, WorkerSpec
from sandcrawler.core.errors import SchemaError
from sandcrawler.kafka.admin import TopicState, compare
from sandcrawler.kafka.topics import (
    PDF_FILES,
    PDF_RESULTS,
    TOPICS,
    TopicSpec,
    delete_after,
)
from sandcrawler_testkit.kafka_clients import create_topics
from sandcrawler_testkit.postgres import free_port
from tests.helpers.cli import invoke, run_cli
from tests.helpers.kafka import KafkaSpace
from tests.helpers.paths import REPO

OPERATIONS = REPO / "docs" / "operations.md"
UPSTREAM = {name for name, spec in TOPICS.items() if spec.upstream}


# --- the registry, the workers and the docs (no broker) ------------------------------------


def test_every_worker_topic_is_a_registry_entry() -> None:
    for spec in WORKERS.values():
        for topic in (*spec.topics_in, *spec.topics_out, *spec.topics_original):
            assert TOPICS[topic.name] is topic, f"{spec.name}: {topic.name}"


def test_every_registry_topic_is_used_by_a_worker() -> None:
    used = {t.name for s in WORKERS.values()
            for t in (*s.topics_in, *s.topics_out, *s.topics_original)}
    assert used == set(TOPICS)


def test_registry_names_are_unique_per_environment() -> None:
    assert len({spec.full("prod") for spec in TOPICS.values()}) == len(TOPICS)
    assert all(name == spec.name for name, spec in TOPICS.items())


def test_a_worker_cannot_name_an_unknown_topic() -> None:
    ad_hoc = replace(PDF_FILES, name="pdf-files-2")
    with pytest.raises(SchemaError, match=re.escape("sandcrawler-<env>.pdf-files-2")):
        WorkerSpec("x", "pdf:process_pdf", "a worker", topics_in=(ad_hoc,))
    other_partitions = replace(PDF_FILES, partitions=3)
    with pytest.raises(SchemaError, match=re.escape("not in kafka_topics.TOPICS")):
        WorkerSpec("x", "pdf:process_pdf", "a worker", topics_out=(other_partitions,))


def test_the_fileset_seed_topic_is_as_the_seed_says() -> None:
    # "sandcrawler-ENV.ingest-fileset-results 6x, no retention limit"
    spec = TOPICS["ingest-fileset-results"]
    assert (spec.full("ENV"), spec.partitions) == ("sandcrawler-ENV.ingest-fileset-results", 6)
    assert spec.config["retention.ms"] == "-1" and spec.retention() == "indefinite"


@pytest.mark.parametrize(("config", "upstream", "text"), [
    (delete_after(-1), False, "indefinite"),
    (delete_after(30 * 86_400_000), False, "30 days"),
    (delete_after(7_889_400_000), False, "3 months"),
    (delete_after(90_000), False, "90000 ms"),
    ({"cleanup.policy": "compact"}, False, "compacted"),
    ({}, False, "indefinite"),
    ({}, True, "fatcat's"),
])
def test_retention_text(config: dict[str, str], upstream: bool, text: str) -> None:
    spec = TopicSpec("t", 1, config, key="", carries="", basis="", prefix="fatcat",
                     upstream=upstream)
    assert spec.retention() == text


def _marked_table(mark: str) -> list[list[str]]:
    """The rows (cells stripped) of the table after ``<!-- mark... -->``."""
    lines = OPERATIONS.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"<!-- {mark}:")) + 1
    assert set(lines[start + 1]) <= set("|-: "), "no header separator"
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def _workers_named(cell: str) -> set[str]:
    return set(re.findall(r"`worker ([a-z-]+)`", cell))


def test_docs_table_is_the_registry() -> None:
    rows = {row[0].strip("`"): row for row in _marked_table("topics")}
    assert set(rows) == {spec.full("<env>") for spec in TOPICS.values()}
    for spec in TOPICS.values():
        _topic, written, read, partitions, retention, key, basis = rows[spec.full("<env>")]
        assert (int(partitions), retention, key, basis) == (
            spec.partitions, spec.retention(), spec.key or "none", spec.basis), spec.name
        assert _workers_named(read) == {
            w.name for w in WORKERS.values() if spec in w.topics_in}, spec.name
        assert _workers_named(written) == {
            w.name for w in WORKERS.values() if spec in (*w.topics_out, *w.topics_original)
        }, spec.name


def test_docs_explain_every_state() -> None:
    assert [row[0].strip("`") for row in _marked_table("topic-states")] == list(TopicState)


@pytest.mark.parametrize(("spec", "partitions", "config", "state", "problems"), [
    (PDF_RESULTS, None, {}, "missing", ["`--create` creates it"]),
    (TOPICS["api-crossref"], None, {}, "missing",
     ["fatcat's topic: `--create --include-upstream` creates it (dev and test clusters)"]),
    (PDF_RESULTS, 12, dict(PDF_RESULTS.config), "ok", []),
    # upstream: its partitions and settings are its owner's
    (TOPICS["api-crossref"], 3, {"retention.ms": "1"}, "ok", []),
    (PDF_RESULTS, 4, dict(PDF_RESULTS.config), "partitions-mismatch",
     ["4 partitions, the registry says 12"]),
    (PDF_RESULTS, 12, {"cleanup.policy": "compact", "retention.ms": "2592000000"},
     "config-mismatch", ["cleanup.policy=compact, the registry says delete"]),
    (PDF_RESULTS, 16, {"cleanup.policy": "delete"}, "partitions-mismatch",
     ["16 partitions, the registry says 12",
      "retention.ms=(unset), the registry says 2592000000"]),
])
def test_compare(spec: TopicSpec, partitions: int | None, config: dict[str, str], state: str,
                 problems: list[str]) -> None:
    row = compare(spec, spec.full("dev"), partitions, config)
    assert (row.state, list(row.problems)) == (state, problems)


def test_options_that_need_create_are_refused_without_it() -> None:
    for extra in (["--include-upstream"], ["--replication-factor", "1"]):
        result = invoke(["kafka", "topics", *extra])
        assert result.exit_code == 2 and "apply only with --create" in result.stderr


def test_no_brokers_configured_is_a_configuration_error() -> None:
    result = invoke(["kafka", "topics"])
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: no Kafka brokers configured")


def test_bad_client_settings_are_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDCRAWLER_KAFKA_BROKERS", "127.0.0.1:9")
    monkeypatch.setenv("SANDCRAWLER_KAFKA_OPTIONS", '{"security.protocol": "bogus"}')
    result = invoke(["kafka", "topics"])
    assert result.exit_code == 1
    assert result.stderr == ("Error: invalid Kafka client settings (kafka.options, "
                             'kafka.brokers): Invalid value "bogus" for configuration property '
                             '"security.protocol"\n')


def test_unreachable_broker_is_one_line_and_exit_3() -> None:
    done = run_cli(["kafka", "topics", "--create", "--timeout", "1"],
                   env={"SANDCRAWLER_KAFKA_BROKERS": f"127.0.0.1:{free_port()}"}, timeout=60)
    stderr = done.stderr.decode()
    assert done.returncode == 3, stderr
    assert stderr.count("\n") == 1 and stderr.startswith("Error: Kafka at 127.0.0.1:"), stderr
    assert "listing topics" in stderr and "Connection refused" in stderr
    assert done.stdout == b""


# --- against a real broker ---------------------------------------------------------------


def topics_json(*args: str) -> tuple[int, dict[str, dict[str, Any]], str]:
    """``kafka topics --json ARGS``: exit status, topic -> its row, stderr."""
    result = invoke(["kafka", "topics", "--json", *args])
    rows = [orjson.loads(line) for line in result.stdout.splitlines()]
    return result.exit_code, {row["topic"]: row for row in rows}, result.stderr


def describe(kafka: KafkaSpace, names: list[str]
             ) -> dict[str, tuple[str, int, int, dict[str, str]]]:
    """topic (of the env of ``kafka``) -> (topic id, partitions, replicas, the registry's
    settings as the broker has them)."""
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap, "log_level": 0})
    found = {}
    topics = admin.describe_topics(TopicCollection(names), request_timeout=15)
    configs = admin.describe_configs([ConfigResource(ResourceType.TOPIC, n) for n in names],
                                     request_timeout=15)
    settings = {res.name: f.result(15) for res, f in configs.items()}
    for name, future in topics.items():
        d = future.result(15)
        wanted = next(s for s in TOPICS.values() if s.full(kafka.env) == name).config
        found[name] = (str(d.topic_id), len(d.partitions), len(d.partitions[0].replicas),
                       {k: settings[name][k].value for k in wanted})
    return found


@pytest.mark.slow  # waits out timeouts, retries or stalls
def test_create_makes_every_topic_and_a_second_run_changes_nothing(
        kafka: KafkaSpace, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in kafka.settings_env.items():
        monkeypatch.setenv(name, value)
    names = {spec.full(kafka.env): spec for spec in TOPICS.values()}

    status, rows, stderr = topics_json()
    assert status == 1 and "Run with --create" in stderr
    assert set(rows) == set(names)
    assert {row["state"] for row in rows.values()} == {"missing"}

    # ours only: fatcat's stays missing, and says how to create it
    status, rows, _ = topics_json("--create")
    assert status == 1
    assert {n: r["state"] for n, r in rows.items()} == {
        n: "missing" if s.upstream else "created" for n, s in names.items()}

    status, rows, stderr = topics_json("--create", "--include-upstream")
    assert status == 0, stderr
    assert {n: r["state"] for n, r in rows.items()} == {
        n: "created" if s.upstream else "ok" for n, s in names.items()}
    first = describe(kafka, list(names))
    for name, spec in names.items():
        _id, partitions, replicas, config = first[name]
        assert (partitions, replicas, config) == (spec.partitions, 1, dict(spec.config)), name

    result = invoke(["kafka", "topics", "--create", "--include-upstream"])
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["state", "topic", "have/want"]
    assert sorted(line.split()[1] for line in lines[1:]) == sorted(names)
    assert all(line.split()[0] == "ok" for line in lines[1:]), result.stdout
    n = len(names)  # every topic of the registry
    assert f"{n} topics on" in result.stderr and f": {n} ok" in result.stderr
    assert describe(kafka, list(names)) == first  # same topics: ids, partitions

    # another deployment's names on the same cluster: none of them exists yet
    qa = f"{kafka.env}-qa"  # of this test's own too: the broker is shared
    status, rows, _ = topics_json("--env", qa)
    assert status == 1
    assert set(rows) == {spec.full(qa) for spec in TOPICS.values()}
    assert {row["state"] for row in rows.values()} == {"missing"}
    monkeypatch.setenv("SANDCRAWLER_ENV", qa)
    assert set(topics_json()[1]) == {spec.full(qa) for spec in TOPICS.values()}


@pytest.mark.slow  # waits out timeouts, retries or stalls
def test_differences_are_reported_and_left_alone(
        kafka: KafkaSpace, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in kafka.settings_env.items():
        monkeypatch.setenv(name, value)
    wrong_partitions = PDF_RESULTS.full(kafka.env)
    wrong_retention = PDF_FILES.full(kafka.env)
    upstream = TOPICS["api-crossref"].full(kafka.env)
    create_topics(kafka.bootstrap, {wrong_partitions: 4, upstream: 2})
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap, "log_level": 0})
    admin.create_topics([NewTopic(wrong_retention, num_partitions=PDF_FILES.partitions,
                                  replication_factor=1,
                                  config={"retention.ms": "3600000"})])[wrong_retention].result(15)

    status, rows, stderr = topics_json("--create")
    assert status == 1, stderr
    assert rows[wrong_partitions]["state"] == "partitions-mismatch"
    assert rows[wrong_partitions]["partitions"] == 4
    assert rows[wrong_partitions]["expected_partitions"] == 12
    assert "4 partitions, the registry says 12" in rows[wrong_partitions]["problems"]
    assert rows[wrong_retention]["state"] == "config-mismatch"
    assert rows[wrong_retention]["problems"] == [
        "retention.ms=3600000, the registry says 7889400000"]
    assert rows[upstream]["state"] == "ok" and rows[upstream]["partitions"] == 2
    created = {n for n, r in rows.items() if r["state"] == "created"}
    assert created == {s.full(kafka.env) for s in TOPICS.values()} - {
        wrong_partitions, wrong_retention, upstream}
    assert f"{len(created)} created" in stderr and "1 partitions-mismatch" in stderr

    # left as they were
    meta = admin.list_topics(timeout=15).topics
    assert len(meta[wrong_partitions].partitions) == 4
    assert len(meta[upstream].partitions) == 2
    res = ConfigResource(ResourceType.TOPIC, wrong_retention)
    assert admin.describe_configs([res])[res].result(15)["retention.ms"].value == "3600000"

    # and the table says it in one line each
    table = invoke(["kafka", "topics"])
    assert table.exit_code == 1
    line = next(x for x in table.stdout.splitlines() if wrong_partitions in x)
    assert line.split()[:3] == ["partitions-mismatch", wrong_partitions, "4/12"]
