"""A real Apache Kafka broker on loopback: one combined broker/controller in KRaft
mode (no ZooKeeper), from the jars Maven Central publishes.

``find_kafka_libs()`` returns a cached directory of the pinned broker's jars (it
needs ``java`` 17+ and ``mvn``, else ``KafkaUnavailable``). ``KafkaBroker(libs,
workdir)`` starts it on two free loopback ports; ``stop()``/``start()`` restart it
with the same ports and data, ``kill()`` is a SIGKILL (docs/testing.md,
"The Kafka test broker").
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from sandcrawler.process.lifetime import die_with_parent
from sandcrawler_testkit import _cli
from sandcrawler_testkit._cache import tool_cache
from sandcrawler_testkit.postgres import free_port
from sandcrawler_testkit.starts import record_start

KAFKA_VERSION = "4.1.1"
#: marker written last into the cache: a half-copied directory is never used
_COMPLETE = ".complete"


class KafkaUnavailable(RuntimeError):
    """The broker cannot run here; the message says why."""


def _pom() -> Traversable:
    return resources.files("sandcrawler_testkit") / "data" / "kafka" / "pom.xml"


def cache_dir() -> Path:
    # the POM's digest in the name: a jar added to it (a logging binding) must not
    # be missing from a cache filled before
    digest = hashlib.sha256(_pom().read_bytes()).hexdigest()[:12]
    return tool_cache("kafka", f"{KAFKA_VERSION}-{digest}")


def java_binary() -> str:
    java = shutil.which("java")
    if java is None:
        raise KafkaUnavailable("no java on PATH (Kafka's broker needs OpenJDK 17 or newer)")
    return java


def find_kafka_libs(*, fetch: bool = True) -> Path:
    """The broker's jars; fetched with Maven into the cache on first use."""
    java_binary()
    libs = cache_dir() / "libs"
    if (libs / _COMPLETE).exists():
        return libs
    if not fetch:
        raise KafkaUnavailable(f"Kafka {KAFKA_VERSION} jars not found in {libs}")
    mvn = shutil.which("mvn")
    if mvn is None:
        raise KafkaUnavailable(f"Kafka {KAFKA_VERSION} jars not in {libs} and no mvn on PATH "
                               "to fetch them")
    return fetch_kafka_libs(mvn)


def fetch_kafka_libs(mvn: str = "mvn") -> Path:
    target = cache_dir()
    target.mkdir(parents=True, exist_ok=True)
    pom = _pom()
    with tempfile.TemporaryDirectory(prefix="libs-", dir=target) as tmp:
        out = Path(tmp) / "libs"
        with resources.as_file(pom) as pom_path:
            try:
                done = subprocess.run(
                    [mvn, "-q", "-B", "-f", str(pom_path), "dependency:copy-dependencies",
                     f"-DoutputDirectory={out}"],
                    capture_output=True, text=True, timeout=900)
            except (OSError, subprocess.TimeoutExpired) as e:
                raise KafkaUnavailable(f"mvn could not fetch Kafka {KAFKA_VERSION}: {e}") from None
        jars = list(out.glob("*.jar")) if out.is_dir() else []
        if done.returncode != 0 or not any(j.name.startswith("kafka_2.13-") for j in jars):
            tail = (done.stdout + done.stderr).strip().splitlines()[-5:]
            raise KafkaUnavailable(f"mvn could not fetch Kafka {KAFKA_VERSION}: "
                                   + (" | ".join(tail) or "no kafka_2.13 jar"))
        (out / _COMPLETE).write_text(f"{len(jars)} jars\n")
        libs = target / "libs"
        try:
            out.rename(libs)  # atomic; a concurrent fetch that won leaves its copy
        except OSError:
            if not (libs / _COMPLETE).exists():
                raise
    return target / "libs"


#: the broker's own account on a SASL listener (clients use ``sasl_users``)
_ADMIN = ("admin", "admin-secret")


def _sasl(listener: str, users: dict[str, str]) -> dict[str, str]:
    """Settings of a SASL listener with the PLAIN mechanism and these users."""
    accounts = " ".join(f'user_{u}="{p}"' for u, p in {_ADMIN[0]: _ADMIN[1], **users}.items())
    return {
        "sasl.enabled.mechanisms": "PLAIN",
        "sasl.mechanism.inter.broker.protocol": "PLAIN",
        f"listener.name.{listener.lower()}.plain.sasl.jaas.config":
            "org.apache.kafka.common.security.plain.PlainLoginModule required "
            f'username="{_ADMIN[0]}" password="{_ADMIN[1]}" {accounts};',
    }


