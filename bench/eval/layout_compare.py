"""PDFium's layout tokens against pdfalto's, on real PDFs: how far they agree and
how fast each is (docs/extraction.md, "PDFium and pdfalto compared").

Input: every PDF in ``../shared/data/pdfs`` and ``/work/grobid/testpdfs`` (GROBID's
test resources; set SANDCRAWLER_SHARED_DATA and GROBID_TESTPDFS to look
elsewhere), or the PDFs named on the command line; files with the same SHA-1
are read once.

Readers: ``read_layout_pdfium`` (in-process) and ``read_layout_alto`` (pdfalto as
a subprocess with GROBID's options, then its ALTO read in-process). Each is timed
``--repeat`` times per file, the fastest run kept: wall seconds, and CPU seconds
(for pdfalto, its child's CPU plus the ALTO reading).

Agreement, page by page, pdfalto taken as the reference (GROBID's training data
was made with it):

  text     token texts aligned in order (difflib over the page's token lists):
           2 M / (|alto| + |pdfium|), M the tokens matched in order
  bag      the same over the tokens as multisets (order ignored): text - bag
           differences are wording; bag - text differences are reading order
  order    M / the bag's matches: 1.0 when what both read is in the same order
  line     F1 of "this token starts a line" on the aligned tokens
  block    F1 of "this token starts a block" on the aligned tokens
  size     aligned tokens whose font sizes are within 0.5 pt
  bold, italic, sup   agreement on aligned tokens (sup: superscript or subscript),
           with the count of such tokens each reader gives
  space    aligned tokens whose ``space_after`` agrees

When ``sandcrawler.docparse.features`` is there, GROBID's segmentation feature rows
(one per line) of both layouts are compared column by column on the lines whose
text both give the same, and its header rows (one per token, over the first
page's lines) on the aligned tokens: the share of equal values per column.

Run:  python bench/eval/layout_compare.py [--repeat 3] [--json bench/out/layout_compare.json]
                                     [PDF ...]
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import importlib
import os
import resource
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
import orjson
from _common import SHARED_DATA, print_header, rate

from sandcrawler.docparse.layout.alto import find_pdfalto, read_layout_alto
from sandcrawler.docparse.layout.elements import Layout, LayoutError, Line, Token
from sandcrawler.docparse.layout.pdfium import read_layout_pdfium

GROBID = Path(os.environ.get("GROBID_DIR", "/work/grobid"))
GROBID_TESTPDFS = Path(os.environ.get("GROBID_TESTPDFS", GROBID / "testpdfs"))
ALTO_TIMEOUT = 300.0
SIZE_TOLERANCE = 0.5


@dataclass
class Run:
    layout: Layout | None
    error: str | None
    wall: float
    cpu: float


@dataclass
class Speed:
    pages: int = 0
    tokens: int = 0
    wall: float = 0.0
    cpu: float = 0.0


@dataclass
class Counts:
    """Sums over pages; every figure is derived from them."""

    alto_tokens: int = 0
    pdfium_tokens: int = 0
    matched: int = 0
    bag: int = 0
    alto_lines: int = 0
    pdfium_lines: int = 0
    alto_blocks: int = 0
    pdfium_blocks: int = 0
    pages: int = 0
    #: flag -> [both, alto only, pdfium only] on aligned tokens
    flags: dict[str, list[int]] = field(default_factory=dict)
    size_equal: int = 0
    space_equal: int = 0
    #: feature column -> [equal, compared] (segmentation rows, header rows)
    seg_columns: dict[int, list[int]] = field(default_factory=dict)
    seg_rows: int = 0
    head_columns: dict[int, list[int]] = field(default_factory=dict)
    head_rows: int = 0

    def add(self, other: Counts) -> None:
        for name, value in vars(other).items():
            mine = getattr(self, name)
            if isinstance(value, int):
                setattr(self, name, mine + value)
            else:
                for key, pair in value.items():
                    into = mine.setdefault(key, [0] * len(pair))
                    for i, v in enumerate(pair):
                        into[i] += v


#: the columns of GROBID's feature rows (docparse/features/, docs/extraction.md)
SEGMENTATION_COLUMNS = (
    "token", "second token", "lower case", "prefix 1", "prefix 2", "prefix 3", "prefix 4",
    "block", "page", "font", "font size", "bold", "italic", "capitals", "digits",
    "one character", "name", "common word", "first name", "year", "month", "e-mail", "http",
    "place in document", "place in page", "punctuation profile", "profile length",
    "line length", "bitmap around", "vector around", "repeated", "first repeated", "main area")
HEADER_COLUMNS = (
    "token", "lower case", "prefix 1", "prefix 2", "prefix 3", "prefix 4", "suffix 1",
    "suffix 2", "suffix 3", "suffix 4", "block", "line", "indent", "font", "font size",
    "bold", "italic", "capitals", "digits", "one character", "name", "common word", "year",
    "month", "location", "e-mail", "url", "punctuation", "largest size", "smallest size",
    "above average size", "label")

FLAGS: dict[str, Callable[[Token], bool]] = {
    "bold": lambda t: t.bold,
    "italic": lambda t: t.italic,
    "sup": lambda t: t.superscript or t.subscript,
}


def pdf_files(named: Sequence[str]) -> list[Path]:
    if named:
        candidates = [Path(p) for p in named]
    else:
        candidates = sorted((SHARED_DATA / "pdfs").glob("*.pdf")) \
            + sorted(GROBID_TESTPDFS.glob("*.pdf"))
    seen: set[str] = set()
    out = []
    for path in candidates:
        digest = hashlib.sha1(path.read_bytes()).hexdigest()
        if digest not in seen:
            seen.add(digest)
            out.append(path)
    return out


def timed(read: Callable[[], Layout], repeat: int, child: bool) -> Run:
    best: Run | None = None
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu0, wall0 = time.process_time(), time.perf_counter()
        layout, error = None, None
        try:
            layout = read()
        except LayoutError as e:
            # the first line of the message (pdfalto's quotes its stderr)
            error = f"{e.status}: " + str(e).split("\n", 1)[0]
        wall = time.perf_counter() - wall0
        cpu = time.process_time() - cpu0
        if child:
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu += (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if best is None or wall < best.wall:
            best = Run(layout, error, wall, cpu)
        if error:
            break
    assert best is not None
    return best


def starts(layout_page: Any) -> list[tuple[Token, bool, bool]]:
    """The page's tokens, each with whether it starts a line and a block."""
    out = []
    for block in layout_page.blocks:
        for n, line in enumerate(block.lines):
            for i, token in enumerate(line.tokens):
                out.append((token, i == 0, i == 0 and n == 0))
    return out


