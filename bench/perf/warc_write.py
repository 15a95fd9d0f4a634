"""The web archive's write path against a plain streamed download, in the same run.

Input: files served over loopback HTTP by a small server in its own process
(``socket.sendfile`` from the page cache, HTTP/1.1 keep-alive), so its CPU is not
counted as either side's. Cases:

  big    one file of ``--big-mb`` MiB (default 256) of random bytes after a PDF header
         (incompressible, like a PDF; served as application/pdf);
  many   ``--files`` files (default 100) of ``--file-kb`` KiB (default 1,024), the same;
  text   one file of ``--text-mb`` MiB (default 64) of CSV-like text (compressible;
         for information: it is deflated at ``warc_gzip_level``).

Each measurement is a fresh child process (this script in child mode), the work
directory's data removed and ``os.sync()`` (untimed) before it; rounds alternate
plain / archived, case by case:

  plain     urllib3, 1 MiB chunks written to a file per URL, each file fsynced when
            complete (as ``bench/perf/fileset_ingest.py``'s baseline);
  archived  ``WebArchive.session()``, ``capture(url)`` per URL (``close()`` at once, as
            the web-file/web-fileset strategies do), ``commit()``: a WARC file in a
            local blob store with fsync on, the ``web_cdx`` rows in SQLite, the spool
            directory on the same file system. Checked afterwards (untimed): every
            capture's sha1 and size are the file's.

Timed: from the first request to the last byte on disk (archived: through ``commit()``);
imports, database set-up and the server are not. MB/s = bytes / seconds (1 MB = 10^6
bytes); ratio = archived MB/s / plain MB/s of the same round, then the median over
rounds. CPU = user + system seconds of the child over the timed part (every thread).
Peak RSS = the child's ``VmHWM`` (imports included; ``ru_maxrss`` would carry the
parent's peak across exec).

``--no-block-digest`` archives without WARC-Block-Digest (``warc.block_digest =
false``; an older tree without the setting refuses it).

Run:  python bench/perf/warc_write.py [--rounds 5] [--big-mb 256] [--files 100]
                                 [--file-kb 1024] [--text-mb 64] [--gzip-level 1]
                                 [--no-block-digest]
"""

from __future__ import annotations

import argparse
import hashlib
import http.server
import inspect
import json
import os
import platform
import resource
import shutil
import socketserver
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
from _common import stream_to_file

MB = 1_000_000
MiB = 2**20
ORIGIN = "https://example.org"
#: the random files start as a PDF does: sniffed as one (unknown binary would cost
#: puremagic's full scan, some 0.35 ms a file)
PDF = b"%PDF-1.5\n"


# --- the server, in its own process: --serve ROOT PORTFILE -----------------------------------


def serve(root: Path, port_file: Path) -> None:
    types = {".pdf": "application/pdf", ".csv": "text/csv"}

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            path = root / self.path.lstrip("/")
            if not path.is_file():
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            size = path.stat().st_size
            self.send_response(200)
            self.send_header("Content-Type", types.get(path.suffix, "application/octet-stream"))
            self.send_header("Content-Length", str(size))
            self.end_headers()
            self.wfile.flush()
            with path.open("rb") as f:
                self.connection.sendfile(f)

    class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True

    server = Server(("127.0.0.1", 0), Handler)
    port_file.write_text(str(server.server_address[1]))
    server.serve_forever()


# --- the measured children: --child MODE SERVER_URL WORKDIR GZIP_LEVEL BLOCK PATH... ---------


