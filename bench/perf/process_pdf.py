"""PDFs per second for metadata + text + thumbnails on the real papers, against poppler-utils.

Input: the real papers in ``../shared/data/pdfs/*.pdf`` (8 files, 9 kB to 2 MB; set
SANDCRAWLER_SHARED_DATA to look elsewhere); the benchmark is skipped without them.
Before anything is timed every variant makes one untimed pass over all papers (page
cache, lazy imports, PDFium and poppler's font set-up).

Measured in the same run, ``--repeat`` rounds (default 5), each over all papers, the
variants taking turns in rotating order from round to round:

  ours      in-process, per paper: ``sandcrawler.core.filemeta.file_metadata(path)`` (size,
            sha1, sha256, md5, MIME type in one pass), then
            ``sandcrawler.pdf.info.extract_pdf(path)`` (PDFium: document info and
            XMP, file identifiers, every page's text, page 0 rendered once at the
            largest thumbnail width and scaled down to the PNG thumbnails of
            ``DEFAULT_THUMBNAILS`` plus the ``LISTING_WIDTH`` JPEG). Reported with and
            without the file metadata pass, and split between the two.
  poppler   per paper, one subprocess after another: ``pdfinfo FILE``, ``pdftotext
            FILE -`` (stdout captured), and one page-0 render per thumbnail, at the
            same widths as ours (read from ``sandcrawler.pdf.info``): ``pdftoppm
            -f 1 -l 1 -singlefile -png -scale-to-x W -scale-to-y -1 FILE OUT`` for each
            PNG width and ``-jpeg -jpegopt quality=85`` (our JPEG quality) for the
            listing width. Split by tool.
  cli       ``sandcrawler process DIR`` as a subprocess (DIR: symlinks to the papers),
            a fresh data directory per round and no services configured (SQLite
            database and local store in the data directory, no GROBID): wall time of
            the whole command, so it includes interpreter start-up and imports, the
            database set-up, starting the sandbox child (a forkserver child with time
            and memory limits, where extraction runs), copying each PDF and its
            thumbnails into the store with fsync, and the SQLite writes. The wall time
            of the same command on an empty directory (start-up alone) is shown too.

Printed: PDFs/s (median and best round) for each variant, ours / poppler in throughput
and in time, ms per paper by tool, a per-paper table, and CPU seconds. Also, for where
the time goes inside ``extract_pdf``: its steps re-done one by one with the same calls
(pypdfium2 and ``sandcrawler.pdf.info._encode``) outside the timed rounds, median of
``--repeat`` passes, with PNG encoding with Pillow's ``optimize=True`` for scale (what
the extractor used before this benchmark showed it cost 44 % of the time for files no
smaller).

Fairness, and differences in the work done:

- poppler pays one process start per tool call, 6 per paper (pdfinfo, pdftotext and
  four pdftoppm), and each call opens and parses the PDF again; ours opens it once.
  The cost of a trivial spawn (``pdfinfo -v``, median of 20) is measured and printed
  so it can be subtracted; a "poppler net of spawns" estimate is printed beside it.
- ours renders page 0 once (at the largest width) and scales it down with Pillow's
  LANCZOS filter; poppler renders page 0 four times, once per size.
- both write plain PNGs (zlib's default level) and JPEG at quality 85.
- ours also hashes the file three ways (file_metadata) in the "with file metadata"
  figure; poppler does nothing like it.
- ours runs in-process here; the ``cli`` figure shows what the real command costs.

Sanity check, not timed: ours and pdfinfo agree on each paper's page count (any
disagreement is printed, and the script exits non-zero at the end); word counts
(``\\w+`` over ours and over pdftotext's output) are printed for comparison only.

Run:  python bench/perf/process_pdf.py [--repeat 5] [--out bench/out]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
import orjson
from _common import (
    SHARED_DATA,
    arg_parser,
    become_subreaper,
    bench_env,
    median,
    print_header,
    rate,
    reap_orphans,
    run_timed,
    skip,
    work_dir,
)

from sandcrawler.core.filemeta import file_metadata
from sandcrawler.pdf.info import (
    DEFAULT_THUMBNAILS,
    LISTING_WIDTH,
    _encode,
    _page_texts,
    extract_pdf,
    read_xmp,
)

PDF_DIR = SHARED_DATA / "pdfs"
JPEG_QUALITY = 85  # as sandcrawler.pdf.info._encode (not exposed as a constant)
POPPLER = ("pdfinfo", "pdftotext", "pdftoppm")
SPAWNS = 20
_WORD = re.compile(r"\w+")
_PAGES = re.compile(r"^Pages:\s+(\d+)", re.MULTILINE)


def retune(parser: argparse.ArgumentParser, flag: str, **attrs: object) -> None:
    """Adjust an option ``_common.arg_parser`` created (its generic help text)."""
    action = parser._option_string_actions[flag]
    for name, value in attrs.items():
        setattr(action, name, value)


def self_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_quiet(cmd: list[str]) -> subprocess.CompletedProcess[bytes]:
    proc = subprocess.run(cmd, capture_output=True, stdin=subprocess.DEVNULL, check=False)
    if proc.returncode != 0:
        sys.exit(
            f"command failed (exit {proc.returncode}): {' '.join(cmd)}\n"
            f"{proc.stderr.decode(errors='replace')}"
        )
    return proc


# --- the variants: one paper each --------------------------------------------------------------


@dataclass
class Paper:
    path: Path
    size: int
    #: step -> seconds, one entry per round
    times: dict[str, list[float]] = field(default_factory=dict)
    pages_ours: int | None = None
    pages_poppler: int | None = None
    words_ours: int | None = None
    words_poppler: int | None = None

    def add(self, step: str, seconds: float) -> None:
        self.times.setdefault(step, []).append(seconds)


def poppler_steps(out_dir: Path) -> list[tuple[str, Callable[[Path], list[str]]]]:
    """(step name, argv for a paper): the tool calls that do our extractor's work."""
    steps: list[tuple[str, Callable[[Path], list[str]]]] = [
        ("pdfinfo", lambda p: ["pdfinfo", str(p)]),
        ("pdftotext", lambda p: ["pdftotext", str(p), "-"]),
    ]
    common = ["pdftoppm", "-f", "1", "-l", "1", "-singlefile"]
    for name, width in DEFAULT_THUMBNAILS.items():
        steps.append(
            (
                f"pdftoppm png {width}",
                lambda p, w=width, n=name: [
                    *common,
                    "-png",
                    "-scale-to-x",
                    str(w),
                    "-scale-to-y",
                    "-1",
                    str(p),
                    str(out_dir / f"{p.stem}.{n}"),
                ],
            )
        )
    if LISTING_WIDTH:
        steps.append(
            (
                f"pdftoppm jpeg {LISTING_WIDTH}",
                lambda p: [
                    *common,
                    "-jpeg",
                    "-jpegopt",
                    f"quality={JPEG_QUALITY}",
                    "-scale-to-x",
                    str(LISTING_WIDTH),
                    "-scale-to-y",
                    "-1",
                    str(p),
                    str(out_dir / f"{p.stem}.listing"),
                ],
            )
        )
    return steps