#: the password of the broker's TLS keystore (a throwaway key for loopback)
_KEYSTORE_PASSWORD = "sandcrawler-test"


def make_tls_keys(directory: Path) -> tuple[Path, Path]:
    """A self-signed key and certificate for 127.0.0.1 (and localhost), made with
    the JRE's ``keytool``: the broker's PKCS#12 keystore (and a truststore
    ``trust.p12`` beside it holding the certificate), and the certificate in PEM
    for clients to trust (``ssl.ca.location``). Returns (keystore, ca.pem)."""
    keytool = shutil.which("keytool") or str(Path(java_binary()).resolve().parent / "keytool")
    directory.mkdir(parents=True, exist_ok=True)
    keystore, ca = directory / "broker.p12", directory / "ca.pem"
    store = ["-storetype", "PKCS12", "-storepass", _KEYSTORE_PASSWORD, "-alias", "broker"]
    for args in (["-genkeypair", "-keystore", str(keystore), "-keyalg", "RSA",
                  "-keysize", "2048", "-validity", "30", "-dname", "CN=127.0.0.1",
                  "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-keypass", _KEYSTORE_PASSWORD],
                 ["-exportcert", "-keystore", str(keystore), "-rfc", "-file", str(ca)],
                 ["-importcert", "-keystore", str(directory / "trust.p12"), "-file", str(ca),
                  "-noprompt"]):
        done = subprocess.run([keytool, *args, *store], capture_output=True, text=True,
                              timeout=120)
        if done.returncode != 0:
            raise KafkaUnavailable(f"keytool {args[0]} failed: "
                                   f"{(done.stdout + done.stderr).strip()[-1000:]}")
    return keystore, ca


def _tls(keystore: Path) -> dict[str, str]:
    # The broker trusts its own certificate: at start-up it checks that a client
    # with its TLS settings can talk to its own listener (inter-broker traffic).
    return {
        "ssl.keystore.location": str(keystore),
        "ssl.keystore.type": "PKCS12",
        "ssl.keystore.password": _KEYSTORE_PASSWORD,
        "ssl.key.password": _KEYSTORE_PASSWORD,
        "ssl.truststore.location": str(keystore.with_name("trust.p12")),
        "ssl.truststore.type": "PKCS12",
        "ssl.truststore.password": _KEYSTORE_PASSWORD,
    }


def _listener(sasl: bool, tls: bool) -> str:
    return {(False, False): "PLAINTEXT", (True, False): "SASL_PLAINTEXT",
            (False, True): "SSL", (True, True): "SASL_SSL"}[(sasl, tls)]


def _properties(node_dir: Path, port: int, controller_port: int, partitions: int,
                sasl_users: dict[str, str] | None = None,
                keystore: Path | None = None) -> str:
    listener = _listener(bool(sasl_users), keystore is not None)
    settings = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.voters": f"1@127.0.0.1:{controller_port}",
        "listeners": f"{listener}://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "advertised.listeners": f"{listener}://127.0.0.1:{port}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": listener,
        "listener.security.protocol.map": f"{listener}:{listener},CONTROLLER:PLAINTEXT",
        **(_sasl(listener, sasl_users) if sasl_users else {}),
        **(_tls(keystore) if keystore is not None else {}),
        "log.dirs": str(node_dir / "data"),
        # one node: every internal topic has one replica
        "offsets.topic.replication.factor": "1",
        "offsets.topic.num.partitions": "10",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        # tests join groups often: no 3 s wait for more members
        "group.initial.rebalance.delay.ms": "0",
        "auto.create.topics.enable": "true",
        "num.partitions": str(partitions),
    }
    return "".join(f"{k}={v}\n" for k, v in settings.items())


