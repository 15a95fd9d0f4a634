"""Shared pieces of the scripts under bench/ (not a benchmark itself).

- the real fixtures (two Crossref works, their GROBID TEI) and synthetic variants of
  the works: same reference lists, distinct DOI (``<doi>.b<i>``) and ``indexed`` time;
- running a command as a timed subprocess (wall clock, CPU of the whole process tree);
- a durable throwaway PostgreSQL cluster, fresh databases in it, and its server CPU.

The scripts run as ``python bench/<dir>/<name>.py`` (``perf``, ``eval``, ``build``): each
puts ``bench/`` on ``sys.path`` and imports this module as ``_common``, which adds the
three script directories, so that a script imports another by bare name wherever it
lies (``perf/match_scale.py`` uses ``eval/match_eval.py`` and ``build/match_synth.py``).
"""

from __future__ import annotations

import argparse
import copy
import ctypes
import os
import platform
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from sandcrawler.core.timestamps import iso_utc
from sandcrawler_testkit.grobid_server import FakeGrobid
from sandcrawler_testkit.postgres import PostgresCluster, find_pg_bindir

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
for _dir in ("perf", "eval", "build"):
    if str(BENCH / _dir) not in sys.path:
        sys.path.append(str(BENCH / _dir))
SHARED_DATA = Path(os.environ.get("SANDCRAWLER_SHARED_DATA", REPO.parent / "shared" / "data"))
FIXTURES = SHARED_DATA / "sandcrawler-fixtures"
CROSSREF_GLOB = "crossref_api_work_*.json"
TEI_GLOB = "grobid_refs_*.tei.xml"

#: ``python -m sandcrawler``: the installed package, run by this interpreter.
SANDCRAWLER = [sys.executable, "-m", "sandcrawler"]


# --- fixtures and synthetic input --------------------------------------------------------


def stream_to_file(resp: Any, path: Path, chunk: int = 2**20) -> int:
    """The plain download every archiving benchmark is measured against: a urllib3
    response streamed into ``path`` unbuffered, fsynced, its connection released;
    the bytes written."""
    total = 0
    with open(path, "wb", buffering=0) as out:
        for data in resp.stream(chunk):
            out.write(data)
            total += len(data)
        os.fsync(out.fileno())
    resp.release_conn()
    return total


def resolve_command(text: str | None) -> list[str]:
    """``--command`` split as a shell would, a relative program path made absolute
    (the command runs in a scratch directory)."""
    if not text:
        return list(SANDCRAWLER)
    words = shlex.split(text)
    if "/" in words[0] and Path(words[0]).exists():
        words[0] = str(Path(words[0]).absolute())
    return words


def add_extract_options(parser: Any) -> None:
    """``--options`` and ``--command``: how the benches that run ``sandcrawler
    extract`` are told which build to run and with what."""
    parser.add_argument("--options", default="", metavar="OPTS",
                        help="more options for sandcrawler extract, e.g. '--reader pdfium'")
    parser.add_argument("--command", default=None, metavar="CMD",
                        help="the sandcrawler command to run, e.g. a development build "
                        "(default: this interpreter's `-m sandcrawler`)")


def skip(reason: str) -> None:
    """A benchmark that cannot run here says why and exits 0 (nothing was measured)."""
    print(f"SKIPPED: {reason}", file=sys.stderr)
    sys.exit(0)


def require_fixtures() -> tuple[list[Path], list[Path]]:
    """The real Crossref works and GROBID TEI files; skip the benchmark without them."""
    if not FIXTURES.is_dir():
        skip(f"fixtures directory {FIXTURES} not found (set SANDCRAWLER_SHARED_DATA)")
    works = sorted(FIXTURES.glob(CROSSREF_GLOB))
    tei = sorted(FIXTURES.glob(TEI_GLOB))
    if not works or not tei:
        skip(f"no {CROSSREF_GLOB} or {TEI_GLOB} files in {FIXTURES}")
    return works, tei