def run_poppler(
    papers: list[Paper], steps: list[tuple[str, Callable[[Path], list[str]]]], record: bool
) -> tuple[float, float]:
    """All papers through the poppler tools; returns (wall seconds, CPU seconds)."""
    c0, t0 = children_cpu(), time.perf_counter()
    for paper in papers:
        for step, argv in steps:
            s0 = time.perf_counter()
            proc = run_quiet(argv(paper.path))
            elapsed = time.perf_counter() - s0
            if record:
                paper.add(step, elapsed)
            if step == "pdfinfo" and paper.pages_poppler is None:
                m = _PAGES.search(proc.stdout.decode(errors="replace"))
                paper.pages_poppler = int(m.group(1)) if m else None
            elif step == "pdftotext" and paper.words_poppler is None:
                paper.words_poppler = len(_WORD.findall(proc.stdout.decode(errors="replace")))
    return time.perf_counter() - t0, children_cpu() - c0


def run_ours(papers: list[Paper], record: bool) -> tuple[float, float, float]:
    """All papers through file_metadata + extract_pdf in this process; returns
    (wall seconds of extract_pdf alone, wall seconds of both, CPU seconds of both)."""
    extract_total = 0.0
    c0, t0 = self_cpu(), time.perf_counter()
    for paper in papers:
        s0 = time.perf_counter()
        meta = file_metadata(paper.path)
        s1 = time.perf_counter()
        out = extract_pdf(paper.path)
        s2 = time.perf_counter()
        extract_total += s2 - s1
        if meta.mimetype != "application/pdf" or out.status != "success":
            sys.exit(f"{paper.path}: mimetype {meta.mimetype}, status {out.status} ({out.error})")
        if record:
            paper.add("file_metadata", s1 - s0)
            paper.add("extract_pdf", s2 - s1)
        paper.pages_ours, paper.words_ours = out.page_count, out.word_count
    return extract_total, time.perf_counter() - t0, self_cpu() - c0