def compare_page(alto_page: Any, pdfium_page: Any) -> tuple[Counts, list[tuple[int, int]]]:
    c = Counts(pages=1)
    a, p = starts(alto_page), starts(pdfium_page)
    a_text, p_text = [t.text for t, _, _ in a], [t.text for t, _, _ in p]
    c.alto_tokens, c.pdfium_tokens = len(a), len(p)
    c.alto_lines = sum(len(b.lines) for b in alto_page.blocks)
    c.pdfium_lines = sum(len(b.lines) for b in pdfium_page.blocks)
    c.alto_blocks, c.pdfium_blocks = len(alto_page.blocks), len(pdfium_page.blocks)
    c.bag = sum((Counter(a_text) & Counter(p_text)).values())
    matcher = difflib.SequenceMatcher(None, a_text, p_text, autojunk=False)
    pairs = [(m.a + k, m.b + k) for m in matcher.get_matching_blocks() for k in range(m.size)]
    c.matched = len(pairs)
    for name in ("line", "block", *FLAGS):
        c.flags[name] = [0, 0, 0]
    for i, j in pairs:
        (ta, la, ba), (tp, lp, bp) = a[i], p[j]
        values = {"line": (la, lp), "block": (ba, bp)}
        for name, get in FLAGS.items():
            values[name] = (get(ta), get(tp))
        for name, (x, y) in values.items():
            if x or y:
                c.flags[name][0 if x and y else 1 if x else 2] += 1
        c.size_equal += abs(ta.size - tp.size) <= SIZE_TOLERANCE
        c.space_equal += ta.space_after == tp.space_after
    return c, pairs


