"""Peak memory while processing a large PDF (default up to 500 MB): flat, or proportional
to the file?

Input: synthetic PDFs of ``--mb`` sizes (default 50 200 500; 1 MB = 10^6 bytes), written
by this script straight to disk, 1 MiB at a time (never the whole file in memory), one
file at a time, each deleted (with the data directory it was stored into) before the
next is written. A file is a valid PDF 1.4 written by hand: a catalogue, a page tree,
an info dictionary, letter-size pages of text (Helvetica, 32 lines each), the bulk as
image XObjects of at most 8 MB each (8-bit DeviceGray, 4,000 pixels wide and as many rows
as make the file the size asked for, no /Filter: random bytes, incompressible; 7 images
for 50 MB, 63 for 500 MB), and a cross-reference table with the exact offset of every
object. There is one page per image plus a first page; page 1 has text only, so the
thumbnails are the same work at every size. Two layouts (``--layout``, default both):

  drawn    each page after the first draws one of the images (the way a scanned book
           or a figure-heavy paper is big): to lay out those pages (text extraction
           loads every page) PDFium has to load them.
  orphans  the same image objects, in the cross-reference table but referenced by
           nothing: sandcrawler still reads every byte (hashing, the XMP scan, the copy
           into the store), PDFium never loads them.

Each file is checked before use: pypdfium2's page count and pdfinfo's "Pages:" must
both be the number of pages written, and pdfinfo must report the file's size.

Measured per file, each in a fresh process:

  cli       ``sandcrawler process FILE`` (``python -m sandcrawler``), with a fresh data
            directory and no services configured: SQLite database and local store (with
            fsync) in the data directory, no GROBID. Its processes: the CLI parent
            (file metadata, copy into the store, database writes), the multiprocessing
            forkserver it starts, the sandbox child forked from the forkserver (where
            ``extract_pdf`` runs, under a 2 GiB RLIMIT_AS), and multiprocessing's
            resource tracker.
  extract   ``extract_pdf(FILE)`` in a fresh Python process (this script,
            ``--measure extract FILE``): what the sandbox child does, without the CLI.
  filemeta  ``file_metadata(FILE)`` likewise: what the parent does first.

For the largest file of each layout, the extraction steps are also re-done one by one in
a fresh process (``--measure phases``), printing the process's memory after each step,
to show which step holds memory (PDFium allocates natively, so tracemalloc would not
see it; the kernel's counters do).

Method: while a subprocess runs, this script finds its descendants every 20 ms (parent
pids in ``/proc/*/stat``) and reads ``/proc/<pid>/status`` of each process of that
tree every 5 ms:

  HWM   ``VmHWM``, the kernel's own high-water mark of the process's resident set:
        exact, not sampled (it only grows, and each process is read again after its
        peak, before it exits), like ``ru_maxrss``. It counts file-backed pages too:
        shared libraries, and the pages of a memory-mapped file the process has read.
        ``extract_pdf`` maps the whole PDF (``mmap``) for as long as it works on it and
        scans all of it for an XMP packet, so the whole file enters its resident set
        as page cache (shared, clean, reclaimable: not memory the process allocated,
        but what ``ps`` and ``ru_maxrss`` show, and the mapping counts in full against
        the sandbox's RLIMIT_AS).
  anon  the largest ``RssAnon`` seen: memory the process itself allocated (heap,
        PDFium's buffers). Sampled: a spike shorter than 5 ms can be missed, and a
        peak reached by a fast climb is seen a few MB low.
  tree  the largest sum of ``RssAnon`` over all the processes of the tree at one sample.

The in-process children also print their own ``ru_maxrss`` (= VmHWM) and their memory
after imports, before the call ("base"). Memory, like file sizes, is in MB of 10^6
bytes. Slope: (peak at the largest file - peak at the second largest) / (size
difference), in MB of memory per MB of file; a figure is called flat when its slope is
under 0.05 (less than 5 % of the added file size). Between the two largest files, as
extraction may use up to a fixed cap of memory for page images (REOPEN_GROWTH, 128 MiB)
while files are small: the question is whether memory still grows beyond that.

Disk: each file needs its own size twice (the file and its copy in the store) plus
slack; the script checks the free space of the work directory first and skips without
it. Run:  python bench/perf/pdf_memory.py [--mb 50 200 500] [--layout drawn orphans]
                                     [--out DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
from _common import arg_parser, bench_env, print_header, skip, work_dir

MB = 1_000_000
MiB = 2**20
KB = 1024 / MB  # /proc and ru_maxrss count kB of 1,024 bytes: times KB gives MB
IMAGE_WIDTH = 4_000  # pixels, 8-bit gray
IMAGE_MAX = 8 * MB  # bytes per image at most
TEXT_LINES = 32
POLL_TREE = 0.02  # seconds between scans of /proc for the process tree
POLL = 0.005  # seconds between reads of the known processes' memory
FLAT = 0.05
SEED = 20261122
LAYOUTS = ("drawn", "orphans")


def retune(parser: argparse.ArgumentParser, flag: str, **attrs: object) -> None:
    """Adjust an option ``_common.arg_parser`` created (its single int, its help)."""
    action = parser._option_string_actions[flag]
    for name, value in attrs.items():
        setattr(action, name, value)


# --- the synthetic PDF -------------------------------------------------------------------------


def write_pdf(path: Path, size: int, layout: str, seed: int = SEED) -> tuple[int, int]:
    """A PDF of about ``size`` bytes (see the module docstring), streamed to ``path``.
    Returns (bytes written, number of images)."""
    rnd = random.Random(seed)
    n_images = max(1, -(-size // IMAGE_MAX))
    height = max(1, size // (n_images * IMAGE_WIDTH))
    image_bytes = IMAGE_WIDTH * height
    first_page = 5  # 1 catalogue, 2 page tree, 3 font, 4 info
    n_pages = pages_for(n_images)
    page_ids = [first_page + 2 * i for i in range(n_pages)]  # each followed by its content
    image_ids = list(range(first_page + 2 * n_pages, first_page + 2 * n_pages + n_images))
    per_page: dict[int, list[int]] = {i: [] for i in range(n_pages)}
    if layout == "drawn":
        for k, obj in enumerate(image_ids):
            per_page[1 + k].append(obj)  # one image on each page after the first
    offsets: dict[int, int] = {}

    with open(path, "wb", buffering=MiB) as f:

        def obj(num: int, body: bytes, content: bytes | None = None) -> None:
            offsets[num] = f.tell()
            f.write(b"%d 0 obj\n" % num + body)
            if content is not None:
                f.write(b"\nstream\n" + content + b"\nendstream")
            f.write(b"\nendobj\n")

        f.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
        kids = b" ".join(b"%d 0 R" % p for p in page_ids)
        obj(1, b"<< /Type /Catalog /Pages 2 0 R >>")
        obj(2, b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % n_pages)
        obj(3, b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
        obj(
            4,
            b"<< /Title (Synthetic large PDF, %s layout) /Producer (bench/perf/pdf_memory.py) >>"
            % layout.encode(),
        )
        for i, page in enumerate(page_ids):
            ops = [
                b"BT /F1 11 Tf 72 740 Td 14 TL",
                b"(Synthetic page %d of %d) Tj T*" % (i + 1, n_pages),
            ]
            ops += [
                b"(The quick brown fox jumps over the lazy dog, line %d.) Tj T*" % j
                for j in range(TEXT_LINES - 1)
            ]
            ops.append(b"ET")
            names = []
            for k, image in enumerate(per_page[i]):
                x, y = 72 + (k % 4) * 120, 72 + (k // 4 % 3) * 100
                ops.append(b"q 100 50 0 0 %d %d cm /Im%d Do Q" % (x, y, k))
                names.append(b"/Im%d %d 0 R" % (k, image))
            xobjects = b" /XObject << " + b" ".join(names) + b" >>" if names else b""
            content = b"\n".join(ops)
            obj(
                page,
                b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
                b"/Resources << /Font << /F1 3 0 R >>%s >> >>" % (page + 1, xobjects),
            )
            obj(page + 1, b"<< /Length %d >>" % len(content), content)
        for image in image_ids:
            offsets[image] = f.tell()
            f.write(
                b"%d 0 obj\n<< /Type /XObject /Subtype /Image /Width %d /Height %d "
                b"/ColorSpace /DeviceGray /BitsPerComponent 8 /Length %d >>\nstream\n"
                % (image, IMAGE_WIDTH, height, image_bytes)
            )
            left = image_bytes
            while left:
                chunk = min(left, MiB)
                f.write(rnd.randbytes(chunk))
                left -= chunk
            f.write(b"\nendstream\nendobj\n")
        count = max(offsets) + 1
        xref = f.tell()
        f.write(b"xref\n0 %d\n0000000000 65535 f \n" % count)
        for num in range(1, count):
            f.write(b"%010d 00000 n \n" % offsets[num])
        file_id = hashlib.md5(b"%s %d %d" % (layout.encode(), size, seed)).hexdigest().encode()
        f.write(
            b"trailer\n<< /Size %d /Root 1 0 R /Info 4 0 R /ID [<%s> <%s>] >>\n"
            b"startxref\n%d\n%%%%EOF\n" % (count, file_id, file_id, xref)
        )
        written = f.tell()
    return written, n_images


def pages_for(n_images: int) -> int:
    """Page 1 has text only; each image gets a page of its own after it."""
    return n_images + 1


def check_pdf(path: Path, written: int, n_pages: int) -> str:
    """Both readers open it and count its pages; returns a one-line description."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(path))
    try:
        pages = len(doc)
    finally:
        doc.close()
    proc = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=False)
    info = dict(line.split(":", 1) for line in proc.stdout.splitlines() if ":" in line)
    info_pages = int(info.get("Pages", "0").strip() or 0)
    info_size = int(info.get("File size", "0").split()[0] or 0)
    if (proc.returncode != 0 or pages != n_pages or info_pages != n_pages
            or info_size != written):
        sys.exit(
            f"{path}: not the PDF intended: pypdfium2 {pages} pages, pdfinfo exit "
            f"{proc.returncode}, {info_pages} pages, {info_size} bytes "
            f"(wrote {written})\n{proc.stderr}"
        )
    return f"pypdfium2 {pages} pages, pdfinfo {info_pages} pages, {info_size:,} bytes"


