"""The layout models (segmentation, header, reference-segmenter): k-fold
cross-validation on GROBID's corpus, field-level F1 as GROBID's trainer scores it,
and the shipped model's size, load time and tagging speed.

Printed:
- the corpus read: documents used and skipped (per reason), rows;
- per fold as it ends: its micro F1 and the time since the start;
- the field-level table summed over the folds (per label: support, precision,
  recall, F1; micro and macro averages without ``<other>``), the mean of the
  folds' micro F1 (GROBID's n-fold figure is that mean), GROBID's published
  figure where there is one, and the time taken;
- with ``--speed``: the shipped model's file size, load time (best of 5) and
  tagging speed in rows per second over the corpus (features + CRF, one core);
- with ``--evaluation``: instead of folds, a model trained on the corpus scored
  on GROBID's evaluation set (``<model>/evaluation``), twice: trained without
  the evaluation's documents that the corpus also holds (the honest figure),
  and the shipped model (trained on every corpus document).

Run:  python bench/eval/docparse_eval.py MODEL [--folds 10] [--corpus DIR] [--jobs N]
                                         [--iterations N] [--c1 X] [--c2 X] [--speed]
                                         [--evaluation]

``--corpus`` defaults to GROBID's corpus beside this repository
(../grobid/grobid-trainer/resources/dataset/MODEL/corpus).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
from _common import REPO, print_header, skip

from sandcrawler.docparse.crf.columns import (
    MODELS,
    ColumnModel,
    cross_validate,
    model_spec,
    train_sequences,
)
from sandcrawler.docparse.training.grobid_corpus import read_corpus
from sandcrawler.tagging.scoring import FieldScores

DATASET = REPO.parent / "grobid" / "grobid-trainer" / "resources" / "dataset"
#: GROBID's own 10-fold figures (micro F1, CRF), where its documentation gives one
GROBID_FIGURES = {
    "header": "74.3 (CRF, older header corpus); 72.2 (BiLSTM); SciBERT-CRF 78.1 on newer data",
    # grobidOrg/grobid pull request 429 (2019-06-22): an 80/20 split of an
    # extended corpus, token level, with the <item> label; no n-fold figure
    "fulltext": "no n-fold figure; token-level micro F1 91.03 on an 80/20 split of an "
                "extended corpus (GROBID PR 429, 2019, CRF)",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", choices=sorted(MODELS))
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--corpus", type=Path, default=None, metavar="DIR")
    parser.add_argument("--jobs", type=int, default=1, metavar="N",
                        help="folds trained at once (default: 1)")
    parser.add_argument("--iterations", type=int, default=None, metavar="N",
                        help="L-BFGS iterations (default: the model's)")
    parser.add_argument("--c1", type=float, default=None)
    parser.add_argument("--c2", type=float, default=None)
    parser.add_argument("--speed", action="store_true",
                        help="only the shipped model's size, load time and tagging speed")
    parser.add_argument("--evaluation", action="store_true",
                        help="score on GROBID's evaluation set instead of folds")
    args = parser.parse_args()
    corpus: Path = args.corpus or DATASET / args.model / "corpus"
    if not (corpus / "raw").is_dir():
        skip(f"GROBID corpus {corpus} not found (--corpus DIR)")
    spec = model_spec(args.model)
    params: dict[str, Any] = {}
    if args.iterations is not None:
        params["max_iterations"] = args.iterations
    if args.c1 is not None:
        params["c1"] = args.c1
    if args.c2 is not None:
        params["c2"] = args.c2

    read = read_corpus(args.model, corpus)
    if args.speed:
        print_header(f"{args.model}: the shipped model")
        speed(args.model, read.sequences)
        return
    if args.evaluation:
        print_header(f"{args.model}: GROBID's evaluation set")
        evaluation(args.model, read.sequences, corpus.parent / "evaluation", params)
        return
    print_header(f"{args.model}: {args.folds}-fold cross-validation on {corpus}")
    print(f"   {read.summary()}")
    print(f"   parameters: {({**spec.params, **params})}")
    started = time.monotonic()
    fold_f1: list[float] = []

    def on_fold(k: int, scores: FieldScores) -> None:
        f1 = scores.micro().f1 * 100
        fold_f1.append(f1)
        print(f"   fold {k}: {scores.sequences} documents, micro F1 {f1:.2f} "
              f"({time.monotonic() - started:.0f} s)", flush=True)

    total = cross_validate(args.model, corpus, args.folds, params, args.jobs, on_fold)
    took = time.monotonic() - started
    print(total.table())
    print(f"-- micro F1 over all folds' fields: {total.micro().f1 * 100:.2f}; "
          f"mean of the folds' micro F1 (GROBID's way): {statistics.mean(fold_f1):.2f} "
          f"(worst {min(fold_f1):.2f}, best {max(fold_f1):.2f})")
    print(f"-- GROBID: {GROBID_FIGURES.get(args.model, 'no published figure')}")
    print(f"-- took {took:.0f} s ({took / 3600:.2f} h)")


def evaluation(name: str, sequences: list[Any], directory: Path, params: dict[str, Any]) -> None:
    if not (directory / "raw").is_dir():
        skip(f"no evaluation set at {directory}")
    test = read_corpus(name, directory)
    print(f"   {test.summary()}")
    held = {seq.doc for seq in test.sequences}
    train = [seq for seq in sequences if seq.doc not in held]
    print(f"   training on {len(train)} of the corpus's {len(sequences)} documents "
          f"({len(sequences) - len(train)} are also in the evaluation set)")
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name}.crfmodel"
        train_sequences(model_spec(name), train, path, params)
        models = [("held out", ColumnModel.load(path))]
        print(f"   trained in {time.monotonic() - started:.0f} s")
        shipped = MODELS[name].model_path()
        if shipped.is_file():
            models.append(("shipped model (saw them)", ColumnModel.load(name)))
        for what, model in models:
            scores = FieldScores()
            for seq in test.sequences:
                scores.add(seq.labels, model.tag(seq.rows))
            print(f"\n   -- {what}")
            print(scores.table())


def speed(name: str, sequences: list[Any]) -> None:
    path = MODELS[name].model_path()
    if not path.is_file():
        skip(f"no shipped model at {path}")
    loads = []
    for _ in range(5):
        t0 = time.perf_counter()
        model = ColumnModel.load(name)
        loads.append(time.perf_counter() - t0)
    print(f"   {path.name}: {path.stat().st_size / 1e6:.2f} MB, load {min(loads) * 1e3:.1f} ms "
          f"(best of 5), {len(model.labels)} labels, "
          f"{model.meta.get('active_features')} features")
    rows = 0
    t0 = time.perf_counter()
    for seq in sequences:
        model.tag(seq.rows)
        rows += len(seq.rows)
    took = time.perf_counter() - t0
    print(f"   tagging: {rows:,} rows of {len(sequences)} documents in {took:.1f} s: "
          f"{rows / took:,.0f} rows/s (features and CRF, one core)")


if __name__ == "__main__":
    sys.exit(main())