def run_cli(wd: Path, source: Path, tag: str, expect: int) -> tuple[float, float]:
    """``sandcrawler process DIR`` with a fresh data dir; returns (wall, CPU of the tree)."""
    env = bench_env(wd, data_dir=str(wd / f"data-{tag}"))
    t = run_timed(
        [sys.executable, "-m", "sandcrawler", "process", str(source), "--silent"],
        env=env,
        cwd=wd,
        reap=True,
    )
    statuses = [orjson.loads(line)["status"] for line in t.stdout.splitlines() if line.strip()]
    if len(statuses) != expect or any(s != "success" for s in statuses):
        sys.exit(f"sandcrawler process {source}: expected {expect} successes, got {statuses}")
    return t.wall, t.cpu


def extract_steps(papers: list[Paper], passes: int) -> dict[str, float]:
    """``extract_pdf``'s steps one by one, as it does them: ms per paper, median of passes."""
    import io

    import pypdfium2 as pdfium

    def png_optimized(image: Any, width: int) -> bytes:  # as _encode was: optimize=True
        from PIL import Image

        height = max(1, round(image.height * width / image.width))
        scaled = (
            image
            if image.width == width
            else image.resize((width, height), Image.Resampling.LANCZOS)
        )
        buf = io.BytesIO()
        scaled.save(buf, format="PNG", optimize=True)
        return buf.getvalue()

    largest = max([*DEFAULT_THUMBNAILS.values(), LISTING_WIDTH or 0])
    results: dict[str, list[float]] = {}
    for _ in range(passes):
        totals: dict[str, float] = {}

        def timed(step: str, fn: Callable[[], object], totals: dict[str, float] = totals) -> object:
            t0 = time.perf_counter()
            value = fn()
            totals[step] = totals.get(step, 0.0) + time.perf_counter() - t0
            return value

        for paper in papers:
            doc = timed("open + info", lambda p=paper: pdfium.PdfDocument(str(p.path)))
            timed("open + info", doc.get_metadata_dict)
            timed("XMP scan (windows)", lambda p=paper: read_xmp(p.path))
            page0 = doc[0]
            image = timed(
                f"render page 0 at {largest} px",
                lambda pg=page0: (
                    pg.render(scale=largest / pg.get_size()[0]).to_pil().convert("RGB")
                ),
            )
            timed("blank check", lambda im=image: im.convert("L").getextrema())
            for width in DEFAULT_THUMBNAILS.values():
                timed(f"PNG {width}", lambda im=image, w=width: _encode(im, w, "PNG"))
            if LISTING_WIDTH:
                timed(f"JPEG {LISTING_WIDTH}", lambda im=image: _encode(im, LISTING_WIDTH, "JPEG"))
            for width in DEFAULT_THUMBNAILS.values():
                timed(
                    "  for scale: the PNGs with optimize=True",
                    lambda im=image, w=width: png_optimized(im, w),
                )
            page0.close()

            timed("text, every page",
                  lambda d=doc, p=paper: list(_page_texts(d, str(p.path), len(d))))
            doc.close()
        for step, seconds in totals.items():
            results.setdefault(step, []).append(seconds / len(papers) * 1e3)
    return {step: median(ms) for step, ms in results.items()}


# --- report ------------------------------------------------------------------------------------


def show_rate(
    label: str, walls: list[float], n: int, cpus: list[float] | None = None, note: str = ""
) -> None:
    cpu = f"{median(cpus) / n * 1e3:8.1f}" if cpus else f"{'':8}"
    print(
        f"   {label:<44} {rate(n, median(walls)):8.1f} {rate(n, min(walls)):8.1f} "
        f"{median(walls) / n * 1e3:8.1f} {cpu}  {note}"
    )


