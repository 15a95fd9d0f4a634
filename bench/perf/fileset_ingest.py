"""Fileset ingest throughput and peak memory against a plain streamed download.

Input: a loopback platform server (``sandcrawler_testkit.platforms.PlatformServer``,
threads of this process) playing Zenodo, with four records generated here:

  startup   1 file of 1 KiB: what a run costs besides moving bytes (interpreter and
            imports, database set-up, landing page, API call, result);
  fileset   ``--files`` files (default 200) of ``--file-kb`` KiB (default 1,024);
  file-S    one file of ``--small-big-mb`` MiB (default 256);
  file      one file of ``--big-mb`` MiB (default 1,024).

Data: random bytes (``os.urandom``), incompressible. The fileset's files are distinct
random bytes; a single file repeats one 16 MiB random block (cheap to make; no gain for
gzip either, whose window is 32 KiB), its first 8 bytes made unique per record. Every
file goes through the server's redirect hop, as Zenodo's downloads do.

Measured, each in a fresh process and with a fresh data directory, ``os.sync()``
(untimed) before each, cases and strategies taking turns round by round:

  baseline  a plain streamed download of the same files (this script in child mode):
            urllib3 to the loopback URL with the platform's ``Host`` header, the record's
            API JSON for the file URLs, redirects followed, 1 MiB chunks written to a
            file in the work directory, each file fsynced when complete (as the store
            does). No hashing, no second copy.
  ours      ``python -m sandcrawler ingest fileset https://zenodo.org/records/<id>
            --strategy S --force-recrawl`` with ``SANDCRAWLER_DATA_DIR`` (SQLite and the
            local store, fsync on), ``SANDCRAWLER_HTTP_ROUTES`` (to the server) and
            ``SANDCRAWLER_FILESET_TMP_DIR`` (spool files, same file system) in the work
            directory; strategies web-fileset and archiveorg-fileset for the fileset,
            web-file and archiveorg-file for single files, and for the largest file
            web-file once more with ``SANDCRAWLER_WARC_GZIP_LEVEL=0`` (the default level
            is the setting ``warc_gzip_level``). Its result JSON must say ``hit: true``,
            the strategy asked for, and the file count and total size of the record.

Figures: seconds are the wall time of the command (interpreter start-up included; the
startup row shows how much of it that is, measured by a small launcher around the
command), best of ``--rounds``. MB/s = record bytes / seconds (1 MB = 10^6 bytes, as
memory; sizes are asked for in KiB and MiB); ratio = ours MB/s / baseline MB/s (< 1:
slower than the plain download); net: the same with the startup row's seconds (of the
baseline, of the web or archiveorg strategies) taken off first. CPU = user + system
seconds of the command (``wait4``).
Peak RSS = the command's ``ru_maxrss`` (= its ``VmHWM``, the kernel's exact high-water
mark), or the largest ``VmHWM`` of any process it started (``/proc`` read every 50 ms;
none expected) if larger. Stored = bytes the run left in its data directory (WARC or
item files, SQLite) or, for the baseline, on disk. Memory flat: (peak at the largest
file - peak at file-S) / size difference, in MB per MB; flat when under 0.05.

Disk: about twice the largest file, plus slack (checked first). Memory: the server holds
every record (about big + small-big + files x file-kb) in this process.

Run:  python bench/perf/fileset_ingest.py [--files 200] [--file-kb 1024] [--big-mb 1024]
                                     [--small-big-mb 256] [--rounds 1] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
from _common import arg_parser, bench_env, print_header, skip, stream_to_file, work_dir

MB = 1_000_000
KiB = 1024
MiB = 2**20
KB = 1024 / MB  # /proc and ru_maxrss count kB of 1,024 bytes: times KB gives MB
BLOCK = 16 * MiB  # the repeated random block of a single big file
POLL = 0.05  # seconds between scans of the child's process tree
FLAT = 0.05
ZENODO = "zenodo.org"
HEADERS = {
    "Host": ZENODO,
    "User-Agent": "sandcrawler-bench (plain download)",
    "Accept": "*/*",
    "Accept-Encoding": "identity",
}


# --- the baseline, in a child process: --baseline SERVER_URL RECORD_ID DEST ------------------


def baseline_child(server_url: str, record_id: str, dest: Path) -> None:
    """Download every file of the record to ``dest``, streamed; print a JSON line."""
    import urllib3

    http = urllib3.PoolManager(maxsize=4)
    origin = f"https://{ZENODO}"

    def get(url: str) -> urllib3.BaseHTTPResponse:
        for _ in range(10):
            target = server_url + url.removeprefix(origin) if url.startswith(origin) else url
            resp = http.request(
                "GET", target, headers=HEADERS, redirect=False, preload_content=False
            )
            location = resp.headers.get("Location")
            if resp.status in (301, 302, 303, 307, 308) and location:
                resp.read()
                resp.release_conn()
                url = location
                continue
            if resp.status != 200:
                sys.exit(f"baseline: HTTP {resp.status} for {url}")
            return resp
        sys.exit(f"baseline: too many redirects from {url}")

    t0 = time.perf_counter()
    resp = get(f"{origin}/api/records/{record_id}")
    record = json.loads(resp.read())
    resp.release_conn()
    total = 0
    for i, f in enumerate(record["files"]):
        total += stream_to_file(get(f["links"]["self"]), dest / f"file-{i}")
    seconds = time.perf_counter() - t0
    print(json.dumps({"files": len(record["files"]), "bytes": total, "seconds": seconds}))


# --- running and watching a subprocess -------------------------------------------------------


@dataclass
class Run:
    wall: float
    cpu: float
    maxrss: int  # kB, the process itself (ru_maxrss)
    tree_hwm: int  # kB, the largest VmHWM of any descendant seen (0: none)
    stdout: str
    stored: int = 0  # bytes left in the data directory

    @property
    def peak_mb(self) -> float:
        return max(self.maxrss, self.tree_hwm) * KB


def _children_of(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                text = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(text[text.rindex(")") + 2 :].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


def _hwm(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


# Started as ``python -c RUSAGE OUT CMD...``: runs CMD and writes its wall time and
# rusage to OUT. ``ru_maxrss`` of a process started straight from this one would start at
# this process's own peak (the server holds every record): the kernel keeps the high-water
# mark of the memory a process had before exec, and ours is large. This small launcher's
# is a few MB, below any figure measured here.
RUSAGE = """
import json, os, subprocess, sys, time
t0 = time.perf_counter()
proc = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(proc.pid, 0)
wall = time.perf_counter() - t0
proc.returncode = code = os.waitstatus_to_exitcode(status)
with open(sys.argv[1], "w") as f:
    json.dump({"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
               "maxrss": usage.ru_maxrss}, f)