def f1(both: int, only_a: int, only_b: int) -> float:
    return 2 * both / (2 * both + only_a + only_b) if both + only_a + only_b else 1.0


def compare_rows(alto: Layout, pdfium: Layout, counts: Counts) -> None:
    """GROBID's feature rows from both layouts, column by column (module docstring)."""
    try:
        seg = importlib.import_module("sandcrawler.docparse.features.segmentation")
        head = importlib.import_module("sandcrawler.docparse.features.header")
    except ImportError:
        return
    seg_a = _rows(seg.segmentation_rows(alto))
    seg_p = _rows(seg.segmentation_rows(pdfium))
    _columns(seg_a, seg_p, counts.seg_columns)
    counts.seg_rows += len(seg_a)
    first_a = [line for line in alto.lines() if line.tokens and line.tokens[0].page == 0]
    first_p = [line for line in pdfium.lines() if line.tokens and line.tokens[0].page == 0]
    if first_a and first_p:
        head_a = _header_rows(head, alto, first_a)
        head_p = _header_rows(head, pdfium, first_p)
        _columns(head_a, head_p, counts.head_columns)
        counts.head_rows += len(head_a)


def _rows(rows: Any) -> list[list[str]]:
    out = []
    for row in rows:
        if isinstance(row, str):
            out.append(row.split())
        else:
            out.append([str(v) for v in row])
    return out


def _header_rows(head: Any, layout: Layout, lines: list[Line]) -> list[list[str]]:
    result = head.header_rows(layout, lines)
    rows = result[1] if isinstance(result, tuple) else result
    return _rows(rows)


def _columns(a: list[list[str]], b: list[list[str]], into: dict[int, list[int]]) -> None:
    """Rows aligned by their first column (the token or the line's first word)."""
    matcher = difflib.SequenceMatcher(None, [r[0] if r else "" for r in a],
                                      [r[0] if r else "" for r in b], autojunk=False)
    for m in matcher.get_matching_blocks():
        for k in range(m.size):
            ra, rb = a[m.a + k], b[m.b + k]
            for col in range(1, min(len(ra), len(rb))):
                pair = into.setdefault(col, [0, 0])
                pair[0] += ra[col] == rb[col]
                pair[1] += 1


def compare(alto: Layout, pdfium: Layout) -> Counts:
    total = Counts()
    by_number = {page.number: page for page in pdfium.pages}
    for page in alto.pages:
        other = by_number.get(page.number)
        if other is None:
            continue
        counts, _ = compare_page(page, other)
        total.add(counts)
    compare_rows(alto, pdfium, total)
    return total


def figures(c: Counts) -> dict[str, float]:
    tokens = c.alto_tokens + c.pdfium_tokens
    out = {
        "text": 2 * c.matched / tokens if tokens else 1.0,
        "bag": 2 * c.bag / tokens if tokens else 1.0,
        "order": c.matched / c.bag if c.bag else 1.0,
        "line": f1(*c.flags.get("line", [0, 0, 0])),
        "block": f1(*c.flags.get("block", [0, 0, 0])),
        "size": c.size_equal / c.matched if c.matched else 1.0,
        "space": c.space_equal / c.matched if c.matched else 1.0,
    }
    for name in FLAGS:
        _, only_a, only_p = c.flags.get(name, [0, 0, 0])
        out[name] = 1 - (only_a + only_p) / c.matched if c.matched else 1.0
    return out