# --- watching a process tree ------------------------------------------------------------------


@dataclass
class Proc:
    pid: int
    label: str
    hwm: int = 0  # kB
    anon: int = 0  # kB, largest sample
    file: int = 0  # kB, largest sample


@dataclass
class Watch:
    wall: float = 0.0
    procs: dict[int, Proc] = field(default_factory=dict)
    tree_anon: int = 0  # kB, largest sum over the tree at one sample
    samples: int = 0
    stdout: str = ""
    stderr: str = ""

    def by_label(self, label: str) -> list[Proc]:
        return [p for p in self.procs.values() if p.label == label]

    def peak(self, label: str, what: str) -> float:
        """MB: the largest value of ``what`` among processes labelled ``label``."""
        values = [getattr(p, what) for p in self.by_label(label)]
        return max(values) * KB if values else float("nan")


def _stat_ppid(pid: str) -> int | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(text[text.rindex(")") + 2 :].split()[1])


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            ppid = _stat_ppid(entry)
            if ppid is not None:
                children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


def _status(pid: int) -> dict[str, int] | None:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    values = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmHWM", "RssAnon", "RssFile", "PPid"):
            values[key] = int(rest.split()[0])
    return values if "VmHWM" in values else None  # a zombie has no memory fields


def _label(pid: int, root: int, procs: dict[int, Proc], ppid: int) -> str:
    if pid == root:
        return "parent"
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        cmdline = ""
    if ppid in procs and procs[ppid].label == "forkserver":
        return "sandbox child"
    if "multiprocessing.forkserver" in cmdline:
        return "forkserver"
    if "multiprocessing.resource_tracker" in cmdline:
        return "resource tracker"
    return "other"


