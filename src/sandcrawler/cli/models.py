"""``sandcrawler models``: the extraction cascade's models: list, train, evaluate."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from sandcrawler.cli.options import echo_json


@click.group()
def models() -> None:
    """The extraction cascade's CRF models: list, train on GROBID's corpora, evaluate.

    Models are evaluated in k-fold cross-validation, scored per field as
    GROBID scores them (docs/extraction.md). The corpora are GROBID's training
    data (kermitt2/grobid, grobid-trainer/resources/dataset/, annotations under
    CC-BY 4.0); --corpus takes that dataset directory, a GROBID checkout, or one
    model's corpus directory. The citation model has its own commands (sandcrawler citations
    train / evaluate).
    """


@models.command("list")
def list_cmd() -> None:
    """The models: name, what a row is, the shipped file, its size and version."""
    from sandcrawler.docparse.training.registry import TRAINABLE

    for m in TRAINABLE.values():
        size = m.shipped.stat().st_size if m.shipped.exists() else None
        echo_json({"model": m.name, "what": m.what, "corpus": m.corpus,
                   "file": str(m.shipped), "bytes": size})


def _params(iterations: int | None, c1: float | None, c2: float | None) -> dict[str, Any]:
    given = {"max_iterations": iterations, "c1": c1, "c2": c2}
    return {k: v for k, v in given.items() if v is not None}


_corpus = click.option("--corpus", "corpus_dir", required=True,
                       type=click.Path(exists=True, file_okay=False, path_type=Path),
                       help="GROBID's dataset directory, a GROBID checkout, or the model's "
                            "own corpus directory.")
_iterations = click.option("--iterations", type=click.IntRange(1), default=None,
                           help="L-BFGS iterations [default: the model's].")
_c1 = click.option("--c1", type=click.FloatRange(0), default=None,
                   help="L1 regularisation [default: the model's].")
_c2 = click.option("--c2", type=click.FloatRange(0), default=None,
                   help="L2 regularisation [default: the model's].")


@models.command("train")
@click.argument("name")
@_corpus
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Where to write the model [default: the shipped model's place].")
@_iterations
@_c1
@_c2
def train_cmd(name: str, corpus_dir: Path, out: Path | None, iterations: int | None,
              c1: float | None, c2: float | None) -> None:
    """Train model NAME on its GROBID corpus.

    \b
      sandcrawler models train header --corpus grobid/grobid-trainer/resources/dataset
      sandcrawler models train name-header --corpus dataset --out /tmp/names.crfmodel
    """
    from sandcrawler.docparse.training.registry import corpus_of, trainable

    model = trainable(name)
    corpus = corpus_of(model, corpus_dir)
    target = out or model.shipped
    click.echo(f"training {name} on {corpus} -> {target}", err=True)
    started = time.monotonic()
    summary = model.train(corpus, target, _params(iterations, c1, c2))
    click.echo(f"{summary}", err=True)
    click.echo(f"done in {time.monotonic() - started:.0f} s: {target} "
               f"({target.stat().st_size:,} bytes)", err=True)


@models.command("evaluate")
@click.argument("name")
@_corpus
@click.option("--folds", type=click.IntRange(2, 100), default=10, show_default=True)
@click.option("-j", "--jobs", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Folds trained at once (each a process).")
@_iterations
@_c1
@_c2
@click.option("--json", "as_json", is_flag=True, help="The scores as one JSON object.")
def evaluate_cmd(name: str, corpus_dir: Path, folds: int, jobs: int, iterations: int | None,
                 c1: float | None, c2: float | None, as_json: bool) -> None:
    """k-fold cross-validation of model NAME, scored per field as GROBID scores.

    Documents are split into folds (never one document across two); each fold
    is scored by a model trained on the others, and the counts are summed.

    \b
      sandcrawler models evaluate header --corpus dataset --folds 10 -j 2
    """
    from sandcrawler.docparse.training.registry import corpus_of, trainable
    from sandcrawler.tagging.scoring import FieldScores

    model = trainable(name)
    corpus = corpus_of(model, corpus_dir)
    started = time.monotonic()

    def on_fold(k: int, scores: FieldScores) -> None:
        click.echo(f"fold {k + 1}/{folds}: micro F1 {scores.micro().f1 * 100:.2f} "
                   f"({time.monotonic() - started:.0f} s)", err=True)

    scores = model.evaluate(corpus, folds, _params(iterations, c1, c2), jobs, on_fold)
    if as_json:
        micro = scores.micro()
        echo_json({"model": name, "folds": folds, "sequences": scores.sequences,
                   "micro": {"precision": micro.precision, "recall": micro.recall,
                             "f1": micro.f1, "support": micro.support},
                   "labels": {k: {"precision": c.precision, "recall": c.recall, "f1": c.f1,
                                  "support": c.support} for k, c in scores.labels.items()},
                   "seconds": round(time.monotonic() - started, 1)})
        return
    click.echo(scores.table())
    click.echo(f"{folds}-fold, {scores.sequences} sequences, "
               f"{time.monotonic() - started:.0f} s", err=True)