def corpus_reference_strings() -> list[str]:
    """Every distinct reference string of GROBID's annotated corpus (``corpus/`` and
    ``evaluation/``), sorted; skip the benchmark without the corpus."""
    from sandcrawler.citations.crf.corpus import read_corpus

    corpus = SHARED_DATA / "grobid-citation-corpus"
    if not (corpus / "corpus").is_dir():
        skip(f"GROBID citation corpus not found at {corpus}")
    return sorted({r.text for d in ("corpus", "evaluation") for r in read_corpus(corpus / d)})


def load_works(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """The real works as stored: Crossref API envelopes (``{"message": work, ...}``)."""
    return [orjson.loads(p.read_bytes()) for p in paths]


def shifted(ts: str, seconds: int) -> str:
    """An ISO 8601 UTC date-time (``Z`` allowed) moved by ``seconds``."""
    return iso_utc(datetime.fromisoformat(ts) + timedelta(seconds=seconds))


def synthetic_work(envelope: dict[str, Any], i: int) -> dict[str, Any]:
    """Variant ``i`` of a real work: DOI ``<doi>.b<i>``, ``indexed`` ``i`` seconds later.

    Everything else, the reference list in particular, is the real record (shared,
    not copied: callers serialise and discard).
    """
    out = dict(envelope)
    work = dict(envelope["message"])
    ts = datetime.fromisoformat(work["indexed"]["date-time"]) + timedelta(seconds=i)
    work["DOI"] = f"{work['DOI']}.b{i}"
    work["indexed"] = {
        "date-parts": [[ts.year, ts.month, ts.day]],
        "date-time": iso_utc(ts),
        "timestamp": int(ts.timestamp() * 1000),
    }
    out["message"] = work
    return out


def synthetic_work_lines(envelopes: Sequence[dict[str, Any]], n: int) -> Iterator[bytes]:
    """``n`` JSON lines cycling over the real works."""
    for i in range(n):
        yield orjson.dumps(synthetic_work(envelopes[i % len(envelopes)], i)) + b"\n"


def replicate_rows(rows: Sequence[dict[str, Any]], n: int) -> Iterator[bytes]:
    """``n`` grobid_refs JSON lines cycling over real rows: ``source_id`` ``<id>.b<i>``,
    ``source_ts`` ``i`` seconds later (as ``synthetic_work`` would give)."""
    for i in range(n):
        row = copy.copy(rows[i % len(rows)])
        row["source_id"] = f"{row['source_id']}.b{i}"
        if row.get("source_ts"):
            row["source_ts"] = shifted(row["source_ts"], i)
        yield orjson.dumps(row) + b"\n"


def write_lines(path: Path, lines: Iterable[bytes]) -> int:
    """Write the lines; returns the number of bytes."""
    size = 0
    with path.open("wb") as f:
        for line in lines:
            f.write(line)
            size += len(line)
    return size


@contextmanager
def fake_grobid(tei: Sequence[Path]) -> Iterator[FakeGrobid]:
    """FakeGrobid (real GROBID TEI answers) in a thread of this process: its CPU is
    the benchmark's own, so it never counts as sandcrawler's."""
    with FakeGrobid(tei) as server:
        yield server


# --- command line, environment, work directory ---------------------------------------------


def arg_parser(
    doc: str | None, *, count: str, default: int, jobs: bool = False
) -> argparse.ArgumentParser:
    """``--<count> N`` (rows or works), ``--out DIR`` (keep the inputs there) and, with
    ``jobs``, ``--jobs J`` for the sandcrawler command under test."""
    parser = argparse.ArgumentParser(
        description=doc,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(f"--{count}", type=int, default=default, metavar="N",
                        help=f"number of {count} to generate (default: {default})")
    parser.add_argument("--out", type=Path, default=None, metavar="DIR",
                        help="keep generated files in DIR, e.g. bench/out "
                        "(default: a temporary directory, removed at the end)")
    if jobs:
        parser.add_argument("--jobs", type=int, default=1, metavar="J",
                            help="-j for the sandcrawler command (default: 1)")
    return parser


@contextmanager
def work_dir(out: Path | None) -> Iterator[Path]:
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        yield out.resolve()
        return
    tmp = Path(tempfile.mkdtemp(prefix="sandcrawler-bench-"))
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def bench_env(workdir: Path, **settings: str) -> dict[str, str]:
    """The environment for sandcrawler subprocesses: no SANDCRAWLER_* and no config file
    from the caller's environment, only ``settings`` (e.g. ``database_url=...``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SANDCRAWLER_")}
    home = workdir / "home"
    env["XDG_CONFIG_HOME"] = str(home / "config")
    env["XDG_DATA_HOME"] = str(home / "data")
    for name, value in settings.items():
        env[f"SANDCRAWLER_{name.upper()}"] = value
    return env


def print_header(title: str) -> None:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"== {title}")
    print(f"   {platform.node()}: {os.cpu_count()} CPUs, load average {load}; "
          f"Python {platform.python_version()}")


# --- timed subprocesses ----------------------------------------------------------------------


@dataclass
class Timing:
    """One finished command: wall seconds and CPU seconds of its whole process tree."""

    wall: float
    user: float
    sys: float
    returncode: int
    stdout: str
    stderr: str

    @property
    def cpu(self) -> float:
        return self.user + self.sys


def _children_cpu() -> tuple[float, float]:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime, ru.ru_stime


def become_subreaper() -> bool:
    """Make orphaned descendants (e.g. multiprocessing's forkserver, which the sandcrawler
    process never waits for) our children, so that reaping them adds their CPU time, and
    their workers', to RUSAGE_CHILDREN. Linux only; False when unavailable."""
    if not sys.platform.startswith("linux"):
        return False
    pr_set_child_subreaper = 36
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(pr_set_child_subreaper, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def reap_orphans(timeout: float = 30.0) -> int:
    """Wait for every remaining child (orphans adopted as subreaper); returns how many.

    Only for a process whose children are all short-lived (no PostgreSQL started here).
    """
    deadline = time.monotonic() + timeout
    reaped = 0
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return reaped
        if pid:
            reaped += 1
            continue
        if time.monotonic() > deadline:
            print(f"warning: children still running after {timeout:g}s; CPU figures are low",
                  file=sys.stderr)
            return reaped
        time.sleep(0.005)


def run_timed(
    cmd: Sequence[str] | str,
    *,
    env: dict[str, str],
    cwd: Path,
    stdout: int | None = subprocess.PIPE,
    shell: bool = False,
    reap: bool = False,
) -> Timing:
    """Run ``cmd`` to completion; fail loudly on a non-zero exit.

    CPU is the RUSAGE_CHILDREN delta: the command and every descendant that has been
    waited for (with ``reap``, also orphans adopted through ``become_subreaper``).
    """
    u0, s0 = _children_cpu()
    t0 = time.perf_counter()
    proc = subprocess.run(
        ["bash", "-o", "pipefail", "-c", cmd] if shell else list(cmd),
        env=env, cwd=cwd, stdout=stdout, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - t0
    if reap:
        reap_orphans()
    u1, s1 = _children_cpu()
    timing = Timing(
        wall=wall, user=u1 - u0, sys=s1 - s0, returncode=proc.returncode,
        stdout=(proc.stdout or b"").decode(errors="replace"),
        stderr=proc.stderr.decode(errors="replace"),
    )
    if proc.returncode != 0:
        shown = cmd if isinstance(cmd, str) else " ".join(cmd)
        sys.exit(f"command failed (exit {proc.returncode}): {shown}\n{timing.stderr}")
    return timing


def sandcrawler(args: Sequence[str], *, env: dict[str, str], cwd: Path, **kw: Any) -> Timing:
    return run_timed([*SANDCRAWLER, *args], env=env, cwd=cwd, **kw)


def rate(n: int, seconds: float) -> float:
    return n / seconds if seconds > 0 else float("inf")


def median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


# --- PostgreSQL --------------------------------------------------------------------------------


@contextmanager
def durable_cluster() -> Iterator[PostgresCluster]:
    """A throwaway cluster with fsync on (production-like commits); skip without binaries."""
    if find_pg_bindir() is None:
        skip("PostgreSQL server binaries (initdb, pg_ctl) not installed")
    if shutil.which("psql") is None:
        skip("psql not installed")
    with PostgresCluster(durable=True) as cluster:
        yield cluster


def psql(cluster: PostgresCluster, database: str, sql: str) -> str:
    """One statement through psql, unaligned tuples only."""
    proc = subprocess.run(
        [*cluster.psql_args, "-d", database, "-X", "-tA", "-v", "ON_ERROR_STOP=1", "-c", sql],
        capture_output=True, text=True, check=False,
    )
    if proc.returncode != 0:
        sys.exit(f"psql failed on {database}: {sql}\n{proc.stderr}")
    return proc.stdout.strip()


def init_database(cluster: PostgresCluster, name: str, workdir: Path) -> str:
    """Create database ``name`` with ``sandcrawler db init``; returns its URL."""
    url = cluster.url_for(name)
    sandcrawler(["db", "init"], env=bench_env(workdir, database_url=url), cwd=workdir)
    return url


def drop_database(cluster: PostgresCluster, name: str) -> None:
    psql(cluster, "postgres", f'DROP DATABASE IF EXISTS "{name}"')


def count_rows(cluster: PostgresCluster, database: str, table: str) -> int:
    return int(psql(cluster, database, f"SELECT count(*) FROM {table}"))


def _proc_stat(pid: int | str) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # Fields after the command name (which may contain spaces) start at "state" (field 3).
    return text[text.rindex(")") + 2 :].split()


def process_cpu(pid: int | None) -> float | None:
    """CPU seconds used so far by process ``pid`` (all its threads, and its children
    that have been waited for); None if it is gone or not on Linux."""
    stat = _proc_stat(pid) if pid is not None else None
    if stat is None:
        return None
    return sum(int(x) for x in stat[11:15]) / os.sysconf("SC_CLK_TCK")


def server_cpu(cluster: PostgresCluster) -> float | None:
    """CPU seconds used so far by the cluster: the postmaster, its live processes and
    (through its cutime/cstime) the backends that have exited. None if not on Linux."""
    try:
        postmaster = int((cluster.datadir / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    tick = os.sysconf("SC_CLK_TCK")
    stat = _proc_stat(postmaster)
    if stat is None:
        return None
    # utime, stime, cutime, cstime are fields 14-17, i.e. indexes 11-14 from "state".
    ticks = sum(int(x) for x in stat[11:15])
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            child = _proc_stat(entry)
            if child is not None and int(child[1]) == postmaster:
                ticks += int(child[11]) + int(child[12])
    return ticks / tick


def cpu_ticks() -> tuple[int, int] | None:
    """(busy, total) clock ticks of all CPUs since boot, from /proc/stat; None if not
    on Linux. Between two readings: how busy the whole machine was, other users'
    processes included."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    except OSError:
        return None
    # user nice system idle iowait irq softirq steal (guest time is already in user)
    ticks = [int(x) for x in fields[1:9]]
    total = sum(ticks)
    return total - ticks[3] - ticks[4], total


def busy_cores(before: tuple[int, int] | None, after: tuple[int, int] | None) -> float | None:
    """How many of the machine's CPUs were busy on average between two ``cpu_ticks()``."""
    if before is None or after is None or after[1] <= before[1]:
        return None
    return (after[0] - before[0]) / (after[1] - before[1]) * (os.cpu_count() or 1)


def settle(seconds: float = 0.3) -> None:
    """Let the postmaster reap a backend that just exited before reading server CPU."""
    time.sleep(seconds)


def with_server_cpu(
    cluster: PostgresCluster, run: Callable[[], Timing]
) -> tuple[Timing, float | None]:
    """``run()`` and the cluster's CPU seconds meanwhile (None if unknown)."""
    settle()
    before = server_cpu(cluster)
    timing = run()
    settle()
    after = server_cpu(cluster)
    return timing, (after - before if before is not None and after is not None else None)
