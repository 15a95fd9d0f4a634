"""A real Apache Solr cluster (SolrCloud) on loopback: ZooKeeper and N Solr nodes
from the jars Maven Central publishes (docs/operations.md, "Solr test cluster").

``find_solr_libs()`` returns a cached directory of the pinned Solr's jars (it
needs a JDK 17+ and ``mvn``, else ``SolrUnavailable``); ``SolrCluster(libs, workdir)``
runs ZooKeeper and one JVM per node, with faults to order: ``kill_node``,
``stop_node``, ``start_node``, ``freeze_node``/``thaw_node``, ``restart``, ``kill``.
``upload_configset`` uploads the kit's own configset (docs/testing.md,
"The Solr test cluster").
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import IO

from sandcrawler.process.lifetime import die_with_parent
from sandcrawler_testkit import _cli
from sandcrawler_testkit._cache import tool_cache
from sandcrawler_testkit.starts import record_start

SOLR_VERSION = "9.10.1"
#: marker written last into the cache: a half-copied directory is never used
_COMPLETE = ".complete"
_LAUNCHER = "SolrCloudLauncher"
#: the launcher's own JVM holds only ZooKeeper and the protocol
_LAUNCHER_HEAP = "64m"
#: the frame of a thread handling an update request (/update and its JSON, CSV... paths)
_UPDATE_HANDLER = "org.apache.solr.handler.ContentStreamHandlerBase.handleRequestBody"


class SolrUnavailable(RuntimeError):
    """The cluster cannot run here (or did not start); the message says why."""


def _data(name: str) -> Traversable:
    return resources.files("sandcrawler_testkit") / "data" / "solr" / name


#: the kit's configset: solrconfig.xml and a managed schema (id, _version_, *_s, *_t, ...)
CONFIGSET = Path(str(_data("configset")))


def cache_dir() -> Path:
    # the POM's digest in the name: a jar added to it must not be missing from a
    # cache filled before
    digest = hashlib.sha256(_data("pom.xml").read_bytes()).hexdigest()[:12]
    return tool_cache("solr", f"{SOLR_VERSION}-{digest}")


def _jdk_tool(name: str) -> str:
    tool = shutil.which(name)
    if tool is None:
        raise SolrUnavailable(f"no {name} on PATH (the Solr test cluster needs a JDK 17 or "
                              "newer: java runs it, javac compiles its launcher)")
    return tool


def find_solr_libs(*, fetch: bool = True) -> Path:
    """Solr's jars; fetched with Maven into the cache on first use."""
    _jdk_tool("java")
    _jdk_tool("javac")
    libs = cache_dir() / "libs"
    if (libs / _COMPLETE).exists():
        return libs
    if not fetch:
        raise SolrUnavailable(f"Solr {SOLR_VERSION} jars not found in {libs}")
    mvn = shutil.which("mvn")
    if mvn is None:
        raise SolrUnavailable(f"Solr {SOLR_VERSION} jars not in {libs} and no mvn on PATH "
                              "to fetch them")
    return fetch_solr_libs(mvn)


def fetch_solr_libs(mvn: str = "mvn") -> Path:
    target = cache_dir()
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="libs-", dir=target) as tmp:
        out = Path(tmp) / "libs"
        with resources.as_file(_data("pom.xml")) as pom_path:
            try:
                done = subprocess.run(
                    [mvn, "-q", "-B", "-f", str(pom_path), "dependency:copy-dependencies",
                     f"-DoutputDirectory={out}"],
                    capture_output=True, text=True, timeout=900)
            except (OSError, subprocess.TimeoutExpired) as e:
                raise SolrUnavailable(f"mvn could not fetch Solr {SOLR_VERSION}: {e}") from None
        jars = list(out.glob("*.jar")) if out.is_dir() else []
        names = {j.name for j in jars}
        if done.returncode != 0 or not {f"solr-core-{SOLR_VERSION}.jar",
                                        f"solr-test-framework-{SOLR_VERSION}.jar"} <= names:
            tail = (done.stdout + done.stderr).strip().splitlines()[-5:]
            raise SolrUnavailable(f"mvn could not fetch Solr {SOLR_VERSION}: "
                                  + (" | ".join(tail) or "no solr-core jar"))
        (out / _COMPLETE).write_text(f"{len(jars)} jars\n")
        libs = target / "libs"
        try:
            out.rename(libs)  # atomic; a concurrent fetch that won leaves its copy
        except OSError:
            if not (libs / _COMPLETE).exists():
                raise
    return target / "libs"


