"""``sandcrawler grobid-serve`` under GROBID's own client: PDFs/s, latency and memory.

A directory of ``--files`` PDFs is made from the demo's three articles (and, with
``--shared``, the PDFs of ``../shared/data/pdfs``), repeated under distinct names.
For each ``--concurrency`` the service runs as its own process (its data directory
fresh, no catalog, so no consolidation), is warmed up, and grobid_client_python's
command processes the directory at ``--n`` threads (``processFulltextDocument`` by
default). Printed per run: documents answered 200 and otherwise (a 204 for a PDF
without references, say), wall seconds, PDFs answered per second, the service's
p50 and p99 latency (from its ``/metrics`` histogram, as Prometheus'
``histogram_quantile`` interpolates it), its 503s, and the peak resident memory
of its whole process tree (the service and its workers, sampled from /proc every
0.1 s).

    python bench/perf/grobid_serve.py [--files 100] [--concurrency 2 4] [--n 4]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
import urllib3
from _common import REPO, SANDCRAWLER, SHARED_DATA, bench_env, print_header
from prometheus_client.parser import text_string_to_metric_families

DEMO = REPO / "src" / "sandcrawler" / "demo" / "site"
_STARTED = re.compile(r"sandcrawler grobid-serve: (http://\S+)/api/ ")


def make_inputs(directory: Path, files: int, shared: bool) -> list[Path]:
    sources = sorted(DEMO.glob("*.pdf"))
    if shared:
        sources += sorted((SHARED_DATA / "pdfs").glob("*.pdf"))
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(files):
        src = sources[i % len(sources)]
        dst = directory / f"{i:04d}-{src.stem}.pdf"
        shutil.copyfile(src, dst)
        out.append(dst)
    return out


def _tree(pid: int) -> list[int]:
    found, todo = [pid], [pid]
    while todo:
        parent = todo.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                children = [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
            found += children
            todo += children
    return found


def _rss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class PeakRss:
    """The largest sum of resident memory of ``pid``'s process tree seen."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak = pid, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            self.peak = max(self.peak, sum(_rss(p) for p in _tree(self.pid)))

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


def histogram(url: str, endpoint: str) -> tuple[list[tuple[float, float]], float, float]:
    """The request-seconds histogram of ``endpoint``: cumulative (bound, count) pairs,
    the count and the 503s."""
    text = urllib3.request("GET", url + "/metrics").data.decode()
    buckets: list[tuple[float, float]] = []
    count = rejected = 0.0
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.labels.get("endpoint") != endpoint:
                continue
            if s.name == "sandcrawler_grobid_serve_request_seconds_bucket":
                buckets.append((float(s.labels["le"]), s.value))
            elif s.name == "sandcrawler_grobid_serve_request_seconds_count":
                count = s.value
            elif s.name == "sandcrawler_grobid_serve_busy_rejections_total":
                rejected = s.value
    return sorted(buckets), count, rejected


def quantile(q: float, buckets: list[tuple[float, float]]) -> float:
    """Prometheus' ``histogram_quantile``: linear within the bucket the rank falls in."""
    total = buckets[-1][1]
    if not total:
        return float("nan")
    rank = q * total
    lower, below = 0.0, 0.0
    for bound, count in buckets:
        if count >= rank:
            if bound == float("inf"):
                return lower
            return lower + (bound - lower) * (rank - below) / max(count - below, 1e-9)
        lower, below = bound, count
    return lower


def run(concurrency: int, inputs: Path, work: Path, n: int, service: str) -> dict[str, float]:
    env = bench_env(work, data_dir=str(work / "data"))
    server = subprocess.Popen([*SANDCRAWLER, "grobid-serve", "--port", "0", "--concurrency",
                               str(concurrency)], env=env, cwd=work,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert server.stderr is not None
    url = None
    for raw in server.stderr:
        if m := _STARTED.search(raw.decode()):
            url = m.group(1)
            break
    if url is None:
        raise SystemExit(f"grobid-serve did not start (exit {server.wait()})")
    threading.Thread(target=server.stderr.read, daemon=True).start()
    peak = PeakRss(server.pid)
    out = work / "tei"
    client = Path(sys.executable).parent / "grobid_client"
    started = time.monotonic()
    done = subprocess.run([str(client), "--server", url, "--input", str(inputs), "--output",
                           str(out), "--n", str(n), service], capture_output=True, text=True,
                          cwd=work, check=False)
    wall = time.monotonic() - started
    buckets, count, rejected = histogram(url, service)
    rss = peak.stop()
    server.terminate()
    server.wait(60)
    if done.returncode != 0:
        raise SystemExit(f"grobid_client failed: {done.stderr[-2000:]}")
    ok = len(list(out.glob("*.grobid.tei.xml")))
    errors = len(list(out.glob("*_[0-9][0-9][0-9].txt")))
    return {"concurrency": concurrency, "ok": ok, "errors": errors, "wall": wall,
            "rate": (ok + errors) / wall, "p50": quantile(0.5, buckets),
            "p99": quantile(0.99, buckets),
            "requests": count, "rejected": rejected, "rss_mb": rss / 2**20}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--n", type=int, default=4, help="grobid_client's --n (threads)")
    parser.add_argument("--service", default="processFulltextDocument",
                        choices=["processFulltextDocument", "processHeaderDocument",
                                 "processReferences"])
    parser.add_argument("--shared", action="store_true",
                        help="add the PDFs of ../shared/data/pdfs to the demo's three")
    args = parser.parse_args()
    if not (Path(sys.executable).parent / "grobid_client").exists():
        raise SystemExit("grobid_client not found: pip install -e '.[test]'")
    print_header(f"grobid-serve: {args.service}, {args.files} PDFs, grobid_client --n {args.n}")
    with tempfile.TemporaryDirectory(prefix="sandcrawler-bench-") as tmp:
        root = Path(tmp)
        inputs = root / "pdfs"
        files = make_inputs(inputs, args.files, args.shared)
        size = sum(f.stat().st_size for f in files)
        print(f"   {len(files)} PDFs, {size / 2**20:.1f} MiB; the server's p50/p99 from its "
              "histogram (request arrival to answer, upload included)")
        print(f"{'workers':>8} {'200':>5} {'other':>6} {'wall s':>8} {'PDFs/s':>7} "
              f"{'p50 s':>7} {'p99 s':>7} {'503s':>6} {'peak RSS':>9}")
        for concurrency in args.concurrency:
            work = root / f"c{concurrency}"
            work.mkdir()
            r = run(concurrency, inputs, work, args.n, args.service)
            print(f"{concurrency:>8} {int(r['ok']):>5} {int(r['errors']):>6} {r['wall']:>8.1f} "
                  f"{r['rate']:>7.2f} {r['p50']:>7.2f} {r['p99']:>7.2f} "
                  f"{int(r['rejected']):>6} {r['rss_mb']:>7.0f} MB")


if __name__ == "__main__":
    main()