sys.exit(code)
"""


def run(cmd: list[str], *, env: dict[str, str], cwd: Path) -> Run:
    """Run ``cmd`` to completion (fail loudly otherwise): wall, CPU and peak memory."""
    out_path, err_path, usage_path = cwd / "run.stdout", cwd / "run.stderr", cwd / "run.json"
    os.sync()  # untimed: the previous run's dirty pages are not this run's cost
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-c", RUSAGE, str(usage_path), *cmd],
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
        )
        tree_hwm = 0
        while proc.poll() is None:  # descendants of the command, if any: their VmHWM
            for child in _children_of(proc.pid)[1:]:
                tree_hwm = max(tree_hwm, _hwm(child))
            time.sleep(POLL)
    stdout = out_path.read_text(errors="replace")
    if proc.returncode != 0:
        sys.exit(
            f"command failed (exit {proc.returncode}): {' '.join(cmd)}\n"
            f"{err_path.read_text(errors='replace')}\n{stdout}"
        )
    usage = json.loads(usage_path.read_text())
    return Run(usage["wall"], usage["cpu"], usage["maxrss"], tree_hwm, stdout)


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


# --- the benchmark ---------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    record_id: int
    files: int
    size: int  # bytes in all
    strategies: list[tuple[str, int | None]]  # (strategy, warc gzip level; None = default)


@dataclass
class Result:
    best: Run | None = None

    def add(self, r: Run) -> None:
        if self.best is None or r.wall < self.best.wall:
            self.best = r


def single_file(size: int, tag: int) -> bytes:
    """``size`` bytes: one random block over and over, its first 8 bytes ``tag`` (one
    allocation of ``size``: the server holds it as it is)."""
    block = os.urandom(BLOCK)
    whole, rest = divmod(size, BLOCK)
    first = tag.to_bytes(8, "big") + block[8:]
    pieces = [block] * whole + [block[:rest]]
    pieces[0] = first[: len(pieces[0])]
    return b"".join(pieces)


def check(case: Case, strategy: str, r: Run) -> None:
    try:
        result = json.loads(r.stdout)
    except ValueError:
        sys.exit(f"{case.name} {strategy}: the output is not one JSON result:\n{r.stdout[:2000]}")
    want = {
        "hit": True,
        "ingest_strategy": strategy,
        "file_count": case.files,
        "total_size": case.size,
    }
    got = {k: result.get(k) for k in want}
    if got != want or result.get("status") not in ("success", "success-file"):
        sys.exit(
            f"{case.name} {strategy}: expected {want}, got {got}, "
            f"status {result.get('status')!r}: {result.get('error_message', '')}"
        )


def main() -> None:
    parser = arg_parser(__doc__, count="files", default=200)
    parser.add_argument(
        "--file-kb",
        type=int,
        default=1024,
        metavar="K",
        help="size of each fileset file in KiB (default: 1024)",
    )
    parser.add_argument(
        "--big-mb",
        type=int,
        default=1024,
        metavar="M",
        help="size of the big single file in MiB (default: 1024)",
    )
    parser.add_argument(
        "--small-big-mb",
        type=int,
        default=256,
        metavar="M",
        help="the second single file, for memory flatness, in MiB (default: 256)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        metavar="R",
        help="rounds; the best of them is shown (default: 1)",
    )
    parser.add_argument(
        "--baseline", nargs=3, metavar=("URL", "ID", "DEST"), help=argparse.SUPPRESS
    )  # child mode
    args = parser.parse_args()
    if args.baseline:
        baseline_child(args.baseline[0], args.baseline[1], Path(args.baseline[2]))
        return
    if not sys.platform.startswith("linux"):
        skip("needs Linux (/proc, wait4)")

    from sandcrawler.config import WarcSettings
    from sandcrawler_testkit.platforms import FakeFile, PlatformServer

    default_level = WarcSettings.model_fields["gzip_level"].default
    big, small_big = args.big_mb * MiB, args.small_big_mb * MiB
    fileset_size = args.files * args.file_kb * KiB
    print_header(
        f"fileset ingest from a loopback Zenodo: {args.files} x {args.file_kb:,} KiB, "
        f"1 x {args.small_big_mb:,} MiB, 1 x {args.big_mb:,} MiB; {args.rounds} round(s)"
    )
    print(
        "   data: random bytes (os.urandom), incompressible; single files repeat one "
        "16 MiB random block"
    )

    cases = [
        Case("startup", 1001, 1, KiB, [("web-file", None), ("archiveorg-file", None)]),
        Case(
            "fileset",
            1002,
            args.files,
            fileset_size,
            [("web-fileset", None), ("archiveorg-fileset", None)],
        ),
        Case("file-S", 1003, 1, small_big, [("web-file", None), ("archiveorg-file", None)]),
        Case(
            "file", 1004, 1, big, [("web-file", None), ("archiveorg-file", None), ("web-file", 0)]
        ),
    ]
    t0 = time.perf_counter()
    server = PlatformServer()
    server.add_zenodo(1001, [FakeFile("tiny.bin", os.urandom(KiB))], title="startup")
    fileset_data = os.urandom(fileset_size)
    step = args.file_kb * KiB
    server.add_zenodo(
        1002,
        [
            FakeFile(f"part-{i:04d}.bin", fileset_data[i * step : (i + 1) * step])
            for i in range(args.files)
        ],
        title="fileset",
    )
    del fileset_data
    server.add_zenodo(
        1003, [FakeFile("small-big.bin", single_file(small_big, 1003))], title="file-S"
    )
    server.add_zenodo(1004, [FakeFile("big.bin", single_file(big, 1004))], title="file")
    print(f"   records generated and registered (checksums) in {time.perf_counter() - t0:.1f} s")

    results: dict[tuple[str, str, int | None], Result] = {}
    with server, work_dir(args.out) as wd:
        need = 2 * max(big, fileset_size) + 500 * MB
        free = shutil.disk_usage(wd).free
        if free < need:
            skip(
                f"not enough disk space in {wd}: {free / 1e9:.1f} GB free, "
                f"{need / 1e9:.1f} GB needed"
            )
        routes = json.dumps(server.routes())
        print(f"   server {server.url}; work directory {wd} ({free / 1e9:.0f} GB free)", flush=True)
        t_runs = time.perf_counter()
        for rnd in range(args.rounds):
            for case in cases:
                dest = wd / "baseline"
                dest.mkdir()
                try:
                    r = run(
                        [
                            sys.executable,
                            str(Path(__file__).resolve()),
                            "--baseline",
                            server.url,
                            str(case.record_id),
                            str(dest),
                        ],
                        env=dict(os.environ),
                        cwd=wd,
                    )
                    r.stored = du(dest)
                finally:
                    shutil.rmtree(dest, ignore_errors=True)
                got = json.loads(r.stdout)
                if (got["files"], got["bytes"]) != (case.files, case.size):
                    sys.exit(f"baseline {case.name}: got {got}")
                results.setdefault((case.name, "baseline", None), Result()).add(r)
                line = [f"baseline {r.wall:.2f}s"]
                for strategy, level in case.strategies:
                    data_dir = wd / "data"
                    spool = wd / "spool"
                    spool.mkdir()
                    settings = {
                        "data_dir": str(data_dir),
                        "http_routes": routes,
                        "fileset_tmp_dir": str(spool),
                    }
                    if level is not None:
                        settings["warc_gzip_level"] = str(level)
                    try:
                        r = run(
                            [
                                sys.executable,
                                "-m",
                                "sandcrawler",
                                "ingest",
                                "fileset",
                                f"https://{ZENODO}/records/{case.record_id}",
                                "--strategy",
                                strategy,
                                "--force-recrawl",
                            ],
                            env=bench_env(wd, **settings),
                            cwd=wd,
                        )
                        r.stored = du(data_dir)
                    finally:
                        shutil.rmtree(data_dir, ignore_errors=True)
                        shutil.rmtree(spool, ignore_errors=True)
                    check(case, strategy, r)
                    results.setdefault((case.name, strategy, level), Result()).add(r)
                    gz = "" if level is None else f" gzip {level}"
                    line.append(f"{strategy}{gz} {r.wall:.2f}s")
                print(f"   round {rnd + 1} {case.name}: {', '.join(line)}", flush=True)
        runs_seconds = time.perf_counter() - t_runs

    print()
    print(
        "| case | strategy | gzip | bytes | seconds | MB/s | baseline MB/s | ratio "
        "| net MB/s | net baseline MB/s | net ratio | CPU s | peak RSS MB | stored MB |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")

    def startup_of(strategy: str) -> float:
        family = (
            "baseline"
            if strategy == "baseline"
            else "web-file"
            if strategy.startswith("web")
            else "archiveorg-file"
        )
        best = results[("startup", family, None)].best
        assert best is not None
        return best.wall

    def net_rate(size: int, wall: float, startup: float) -> float:
        return size / MB / (wall - startup) if wall > startup else float("nan")

    def fmt(x: float) -> str:
        return "-" if x != x else f"{x:.1f}" if abs(x) >= 1 else f"{x:.3f}"

    for case in cases:
        base = results[(case.name, "baseline", None)].best
        assert base is not None
        rows: list[tuple[str, str, str, Run]] = [
            ("baseline (urllib3 to disk)", "-", "baseline", base)
        ]
        for strategy, level in case.strategies:
            best = results[(case.name, strategy, level)].best
            assert best is not None
            gz = (
                "-"
                if strategy.startswith("archiveorg")
                else str(default_level if level is None else level)
            )
            rows.append((strategy, gz, strategy, best))
        base_rate = case.size / MB / base.wall
        net_base = (
            net_rate(case.size, base.wall, startup_of("baseline"))
            if case.name != "startup"
            else float("nan")
        )
        for name, gz, strategy, r in rows:
            rate = case.size / MB / r.wall
            ratio = fmt(rate / base_rate) if r is not base else ""
            net = (
                net_rate(case.size, r.wall, startup_of(strategy))
                if case.name != "startup"
                else float("nan")
            )
            net_ratio = fmt(net / net_base) if r is not base else ""
            print(
                f"| {case.name} | {name} | {gz} | {case.size:,} | {r.wall:.2f} | {fmt(rate)} "
                f"| {fmt(base_rate)} | {ratio} | {fmt(net)} | {fmt(net_base)} | {net_ratio} "
                f"| {r.cpu:.2f} | {r.peak_mb:.1f} | {r.stored / MB:.1f} |"
            )

    print()
    print(
        f"Peak RSS, file-S ({args.small_big_mb} MiB) -> file ({args.big_mb} MiB); "
        f"flat when the slope is under {FLAT} MB per MB:"
    )
    diff = (big - small_big) / MB
    for strategy, level in [("baseline", None), *cases[3].strategies]:
        small = results.get(("file-S", strategy, level))
        large = results[("file", strategy, level)]
        if small is None or small.best is None or large.best is None:
            continue
        a, b = small.best.peak_mb, large.best.peak_mb
        slope = (b - a) / diff if diff else float("nan")
        verdict = "n/a" if slope != slope else ("flat" if slope < FLAT else "GROWS")
        gz = "" if level is None else f" (gzip {level})"
        print(f"   {strategy + gz:<22} {a:7.1f} -> {b:7.1f} MB  slope {slope:+.4f}  {verdict}")
    print()
    print(
        f"   default warc_gzip_level: {default_level}; "
        f"timed runs took {runs_seconds:.0f} s; this process's peak RSS (server with every "
        f"record): {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * KB:.0f} MB"
    )


if __name__ == "__main__":
    main()