def watch(cmd: list[str], *, env: dict[str, str], cwd: Path) -> Watch:
    """Run ``cmd``, polling the memory of its process tree every POLL seconds."""
    result = Watch()
    out_path, err_path = cwd / "watch.stdout", cwd / "watch.stderr"
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            cmd, env=env, cwd=cwd, stdout=out, stderr=err, stdin=subprocess.DEVNULL
        )
        tree: list[int] = []
        scanned = 0.0
        while True:
            done = proc.poll() is not None
            now = time.perf_counter()
            if not done and now - scanned >= POLL_TREE:
                tree, scanned = _descendants(proc.pid), now
            tree_anon = 0
            for pid in [] if done else tree:
                status = _status(pid)
                if status is None:
                    continue
                p = result.procs.get(pid)
                if p is None:
                    p = result.procs[pid] = Proc(
                        pid, _label(pid, proc.pid, result.procs, status.get("PPid", 0))
                    )
                p.hwm = max(p.hwm, status["VmHWM"])
                p.anon = max(p.anon, status.get("RssAnon", 0))
                p.file = max(p.file, status.get("RssFile", 0))
                tree_anon += status.get("RssAnon", 0)
            result.tree_anon = max(result.tree_anon, tree_anon)
            result.samples += 1
            if done:
                break
            time.sleep(POLL)
        result.wall = time.perf_counter() - t0
    result.stdout = out_path.read_text(errors="replace")
    result.stderr = err_path.read_text(errors="replace")
    if proc.returncode != 0:
        sys.exit(f"command failed (exit {proc.returncode}): {' '.join(cmd)}\n{result.stderr}")
    return result


