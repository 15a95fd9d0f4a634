"""``sandcrawler citations``: parse reference strings, train and evaluate the CRF model."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import click
import orjson

from sandcrawler.app.settings import load_settings
from sandcrawler.app.workers import worker_factory
from sandcrawler.citations.crf.model import DEFAULT_PARAMS
from sandcrawler.cli.options import F, open_services, parser_option, pipeline_options, run_pipeline
from sandcrawler.core.errors import ConfigError, RecordError
from sandcrawler.core.work import Item, Worker, json_line

model_option = click.option(
    "--model", "model_path", type=click.Path(dir_okay=False, exists=True),
    help="CRF model file [default: setting citation.model, else the shipped model].",
)


@click.group()
def citations() -> None:
    """Parse reference strings into structured biblios; train and evaluate the
    embedded CRF citation model."""


@citations.command("parse")
@click.argument("reference", metavar="[STRING|-]", default="-")
@parser_option
@model_option
@click.option("--grobid-url", help="GROBID base URL, for --parser grobid.")
@pipeline_options("parse-citations")
def parse(reference: str, parser: str | None, model_path: str | None, grobid_url: str | None,
          jobs: int, batch_size: int | None, limit: int | None, progress: bool | None,
          silent: bool, fail_fast: bool) -> None:
    """Parse one reference STRING, or one reference per line of stdin (-).

    Input lines are plain text, a JSON string, or a JSON object with
    `unstructured` (its `id`/`key` and `index` are kept). Output: one JSON
    biblio per line, in the shape of GrobidBiblio.to_dict(), in input order.

    \b
      sandcrawler citations parse "Smith J. A title. Nature. 2001;409:1-5."
      jq -c '{unstructured: .}' refs.json | sandcrawler citations parse -
    """
    services = open_services(grobid_url=grobid_url, citation_model=model_path)
    if reference != "-":
        _parse_one(reference, worker_factory("parse-citations", services.settings, parser=parser))
        return
    # here, not above: one STRING is answered without the pipeline's modules
    from sandcrawler.pipeline.sinks import StdoutSink
    from sandcrawler.pipeline.sources import JsonLinesSource

    services.check_citation_parser(parser)
    if sys.stdin.isatty():  # a command that seems to hang says what it waits for
        click.echo("reading reference strings from stdin, one per line (Ctrl-D to end)",
                   err=True)
    run_pipeline(
        "citations parse",
        JsonLinesSource("-", limit=limit),
        "parse-citations", {"parser": parser},
        StdoutSink(),
        services,
        jobs=jobs, batch_size=batch_size, progress=progress, silent=silent,
        fail_fast=fail_fast,
    )


def _parse_one(reference: str, make_worker: Callable[[], Worker]) -> None:
    """The STRING argument: the same worker as for stdin, on one JSON-string item."""
    worker = make_worker()
    try:
        [outcome] = worker.process_batch([Item("argument", orjson.dumps(reference))])
    finally:
        worker.close()
    if outcome.kind == "error":
        raise RecordError(f"{outcome.status}: {outcome.error}", status=outcome.status)
    assert outcome.output is not None  # a parsed reference: ok or empty, never skipped
    click.echo(json_line(outcome.output).decode())


def corpus_options(f: F) -> F:
    """``--corpus``, and which evaluation references to hold out of training."""
    decorators = [
        click.option("--corpus", type=click.Path(file_okay=False, exists=True, path_type=Path),
                     required=True,
                     help="Directory of GROBID citation training files (TEI, labelled <bibl>)."),
        click.option("--exclude", type=click.Path(file_okay=False, exists=True, path_type=Path),
                     help="Evaluation corpus whose references are never trained on "
                          "[default: the corpus's sibling directory `evaluation`, if any]."),
        click.option("--no-exclude", is_flag=True, help="Train on every reference of --corpus."),
        click.option("--iterations", type=click.IntRange(1), default=None,
                     help=f"L-BFGS iterations [default: {DEFAULT_PARAMS['max_iterations']}]."),
    ]
    for dec in reversed(decorators):
        f = dec(f)
    return f


def _params(iterations: int | None) -> dict[str, int] | None:
    return {"max_iterations": iterations} if iterations else None


@citations.command("train")
@corpus_options
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Model file to write (replaced atomically).")
@click.option("--limit", type=click.IntRange(1), default=None,
              help="Train on the first N references only (quick experiments, tests).")
def train_cmd(corpus: Path, exclude: Path | None, no_exclude: bool, iterations: int | None,
              out: Path, limit: int | None) -> None:
    """Train the CRF citation model on an annotated corpus.

    Deterministic: the same corpus and options give a byte-identical model.
    Reads both conventions of GROBID's training data (`biblScope unit=` and
    the older `type="vol|pp"`). References also present in the evaluation set
    are left out.
    """
    from sandcrawler.citations.crf.corpus import training_references
    from sandcrawler.citations.crf.model import train

    refs, held_out = training_references(corpus, exclude, hold_out=not no_exclude)
    refs = refs[:limit]
    click.echo(f"training on {len(refs)} references from {corpus}"
               f" ({held_out} evaluation references held out)", err=True)
    started = time.monotonic()
    meta = train(refs, out, _params(iterations), info={"corpus": corpus.name})
    click.echo(
        f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB): {meta['tokens']} tokens, "
        f"{meta['iterations']} iterations, {meta['active_features']} active features, "
        f"{time.monotonic() - started:.0f} s",
        err=True,
    )


@citations.command("evaluate")
@corpus_options
@click.option("--folds", type=click.IntRange(2, 100), default=None,
              help="k-fold cross-validation on --corpus (trains k models) instead of "
                   "evaluating one model.")
@model_option
@click.option("-j", "--jobs", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Folds trained in parallel.")
@click.option("--json", "as_json", is_flag=True, help="Print the scores as JSON.")
def evaluate_cmd(corpus: Path, exclude: Path | None, no_exclude: bool, iterations: int | None,
                 folds: int | None, model_path: str | None, jobs: int, as_json: bool) -> None:
    """Field-level precision, recall and F1 (strict and soft) of the CRF parser.

    Without --folds: parse every reference of --corpus with the model and score
    it against the annotations. With --folds K: K-fold cross-validation on
    --corpus (evaluation references held out, as for training; --iterations per
    fold).

    \b
      sandcrawler citations evaluate --corpus grobid-citation-corpus/evaluation
      sandcrawler citations evaluate --corpus grobid-citation-corpus/corpus --folds 10 -j 2
    """
    from sandcrawler.citations.crf.corpus import read_corpus, training_references
    from sandcrawler.citations.crf.evaluate import cross_validate, evaluate
    from sandcrawler.citations.crf.model import CrfModel

    started = time.monotonic()
    if folds:
        if model_path:
            raise ConfigError("--model and --folds exclude each other: folds train their own")
        refs, _ = training_references(corpus, exclude, hold_out=not no_exclude)
        click.echo(f"{folds}-fold cross-validation on {len(refs)} references", err=True)
        report = cross_validate(
            refs, folds, _params(iterations), jobs=jobs,
            on_fold=lambda k, r: click.echo(
                f"fold {k + 1}/{folds}: strict micro-F1 {r.micro(r.strict).f1:.4f}", err=True),
        )
    else:
        model = CrfModel.load(load_settings(citation_model=model_path).citation.model)
        report = evaluate(model.parse, read_corpus(corpus))
    elapsed = time.monotonic() - started
    if as_json:
        click.echo(json.dumps({**report.to_dict(), "folds": folds, "seconds": round(elapsed, 1)}))
    else:
        title = f"{folds}-fold cross-validation" if folds else "evaluation"
        click.echo(f"{title} on {corpus}: {report.references} references, {elapsed:.1f} s")
        click.echo(report.table())