def main() -> None:
    parser = arg_parser(__doc__, count="repeat", default=5)
    retune(parser, "--repeat", metavar="R", help="rounds, each over all papers (default: 5)")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if not PDF_DIR.is_dir() or not sorted(PDF_DIR.glob("*.pdf")):
        skip(f"no real papers in {PDF_DIR} (set SANDCRAWLER_SHARED_DATA)")
    missing = [
        tool
        for tool in POPPLER
        if not any((Path(d) / tool).is_file() for d in os.environ.get("PATH", "").split(os.pathsep))
    ]
    if missing:
        skip(f"poppler-utils not installed ({', '.join(missing)} not on PATH)")
    papers = [Paper(p, p.stat().st_size) for p in sorted(PDF_DIR.glob("*.pdf"))]
    n = len(papers)
    total_mb = sum(p.size for p in papers) / 1e6
    version = run_quiet(["pdfinfo", "-v"]).stderr.decode().splitlines()[0]
    print_header(
        f"PDF processing: {n} real papers ({total_mb:.1f} MB), ours vs poppler-utils, "
        f"{args.repeat} rounds"
    )
    widths = ", ".join(f"{k} {v}" for k, v in DEFAULT_THUMBNAILS.items())
    print(
        f"   {PDF_DIR}; {version}; thumbnails: {widths} px PNG, thumb-listing "
        f"{LISTING_WIDTH} px JPEG q{JPEG_QUALITY}"
    )
    subreaper = become_subreaper()

    with work_dir(args.out) as wd:
        out_dir = wd / "poppler-out"
        out_dir.mkdir(exist_ok=True)
        source = wd / "papers"
        source.mkdir(exist_ok=True)
        for paper in papers:
            link = source / paper.path.name
            if not link.exists():
                link.symlink_to(paper.path)
        empty = wd / "empty"
        empty.mkdir(exist_ok=True)
        steps = poppler_steps(out_dir)

        # Untimed warm-up: page cache, imports, font set-up; the CLI once too.
        run_ours(papers, record=False)
        run_poppler(papers, steps, record=False)
        run_cli(wd, source, "warmup", n)

        spawns = []
        for _ in range(SPAWNS):
            t0 = time.perf_counter()
            run_quiet(["pdfinfo", "-v"])
            spawns.append(time.perf_counter() - t0)
        spawn = median(spawns)

        walls: dict[str, list[float]] = {
            k: [] for k in ("ours", "ours+meta", "poppler", "cli", "startup")
        }
        cpus: dict[str, list[float]] = {k: [] for k in walls}

        def do_ours() -> None:
            extract, both, cpu = run_ours(papers, record=True)
            walls["ours"].append(extract)
            walls["ours+meta"].append(both)
            cpus["ours+meta"].append(cpu)

        def do_poppler() -> None:
            wall, cpu = run_poppler(papers, steps, record=True)
            walls["poppler"].append(wall)
            cpus["poppler"].append(cpu)

        def do_cli(rnd: int) -> None:
            wall, cpu = run_cli(wd, source, f"r{rnd}", n)
            walls["cli"].append(wall)
            cpus["cli"].append(cpu)
            wall, cpu = run_cli(wd, empty, f"r{rnd}-empty", 0)
            walls["startup"].append(wall)
            cpus["startup"].append(cpu)

        variants: list[Callable[[int], None]] = [
            lambda r: do_ours(),
            lambda r: do_poppler(),
            do_cli,
        ]
        for rnd in range(args.repeat):
            for i in range(len(variants)):
                variants[(rnd + i) % len(variants)](rnd)
            print(
                f"   round {rnd + 1}: ours {walls['ours'][-1]:.3f} s, ours + file metadata "
                f"{walls['ours+meta'][-1]:.3f} s, poppler {walls['poppler'][-1]:.3f} s, "
                f"cli {walls['cli'][-1]:.3f} s (empty dir {walls['startup'][-1]:.3f} s)",
                flush=True,
            )
        if subreaper:
            reap_orphans()

    # --- summary ---
    print(
        f"-- throughput ({n} papers per round; median and best of {args.repeat} rounds; "
        "CPU: median, per paper)"
    )
    print(f"   {'':<44} {'PDFs/s':>8} {'best':>8} {'ms/PDF':>8} {'CPU ms':>8}")
    show_rate("ours: extract_pdf", walls["ours"], n)
    show_rate("ours: file_metadata + extract_pdf", walls["ours+meta"], n, cpus["ours+meta"])
    show_rate(
        "poppler: pdfinfo + pdftotext + 4 x pdftoppm",
        walls["poppler"],
        n,
        cpus["poppler"],
        note=f"{len(steps)} spawns per paper",
    )
    net = [w - len(steps) * n * spawn for w in walls["poppler"]]
    show_rate(
        "  poppler net of spawns (estimate)",
        net,
        n,
        note=f"minus {len(steps)} x {spawn * 1e3:.2f} ms per paper",
    )
    show_rate(
        "cli: sandcrawler process DIR (whole command)",
        walls["cli"],
        n,
        cpus["cli"],
        note="start-up, store, SQLite, sandbox child included",
    )
    net_cli = [c - s for c, s in zip(walls["cli"], walls["startup"], strict=True)]
    show_rate("  cli net of start-up (empty-dir run)", net_cli, n)
    print(
        f"   start-up: sandcrawler process on an empty directory "
        f"{median(walls['startup']):.3f} s wall, {median(cpus['startup']):.2f} s CPU; "
        f"one trivial spawn (pdfinfo -v, median of {SPAWNS}) {spawn * 1e3:.2f} ms"
    )

    print("-- ratios (ours / poppler; > 1 in throughput: ours is faster)")
    for label, ours_key, poppler_walls in (
        ("extract_pdf vs poppler", "ours", walls["poppler"]),
        ("file_metadata + extract_pdf vs poppler", "ours+meta", walls["poppler"]),
        ("extract_pdf vs poppler net of spawns", "ours", net),
        ("file_metadata + extract_pdf vs poppler net of spawns", "ours+meta", net),
        ("cli (whole command) vs poppler", "cli", walls["poppler"]),
    ):
        med = median(poppler_walls) / median(walls[ours_key])
        best = min(poppler_walls) / min(walls[ours_key])
        print(
            f"   {label:<54} throughput {med:5.2f}x median, {best:5.2f}x best; "
            f"time {1 / med:5.2f}x median"
        )

    print("-- where the time goes (ms per paper, mean over papers, median over rounds)")
    step_names = ["file_metadata", "extract_pdf", *(s for s, _ in steps)]

    def per_paper_ms(step: str) -> float:
        rounds = [sum(p.times[step][r] for p in papers) / n for r in range(args.repeat)]
        return median(rounds) * 1e3

    ours_sum = per_paper_ms("file_metadata") + per_paper_ms("extract_pdf")
    poppler_sum = sum(per_paper_ms(s) for s, _ in steps)
    for step in step_names:
        whole = ours_sum if step in ("file_metadata", "extract_pdf") else poppler_sum
        who = "ours   " if step in ("file_metadata", "extract_pdf") else "poppler"
        ms = per_paper_ms(step)
        print(f"   {who} {step:<22} {ms:8.2f} ms  {ms / whole:6.1%}")
    print(
        f"   ours total {ours_sum:.2f} ms, poppler total {poppler_sum:.2f} ms per paper "
        f"(of which spawns ~{len(steps) * spawn * 1e3:.2f} ms)"
    )

    print(
        "-- inside extract_pdf: its steps re-done one by one (same calls; ms per paper, "
        f"median of {args.repeat} passes; not part of the rounds above)"
    )
    inside = extract_steps(papers, args.repeat)
    steps_total = sum(ms for step, ms in inside.items() if not step.startswith("  "))
    for step, ms in inside.items():
        share = "" if step.startswith("  ") else f"{ms / steps_total:6.1%}"
        print(f"   {step:<40} {ms:8.2f} ms  {share}")
    print(
        f"   sum of the steps {steps_total:.2f} ms (extract_pdf in the rounds: "
        f"{per_paper_ms('extract_pdf'):.2f} ms)"
    )

    print("-- per paper (ms, median over rounds)")
    short = {
        "file_metadata": "meta",
        "extract_pdf": "extract",
        "pdfinfo": "info",
        "pdftotext": "text",
    }
    heads = [short.get(s, s.replace("pdftoppm ", "ppm ")) for s in step_names]
    print(
        f"   {'paper':<36} {'kB':>6} {'pages':>5} "
        + " ".join(f"{h:>9}" for h in heads)
        + f" {'ours':>8} {'poppler':>8}"
    )
    for p in papers:
        cols = [median(p.times[s]) * 1e3 for s in step_names]
        ours_ms = cols[0] + cols[1]
        print(
            f"   {p.path.name[:36]:<36} {p.size / 1e3:6.0f} {p.pages_ours or 0:5d} "
            + " ".join(f"{c:9.2f}" for c in cols)
            + f" {ours_ms:8.2f} {sum(cols[2:]):8.2f}"
        )

    print("-- sanity (not timed): page counts, ours (PDFium) vs pdfinfo; words (\\w+) for scale")
    bad = 0
    for p in papers:
        same = p.pages_ours == p.pages_poppler
        bad += not same
        print(
            f"   {p.path.name[:36]:<36} pages {p.pages_ours} / {p.pages_poppler} "
            f"{'agree' if same else 'DISAGREE'}   words {p.words_ours} / {p.words_poppler}"
        )
    print(f"   page counts: {'all agree' if not bad else f'{bad} DISAGREEMENT(S)'}")
    if bad:
        sys.exit(1)


if __name__ == "__main__":
    main()