# --- in a fresh process: --measure -------------------------------------------------------------


def _self_status() -> dict[str, int]:
    status = _status(os.getpid())
    assert status is not None
    return status


def measure(what: str, path: Path) -> None:
    """Child mode: run one function on ``path``, print a JSON line of figures."""
    if what == "phases":
        phases(path)
        return
    from sandcrawler.core.filemeta import file_metadata
    from sandcrawler.pdf.info import extract_pdf

    base = _self_status()
    t0 = time.perf_counter()
    if what == "extract":
        out = extract_pdf(path)
        detail = {"status": out.status, "pages": out.page_count, "words": out.word_count}
    else:
        meta = file_metadata(path)
        detail = {"status": "success", "size": meta.size_bytes, "mime": meta.mimetype}
    wall = time.perf_counter() - t0
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kB on Linux
    print(
        json.dumps(
            {
                "wall": wall,
                "maxrss": maxrss,
                "base_rss": base["RssAnon"] + base["RssFile"],
                "base_anon": base["RssAnon"],
                **detail,
            }
        )
    )


def phases(path: Path) -> None:
    """Child mode: extract_pdf's steps one by one, memory after each (JSON lines)."""
    import pypdfium2 as pdfium

    from sandcrawler.pdf.info import (
        DEFAULT_THUMBNAILS,
        LISTING_WIDTH,
        _encode,
        _page_texts,
        read_xmp,
    )

    def mark(step: str) -> None:
        s = _self_status()
        print(
            json.dumps(
                {"step": step, "anon": s["RssAnon"], "file": s["RssFile"], "hwm": s["VmHWM"]}
            ),
            flush=True,
        )

    mark("imports done")
    # As extract_pdf: PDFium reads the file by path; the XMP scan reads it in windows.
    doc = pdfium.PdfDocument(str(path))
    mark("PdfDocument opened")
    doc.get_metadata_dict()
    read_xmp(path)
    mark("info read, XMP scan in windows (read_xmp)")
    page0 = doc[0]
    largest = max([*DEFAULT_THUMBNAILS.values(), LISTING_WIDTH or 0])
    image = page0.render(scale=largest / page0.get_size()[0]).to_pil().convert("RGB")
    for width in DEFAULT_THUMBNAILS.values():
        _encode(image, width, "PNG")
    if LISTING_WIDTH:
        _encode(image, LISTING_WIDTH, "JPEG")
    del image
    page0.close()
    mark("page 1 rendered, thumbnails encoded")
    for i, _text in enumerate(_page_texts(doc, str(path), len(doc))):
        mark(f"page {i + 1} text read")
    doc.close()
    mark("document closed (FPDF_CloseDocument)")


def run_measure(what: str, path: Path, wd: Path) -> tuple[Watch, list[dict]]:
    w = watch(
        [sys.executable, str(Path(__file__).resolve()), "--measure", what, str(path)],
        env=dict(os.environ),
        cwd=wd,
    )
    return w, [json.loads(line) for line in w.stdout.splitlines() if line.strip()]


# --- the benchmark ----------------------------------------------------------------------------


@dataclass
class Row:
    layout: str
    size: int
    images: int
    cli: Watch
    extract: tuple[Watch, dict]
    filemeta: tuple[Watch, dict]


def slope(rows: list[Row], value: Callable[[Row], float]) -> float:
    # The two largest files: extraction may use up to its fixed cap (REOPEN_GROWTH of
    # page images) on the way up from small files; what matters is whether memory
    # still grows once files are large.
    small, large = rows[-2] if len(rows) > 1 else rows[0], rows[-1]
    dy = value(large) - value(small)
    return dy / ((large.size - small.size) / MB) if large.size != small.size else float("nan")


def verdict(s: float) -> str:
    if s != s:  # nan: one size only
        return "n/a"
    return "flat" if s < FLAT else f"GROWS ({s:.0%} of the file)"