def launcher_classes(libs: Path) -> Path:
    """The launcher compiled once with javac beside the jars (keyed by its source's
    digest). Not the JDK's single-file source launcher: that compiles in memory at
    every start, about 2 s of the two cores each time, and the node JVMs the
    launcher starts could not load a class compiled that way."""
    source = _data(f"{_LAUNCHER}.java")
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:12]
    classes = libs.parent / f"launcher-{digest}"
    if (classes / _COMPLETE).exists():
        return classes
    with tempfile.TemporaryDirectory(prefix="launcher-", dir=libs.parent) as tmp:
        out = Path(tmp) / "classes"
        with resources.as_file(source) as src:
            done = subprocess.run(
                [_jdk_tool("javac"), "-nowarn", "-encoding", "UTF-8", "-cp", str(libs / "*"),
                 "-d", str(out), str(src)],
                capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            raise SolrUnavailable(f"javac could not compile {_LAUNCHER}.java: "
                                  f"{(done.stdout + done.stderr).strip()[-2000:]}")
        (out / _COMPLETE).write_text("compiled\n")
        try:
            out.rename(classes)
        except OSError:
            if not (classes / _COMPLETE).exists():
                raise
    return classes


def _megabytes(size: str) -> int:
    """``512m``, ``1g`` or a number of megabytes (the JVM's -Xmx spelling)."""
    match = re.fullmatch(r"(\d+)([mMgG]?)", size)
    if match is None:
        raise ValueError(f"not a heap size: {size!r} (e.g. 512m, 1g)")
    number, unit = int(match[1]), match[2].lower()
    return number * 1024 if unit == "g" else number


class SolrCluster:
    """Start with ``start()`` (or as a context manager); ``urls`` are the nodes'
    ``http://127.0.0.1:PORT/solr``, ``zk_host`` is ``127.0.0.1:PORT/solr``.

    ``heap``: the Solr nodes' heap in all, shared out evenly (``512m``: 256 MB per
    node of two); the launcher's JVM (ZooKeeper) has 64 MB of its own.
    ``session_timeout``: seconds ZooKeeper waits before it takes a killed node for
    dead (Solr's zkClientTimeout; 30 s in Solr's own solr.xml, 10 s here: a crash
    is seen sooner, and a GC pause on two busy cores is still far shorter). Until
    then the node is still in ``live_nodes`` and still the leader of what it led,
    and the same node started again waits for it to expire before it joins."""

    def __init__(self, libs: Path, workdir: Path, nodes: int = 2, heap: str = "512m", *,
                 session_timeout: float = 10.0, startup_timeout: float = 180.0) -> None:
        if nodes < 1:
            raise ValueError("a cluster has at least one node")
        self.libs = libs
        self.workdir = workdir
        self.nodes = nodes
        self.node_heap_mb = max(64, _megabytes(heap) // nodes)
        self.session_timeout = session_timeout
        self.startup_timeout = startup_timeout
        self.log = workdir / "solr.log"
        self.urls: list[str] = []
        self.zk_host = ""
        #: each node JVM's process id while it runs (None while it is down)
        self.pids: list[int | None] = []
        #: the nodes stopped by ``freeze_node`` (SIGSTOP), not yet thawed
        self.frozen: set[int] = set()
        self._proc: subprocess.Popen[bytes] | None = None
        self._buffer = b""
        #: the ports of the first start, kept: a start after stop() or kill() is the same
        #: cluster (ZooKeeper names a node host:port_solr and its replicas by that name)
        self._zk_port = 0
        self._ports = [0] * nodes

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def launcher_pid(self) -> int | None:
        """The launcher's JVM (ZooKeeper), while it runs."""
        return self._proc.pid if self.running and self._proc is not None else None

    def start(self) -> list[str]:
        if self.running:
            raise SolrUnavailable("the Solr cluster is running already")
        record_start("solr")
        classes = launcher_classes(self.libs)
        self.workdir.mkdir(parents=True, exist_ok=True)
        command = [_jdk_tool("java"), f"-Xmx{_LAUNCHER_HEAP}", "-XX:+UseSerialGC",
                   "-Djava.awt.headless=true",
                   "-cp", f"{classes}{os.pathsep}{self.libs / '*'}", _LAUNCHER, "cluster",
                   "--base", str(self.workdir / "cluster"), "--nodes", str(self.nodes),
                   "--node-heap", f"{self.node_heap_mb}m",
                   "--session-timeout-ms", str(round(self.session_timeout * 1000)),
                   "--zk-port", str(self._zk_port), "--ports", ",".join(map(str, self._ports))]
        with open(self.log, "ab") as log:
            self._proc = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                # its own session: a Ctrl-C in the terminal reaches us, and we stop it
                # cleanly; a SIGKILL of us kills it (PR_SET_PDEATHSIG) and closes its
                # stdin, on which it kills its nodes
                start_new_session=True, preexec_fn=die_with_parent)
        self._buffer = b""
        try:
            hello = json.loads(self._read_line(self.startup_timeout))
        except SolrUnavailable:
            self._kill()
            raise
        self.urls = [str(u) for u in hello["urls"]]
        self.zk_host = str(hello["zk_host"])
        self.pids = _pids(hello)
        self._ports = [int(urllib.parse.urlsplit(u).port or 0) for u in self.urls]
        self._zk_port = int(self.zk_host.partition("/")[0].rpartition(":")[2])
        return self.urls

    def kill_node(self, i: int) -> None:
        """Node i's JVM killed (SIGKILL), as a crash would; its port refuses at once."""
        self._command(f"kill {i}", 60)
        self.frozen.discard(i)

    def stop_node(self, i: int) -> None:
        """Node i shut down cleanly: it gives up its leaderships and says it is down."""
        self.thaw_node(i)
        self._command(f"stop {i}", 90)

    def freeze_node(self, i: int) -> None:
        """Node i's JVM stopped (SIGSTOP), as a node stalled in a long GC pause or on a
        dead disk: the kernel still accepts connections on its port, nothing answers,
        and its ZooKeeper session runs on until it expires (``session_timeout``)."""
        pid = self.pids[i]
        if pid is None:
            raise SolrUnavailable(f"node {i} is not running: nothing to freeze")
        os.kill(pid, signal.SIGSTOP)
        self.frozen.add(i)
        # the signal is delivered to every thread of the JVM in its own time
        _wait_for(lambda: _stopped(pid), 10, f"node {i}'s JVM ({pid}) to stop")

    def thaw_node(self, i: int) -> None:
        """Node i's JVM going on (SIGCONT) after ``freeze_node``; nothing if it is not
        frozen. Frozen past its session, it finds the session expired and joins
        again (its replicas then recover: ``wait_for_active``)."""
        if i not in self.frozen:
            return
        self.frozen.discard(i)
        pid = self.pids[i]
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
            _wait_for(lambda: not _stopped(pid, any_thread=True), 10,
                      f"node {i}'s JVM ({pid}) to go on")

    def _thaw_all(self) -> None:
        for i in sorted(self.frozen):
            self.thaw_node(i)

    def start_node(self, i: int) -> None:
        """Node i again, same port and data; back once it is in live_nodes (its
        replicas then recover: ``wait_for_active``)."""
        self._command(f"start {i}", self.startup_timeout)

    def restart(self) -> None:
        """Every node stopped cleanly, then ZooKeeper; ZooKeeper started again on its
        port from its data, then every node (a killed one too) on its port with its data.
        A frozen node is thawed first."""
        self._thaw_all()
        self._command("restart", self.startup_timeout + 120)

    def kill(self) -> None:
        """The whole cluster down at once, as in a power cut: the launcher (ZooKeeper)
        SIGKILLed, and the nodes halt as their launcher goes. ``start()`` brings it
        back, same ports, same data."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        self._thaw_all()  # a stopped JVM would not see its launcher go
        nodes = [p for p in self.pids if p is not None]
        proc.kill()
        proc.wait(timeout=10)
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        if proc.stdout is not None:
            proc.stdout.close()
        _wait_gone(nodes, 30)
        self.pids = [None] * self.nodes

    def stop(self, timeout: float = 90.0) -> None:
        """Everything shut down cleanly; killed after ``timeout``."""
        self._thaw_all()
        proc = self._proc
        if proc is None or proc.poll() is not None:
            self._proc = None
            return
        try:
            self._command("stop", timeout)
            proc.wait(timeout=10)
        except (SolrUnavailable, subprocess.TimeoutExpired):
            pass
        finally:
            self._kill()

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()  # the launcher kills its nodes on end of stdin
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()
        self.pids = [None] * self.nodes
        self.frozen.clear()

    def _command(self, line: str, timeout: float) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None or proc.poll() is not None:
            raise SolrUnavailable(f"the Solr cluster is not running ({line})")
        try:
            proc.stdin.write(line.encode() + b"\n")
            proc.stdin.flush()
        except OSError as e:
            raise SolrUnavailable(f"the Solr launcher is gone ({line}): {e}; "
                                  f"{self._log_tail()}") from None
        answer = json.loads(self._read_line(timeout))
        if not answer.get("ok"):
            raise SolrUnavailable(f"{line}: {answer.get('error')}")
        self.pids = _pids(answer)

    def _read_line(self, timeout: float) -> bytes:
        """The launcher's next line on stdout, within ``timeout`` seconds."""
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        stdout: IO[bytes] = proc.stdout
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as selector:
            selector.register(stdout, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise SolrUnavailable(f"the Solr cluster did not answer within {timeout:g}s: "
                                          f"{self._log_tail()}")
                if not selector.select(left):
                    continue
                chunk = os.read(stdout.fileno(), 65536)
                if not chunk:
                    code = proc.wait(timeout=10)
                    raise SolrUnavailable(f"the Solr launcher exited ({code}): {self._log_tail()}")
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def _log_tail(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-3000:]
        except OSError:
            return "(no log)"

    # -- what a test needs of the running cluster, over Solr's HTTP API ----------------

    def upload_configset(self, name: str, directory: Path = CONFIGSET) -> None:
        """A configset (a directory holding solrconfig.xml and the schema) uploaded
        to ZooKeeper with the Configsets API: a zip of the directory's files, POSTed
        to ``/admin/configs?action=UPLOAD`` (replacing one of the same name)."""
        data = io.BytesIO()
        with zipfile.ZipFile(data, "w") as archive:
            for path in sorted(directory.rglob("*")):
                if path.is_file():
                    archive.write(path, path.relative_to(directory).as_posix())
        query = urllib.parse.urlencode({"action": "UPLOAD", "name": name, "overwrite": "true",
                                        "cleanup": "true", "wt": "json"})
        _http(f"{self._live_url()}/admin/configs?{query}", data.getvalue(),
              "application/octet-stream")

    def wait_for_active(self, collection: str, timeout: float = 60.0) -> None:
        """Until every replica of every shard of ``collection`` is active on a live
        node (Collections API CLUSTERSTATUS), e.g. after ``start_node`` or ``restart``."""
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            try:
                url = self._live_url()
                query = urllib.parse.urlencode({"action": "CLUSTERSTATUS",
                                                "collection": collection, "wt": "json"})
                status = json.loads(_http(f"{url}/admin/collections?{query}"))
                cluster = status["cluster"]
                live = set(cluster["live_nodes"])
                shards = cluster["collections"][collection]["shards"]
                replicas = [r for shard in shards.values() for r in shard["replicas"].values()]
                if replicas and all(r["state"] == "active" and r["node_name"] in live
                                    for r in replicas):
                    return
                last = ", ".join(f"{r['core']} {r['state']} on {r['node_name']}"
                                 for r in replicas)
            except (OSError, KeyError, ValueError) as e:
                last = str(e)
            time.sleep(0.25)
        raise SolrUnavailable(f"{collection} not active within {timeout:g}s: {last}")

    def updates_running(self) -> int:
        """The update requests (``/update``, a client's or one node's to another) the
        running nodes are handling now, read from their thread dumps
        (``/admin/info/threads``): 0 once every update sent has been applied or has
        failed. Solr goes on with a request whose client has gone (killed mid-load)."""
        running = 0
        for i, (url, pid) in enumerate(zip(self.urls, self.pids, strict=True)):
            if pid is None or i in self.frozen:
                continue
            answer = json.loads(_http(f"{url}/admin/info/threads?wt=json"))
            # a flat list: "thread", {its name, state, stackTrace}, "thread", ...
            for thread in answer["system"]["threadDump"]:
                if isinstance(thread, dict) and any(
                        _UPDATE_HANDLER in frame for frame in thread.get("stackTrace") or ()):
                    running += 1
        return running

    def _live_url(self) -> str:
        """A node that runs (the kit asks the first that answers)."""
        for url, pid in zip(self.urls, self.pids, strict=True):
            if pid is not None:
                return url
        raise SolrUnavailable("no Solr node is running")

    def __enter__(self) -> SolrCluster:
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()


def _wait_gone(pids: list[int], timeout: float) -> None:
    """Until these processes (not our children: the launcher's) have exited."""
    deadline = time.monotonic() + timeout
    for pid in pids:
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.05)


def _stopped(pid: int, *, any_thread: bool = False) -> bool:
    """Whether every thread of the process (or, ``any_thread``, any of them) is
    stopped by a signal (state ``T`` in /proc); a process gone is not."""
    states = []
    for stat in Path(f"/proc/{pid}/task").glob("*/stat"):
        with contextlib.suppress(OSError):
            text = stat.read_text()
            states.append(text[text.rindex(")") + 2])
    if not states:
        return False
    return any(s == "T" for s in states) if any_thread else all(s == "T" for s in states)


def _wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise SolrUnavailable(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(0.01)


def _pids(answer: dict[str, object]) -> list[int | None]:
    pids = answer.get("pids")
    assert isinstance(pids, list)
    return [int(p) if p is not None else None for p in pids]


def _http(url: str, body: bytes | None = None, content_type: str | None = None,
          timeout: float = 60.0) -> bytes:
    """A request to Solr; its error message (Solr answers errors in JSON) in the exception."""
    request = urllib.request.Request(url, data=body, method="POST" if body is not None else "GET")
    if content_type:
        request.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return bytes(response.read())
    except urllib.error.HTTPError as e:
        detail = e.read().decode(errors="replace")[-1000:]
        raise SolrUnavailable(f"{e.code} from {url}: {detail}") from None


def main(argv: list[str] | None = None) -> None:
    """``python -m sandcrawler_testkit.solr_cluster``: a SolrCloud cluster to try things on."""
    parser = _cli.parser(
        "sandcrawler_testkit.solr_cluster",
        f"Start a throwaway Apache Solr {SOLR_VERSION} cluster (SolrCloud: ZooKeeper and\n"
        "N nodes, each in its own JVM) on loopback, in a temporary directory removed on\n"
        "exit, and print the nodes' base URLs, one a line, then zk_host=HOST:PORT/solr.\n"
        "The kit's minimal configset is uploaded as 'sandcrawler-testkit'. The jars\n"
        "are fetched once with mvn into ~/.cache/sandcrawler-testkit/solr; a JDK 17+\n"
        "runs the cluster. Serves until SIGTERM or Ctrl-C.\n\n"
        "  python -m sandcrawler_testkit.solr_cluster --nodes 2")
    parser.add_argument("--nodes", type=int, default=2, help="Solr nodes (default: 2)")
    parser.add_argument("--heap", default="512m",
                        help="the nodes' heap in all, shared out evenly (default: 512m)")
    args = parser.parse_args(argv)
    stop = _cli.stop_requested()
    if args.nodes < 1:
        _cli.fail(parser, "--nodes: at least 1")
    with tempfile.TemporaryDirectory(prefix="sandcrawler-solr-") as tmp:
        try:
            cluster = SolrCluster(find_solr_libs(), Path(tmp), nodes=args.nodes, heap=args.heap)
            cluster.start()
            cluster.upload_configset("sandcrawler-testkit")
        except (SolrUnavailable, ValueError, OSError, subprocess.SubprocessError) as e:
            _cli.fail(parser, str(e))
        try:
            for url in cluster.urls:
                print(url, flush=True)
            print(f"zk_host={cluster.zk_host}", flush=True)
            stop.wait()
        finally:
            cluster.stop(timeout=30)


if __name__ == "__main__":
    main()
