"""``sandcrawler worker persist-crossref`` on a real Kafka broker (issue 17).

Everything runs here: a throwaway single-node Apache Kafka broker (KRaft, the test
kit's) and a durable (fsync on) throwaway PostgreSQL cluster. Input: N synthetic
works made from the two real Crossref API works (as ``persist_crossref.py`` makes
them), produced beforehand to a topic of ``--partitions`` partitions keyed by the
lower-case DOI, as the upstream ``fatcat-<env>.api-crossref`` topic is, and written
to a JSON lines file with the same bytes.

throughput  in each round, into a fresh database each time (``sandcrawler db init``
            first, not timed), with the same --batch-size:
              file    ``sandcrawler persist crossref FILE``: wall time of the command
              kafka   1, 2, 3 ... ``worker persist-crossref`` processes in a fresh
                      consumer group, from their start until the group's committed
                      offsets sum to N (polled every 0.2 s): start-up and group join
                      included; "steady" is the rate from the first commit seen to
                      the last. The workers are then stopped (SIGTERM) and the
                      crossref table must hold exactly N rows.
            CPU seconds beside each: the sandcrawler processes, all PostgreSQL
            processes, the broker's JVM; and CPUs busy on average: with those
            ("ours") and on the whole machine (other users' processes included:
            on a shared machine, what was left for this run).

failover    --failover-workers workers on a topic of --partitions partitions, fed at
            --rate records/s by a producer thread, with a small batch so that every
            partition commits several times a second. The oldest member is
            SIGKILLed at a random (seeded) moment within the second heartbeat
            interval after the group settled (it never leaves the group: only its
            session timeout tells the coordinator); measured from the kill: when the
            group is seen rebalancing, when it is stable again without the victim,
            and when each partition the victim owned has its committed offset
            advance again (described through the admin API; the members carry
            client.id <group>-w<i>). "others paused" is the longest time one of the
            survivors' partitions went without a commit, from its last commit
            before the kill until all of the victim's partitions were committed
            again; "(steady)" is the same measure over the 3-6 s before the kill,
            the cadence to read it against. Then a replacement is started and the group left to
            settle before the next kill. At the end the producer stops and the
            crossref table must hold every record produced (nothing lost).

Run:  python bench/perf/kafka_workers.py [--records 100000] [--workers 1,2,3] [--partitions 6]
          [--rounds 1] [--measure throughput failover] [--kills 3]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
import orjson
from _common import (
    SANDCRAWLER,
    Timing,
    arg_parser,
    bench_env,
    busy_cores,
    count_rows,
    cpu_ticks,
    drop_database,
    durable_cluster,
    init_database,
    load_works,
    median,
    print_header,
    process_cpu,
    rate,
    require_fixtures,
    sandcrawler,
    server_cpu,
    settle,
    skip,
    synthetic_work,
    with_server_cpu,
    work_dir,
)

from sandcrawler.app.workers import WORKERS
from sandcrawler.config import KafkaSettings
from sandcrawler.kafka.client import consumer_config
from sandcrawler_testkit.kafka_broker import KafkaBroker, KafkaUnavailable, find_kafka_libs
from sandcrawler_testkit.kafka_clients import create_topics
from sandcrawler_testkit.postgres import PostgresCluster

WORKER = "persist-crossref"
ENV = "bench"
#: how often the group's committed offsets are read while waiting for N
POLL = 0.2
#: how often they (and the group's members) are read around a kill: the resolution
FAILOVER_POLL = 0.1
#: a worker that exits on SIGTERM within this gets no SIGKILL
STOP_GRACE = 30.0


# --- records ------------------------------------------------------------------------------


def keyed_works(envelopes: Sequence[dict[str, Any]], start: int, n: int
                ) -> Iterator[tuple[bytes, bytes]]:
    """(key, value) of works ``start`` .. ``start + n - 1``: the lower-case DOI, as the
    upstream topic keys them, and the envelope exactly as the file gets it."""
    for i in range(start, start + n):
        work = synthetic_work(envelopes[i % len(envelopes)], i)
        yield str(work["message"]["DOI"]).lower().encode(), orjson.dumps(work)


def producer(bootstrap: str, compression: str) -> Any:
    from confluent_kafka import Producer

    # log_level 3: a broker that has just started answers "coordinator load in
    # progress" at first, a warning librdkafka retries by itself
    return Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True,
                     "linger.ms": 50, "compression.type": compression, "log_level": 3})


def produce_all(bootstrap: str, topic: str, records: Iterable[tuple[bytes, bytes]],
                compression: str) -> dict[int, int]:
    """Produce every record and wait for the broker to have them all; the count per
    partition."""
    p = producer(bootstrap, compression)
    counts: dict[int, int] = {}
    errors: list[str] = []

    def on_delivery(err: Any, msg: Any) -> None:
        if err is not None:
            errors.append(str(err))
        else:
            counts[msg.partition()] = counts.get(msg.partition(), 0) + 1

    for key, value in records:
        while True:
            try:
                p.produce(topic, value, key=key, on_delivery=on_delivery)
                break
            except BufferError:  # local queue full: let deliveries drain it
                p.poll(0.1)
        p.poll(0)
    remaining = p.flush(300)
    if errors or remaining:
        sys.exit(f"producing to {topic}: {remaining} undelivered; {'; '.join(errors[:3])}")
    return counts


class SteadyProducer(threading.Thread):
    """Produces ``rate`` records/s (in 50 ms steps) until stopped, so that every
    partition keeps receiving records while workers die and join."""

    def __init__(self, bootstrap: str, topic: str, envelopes: Sequence[dict[str, Any]],
                 rate: float, start: int, compression: str) -> None:
        super().__init__(name="steady-producer", daemon=True)
        self.bootstrap, self.topic, self.envelopes = bootstrap, topic, envelopes
        self.rate, self.start_index, self.compression = rate, start, compression
        self.produced = 0
        self.errors: list[str] = []
        self.stopping = threading.Event()

    def run(self) -> None:
        p = producer(self.bootstrap, self.compression)

        def on_delivery(err: Any, _msg: Any) -> None:
            if err is not None:
                self.errors.append(str(err))

        began = time.monotonic()
        try:
            while not self.stopping.is_set():
                due = int((time.monotonic() - began) * self.rate) - self.produced
                for key, value in keyed_works(self.envelopes, self.start_index + self.produced,
                                              max(due, 0)):
                    p.produce(self.topic, value, key=key, on_delivery=on_delivery)
                    self.produced += 1
                p.poll(0.05)
        except Exception as e:  # said by stop(), in the main thread
            self.errors.append(repr(e))
        if p.flush(60):
            self.errors.append("undelivered records at the end")

    def stop(self) -> int:
        """Stop producing; the number of records the broker has."""
        self.stopping.set()
        self.join(90)
        if self.errors:
            sys.exit(f"steady producer: {'; '.join(self.errors[:3])}")
        return self.produced


# --- the group, seen from outside -----------------------------------------------------------


class GroupWatch:
    """Reads one group's committed offsets and membership without joining it."""

    def __init__(self, bootstrap: str, group: str, topic: str, partitions: int) -> None:
        from confluent_kafka import Consumer, TopicPartition
        from confluent_kafka.admin import AdminClient

        self.group = group
        # Never subscribes: committed() is an offset fetch from the coordinator,
        # not a join, so this client is no member and changes nothing it measures.
        self._consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                                   "enable.auto.commit": False, "log_level": 3})
        self._admin: Any = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
        self._tps = [TopicPartition(topic, p) for p in range(partitions)]

    def committed(self) -> dict[int, int] | None:
        """Committed offset per partition (0 before any commit); None if the
        coordinator did not answer this time (e.g. busy loading offsets)."""
        from confluent_kafka import KafkaException

        try:
            got = self._consumer.committed(self._tps, timeout=5)
        except KafkaException:
            return None
        return {tp.partition: max(tp.offset, 0) for tp in got}

    def members(self) -> tuple[str, dict[str, set[int]]] | None:
        """The group's state and each member's (client.id's) partitions; None if no answer."""
        from confluent_kafka import KafkaException

        fut = self._admin.describe_consumer_groups([self.group], request_timeout=5)[self.group]
        try:
            desc = fut.result()
        except KafkaException:
            return None
        return desc.state.name, {
            m.client_id: {tp.partition for tp in (m.assignment.topic_partitions
                                                  if m.assignment else [])}
            for m in desc.members}

    def close(self) -> None:
        self._consumer.close()
        # The admin client has no close(): dropping the last reference destroys it now,
        # before the broker stops, instead of it reporting refused connections later.
        self._admin = None