def show_layout(layout: str, rows: list[Row]) -> None:
    print(
        f"-- {layout}: sandcrawler process FILE (MB; HWM = VmHWM, exact; anon = largest "
        "RssAnon sample; tree = largest sum of RssAnon)"
    )
    print(
        f"   {'file MB':>8} {'wall s':>7} | {'parent HWM':>10} {'anon':>6} | "
        f"{'child HWM':>9} {'anon':>6} {'file':>6} | {'forksrv':>7} | {'max HWM':>7} "
        f"{'tree anon':>9} | status"
    )
    cols = {
        "parent HWM": lambda r: r.cli.peak("parent", "hwm"),
        "parent anon": lambda r: r.cli.peak("parent", "anon"),
        "child HWM": lambda r: r.cli.peak("sandbox child", "hwm"),
        "child anon": lambda r: r.cli.peak("sandbox child", "anon"),
        "child file": lambda r: r.cli.peak("sandbox child", "file"),
        "forkserver HWM": lambda r: r.cli.peak("forkserver", "hwm"),
        "tree max HWM": lambda r: max(p.hwm for p in r.cli.procs.values()) * KB,
        "tree anon": lambda r: r.cli.tree_anon * KB,
    }
    for r in rows:
        v = {k: f(r) for k, f in cols.items()}
        try:
            out = json.loads(r.cli.stdout.splitlines()[0])
            status = f"{out['status']}, {out.get('page_count')} pages"
        except (IndexError, ValueError, KeyError):
            status = "?"
        labels = sorted({p.label for p in r.cli.procs.values()})
        print(
            f"   {r.size / MB:8.1f} {r.cli.wall:7.2f} | {v['parent HWM']:10.1f} "
            f"{v['parent anon']:6.1f} | {v['child HWM']:9.1f} {v['child anon']:6.1f} "
            f"{v['child file']:6.1f} | {v['forkserver HWM']:7.1f} | {v['tree max HWM']:7.1f} "
            f"{v['tree anon']:9.1f} | {status}; {r.cli.samples} samples, processes: "
            f"{', '.join(labels)}"
        )
    slopes = {k: slope(rows, f) for k, f in cols.items()}
    print("   slope, MB per MB of file: " + ", ".join(f"{k} {s:+.3f}" for k, s in slopes.items()))

    print(f"-- {layout}: in a fresh process (MB; base = after imports, before the call)")
    print(
        f"   {'file MB':>8} | {'extract_pdf':>11} {'maxrss':>7} {'anon':>6} {'file':>6} "
        f"{'base':>5} | {'file_metadata':>13} {'maxrss':>7} {'anon':>6} {'base':>5}"
    )
    icols = {
        "extract_pdf maxrss": lambda r: r.extract[1]["maxrss"] * KB,
        "extract_pdf anon": lambda r: r.extract[0].peak("parent", "anon"),
        "extract_pdf file": lambda r: r.extract[0].peak("parent", "file"),
        "file_metadata maxrss": lambda r: r.filemeta[1]["maxrss"] * KB,
        "file_metadata anon": lambda r: r.filemeta[0].peak("parent", "anon"),
    }
    for r in rows:
        e, m = r.extract[1], r.filemeta[1]
        print(
            f"   {r.size / MB:8.1f} | {e['wall']:9.2f} s {e['maxrss'] * KB:7.1f} "
            f"{icols['extract_pdf anon'](r):6.1f} {icols['extract_pdf file'](r):6.1f} "
            f"{e['base_rss'] * KB:5.1f} | {m['wall']:11.2f} s {m['maxrss'] * KB:7.1f} "
            f"{icols['file_metadata anon'](r):6.1f} {m['base_rss'] * KB:5.1f}   "
            f"({e['status']}, {e['pages']} pages, {e['words']} words)"
        )
    islopes = {k: slope(rows, f) for k, f in icols.items()}
    print("   slope, MB per MB of file: " + ", ".join(f"{k} {s:+.3f}" for k, s in islopes.items()))

    print(
        f"-- {layout}: flat? (slope < {FLAT} MB per MB of file, "
        f"{rows[max(0, len(rows) - 2)].size / MB:.0f} -> {rows[-1].size / MB:.0f} MB)"
    )
    judged = [
        (f"CLI {k}", slopes[k])
        for k in ("parent HWM", "parent anon", "child anon", "child HWM", "tree anon")
    ]
    judged += [
        (f"in-process {k}", islopes[k])
        for k in ("file_metadata maxrss", "extract_pdf anon", "extract_pdf maxrss")
    ]
    for name, s in judged:
        print(f"   {name:<33} {verdict(s)}")
    grows = [name for name, s in judged if s == s and s >= FLAT]
    if len(rows) < 2:
        print("   (one size only: no slope)")
    elif grows:
        print(f"   => NOT flat: {', '.join(grows)} grow with the file")
    else:
        print("   => flat: no figure grows with the file")


