"""The name-header and affiliation-address models: 10-fold cross-validation on
GROBID's corpora, scored per field as GROBID scores it, and the shipped model's
labelling speed.

Printed, per model: the per-label table (support, precision, recall, F1), the
micro average without ``<other>`` beside GROBID's published 10-fold figure where
it publishes one (docs/extraction-names.md), the cross-validation's wall time,
and the shipped model's speed over the whole corpus (sequences and tokens per
second, one thread; the shipped model has seen these sequences, so this is a
speed figure only).

Run:  nice -n 10 python bench/eval/docparse_names_eval.py [name-header|affiliation-address ...]
          [--grobid ../grobid] [--folds 10] [--jobs 1] [--params '{"c1": 0.05}']
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from sandcrawler.docparse.crf.text import TextCrfModel
from sandcrawler.docparse.training.text_models import TEXT_MODELS, cross_validate
from sandcrawler.tagging.scoring import FieldScores

REPO = Path(__file__).resolve().parents[2]
#: GROBID's CRF (Wapiti), 10-fold, field-level micro F1 (GROBID 0.6.0,
#: doc/benchmarks/Benchmarking-models.md); GROBID publishes none for name-header
GROBID_CRF = {"affiliation-address": 85.87}
GOALS = {"affiliation-address": 86.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="*", default=sorted(TEXT_MODELS))
    parser.add_argument("--grobid", type=Path,
                        default=Path(os.environ.get("GROBID_DIR", REPO.parent / "grobid")),
                        help="GROBID's repository (its grobid-trainer/resources/dataset)")
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--params", type=json.loads, default=None,
                        help="CRFsuite parameters as JSON, over the defaults")
    parser.add_argument("--no-cv", action="store_true", help="the speed figure only")
    args = parser.parse_args()
    dataset = args.grobid / "grobid-trainer" / "resources" / "dataset"
    for name in args.models:
        spec = TEXT_MODELS[name]
        corpus = dataset / spec.corpus
        if not corpus.is_dir():
            sys.exit(f"no corpus at {corpus} (--grobid)")
        texts = spec.read(corpus)
        print(f"== {name}: {corpus}")
        print(f"sequences {len(texts)}, files {len({t.source for t in texts})}")
        if not args.no_cv:
            started = time.monotonic()

            def fold(k: int, scores: FieldScores, started: float = started) -> None:
                print(f"  fold {k}: micro F1 {scores.micro().f1 * 100:.2f} "
                      f"({time.monotonic() - started:.0f} s)", file=sys.stderr, flush=True)

            total = cross_validate(name, corpus, args.folds, args.params, args.jobs, fold)
            seconds = time.monotonic() - started
            print(f"{args.folds}-fold cross-validation, field level, {seconds:.0f} s "
                  f"(jobs {args.jobs})")
            print(total.table())
            micro = total.micro().f1 * 100
            line = f"micro F1 {micro:.2f}"
            if name in GROBID_CRF:
                line += f"; GROBID CRF {GROBID_CRF[name]:.2f}"
            if name in GOALS:
                line += f"; goal {GOALS[name]:.2f}: {'met' if micro >= GOALS[name] else 'MISSED'}"
            print(line)
        path = spec.default_path()
        if path.is_file():
            model = TextCrfModel.load(path)
            started = time.monotonic()
            tokens = sum(len(model.label(t.text)[1]) for t in texts)
            seconds = time.monotonic() - started
            print(f"shipped model {path.name}: {path.stat().st_size / 1e6:.2f} MB; labels "
                  f"{len(texts) / seconds:.0f} sequences/s, {tokens / seconds:.0f} tokens/s "
                  "(one thread)")
        print()


if __name__ == "__main__":
    main()