# --- worker processes ---------------------------------------------------------------------


class Workers:
    """``worker persist-crossref`` processes of one group, each in a session of its own
    (a Ctrl-C reaches only this script, which then stops them all); ``client.id``
    ``<group>-w<i>`` names each in the group's description."""

    def __init__(self, workdir: Path, env: dict[str, str], group: str, batch_size: int,
                 topic: str | None = None) -> None:
        self.workdir, self.env, self.group = workdir, env, group
        self.args = ["worker", WORKER, "--group", group, "--batch-size", str(batch_size),
                     "--no-progress", *(["--topic", topic] if topic else [])]
        self.live: dict[str, subprocess.Popen[bytes]] = {}
        self.logs: dict[str, Path] = {}
        self._started = 0

    def start(self) -> str:
        self._started += 1
        name = f"{self.group}-w{self._started}"
        env = {**self.env, "SANDCRAWLER_KAFKA_OPTIONS": json.dumps({"client.id": name})}
        self.logs[name] = self.workdir / f"{name}.log"
        with self.logs[name].open("wb") as log:
            self.live[name] = subprocess.Popen(
                [*SANDCRAWLER, *self.args], env=env, cwd=self.workdir, stdout=log,
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        return name

    def check_alive(self) -> None:
        for name, proc in self.live.items():
            if proc.poll() is not None:
                sys.exit(f"{name} exited ({proc.returncode}) while measured:\n{self.tail(name)}")

    def tail(self, name: str, lines: int = 20) -> str:
        text = self.logs[name].read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:])

    def cpu(self) -> float:
        return sum(process_cpu(p.pid) or 0.0 for p in self.live.values())

    def kill(self, name: str) -> None:
        """SIGKILL: no batch finished, no commit, no LeaveGroup."""
        proc = self.live.pop(name)
        _signal_group(proc, signal.SIGKILL)
        proc.wait()

    def stop(self) -> dict[str, int]:
        """SIGTERM every live worker (each finishes its batch, commits, leaves the group);
        SIGKILL the ones still running after STOP_GRACE. Exit status by name."""
        procs, self.live = self.live, {}
        for proc in procs.values():
            _signal_group(proc, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE
        codes = {}
        for name, proc in procs.items():
            try:
                codes[name] = proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(proc, signal.SIGKILL)
                codes[name] = proc.wait()
        return codes

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()


def _signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    with suppress(ProcessLookupError):  # already gone
        os.killpg(proc.pid, sig)


# --- throughput -------------------------------------------------------------------------------


@dataclass
class Run:
    mode: str
    workers: int
    records: int
    seconds: float
    load: float
    client_cpu: float | None = None
    pg_cpu: float | None = None
    broker_cpu: float | None = None
    #: records/s from the first commit seen to the last (kafka only)
    steady: float | None = None
    #: seconds from the workers' start to the first commit seen (kafka only)
    first_commit: float | None = None
    #: CPUs busy on average meanwhile, every process of the machine counted
    machine: float | None = None

    @property
    def rate(self) -> float:
        return rate(self.records, self.seconds)

    @property
    def ours(self) -> float | None:
        """CPUs busy on average with this run's processes (sandcrawler, PostgreSQL, broker)."""
        if self.client_cpu is None or self.pg_cpu is None:
            return None
        return (self.client_cpu + self.pg_cpu + (self.broker_cpu or 0.0)) / self.seconds


@dataclass
class Setup:
    workdir: Path
    cluster: PostgresCluster
    broker: KafkaBroker
    args: argparse.Namespace
    envelopes: list[dict[str, Any]] = field(default_factory=list)


def load1() -> float:
    return os.getloadavg()[0]


def run_file(s: Setup, input_file: Path, label: str) -> Run:
    db = f"bench_file_{label}"
    url = init_database(s.cluster, db, s.workdir)
    load = load1()
    cmd = ["persist", "crossref", str(input_file), "--batch-size", str(s.args.batch_size),
           "--no-progress"]
    env = bench_env(s.workdir, database_url=url)
    ticks = []

    def persist() -> Timing:
        ticks.append(cpu_ticks())
        timing = sandcrawler(cmd, env=env, cwd=s.workdir)
        ticks.append(cpu_ticks())
        return timing

    t, pg = with_server_cpu(s.cluster, persist)
    check_rows(s.cluster, db, s.args.records, "file")
    drop_database(s.cluster, db)
    return Run("file", 1, s.args.records, t.wall, load, t.cpu, pg,
               machine=busy_cores(ticks[0], ticks[1]))


def run_kafka(s: Setup, n_workers: int, label: str) -> Run:
    n = s.args.records
    db = f"bench_kafka_{label}"
    url = init_database(s.cluster, db, s.workdir)
    group = f"bench-throughput-{label}"
    env = bench_env(s.workdir, database_url=url, kafka_brokers=s.broker.bootstrap, env=ENV)
    topic = WORKERS[WORKER].topics_in[0].full(ENV)
    watch = GroupWatch(s.broker.bootstrap, group, topic, s.args.partitions)
    try:
        with Workers(s.workdir, env, group, s.args.batch_size) as workers:
            settle()
            load = load1()
            pg0, broker0 = server_cpu(s.cluster), process_cpu(s.broker.pid)
            ticks0 = cpu_ticks()
            t0 = time.perf_counter()
            for _ in range(n_workers):
                workers.start()
            first: tuple[float, int] | None = None
            while True:
                offsets = watch.committed()
                now = time.perf_counter() - t0
                done = sum(offsets.values()) if offsets else 0
                if done and first is None:
                    first = (now, done)
                if done >= n:
                    break
                workers.check_alive()
                if now > s.args.timeout:
                    sys.exit(f"kafka, {n_workers} workers: {done:,} of {n:,} committed after "
                             f"{now:.0f} s\n{workers.tail(next(iter(workers.live)))}")
                time.sleep(POLL)
            ticks1 = cpu_ticks()
            client = workers.cpu()
            pg1, broker1 = server_cpu(s.cluster), process_cpu(s.broker.pid)
            codes = workers.stop()
    finally:
        watch.close()
    if any(codes.values()):
        print(f"   warning: worker exit statuses after SIGTERM: {codes}", file=sys.stderr)
    check_rows(s.cluster, db, n, f"kafka, {n_workers} workers")
    drop_database(s.cluster, db)
    first_at, first_done = first if first is not None else (now, n)
    # No steady rate when the first commit seen was already the last.
    steady = rate(n - first_done, now - first_at) if first_done < n else None
    return Run("kafka", n_workers, n, now, load, client, _delta(pg0, pg1),
               _delta(broker0, broker1), steady, first_at, busy_cores(ticks0, ticks1))


def check_rows(cluster: PostgresCluster, db: str, expected: int, what: str) -> None:
    got = count_rows(cluster, db, "crossref")
    if got != expected:
        sys.exit(f"{what}: {got:,} rows in crossref, expected {expected:,}")


def _delta(before: float | None, after: float | None) -> float | None:
    return after - before if before is not None and after is not None else None


def _num(x: float | None, digits: int = 1) -> str:
    return f"{x:.{digits}f}" if x is not None else "—"


def print_runs(runs: Sequence[Run], baseline: float) -> None:
    print(f"   {'':47} {'steady':>8} {'1st':>7}   {'CPU seconds':^22}   "
          f"{'CPUs busy':^13}")
    print(f"   {'mode':<6} {'workers':>7} {'records':>9} {'seconds':>7} {'rec/s':>6} "
          f"{'vs file':>7} {'rec/s':>8} {'commit':>7}   {'sandcr.':>7} {'PG':>6} {'broker':>7}   "
          f"{'ours':>5} {'machine':>7}   {'load':>4}")
    for r in runs:
        steady = f"{r.steady:8,.0f}" if r.steady is not None else f"{'—':>8}"
        first = f"{r.first_commit:6.1f}s" if r.first_commit is not None else f"{'—':>7}"
        print(f"   {r.mode:<6} {r.workers:>7} {r.records:>9,} {r.seconds:7.1f} {r.rate:6,.0f} "
              f"{r.rate / baseline:6.2f}x {steady} {first}   {_num(r.client_cpu):>7} "
              f"{_num(r.pg_cpu):>6} {_num(r.broker_cpu):>7}   {_num(r.ours, 2):>5} "
              f"{_num(r.machine, 2):>7}   {r.load:4.1f}")


def throughput(s: Setup) -> None:
    args = s.args
    n = args.records
    topic = WORKERS[WORKER].topics_in[0].full(ENV)
    create_topics(s.broker.bootstrap, {topic: args.partitions})
    input_file = s.workdir / f"crossref_works_{n}.json"
    began = time.perf_counter()
    with input_file.open("wb") as f:

        def tee() -> Iterator[tuple[bytes, bytes]]:
            for key, value in keyed_works(s.envelopes, 0, n):
                f.write(value + b"\n")
                yield key, value

        counts = produce_all(s.broker.bootstrap, topic, tee(), args.compression)
    size = input_file.stat().st_size
    print(f"   {n:,} records ({size / 1e6:,.0f} MB, {size / n / 1e3:.1f} kB each) produced to "
          f"{topic} and written to {input_file.name} in {time.perf_counter() - began:.1f} s; "
          f"per partition: {', '.join(f'{counts.get(p, 0):,}' for p in range(args.partitions))}")
    print(f"   batch size {args.batch_size:,} for every run; compression {args.compression}")

    runs: list[Run] = []
    for rnd in range(1, args.rounds + 1):
        # Even rounds run in reverse order, so that a drift in the machine's load
        # (other users) does not always favour the same runs.
        order: list[int] = [0, *args.workers]
        if rnd % 2 == 0:
            order.reverse()
        round_runs = [run_file(s, input_file, f"r{rnd}") if w == 0
                      else run_kafka(s, w, f"w{w}_r{rnd}") for w in order]
        round_runs.sort(key=lambda r: (r.mode != "file", r.workers))
        print(f"-- round {rnd}{' (run in reverse order)' if rnd % 2 == 0 else ''}")
        print_runs(round_runs, round_runs[0].rate)
        runs.extend(round_runs)
    if args.rounds > 1:
        print(f"-- median of {args.rounds} rounds (CPU, load: of the median run)")
        print_runs(medians(runs), medians(runs)[0].rate)


def medians(runs: Sequence[Run]) -> list[Run]:
    """Per (mode, workers), the run of median wall time (the upper one of an even count)."""
    out = []
    keys = dict.fromkeys((r.mode, r.workers) for r in runs)
    for key in keys:
        same = sorted((r for r in runs if (r.mode, r.workers) == key), key=lambda r: r.seconds)
        out.append(same[len(same) // 2])
    return out


# --- failover ------------------------------------------------------------------------------


def wait_steady(watch: GroupWatch, workers: Workers, partitions: int, hold: float = 3.0,
                timeout: float = 180.0) -> dict[str, set[int]]:
    """Wait until the group is stable with every live worker a member, all partitions
    assigned, and every partition's commit advancing (within 1.5 s) for ``hold`` s."""
    began = time.monotonic()
    last: dict[int, tuple[int, float]] = {}
    good_since: float | None = None
    while True:
        now = time.monotonic()
        workers.check_alive()
        offsets, group = watch.committed(), watch.members()
        for p, off in (offsets or {}).items():
            if p not in last or off > last[p][0]:
                last[p] = (off, now)
        ok = (group is not None and group[0] == "STABLE"
              and set(group[1]) == set(workers.live)
              and set[int]().union(*group[1].values()) == set(range(partitions))
              and len(last) == partitions
              and all(now - t < 1.5 for _, t in last.values()))
        if not ok:
            good_since = None
        elif good_since is None:
            good_since = now
        elif now - good_since >= hold and group is not None:
            return group[1]
        if now - began > timeout:
            sys.exit(f"the failover group did not settle in {timeout:g} s: {group}")
        time.sleep(0.2)


@dataclass
class Kill:
    victim: str
    owned: set[int]
    rebalancing: float | None  # kill -> the group seen not stable / without the victim
    stable: float | None  # kill -> stable again without the victim
    first: float  # kill -> the first of the victim's partitions committed again
    resumed: float  # kill -> all of them
    survivors_pause: float  # longest time without a commit on any other partition
    steady_gap: float  # the same measure in the seconds before the kill


class CommitClock:
    """When each partition's committed offset last advanced, read through the admin
    API every FAILOVER_POLL seconds (so times are good to about that)."""

    def __init__(self, watch: GroupWatch, partitions: int) -> None:
        self.watch = watch
        self.offsets: dict[int, int] = dict(watch.committed() or {})
        now = time.perf_counter()
        self.last: dict[int, float] = dict.fromkeys(range(partitions), now)

    def poll(self) -> list[tuple[int, float]]:
        """The partitions that advanced since the last poll, each with the longest
        time it had gone without (now - its last advance)."""
        now, advanced = time.perf_counter(), []
        for p, off in (self.watch.committed() or {}).items():
            if off > self.offsets.get(p, 0):
                self.offsets[p] = off
                advanced.append((p, now - self.last[p]))
                self.last[p] = now
        return advanced

    def steady_gap(self, seconds: float) -> float:
        """Watch for ``seconds``; the longest time any partition went without a commit."""
        gap, until = 0.0, time.perf_counter() + seconds
        while time.perf_counter() < until:
            gap = max([gap, *(g for _, g in self.poll())])
            time.sleep(FAILOVER_POLL)
        return max([gap, *(time.perf_counter() - t for t in self.last.values())])


def one_kill(watch: GroupWatch, workers: Workers, members: dict[str, set[int]],
             partitions: int, clock: CommitClock, steady_gap: float,
             timeout: float = 180.0) -> Kill:
    # The oldest member: replacements get higher numbers, so each kill takes another.
    victim = min(members, key=lambda name: int(name.rsplit("-w", 1)[1]))
    owned = members[victim]
    t0 = time.perf_counter()
    workers.kill(victim)
    # A commit the victim sent just before it died lands within milliseconds; nobody
    # else may commit its partitions before its session expires, seconds later. So
    # what advances on its partitions in the first 0.5 s is the victim's own.
    grace = 0.5
    pause = 0.0
    resumed: dict[int, float] = {}
    rebalancing: float | None = None
    stable: float | None = None
    while len(resumed) < len(owned):
        now = time.perf_counter() - t0
        for p, gap in clock.poll():
            if p not in owned:
                pause = max(pause, gap)  # the survivors' cadence, measured throughout
            elif now > grace:
                resumed.setdefault(p, now)
        group = watch.members()
        if group is not None:
            state, current = group
            if rebalancing is None and (state != "STABLE" or victim not in current):
                rebalancing = now
            if (rebalancing is not None and stable is None and state == "STABLE"
                    and victim not in current and set(current) == set(workers.live)):
                stable = now
        workers.check_alive()
        if now > timeout:
            sys.exit(f"the partitions of {victim} ({sorted(owned)}) were not consumed again "
                     f"within {timeout:g} s of its SIGKILL")
        time.sleep(FAILOVER_POLL)
    end = time.perf_counter()
    others = [p for p in range(partitions) if p not in owned]
    pause = max([pause, *(end - clock.last[p] for p in others)])
    return Kill(victim, owned, rebalancing, stable, min(resumed.values()),
                max(resumed.values()), pause, steady_gap)


def consumer_settings(bootstrap: str) -> tuple[str, float]:
    """What the product's consumers use for group membership (librdkafka defaults
    named), and their heartbeat interval in seconds."""
    conf = consumer_config(KafkaSettings(brokers=bootstrap), "any")
    shown = {"session.timeout.ms": "45000 (librdkafka default)",
             "heartbeat.interval.ms": "3000 (librdkafka default)",
             "partition.assignment.strategy": "range,roundrobin (librdkafka default)",
             "group.protocol": "classic (librdkafka default)"}
    for key in shown:
        if key in conf:
            shown[key] = str(conf[key])
    heartbeat = int(shown["heartbeat.interval.ms"].split()[0]) / 1000
    return "; ".join(f"{k} {v}" for k, v in shown.items()), heartbeat


def failover(s: Setup) -> None:
    args = s.args
    topic = WORKERS[WORKER].topics_in[0].full(ENV) + "-failover"
    create_topics(s.broker.bootstrap, {topic: args.partitions})
    db = "bench_kafka_failover"
    url = init_database(s.cluster, db, s.workdir)
    group = "bench-failover"
    env = bench_env(s.workdir, database_url=url, kafka_brokers=s.broker.bootstrap, env=ENV)
    print(f"-- failover: {args.failover_workers} workers, {args.partitions} partitions, "
          f"{args.rate:g} records/s produced, batch size {args.failover_batch_size}")
    settings, heartbeat = consumer_settings(s.broker.bootstrap)
    print(f"   consumer: {settings}")
    feed = SteadyProducer(s.broker.bootstrap, topic, s.envelopes, args.rate,
                          start=args.records, compression=args.compression)
    watch = GroupWatch(s.broker.bootstrap, group, topic, args.partitions)
    kills: list[Kill] = []
    try:
        feed.start()
        with Workers(s.workdir, env, group, args.failover_batch_size, topic) as workers:
            for _ in range(args.failover_workers):
                workers.start()
            members = wait_steady(watch, workers, args.partitions)
            print(f"   {'kill':<5} {'victim':<22} {'partitions':<11} {'rebalancing':>11} "
                  f"{'stable':>7} {'first':>6} {'resumed':>8} {'others paused':>13} "
                  f"{'(steady)':>8} {'load':>5}")
            for i in range(1, args.kills + 1):
                # Members heartbeat in step after a rebalance (they all sync at once), so
                # a kill at a fixed delay after the group settles would always meet the
                # same phase of their heartbeat cycle; a random moment within one cycle
                # (seeded: the same in every run) stands for a crash at any time. The
                # commits are watched meanwhile: one whole cycle first, for the cadence
                # the survivors' pause is to be read against.
                clock = CommitClock(watch, args.partitions)
                steady = clock.steady_gap(heartbeat + random.Random(i).uniform(0.0, heartbeat))
                load = load1()
                k = one_kill(watch, workers, members, args.partitions, clock, steady)
                kills.append(k)
                print(f"   {i:<5} {k.victim:<22} {','.join(map(str, sorted(k.owned))):<11} "
                      f"{_secs(k.rebalancing):>11} {_secs(k.stable):>7} {k.first:5.1f}s "
                      f"{k.resumed:7.1f}s {k.survivors_pause:12.1f}s {k.steady_gap:7.1f}s "
                      f"{load:5.2f}", flush=True)
                workers.start()
                members = wait_steady(watch, workers, args.partitions)
            produced = feed.stop()
            began = time.monotonic()
            while sum((watch.committed() or {}).values()) < produced:
                workers.check_alive()
                if time.monotonic() - began > 120:
                    sys.exit(f"failover: the group did not commit all {produced:,} records")
                time.sleep(POLL)
            workers.stop()
    finally:
        feed.stopping.set()
        watch.close()
    check_rows(s.cluster, db, produced, "failover")
    drop_database(s.cluster, db)
    print(f"   kill -> all its partitions committed again: median "
          f"{median([k.resumed for k in kills]):.1f} s "
          f"({', '.join(f'{k.resumed:.1f}' for k in kills)}); "
          f"{produced:,} records produced, all {produced:,} in crossref")


def _secs(x: float | None) -> str:
    return f"{x:.1f}s" if x is not None else "—"


# --- main -------------------------------------------------------------------------------------


def _counts(text: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of numbers: {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"not a list of positive numbers: {text!r}")
    return values


def parse_args() -> argparse.Namespace:
    parser = arg_parser(__doc__, count="records", default=100_000)
    parser.add_argument("--workers", type=_counts, default=[1, 2, 3], metavar="1,2,3",
                        help="worker counts of the throughput runs (default: 1,2,3)")
    parser.add_argument("--partitions", type=int, default=6,
                        help="partitions of each topic (default: 6)")
    default_batch = WORKERS[WORKER].batch_size
    parser.add_argument("--batch-size", type=int, default=default_batch,
                        help=f"--batch-size of both commands (default: {default_batch:,}, "
                        "the product's)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="repeat file + kafka runs this often, a median at the end "
                        "(default: 1)")
    parser.add_argument("--compression", default="none",
                        choices=["none", "gzip", "snappy", "lz4", "zstd"],
                        help="the producer's compression.type (default: none)")
    parser.add_argument("--timeout", type=float, default=900.0,
                        help="give up on a run after this many seconds (default: 900)")
    parser.add_argument("--measure", nargs="+", choices=["throughput", "failover"],
                        default=["throughput", "failover"],
                        help="which measurements (default: both)")
    parser.add_argument("--kills", type=int, default=3,
                        help="failover: SIGKILLs, one after another (default: 3)")
    parser.add_argument("--failover-workers", type=int, default=3,
                        help="failover: workers in the group (default: 3)")
    parser.add_argument("--rate", type=float, default=240.0,
                        help="failover: records/s produced meanwhile (default: 240)")
    parser.add_argument("--failover-batch-size", type=int, default=20,
                        help="failover: the workers' --batch-size, small so that each "
                        "partition commits several times a second (default: 20)")
    return parser.parse_args()


def _terminate(signum: int, _frame: object) -> None:
    # SIGTERM unwinds like Ctrl-C, through every cleanup below.
    raise SystemExit(128 + signum)


def main() -> None:
    args = parse_args()
    works, _ = require_fixtures()
    try:
        libs = find_kafka_libs()
    except KafkaUnavailable as e:
        skip(str(e))
    signal.signal(signal.SIGTERM, _terminate)
    print_header(f"sandcrawler worker {WORKER} on a real Kafka broker: {args.records:,} records, "
                 f"{args.partitions} partitions")
    with work_dir(args.out) as workdir, ExitStack() as stack:
        cluster = stack.enter_context(durable_cluster())
        # The broker's log (as large as the input) is never kept, even with --out;
        # removed after the broker has stopped (the stack unwinds in reverse).
        kafka_dir = Path(tempfile.mkdtemp(prefix="kafka-", dir=workdir))
        stack.callback(shutil.rmtree, kafka_dir, True)
        broker = stack.enter_context(KafkaBroker(libs, kafka_dir, partitions=args.partitions))
        s = Setup(workdir, cluster, broker, args, load_works(works))
        if "throughput" in args.measure:
            throughput(s)
        if "failover" in args.measure:
            failover(s)
    print(f"   load average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
