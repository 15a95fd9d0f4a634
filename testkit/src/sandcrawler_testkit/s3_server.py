"""A throwaway S3-compatible server: OpenStack Swift with ``s3api`` on loopback.

Four Swift servers and a memcached on free loopback ports, configured from a
temporary directory (single-replica rings, ``tempauth`` user ``test:tester`` /
``testing``). Each server starts through a tiny bootstrap that points Swift at
our own ``swift.conf``, which it would otherwise read from ``/etc/swift``
(docs/testing.md, "The S3 test server").
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from sandcrawler.core.retry import Backoff, RetryPolicy
from sandcrawler_testkit import _cli
from sandcrawler_testkit.postgres import free_port
from sandcrawler_testkit.starts import record_start

BINDIR = Path("/usr/bin")
#: start-up: look again every 0.1 s until the deadline
_READY_POLL = RetryPolicy(attempts=None, base=0.1, factor=1.0, cap=0.1)
SERVERS = ("account", "container", "object", "proxy")
REQUIRED_BINARIES = (*(f"swift-{name}-server" for name in SERVERS), "memcached")
# s3api needs an auth middleware after it, and slo (with dlo, copy) for multipart uploads.
PROXY_PIPELINE = (
    "catch_errors gatekeeper proxy-logging cache listing_formats s3api tempauth copy slo dlo"
    " proxy-logging proxy-server"
)

# Run with Swift's interpreter: argv = swift_dir, script, script args...
_BOOTSTRAP = """\
import runpy, sys
from swift.common import utils
utils.set_swift_dir(sys.argv[1])
if "swift.common.storage_policy" in sys.modules:
    sys.modules["swift.common.storage_policy"].reload_storage_policies()
if "swift.common.constraints" in sys.modules:
    sys.modules["swift.common.constraints"].reload_constraints()
script = sys.argv[2]
sys.argv = [script, *sys.argv[3:]]
runpy.run_path(script, run_name="__main__")
"""

# Run with Swift's interpreter: argv = swift_dir, then kind=port for each ring.
_BUILD_RINGS = """\
import sys
from swift.common.ring import RingBuilder
for spec in sys.argv[2:]:
    kind, port = spec.split("=")
    builder = RingBuilder(0, 1, 1)
    builder.add_dev({"id": 0, "region": 1, "zone": 1, "ip": "127.0.0.1", "port": int(port),
                     "device": "d1", "weight": 1.0, "meta": ""})
    builder.rebalance()
    builder.get_ring().save(f"{sys.argv[1]}/{kind}.ring.gz")
"""

#: what every server's [DEFAULT] section says: loopback, one process, our swift_dir
_DEFAULT_SECTION = """\
[DEFAULT]
bind_ip = 127.0.0.1
bind_port = {port}
workers = 0
user = {user}
swift_dir = {swift_dir}
log_name = {name}
log_level = INFO
"""

_BACKEND_CONF = _DEFAULT_SECTION + """\
devices = {devices}
mount_check = false
disable_fallocate = true

[pipeline:main]
pipeline = {kind}-server

[app:{kind}-server]
use = egg:swift#{kind}

[{kind}-replicator]

[{kind}-auditor]
"""

_PROXY_CONF = _DEFAULT_SECTION + """\

[pipeline:main]
pipeline = {pipeline}