class KafkaBroker:
    """Start with ``start()`` (or as a context manager); ``bootstrap`` is ``127.0.0.1:PORT``.

    ``partitions``: what an auto-created topic gets (the broker's num.partitions).
    ``sasl_users``: user -> password; the client listener then takes only SASL
    (PLAIN) logins, as a secured cluster does (``client_config`` logs in).
    ``tls``: the client listener speaks only TLS, with a self-signed certificate
    for 127.0.0.1 that clients trust through ``ca_file`` (``client_config`` does);
    with ``sasl_users`` too it is SASL_SSL."""

    def __init__(self, libs: Path, workdir: Path, *, partitions: int = 4, port: int = 0,
                 heap_mb: int = 512, startup_timeout: float = 90.0,
                 sasl_users: dict[str, str] | None = None, tls: bool = False) -> None:
        self.libs = libs
        self.sasl_users = sasl_users
        self.tls = tls
        #: the certificate clients trust (ssl.ca.location), once the broker is formatted
        self.ca_file: Path | None = None
        self._keystore: Path | None = None
        self.workdir = workdir
        self.partitions = partitions
        self.heap_mb = heap_mb
        self.startup_timeout = startup_timeout
        self.port = port or free_port()
        self.controller_port = free_port()
        self.log = workdir / "broker.log"
        self._proc: subprocess.Popen[bytes] | None = None
        self._formatted = False

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def client_config(self) -> dict[str, str]:
        """What a client needs to reach the broker (the admin login on SASL)."""
        config = {"bootstrap.servers": self.bootstrap,
                  "security.protocol": _listener(bool(self.sasl_users), self.tls)}
        if self.sasl_users:
            config |= {"sasl.mechanism": "PLAIN",
                       "sasl.username": _ADMIN[0], "sasl.password": _ADMIN[1]}
        if self.tls and self.ca_file is not None:
            config["ssl.ca.location"] = str(self.ca_file)
        return config

    @property
    def pid(self) -> int | None:
        """The broker JVM's process id while it runs (benchmarks read its CPU time)."""
        return self._proc.pid if self.running and self._proc is not None else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def _java(self, main: str, *args: str) -> list[str]:
        return [java_binary(), f"-Xmx{self.heap_mb}m", f"-Xms{min(self.heap_mb, 256)}m",
                "-XX:+UseSerialGC", "-Djava.awt.headless=true",
                # warnings and errors only into broker.log (why it would not start)
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-cp", str(self.libs / "*"), main, *args]

    def _format(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        props = self.workdir / "server.properties"
        if self.tls:
            self._keystore, self.ca_file = make_tls_keys(self.workdir / "tls")
        props.write_text(_properties(self.workdir, self.port, self.controller_port,
                                     self.partitions, self.sasl_users, self._keystore))
        cluster_id = subprocess.run(self._java("kafka.tools.StorageTool", "random-uuid"),
                                    capture_output=True, text=True, check=True,
                                    timeout=120).stdout.strip().splitlines()[-1]
        done = subprocess.run(
            self._java("kafka.tools.StorageTool", "format", "-t", cluster_id, "-c", str(props)),
            capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise KafkaUnavailable(f"formatting the KRaft log directory failed: "
                                   f"{(done.stdout + done.stderr).strip()[-2000:]}")
        self._formatted = True

    def start(self) -> str:
        record_start("kafka")
        if not self._formatted:
            self._format()
        with open(self.log, "ab") as log:
            self._proc = subprocess.Popen(
                self._java("kafka.Kafka", str(self.workdir / "server.properties")),
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                # its own session: a Ctrl-C in the terminal reaches us, and we stop
                # it cleanly; and a SIGKILL of us does not leave a broker behind
                start_new_session=True, preexec_fn=die_with_parent)
        self._wait_ready()
        return self.bootstrap

    def _wait_ready(self) -> None:
        """Ready once a client's metadata request is answered with this broker."""
        from confluent_kafka.admin import AdminClient

        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._proc is not None and self._proc.poll() is not None:
                raise KafkaUnavailable(f"the Kafka broker exited ({self._proc.returncode}): "
                                       f"{self.log.read_text(errors='replace')[-3000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    pass
            except OSError:
                time.sleep(0.2)
                continue
            admin = AdminClient({**self.client_config, "log_level": 0, "logger": _silent()})
            try:
                meta = admin.list_topics(timeout=5)
                if meta.brokers and meta.controller_id >= 0:
                    return
            except Exception:  # not answering yet: librdkafka says "transport" or "timed out"
                pass
            time.sleep(0.2)
        self.kill()
        raise KafkaUnavailable(f"the Kafka broker did not become ready within "
                               f"{self.startup_timeout:g}s: "
                               f"{self.log.read_text(errors='replace')[-3000:]}")

    def freeze(self) -> None:
        """A broker that hangs (SIGSTOP): its connections stay open and nothing is
        answered, as with a broker stalled in a long GC pause or on a dead disk."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.send_signal(signal.SIGCONT)

    def stop(self, timeout: float = 60.0) -> None:
        """A clean shutdown (SIGTERM); SIGKILL if it takes longer than ``timeout``."""
        self.thaw()  # a frozen broker would not take the SIGTERM
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)

    def kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)

    def restart(self) -> str:
        self.stop()
        return self.start()

    def __enter__(self) -> KafkaBroker:
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop(timeout=20)


def _silent():  # type: ignore[no-untyped-def]
    import logging

    logger = logging.getLogger("sandcrawler_testkit.kafka_broker.librdkafka")
    logger.setLevel(logging.CRITICAL)
    logger.propagate = False
    return logger


def main(argv: list[str] | None = None) -> None:
    """``python -m sandcrawler_testkit.kafka_broker``: a broker to try the workers with."""
    parser = _cli.parser(
        "sandcrawler_testkit.kafka_broker",
        f"Start a throwaway Apache Kafka {KAFKA_VERSION} broker (KRaft, one node) on\n"
        "loopback, in a temporary directory removed on exit, and print its\n"
        "bootstrap.servers (SANDCRAWLER_KAFKA_BROKERS). The jars are fetched once with\n"
        "mvn into ~/.cache/sandcrawler-testkit/kafka; java 17+ runs the broker. Serves\n"
        "until SIGTERM or Ctrl-C. With --tls or --sasl-user, a secured cluster: stderr\n"
        "says the SANDCRAWLER_KAFKA_OPTIONS a client needs.\n\n"
        "  python -m sandcrawler_testkit.kafka_broker --tls --sasl-user sandcrawler:s3cret")
    _cli.add_port(parser, 0)
    parser.add_argument("--partitions", type=_positive, default=4,
                        help="partitions of an auto-created topic (default: 4)")
    parser.add_argument("--tls", action="store_true",
                        help="the client listener speaks only TLS (a throwaway certificate "
                             "for 127.0.0.1)")
    parser.add_argument("--sasl-user", action="append", type=_login, default=[],
                        metavar="USER:PASSWORD",
                        help="the client listener takes only SASL PLAIN logins; repeatable")
    args = parser.parse_args(argv)
    stop = _cli.stop_requested()
    try:
        _cli.check_port(args.port)
    except OSError as e:
        _cli.fail(parser, _cli.listen_error(args.port, e))
    with tempfile.TemporaryDirectory(prefix="sandcrawler-kafka-") as tmp:
        try:
            broker = KafkaBroker(find_kafka_libs(), Path(tmp), partitions=args.partitions,
                                 port=args.port, tls=args.tls,
                                 sasl_users=dict(args.sasl_user) or None)
            broker.start()
        except (KafkaUnavailable, OSError, subprocess.SubprocessError) as e:
            _cli.fail(parser, str(e))
        try:
            print(broker.bootstrap, flush=True)
            if args.tls or args.sasl_user:
                user = args.sasl_user[0] if args.sasl_user else None
                options = {k: v for k, v in broker.client_config.items()
                           if k != "bootstrap.servers" and not k.startswith("sasl.")}
                if user is not None:
                    options |= {"sasl.mechanism": "PLAIN", "sasl.username": user[0],
                                "sasl.password": user[1]}
                print(f"SANDCRAWLER_KAFKA_OPTIONS='{json.dumps(options)}'", file=sys.stderr,
                      flush=True)
            stop.wait()
        finally:
            broker.stop(timeout=20)


def _login(text: str) -> tuple[str, str]:
    user, sep, password = text.partition(":")
    if not (sep and user and password):
        raise argparse.ArgumentTypeError(f"not USER:PASSWORD: {text!r}")
    return user, password


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"not a positive number: {text!r}")
    return int(text)


if __name__ == "__main__":
    main()