def show_phases(layout: str, size: int, steps: list[dict]) -> None:
    print(
        f"-- {layout}: extract_pdf's steps one by one on the {size / MB:.0f} MB file "
        "(MB after each step)"
    )
    print(f"   {'step':<44} {'anon':>7} {'file':>7} {'HWM':>7}")
    pages = [i for i, s in enumerate(steps) if s["step"].startswith("page ")]
    # first few pages, every 16th, the last: enough to see the cap and the reopening
    shown = set(pages[:4] + pages[::16] + pages[-1:])
    for i, s in enumerate(steps):
        if s["step"].startswith("page ") and i not in shown:
            continue
        print(
            f"   {s['step']:<44} {s['anon'] * KB:7.1f} {s['file'] * KB:7.1f} {s['hwm'] * KB:7.1f}"
        )


def main() -> None:
    parser = arg_parser(__doc__, count="mb", default=0)
    retune(
        parser,
        "--mb",
        nargs="+",
        default=[50, 200, 500],
        metavar="MB",
        help="file sizes in MB, smallest first (default: 50 200 500)",
    )
    parser.add_argument(
        "--layout",
        nargs="+",
        choices=LAYOUTS,
        default=list(LAYOUTS),
        help="where the bulk is: drawn images, or unreferenced objects (default: both)",
    )
    parser.add_argument(
        "--measure", nargs=2, metavar=("WHAT", "FILE"), help=argparse.SUPPRESS
    )  # child mode, used by the script itself
    args = parser.parse_args()
    if args.measure:
        measure(args.measure[0], Path(args.measure[1]))
        return
    sizes = sorted(int(mb * MB) for mb in args.mb)
    if shutil.which("pdfinfo") is None:
        skip("pdfinfo (poppler-utils) not installed: needed to check the generated files")

    print_header(
        f"peak memory of sandcrawler process on large PDFs: "
        f"{', '.join(f'{s / MB:g}' for s in sizes)} MB, layouts {', '.join(args.layout)}"
    )
    with work_dir(args.out) as wd:
        need = 2 * sizes[-1] + 200 * MB
        free = shutil.disk_usage(wd).free
        print(
            f"   work directory {wd}: {free / 1e9:.1f} GB free, "
            f"{need / 1e9:.2f} GB needed at most (largest file + its copy in the store)"
        )
        if free < need:
            skip(
                f"not enough disk space in {wd}: {free / 1e9:.1f} GB free, "
                f"{need / 1e9:.1f} GB needed"
            )
        results: dict[str, list[Row]] = {}
        steps: dict[str, tuple[int, list[dict]]] = {}
        for layout in args.layout:
            for size in sizes:
                pdf = wd / f"large-{layout}-{size // MB}mb.pdf"
                data_dir = wd / f"data-{layout}-{size // MB}mb"
                try:
                    t0 = time.perf_counter()
                    written, images = write_pdf(pdf, size, layout)
                    gen = time.perf_counter() - t0
                    print(
                        f"   {pdf.name}: {written / MB:.1f} MB, {images} images, written in "
                        f"{gen:.1f} s; {check_pdf(pdf, written, pages_for(images))}",
                        flush=True,
                    )
                    env = bench_env(wd, data_dir=str(data_dir))
                    cli = watch(
                        [sys.executable, "-m", "sandcrawler", "process", str(pdf), "--silent"],
                        env=env,
                        cwd=wd,
                    )
                    extract = run_measure("extract", pdf, wd)
                    filemeta = run_measure("filemeta", pdf, wd)
                    results.setdefault(layout, []).append(
                        Row(
                            layout,
                            written,
                            images,
                            cli,
                            (extract[0], extract[1][0]),
                            (filemeta[0], filemeta[1][0]),
                        )
                    )
                    print(
                        f"     cli {cli.wall:.2f} s, extract_pdf "
                        f"{extract[1][0]['wall']:.2f} s, file_metadata "
                        f"{filemeta[1][0]['wall']:.2f} s",
                        flush=True,
                    )
                    if size == sizes[-1]:
                        steps[layout] = (written, run_measure("phases", pdf, wd)[1])
                finally:
                    pdf.unlink(missing_ok=True)
                    shutil.rmtree(data_dir, ignore_errors=True)
        for layout, rows in results.items():
            show_layout(layout, rows)
            show_phases(layout, *steps[layout])


if __name__ == "__main__":
    main()