[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true

[filter:catch_errors]
use = egg:swift#catch_errors

[filter:gatekeeper]
use = egg:swift#gatekeeper

[filter:proxy-logging]
use = egg:swift#proxy_logging

[filter:cache]
use = egg:swift#memcache
memcache_servers = 127.0.0.1:{memcached_port}

[filter:listing_formats]
use = egg:swift#listing_formats

[filter:s3api]
use = egg:swift#s3api
location = {region}
s3_acl = false
allow_multipart_uploads = true

[filter:tempauth]
use = egg:swift#tempauth
user_{account}_{user_name} = {secret} .admin

[filter:copy]
use = egg:swift#copy

[filter:slo]
use = egg:swift#slo

[filter:dlo]
use = egg:swift#dlo
"""


def swift_python() -> str:
    """The interpreter Swift's scripts run with (from the proxy's ``#!`` line)."""
    with contextlib.suppress(OSError, IndexError):
        first = (BINDIR / "swift-proxy-server").read_text().splitlines()[0]
        if first.startswith("#!"):
            interp = first[2:].split()[0]
            if os.access(interp, os.X_OK):
                return interp
    return "/usr/bin/python3"


def swift_available() -> bool:
    """Swift's servers and memcached are installed."""
    return all(os.access(BINDIR / name, os.X_OK) for name in REQUIRED_BINARIES)


def add_multi_delete_md5(client: Any) -> None:
    """Make ``delete_objects`` send ``Content-MD5``, which Swift's s3api insists on.

    botocore >= 1.36 sends a CRC32 checksum instead; S3 accepts that, Swift answers
    ``InvalidRequest: Missing required header for this request: Content-MD5``.
    """

    def add_md5(request: Any, **_: Any) -> None:
        body = request.body
        if isinstance(body, str):
            body = body.encode()
        if "Content-MD5" not in request.headers and isinstance(body, bytes | bytearray):
            digest = hashlib.md5(body, usedforsecurity=False).digest()
            request.headers["Content-MD5"] = base64.b64encode(digest).decode()

    client.meta.events.register("before-sign.s3.DeleteObjects", add_md5)


def _supports_xattr(directory: Path) -> bool:
    try:
        os.setxattr(directory, "user.sandcrawler.probe", b"1")
        os.removexattr(directory, "user.sandcrawler.probe")
    except OSError:
        return False
    return True


def _make_base_dir() -> Path:
    """A fresh temp dir on a filesystem with user xattrs (Swift stores metadata there)."""
    candidates = [tempfile.gettempdir(), "/var/tmp", "/dev/shm"]
    for parent in dict.fromkeys(candidates):
        if not os.path.isdir(parent):
            continue
        base = Path(tempfile.mkdtemp(prefix="sandcrawler-s3-", dir=parent))
        if _supports_xattr(base):
            return base
        shutil.rmtree(base, ignore_errors=True)
    raise RuntimeError(f"no temp directory with user xattr support among {candidates}")


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


class S3Server:
    """Start with ``start()`` (or as a context manager); ``endpoint_url`` is the S3 endpoint."""

    access_key = "test:tester"
    secret_key = "testing"
    region = "us-east-1"

    def __init__(self, *, startup_timeout: float = 30.0, port: int = 0) -> None:
        """``port``: the S3 endpoint's (Swift's proxy); 0 for a free one, as the
        other servers' always are."""
        missing = [name for name in REQUIRED_BINARIES if not os.access(BINDIR / name, os.X_OK)]
        if missing:
            raise RuntimeError(
                f"Swift/memcached binaries not found in {BINDIR}: {', '.join(missing)} "
                "(Debian: apt-get install swift-proxy swift-account swift-container "
                "swift-object memcached)"
            )
        self.startup_timeout = startup_timeout
        self.python = swift_python()
        self.ports = {name: free_port() for name in (*SERVERS, "memcached")}
        if port:
            self.ports["proxy"] = port
        self.base: Path | None = None
        self.startup_seconds: float | None = None
        self._procs: dict[str, subprocess.Popen] = {}
        self._logs: list[Any] = []

    @property
    def endpoint_url(self) -> str:
        return f"http://127.0.0.1:{self.ports['proxy']}"

    # -- start-up ---------------------------------------------------------

    def _write_config(self, base: Path) -> None:
        etc = base / "etc"
        devices = base / "devices"
        (devices / "d1").mkdir(parents=True)
        etc.mkdir()
        (base / "logs").mkdir()
        (etc / "swift.conf").write_text(
            "[swift-hash]\n"
            f"swift_hash_path_prefix = {secrets.token_hex(16)}\n"
            f"swift_hash_path_suffix = {secrets.token_hex(16)}\n\n"
            "[storage-policy:0]\nname = Policy-0\ndefault = yes\n"
        )
        user = pwd.getpwuid(os.geteuid()).pw_name
        for kind in ("account", "container", "object"):
            (etc / f"{kind}-server.conf").write_text(
                _BACKEND_CONF.format(
                    kind=kind, name=f"{kind}-server", port=self.ports[kind], user=user,
                    swift_dir=etc, devices=devices,
                )
            )
        account, user_name = self.access_key.split(":")
        (etc / "proxy-server.conf").write_text(
            _PROXY_CONF.format(
                name="proxy-server",
                port=self.ports["proxy"],
                user=user,
                swift_dir=etc,
                pipeline=PROXY_PIPELINE,
                memcached_port=self.ports["memcached"],
                region=self.region,
                account=account,
                user_name=user_name,
                secret=self.secret_key,
            )
        )

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        return env

    def _spawn(self, name: str, cmd: list[str]) -> None:
        assert self.base is not None
        log = open(self.base / "logs" / f"{name}.log", "wb")  # noqa: SIM115 - closed in stop()
        self._logs.append(log)
        self._procs[name] = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=self._env(),
            cwd=self.base,
            start_new_session=True,
        )

    def log_tail(self, lines: int = 30) -> str:
        """The last lines of every server's log, for error messages."""
        if self.base is None:
            return ""
        parts = []
        for path in sorted((self.base / "logs").glob("*.log")):
            with contextlib.suppress(OSError):
                text = path.read_text(errors="replace").splitlines()[-lines:]
                parts.append(f"--- {path.name}\n" + "\n".join(text))
        return "\n".join(parts)

    def start(self) -> str:
        if self._procs:
            return self.endpoint_url
        record_start("s3")
        t0 = time.monotonic()
        self.base = _make_base_dir()
        try:
            self._write_config(self.base)
            etc = self.base / "etc"
            memcached = [
                str(BINDIR / "memcached"),
                "-l",
                "127.0.0.1",
                "-p",
                str(self.ports["memcached"]),
                "-U",
                "0",
                "-m",
                "64",
            ]
            if os.geteuid() == 0:
                memcached += ["-u", "root"]
            self._spawn("memcached", memcached)
            rings = subprocess.run(
                [
                    self.python,
                    "-c",
                    _BUILD_RINGS,
                    str(etc),
                    *(f"{kind}={self.ports[kind]}" for kind in ("account", "container", "object")),
                ],
                capture_output=True,
                text=True,
                env=self._env(),
            )
            if rings.returncode != 0:
                raise RuntimeError(f"building Swift rings failed:\n{rings.stderr[-3000:]}")
            for kind in SERVERS:
                self._spawn(
                    kind,
                    [
                        self.python,
                        "-c",
                        _BOOTSTRAP,
                        str(etc),
                        str(BINDIR / f"swift-{kind}-server"),
                        str(etc / f"{kind}-server.conf"),
                        "-v",
                    ],
                )
            self._wait_ready(t0 + self.startup_timeout)
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - t0
        return self.endpoint_url

    def _wait_ready(self, deadline: float) -> None:
        last_error: object = None
        poll = Backoff(_READY_POLL, deadline=deadline)
        while True:
            for name, proc in self._procs.items():
                if proc.poll() is not None:
                    raise RuntimeError(
                        f"Swift {name} exited with status {proc.returncode} during start-up\n"
                        + self.log_tail()
                    )
            if all(_port_open(port) for port in self.ports.values()):
                try:
                    self.client(connect_timeout=2, read_timeout=5, max_attempts=1).list_buckets()
                    return
                except Exception as exc:  # keep polling until the deadline
                    last_error = exc
            else:
                last_error = "not all ports accept connections yet"
            if not poll.retry():
                raise RuntimeError(
                    f"Swift S3 server not ready after {self.startup_timeout:.0f}s "
                    f"({last_error})\n" + self.log_tail()
                )

    # -- use --------------------------------------------------------------

    def client(
        self, *, connect_timeout: float = 10, read_timeout: float = 60, max_attempts: int = 3
    ) -> Any:
        """A boto3 S3 client: path-style addressing, signature v4, us-east-1.

        Checksums only when required, and ``Content-MD5`` on ``delete_objects``
        (see ``add_multi_delete_md5``).
        """
        import boto3
        from botocore.config import Config

        options: dict[str, Any] = {
            "signature_version": "s3v4",
            "s3": {"addressing_style": "path"},
            "region_name": self.region,
            "connect_timeout": connect_timeout,
            "read_timeout": read_timeout,
            "retries": {"max_attempts": max_attempts, "mode": "standard"},
        }
        try:
            # botocore >= 1.36 adds CRC checksums (and aws-chunked bodies) to every upload
            # by default; Swift's s3api predates them. Only send them when S3 requires it.
            config = Config(
                **options,
                request_checksum_calculation="when_required",
                response_checksum_validation="when_required",
            )
        except TypeError:
            config = Config(**options)
        client = boto3.client(
            "s3",
            endpoint_url=self.endpoint_url,
            region_name=self.region,
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
            config=config,
        )
        add_multi_delete_md5(client)
        return client

    def create_bucket(self, name: str) -> None:
        self.client().create_bucket(Bucket=name)

    # -- shutdown ---------------------------------------------------------

    def stop(self) -> None:
        procs = list(self._procs.values())
        for proc in procs:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 5
        for proc in procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        for proc in procs:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=5)
        self._procs.clear()
        for log in self._logs:
            log.close()
        self._logs.clear()
        if self.base is not None:
            shutil.rmtree(self.base, ignore_errors=True)
            self.base = None

    def __enter__(self) -> S3Server:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    """``python -m sandcrawler_testkit.s3_server``: an S3 server to try the S3 store with."""
    parser = _cli.parser(
        "sandcrawler_testkit.s3_server",
        "Start a throwaway S3 server on loopback (OpenStack Swift with s3api and a\n"
        "memcached, in a temporary directory that is removed on exit) and print, as\n"
        "one JSON line, the settings that point sandcrawler at it (s3_endpoint_url,\n"
        "s3_access_key_id, s3_secret_access_key, s3_region: SANDCRAWLER_S3_* in the\n"
        "environment). Needs Debian's swift-proxy, swift-account, swift-container,\n"
        "swift-object and memcached. Serves until SIGTERM or Ctrl-C.")
    _cli.add_port(parser, 0)
    parser.add_argument("--bucket", action="append", default=[],
                        help="create this bucket once the server is up (repeatable)")
    args = parser.parse_args(argv)
    stop = _cli.stop_requested()
    try:
        _cli.check_port(args.port)
    except OSError as e:
        _cli.fail(parser, _cli.listen_error(args.port, e))
    try:
        server = S3Server(port=args.port)
    except RuntimeError as e:
        _cli.fail(parser, str(e))
    try:
        try:
            server.start()
            for bucket in args.bucket:
                server.create_bucket(bucket)
        except (RuntimeError, OSError) as e:
            _cli.fail(parser, str(e))
        except Exception as e:  # botocore's errors, creating a bucket
            _cli.fail(parser, f"{type(e).__name__}: {e}")
        settings = {"s3_endpoint_url": server.endpoint_url,
                    "s3_access_key_id": server.access_key,
                    "s3_secret_access_key": server.secret_key, "s3_region": server.region}
        print(json.dumps(settings), flush=True)
        stop.wait()
    finally:
        server.stop()


if __name__ == "__main__":
    main()