def tokens_of(layout: Layout | None) -> int:
    return sum(len(line.tokens) for line in layout.lines()) if layout else 0


def parity_with_grobid(grobid: Path, pdf_dirs: list[Path]) -> None:
    """Each reader's feature rows against GROBID's own feature files, on the
    documents whose PDF we have (``sandcrawler.docparse.features.parity``, as
    bench/eval/layout_parity.py measures pdfalto's): rows aligned, and the share of
    aligned rows where each column equals GROBID's."""
    try:
        parity = importlib.import_module("sandcrawler.docparse.features.parity")
        seg = importlib.import_module("sandcrawler.docparse.features.segmentation")
        head = importlib.import_module("sandcrawler.docparse.features.header")
        refseg = importlib.import_module("sandcrawler.docparse.features.reference_segmenter")
        lexicon = importlib.import_module("sandcrawler.docparse.features.lexicon").default_lexicon()
    except ImportError:
        return
    pairs = parity.find_pairs(grobid, pdf_dirs)
    if not pairs:
        return
    names = {"segmentation": seg.SEGMENTATION_COLUMNS, "header": head.HEADER_COLUMNS,
             "reference-segmenter": refseg.REFSEG_COLUMNS}
    print(f"\n== parity with GROBID's own feature files ({len(pairs)} files of documents "
          "whose PDF we have)")
    for reader, read in (("pdfalto", partial(read_layout_alto, timeout=ALTO_TIMEOUT)),
                         ("pdfium", read_layout_pdfium)):
        layouts = {pair.pdf: read(pair.pdf) for pair in pairs}
        totals = {model: parity.Agreement(model) for model in parity.MODELS}
        for pair in pairs:
            totals[pair.model].add(parity.compare(pair.model, layouts[pair.pdf],
                                                  parity.read_raw(pair.raw), lexicon))
        for model, agreement in totals.items():
            if not agreement.raw_rows:
                continue
            shares = [agreement.column(i) for i in range(len(names[model]))]
            low = ", ".join(f"{names[model][i]} {v:.1%}" for i, v in enumerate(shares)
                            if v < 0.99)
            print(f"  {reader:8} {model:20} rows aligned {agreement.aligned}/"
                  f"{agreement.raw_rows} ({agreement.coverage:.1%}), columns at 100 %: "
                  f"{sum(v == 1.0 for v in shares)} of {len(shares)}, mean "
                  f"{sum(shares) / len(shares):.1%}; under 99 %: {low or 'none'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pdfs", nargs="*")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    files = pdf_files(args.pdfs)
    if not files:
        sys.exit("no PDFs found (../shared/data/pdfs, /work/grobid/testpdfs)")
    if find_pdfalto() is None:
        sys.exit("pdfalto is not installed")
    print_header(f"layout readers compared on {len(files)} PDFs (best of {args.repeat})")
    for path in files[:1]:  # warm both up: imports, page cache, fonts
        read_layout_pdfium(path)
        read_layout_alto(path, timeout=ALTO_TIMEOUT)
    head = (f"{'pdf':34} {'pages':>5} {'alto':>6} {'pdfium':>6} {'text':>5} {'bag':>5} "
            f"{'order':>5} {'line':>5} {'block':>5} {'blk a/p':>9} {'size':>5} {'bold':>5} "
            f"{'ital':>5} {'sup':>5} {'space':>5} {'alto s':>7} {'pdfium s':>8}")
    print(head)
    total = Counts()
    speed = {"alto": Speed(), "pdfium": Speed()}
    report: list[dict[str, Any]] = []
    for path in files:
        alto = timed(partial(read_layout_alto, path, timeout=ALTO_TIMEOUT), args.repeat, True)
        pdfium = timed(partial(read_layout_pdfium, path), args.repeat, False)
        name = path.name.removeprefix("grobid-core_src_test_resources_")[:34]
        row: dict[str, Any] = {"pdf": path.name, "alto_error": alto.error,
                               "pdfium_error": pdfium.error,
                               "alto_wall": alto.wall, "pdfium_wall": pdfium.wall,
                               "alto_cpu": alto.cpu, "pdfium_cpu": pdfium.cpu}
        for key, run in (("alto", alto), ("pdfium", pdfium)):
            if run.layout is not None:
                s = speed[key]
                s.pages += len(run.layout.pages)
                s.tokens += tokens_of(run.layout)
                s.wall += run.wall
                s.cpu += run.cpu
        if alto.layout is None or pdfium.layout is None:
            print(f"{name:34} alto: {alto.error or 'ok'}; pdfium: {pdfium.error or 'ok'}")
            report.append(row)
            continue
        counts = compare(alto.layout, pdfium.layout)
        total.add(counts)
        fig = figures(counts)
        row |= {"counts": asdict(counts), "figures": fig}
        report.append(row)
        print(f"{name:34} {counts.pages:5} {counts.alto_tokens:6} {counts.pdfium_tokens:6} "
              f"{fig['text']:5.3f} {fig['bag']:5.3f} {fig['order']:5.3f} {fig['line']:5.3f} "
              f"{fig['block']:5.3f} {counts.alto_blocks:4}/{counts.pdfium_blocks:<4} "
              f"{fig['size']:5.3f} {fig['bold']:5.3f} {fig['italic']:5.3f} {fig['sup']:5.3f} "
              f"{fig['space']:5.3f} {alto.wall:7.3f} {pdfium.wall:8.3f}")
    fig = figures(total)
    print(f"{'all':34} {total.pages:5} {total.alto_tokens:6} {total.pdfium_tokens:6} "
          f"{fig['text']:5.3f} {fig['bag']:5.3f} {fig['order']:5.3f} {fig['line']:5.3f} "
          f"{fig['block']:5.3f} {total.alto_blocks:4}/{total.pdfium_blocks:<4} "
          f"{fig['size']:5.3f} {fig['bold']:5.3f} {fig['italic']:5.3f} {fig['sup']:5.3f} "
          f"{fig['space']:5.3f}")
    print()
    for name, (both, only_a, only_p) in sorted(total.flags.items()):
        print(f"  {name:6} both {both:6}  alto only {only_a:6}  pdfium only {only_p:6}  "
              f"F1 {f1(both, only_a, only_p):.3f}")
    print()
    for key, sp in speed.items():
        print(f"  {key:6} {sp.pages:5} pages {sp.tokens:7} tokens  wall {sp.wall:7.2f} s "
              f"({rate(sp.pages, sp.wall):6.1f} pages/s, {rate(sp.tokens, sp.wall):8.0f} "
              f"tokens/s)  CPU {sp.cpu:7.2f} s ({rate(sp.pages, sp.cpu):6.1f} pages/s, "
              f"{rate(sp.tokens, sp.cpu):8.0f} tokens/s)")
    for title, columns, rows, names in (
            ("segmentation", total.seg_columns, total.seg_rows, SEGMENTATION_COLUMNS),
            ("header", total.head_columns, total.head_rows, HEADER_COLUMNS)):
        if not columns:
            continue
        equal = {col: eq / n for col, (eq, n) in sorted(columns.items())}
        print(f"\n  {title} rows ({rows} from pdfalto): columns equal on the aligned rows")
        print("  all but these >= 0.995: " + ", ".join(
            f"{col} {names[col] if col < len(names) else '?'} {share:.3f}"
            for col, share in equal.items() if share < 0.995))
    if GROBID.is_dir():
        parity_with_grobid(GROBID, [SHARED_DATA / "pdfs", GROBID_TESTPDFS])
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_bytes(orjson.dumps({"files": report, "total": asdict(total),
                                            "figures": fig,
                                            "speed": {k: asdict(v) for k, v in speed.items()}},
                                           option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS))


if __name__ == "__main__":
    main()