def child(mode: str, server_url: str, workdir: Path, level: int, block_digest: bool,
          paths: list[str]) -> None:
    import urllib3

    if mode == "plain":
        http = urllib3.PoolManager(maxsize=4)
        dest = workdir / "plain"
        dest.mkdir()
        ru0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        total = 0
        for i, p in enumerate(paths):
            resp = http.request("GET", server_url + p, preload_content=False,
                                headers={"Accept-Encoding": "identity"})
            assert resp.status == 200, resp.status
            total += stream_to_file(resp, dest / f"file-{i}")
        wall = time.perf_counter() - t0
        ru1 = resource.getrusage(resource.RUSAGE_SELF)
        checks: list[tuple[int, str]] = []
    else:
        from sandcrawler.db import migrate
        from sandcrawler.db.engine import make_engine
        from sandcrawler.storage.local import LocalBlobStore
        from sandcrawler.web.archive.captures import WarcSession, WebArchive
        from sandcrawler.web.http.fetch import HttpFetcher

        engine = make_engine(f"sqlite:///{workdir / 'db.sqlite3'}")
        migrate.upgrade(engine)
        (workdir / "spool").mkdir()
        # the setting is passed only when off: an older tree has no such option
        off = {} if block_digest else {"block_digest": False}
        archive = WebArchive(LocalBlobStore(workdir / "store", fsync=True), engine,
                             HttpFetcher(routes={ORIGIN: server_url}), gzip_level=level,
                             spool_dir=workdir / "spool", **off)
        # keep_body=False as the web-file/web-fileset strategies ask (older code: no such option)
        kw = {"keep_body": False} if "keep_body" in inspect.signature(
            WarcSession.capture).parameters else {}
        ru0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        with archive.session() as session:
            checks = []
            for p in paths:
                capture = session.capture(ORIGIN + p, max_bytes=2**40, **kw)
                capture.close()
                assert capture.file_meta is not None, capture.status_code
                checks.append((capture.file_meta.size_bytes, capture.file_meta.sha1hex))
            session.commit()
        wall = time.perf_counter() - t0
        ru1 = resource.getrusage(resource.RUSAGE_SELF)
        total = sum(size for size, _ in checks)
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    # VmHWM, not ru_maxrss: the latter keeps the parent's peak across exec
    hwm = next(int(line.split()[1]) for line in Path("/proc/self/status").read_text().splitlines()
               if line.startswith("VmHWM:"))
    print(json.dumps({"bytes": total, "wall": wall, "cpu": cpu, "maxrss_kb": hwm,
                      "checks": checks}))


# --- the benchmark -----------------------------------------------------------------------------


def make_files(root: Path, args: argparse.Namespace) -> dict[str, list[str]]:
    """The cases' files under ``root``: case name -> URL paths; sha1 of each in sha1.json."""
    root.mkdir(parents=True, exist_ok=True)
    cases: dict[str, list[str]] = {"big": ["/big.pdf"], "many": [], "text": ["/text.csv"]}
    block = os.urandom(16 * MiB)
    with (root / "big.pdf").open("wb") as f:
        left = args.big_mb * MiB
        while left:
            piece = block[: min(left, len(block))]
            head = PDF if f.tell() == 0 else b""
            f.write(head + os.urandom(8) + piece[8 + len(head):])  # no two blocks alike
            left -= len(piece)
    (root / "many").mkdir(exist_ok=True)
    for i in range(args.files):
        (root / "many" / f"{i:04d}.pdf").write_bytes(PDF + os.urandom(args.file_kb * 1024
                                                                       - len(PDF)))
        cases["many"].append(f"/many/{i:04d}.pdf")
    line = 0
    with (root / "text.csv").open("w") as f:
        while f.tell() < args.text_mb * MiB:
            f.write("".join(f"site-{(line + j) % 977},{1900 + (line + j) % 123},"
                            f"{(line + j) * 7919 % 100003}\n" for j in range(1000)))
            line += 1000
    sums = {}
    for paths in cases.values():
        for p in paths:
            h = hashlib.sha1()
            with open(root / p.lstrip("/"), "rb") as f:
                while chunk := f.read(MiB):
                    h.update(chunk)
            sums[p] = h.hexdigest()
    (root / "sha1.json").write_text(json.dumps(sums))
    return cases


