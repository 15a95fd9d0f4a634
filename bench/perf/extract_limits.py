"""The extraction cascade at its limits (issue 26, "Robustness"): each case gets
a status within a stated time and memory, and the run goes on.

Cases, made here:
- a scanned PDF: pages that are only an image, no text layer;
- a 2,000-page PDF;
- a PDF whose bibliography holds 10,000 references;
- articles in Chinese, Arabic and Russian, typeset by Chromium (the Chinese one
  needs a CJK font, e.g. Debian's fonts-wqy-microhei: without one it is
  skipped);
- files that are not what they say: truncated, empty, random bytes, a PDF
  header on HTML.

Each case runs through the real command (``python -m sandcrawler extract``)
with the default limits; printed: status, seconds, pages read, references, the
command's peak memory (its children's maximum resident size, from
``getrusage``).

    python bench/perf/extract_limits.py [--keep DIR]
"""

# ruff: noqa: RUF001 (Russian, Arabic and Chinese text on purpose: its letters are not look-alikes)
from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

from sandcrawler_testkit.article_pdf import Article, render_pdf
from sandcrawler_testkit.pdfs import make_pdf

CHROMIUM = os.environ.get("SANDCRAWLER_TEST_CHROMIUM", "/usr/bin/chromium")

TEXTS = {
    "russian": Article(
        title="Метилирование ДНК и связывание факторов транскрипции",
        authors=[("Иван Петров", "1"), ("Анна Смирнова", "2")],
        affiliations=[("1", "Институт молекулярной биологии РАН, Москва, Россия"),
                      ("2", "Санкт-Петербургский государственный университет, Россия")],
        journal_line="Молекулярная биология 54 (2020) 101-118",
        abstract="Геном каждой клетки содержит миллионы незанятых сайтов узнавания.",
        keywords=["метилирование ДНК", "хроматин"],
        references=["Петров И.И., Смирнова А.А. Метилирование и хроматин. "
                    "Молекулярная биология. 2018;52(3):400-412.",
                    "Bell AC, Felsenfeld G. Methylation of a CTCF-dependent boundary. "
                    "Nature. 2000;405:482-485."]),
    "arabic": Article(
        title="مثيلة الحمض النووي وارتباط عوامل النسخ",
        authors=[("أحمد علي", "1"), ("فاطمة حسن", "2")],
        affiliations=[("1", "جامعة القاهرة، القاهرة، مصر"),
                      ("2", "جامعة الملك سعود، الرياض، السعودية")],
        journal_line="المجلة العربية للعلوم 12 (2019) 101-118",
        abstract="يحتوي جينوم كل خلية على ملايين المواقع غير المشغولة.",
        keywords=["مثيلة الحمض النووي"],
        references=["Bell AC, Felsenfeld G. Methylation of a CTCF-dependent boundary. "
                    "Nature. 2000;405:482-485."]),
    "chinese": Article(
        title="DNA甲基化与转录因子结合位点的占据",
        authors=[("王浩", "1"), ("李娜", "2")],
        affiliations=[("1", "北京大学生命科学学院，北京，中国"),
                      ("2", "复旦大学，上海，中国")],
        journal_line="中国科学：生命科学 49 (2019) 101-118",
        abstract="每个细胞的基因组都含有数百万个未被占据的识别序列。",
        keywords=["DNA甲基化", "染色质"],
        references=["王浩, 李娜. DNA甲基化研究进展. 遗传. 2018, 40(3): 200-210.",
                    "Bell AC, Felsenfeld G. Methylation of a CTCF-dependent boundary. "
                    "Nature. 2000;405:482-485."]),
}


def _references_article(count: int) -> Article:
    """A short article whose bibliography holds ``count`` references."""
    rng = random.Random(1)
    words = ["methylation", "chromatin", "binding", "occupancy", "genome", "variation",
             "regulation", "enhancer", "promoter", "cell", "type", "factor"]
    refs = [f"Author{n} A, Writer B. {' '.join(rng.sample(words, 5)).capitalize()}. "
            f"J Things. {1950 + n % 70};{n % 90 + 1}:{n % 900 + 1}-{n % 900 + 9}."
            for n in range(1, count + 1)]
    return Article(title="A study with a very long bibliography", references=refs,
                   paragraphs=2)


def make_cases(out: Path) -> dict[str, Path]:
    cases: dict[str, Path] = {}

    def put(name: str, data: bytes) -> None:
        cases[name] = out / f"{name}.pdf"
        cases[name].write_bytes(data)

    put("scanned", make_pdf([None] * 5, page0_image=(1700, 2200)))
    put("pages-2000", make_pdf([f"Page {n}. Text of a very long report." for n in range(2000)]))
    render_pdf(_references_article(10_000).html(), out / "references-10000.pdf", CHROMIUM,
               timeout=600)
    cases["references-10000"] = out / "references-10000.pdf"
    for name, article in TEXTS.items():
        if name == "chinese" and not _has_cjk_font():
            print("chinese: skipped (no CJK font; Debian: fonts-wqy-microhei)")
            continue
        render_pdf(article.html(), out / f"{name}.pdf", CHROMIUM)
        cases[name] = out / f"{name}.pdf"
    put("truncated", make_pdf(["Some text"] * 3)[:300])
    put("empty", b"")
    put("random-bytes", random.Random(2).randbytes(100_000))
    put("html-named-pdf", b"%PDF-1.4\n<html><body>not a pdf</body></html>")
    return cases


def _has_cjk_font() -> bool:
    found = subprocess.run(["fc-list", ":lang=zh"], capture_output=True, text=True)
    return bool(found.stdout.strip())


def run(path: Path) -> tuple[dict[str, object], float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "sandcrawler", "extract", "-s", str(path)],
                          capture_output=True, timeout=900)
    seconds = time.monotonic() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    lines = [orjson.loads(x) for x in done.stdout.splitlines() if x.strip()]
    if done.returncode != 0 or len(lines) != 1 or b"Traceback" in done.stderr:
        raise SystemExit(f"{path.name}: exit {done.returncode}, {len(lines)} lines\n"
                         f"{done.stderr.decode()[-2000:]}")
    return lines[0], seconds, max(peak, before) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", type=Path, help="write the cases here and keep them")
    args = parser.parse_args()
    out = args.keep or Path(tempfile.mkdtemp(prefix="extract-limits-"))
    out.mkdir(parents=True, exist_ok=True)
    try:
        cases = make_cases(out)
        print(f"{'case':<18}{'status':<16}{'s':>7}{'pages':>12}{'refs':>7}"
              f"{'peak MiB':>10}  title  (peak: the largest child so far)")
        for name, path in cases.items():
            line, seconds, peak = run(path)
            header = line.get("header") or {}
            pages = f"{line.get('pages_read', '-')}/{line.get('pages', '-')}"
            title = str(header.get("title") if isinstance(header, dict) else "")[:40]
            refs = line.get("references") or []
            print(f"{name:<18}{line['status']:<16}{seconds:>7.1f}{pages:>12}"
                  f"{len(refs) if isinstance(refs, list) else 0:>7}{peak:>10.0f}  {title}")
    finally:
        if args.keep is None:
            shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
