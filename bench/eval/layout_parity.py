"""Layout tokens and GROBID's feature vectors: parity with GROBID's own feature
files, and speed.

Pairs: GROBID's feature files (segmentation, header, reference segmenter, fulltext) of
documents whose PDF we have (GROBID's test PDFs, in ../shared/data/pdfs and
/work/grobid/testpdfs; ``sandcrawler.docparse.features.parity``). For each, pdfalto's
layout is read, our rows computed and aligned to GROBID's.

Printed:
- per model: documents, GROBID's rows, rows aligned (coverage), and the share of
  aligned rows where each column equals GROBID's, with the commonest
  differences of the columns under 99 %;
- over every row of GROBID's three corpora (no PDF needed), the columns a
  word decides alone, recomputed from the row's word;
- the header's location column twice: with the shipped word list, and with one
  derived without the document under test (the list is derived from GROBID's
  header files, these documents' included: the held-out figure is the honest one);
- speed: pdfalto, reading its ALTO, and the three models' vectors, in pages and
  PDFs per second of one core (CPU time of this process and of pdfalto).

Run:  python bench/eval/layout_parity.py [--grobid /work/grobid] [--pdfs DIR ...]
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from collections import defaultdict
from pathlib import Path

from sandcrawler.docparse.features.fulltext import FULLTEXT_COLUMNS, fulltext_rows
from sandcrawler.docparse.features.header import HEADER_COLUMNS, header_rows
from sandcrawler.docparse.features.lexicon import (
    Lexicon,
    default_lexicon,
    header_raw_files,
    location_words,
)
from sandcrawler.docparse.features.parity import (
    MODELS,
    Agreement,
    compare,
    corpus_word_agreement,
    document_callouts,
    find_pairs,
    read_raw,
)
from sandcrawler.docparse.features.reference_segmenter import REFSEG_COLUMNS, refseg_rows
from sandcrawler.docparse.features.segmentation import SEGMENTATION_COLUMNS, segmentation_rows
from sandcrawler.docparse.layout import alto as layout_alto
from sandcrawler.docparse.layout.elements import Layout

REPO = Path(__file__).resolve().parents[2]
COLUMNS = {
    "segmentation": SEGMENTATION_COLUMNS,
    "header": HEADER_COLUMNS,
    "reference-segmenter": REFSEG_COLUMNS,
    "fulltext": FULLTEXT_COLUMNS,
}


def cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--grobid", type=Path, default=Path("/work/grobid"))
    parser.add_argument(
        "--pdfs",
        type=Path,
        nargs="*",
        default=[REPO.parent / "shared" / "data" / "pdfs", Path("/work/grobid/testpdfs")],
    )
    args = parser.parse_args()
    pairs = find_pairs(args.grobid, args.pdfs)
    layouts: dict[Path, Layout] = {}
    for pair in pairs:
        if pair.pdf not in layouts:
            layouts[pair.pdf] = layout_alto.read_layout_alto(pair.pdf, timeout=120)
    totals = {model: Agreement(model) for model in MODELS}
    documents: dict[str, list[str]] = defaultdict(list)
    shipped = default_lexicon()
    held_out = Agreement("header")
    all_header_files = header_raw_files(args.grobid)
    for pair in pairs:
        raw = read_raw(pair.raw)
        # the fulltext's callout columns: the references as our models read them
        callouts = document_callouts(layouts[pair.pdf]) if pair.model == "fulltext" else None
        result = compare(pair.model, layouts[pair.pdf], raw, shipped, callouts)
        totals[pair.model].add(result)
        documents[pair.model].append(
            f"{pair.stem} ({result.aligned}/{result.raw_rows} rows aligned)"
        )
        if pair.model == "header":
            others = [f for f in all_header_files if f.resolve() != pair.raw.resolve()]
            lexicon = Lexicon(shipped.dictionary, shipped.names, frozenset(location_words(others)))
            held_out.add(compare(pair.model, layouts[pair.pdf], raw, lexicon))

    for model, agreement in totals.items():
        names = COLUMNS[model]
        print(f"\n== {model}: {len(documents[model])} documents")
        for doc in documents[model]:
            print(f"   {doc}")
        print(
            f"   GROBID rows {agreement.raw_rows}, ours {agreement.our_rows}, "
            f"aligned {agreement.aligned} (coverage {agreement.coverage:.1%})"
        )
        for i, name in enumerate(names):
            share = agreement.column(i)
            line = f"   {i:2d} {name:22s} {share:7.1%}"
            if share < 0.99:
                worst = sorted(
                    ((n, x, y) for (c, x, y), n in agreement.differences.items() if c == i),
                    reverse=True,
                )[:3]
                line += "   " + ", ".join(f"{x!r}->{y!r} x{n}" for n, x, y in worst)
            print(line)
        if model == "header":
            column = HEADER_COLUMNS.index("location")
            print(
                f"   location with a word list derived without the document: "
                f"{held_out.column(column):.1%}"
            )

    print("\n== the columns a word decides alone, over GROBID's whole corpora (every row)")
    for model, columns in corpus_word_agreement(args.grobid, shipped).items():
        names = COLUMNS[model]
        worst = min(columns.values(), default=1.0)
        shares = ", ".join(f"{names[c]} {v:.2%}" for c, v in columns.items() if v < 1.0)
        print(f"   {model}: {len(columns)} columns, lowest {worst:.2%}")
        print(f"      under 100 %: {shares or 'none'}")

    # speed: every PDF of the pairs, the whole way from the file
    pdfs = sorted(layouts)
    pages = 0
    start_cpu, start_wall = cpu(), time.perf_counter()
    alto_cpu = 0.0
    vectors_cpu = 0.0
    for pdf in pdfs:
        t0 = cpu()
        layout = layout_alto.read_layout_alto(pdf, timeout=120)
        t1 = cpu()
        lines = layout.lines()
        segmentation_rows(layout)
        # the first page's lines as the header, the last page's as references,
        # the others as the body: the zones' sizes, not their labels, matter to speed
        first = [ln for ln in lines if ln.tokens[0].page == layout.pages[0].number]
        last = [ln for ln in lines if ln.tokens[0].page == layout.pages[-1].number]
        header_rows(layout, first)
        refseg_rows(layout, last)
        ends = {id(ln) for ln in first + last}
        fulltext_rows(layout, [ln for ln in lines if id(ln) not in ends])
        t2 = cpu()
        alto_cpu += t1 - t0
        vectors_cpu += t2 - t1
        pages += len(layout.pages)
    total_cpu = cpu() - start_cpu
    wall = time.perf_counter() - start_wall
    print(f"\n== speed: {len(pdfs)} PDFs, {pages} pages, {os.cpu_count()} cores, one process")
    print(f"   pdfalto + ALTO reading: {alto_cpu:.2f} s CPU")
    print(f"   vectors (4 models):     {vectors_cpu:.2f} s CPU")
    print(
        f"   total {total_cpu:.2f} s CPU, {wall:.2f} s wall: "
        f"{pages / total_cpu:.1f} pages/s, {len(pdfs) / total_cpu:.2f} PDFs/s per core"
    )


if __name__ == "__main__":
    main()