def run_child(mode: str, server_url: str, workdir: Path, level: int, block_digest: bool,
              paths: list[str]) -> dict:
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    os.sync()
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", mode, server_url,
         str(workdir), str(level), "on" if block_digest else "off", *paths],
        capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"{mode} child failed:\n{proc.stderr}")
    return json.loads(proc.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--big-mb", type=int, default=256)
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--file-kb", type=int, default=1024)
    parser.add_argument("--text-mb", type=int, default=64)
    parser.add_argument("--gzip-level", type=int, default=1)
    parser.add_argument("--no-block-digest", dest="block_digest", action="store_false",
                        help="archive without WARC-Block-Digest (warc.block_digest = false)")
    parser.add_argument("--cases", default="big,many,text")
    parser.add_argument("--out", type=Path, default=None, help="work directory (kept)")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--serve", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(Path(args.serve[0]), Path(args.serve[1]))
        return
    if args.child:
        mode, url, workdir, level, block, *paths = args.child
        child(mode, url, Path(workdir), int(level), block == "on", paths)
        return

    wd = args.out or Path(tempfile.mkdtemp(prefix="sandcrawler-warcbench-"))
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"== web archive write path: {args.big_mb} MiB, {args.files} x {args.file_kb} KiB, "
          f"text {args.text_mb} MiB; gzip level {args.gzip_level}; block digest "
          f"{'on' if args.block_digest else 'off'}; {args.rounds} rounds")
    print(f"   {platform.node()}: {os.cpu_count()} CPUs, load average {load}; "
          f"Python {platform.python_version()}", flush=True)
    cases = make_files(wd / "www", args)
    sums = json.loads((wd / "www" / "sha1.json").read_text())
    port_file = wd / "port"
    port_file.unlink(missing_ok=True)
    server = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--serve",
                               str(wd / "www"), str(port_file)])
    try:
        for _ in range(100):
            if port_file.exists() and port_file.read_text():
                break
            time.sleep(0.05)
        url = f"http://127.0.0.1:{port_file.read_text()}"
        names = [c for c in args.cases.split(",") if c]
        results: dict[tuple[str, str], list[dict]] = {}
        for _ in range(args.rounds):
            for name in names:
                for mode in ("plain", "archived"):
                    r = run_child(mode, url, wd / "run", args.gzip_level, args.block_digest,
                                  cases[name])
                    if mode == "archived":
                        want = [sums[p] for p in cases[name]]
                        if [c[1] for c in r["checks"]] != want:
                            sys.exit(f"{name}: the archived sha1s are not the files'")
                    results.setdefault((name, mode), []).append(r)
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(wd / "run", ignore_errors=True)
        if args.out is None:
            shutil.rmtree(wd, ignore_errors=True)
    print()
    print(f"   {'case':<6} {'mode':<9} {'MB':>7} {'MB/s':>7} {'ratio':>6} {'CPU s':>6} "
          f"{'CPU ns/B':>8} {'peak RSS':>9}   (medians of {args.rounds} rounds)")
    for name in names:
        plain, archived = results[(name, "plain")], results[(name, "archived")]
        ratios = [(a["bytes"] / a["wall"]) / (p["bytes"] / p["wall"])
                  for p, a in zip(plain, archived, strict=True)]
        for mode, runs in (("plain", plain), ("archived", archived)):
            size = runs[0]["bytes"]
            rate = median([r["bytes"] / r["wall"] / MB for r in runs])
            cpu = median([r["cpu"] for r in runs])
            rss = median([r["maxrss_kb"] * 1024 / MB for r in runs])
            ratio = f"{median(ratios):6.2f}" if mode == "archived" else ""
            print(f"   {name:<6} {mode:<9} {size / MB:7.1f} {rate:7.1f} {ratio:>6} {cpu:6.2f} "
                  f"{cpu * 1e9 / size:8.2f} {rss:7.1f} MB")
        spread = ", ".join(f"{x:.2f}" for x in ratios)
        print(f"   {'':<6} ratios by round: {spread}")


if __name__ == "__main__":
    main()
