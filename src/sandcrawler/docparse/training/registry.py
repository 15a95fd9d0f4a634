"""Every trainable model of the cascade under one registry (``sandcrawler
models``): the three layout models (``crf``: segmentation, header, reference
segmenter, on GROBID's feature files) and the two text models (``textmodels``:
name-header, affiliation-address, on GROBID's TEI). Each entry says where
GROBID keeps its corpus, so one dataset directory serves every model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandcrawler.core.errors import ConfigError
from sandcrawler.core.imports import entry
from sandcrawler.docparse.crf import columns as crf
from sandcrawler.docparse.training import text_models as textmodels
from sandcrawler.tagging.scoring import FieldScores

OnFold = Callable[[int, FieldScores], None]


@dataclass(frozen=True, slots=True)
class Trainable:
    name: str
    #: the corpus directory under GROBID's grobid-trainer/resources/dataset
    corpus: str
    what: str
    shipped: Path
    train: Callable[[Path, Path, Mapping[str, Any] | None], object]
    evaluate: Callable[[Path, int, Mapping[str, Any] | None, int, OnFold | None], FieldScores]


def _layout(name: str) -> Trainable:
    spec = crf.model_spec(name)
    return Trainable(
        name, f"{name}/corpus", spec.summary, spec.model_path(),
        lambda corpus, out, params: crf.train_model(name, corpus, out, params),
        lambda corpus, folds, params, jobs, on_fold: crf.cross_validate(
            name, corpus, folds, params, jobs, on_fold))


def _text(name: str) -> Trainable:
    spec = textmodels.spec_of(name)
    return Trainable(
        name, spec.corpus, f"text model ({spec.corpus})", spec.default_path(),
        lambda corpus, out, params: textmodels.train_model(
            name, corpus, out, dict(params) if params else None),
        lambda corpus, folds, params, jobs, on_fold: textmodels.cross_validate(
            name, corpus, folds, dict(params) if params else None, jobs, on_fold))


TRAINABLE: dict[str, Trainable] = {
    t.name: t for t in [*(_layout(n) for n in crf.MODELS),
                        *(_text(n) for n in textmodels.TEXT_MODELS)]
}


def trainable(name: str) -> Trainable:
    return entry(TRAINABLE, name, "model",
                 "; the citation model: sandcrawler citations train")


def corpus_of(model: Trainable, directory: Path) -> Path:
    """The model's corpus: ``directory`` itself, or its place under a GROBID
    dataset directory (``.../grobid-trainer/resources/dataset``) or a GROBID
    checkout."""
    for candidate in (directory / model.corpus,
                      directory / "grobid-trainer" / "resources" / "dataset" / model.corpus,
                      directory):
        if candidate.is_dir() and any(candidate.iterdir()):
            return candidate
    raise ConfigError(f"no {model.name} corpus in {directory} (looked for {model.corpus}/ "
                      "under it, or a GROBID checkout's grobid-trainer/resources/dataset/)")
