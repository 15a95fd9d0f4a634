"""Training and 10-fold evaluation of the text models (``name-header``,
``affiliation-address``) by name, from GROBID's corpus directories
(docs/extraction-names.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandcrawler.core.imports import entry
from sandcrawler.docparse.assembly import affiliations, names
from sandcrawler.docparse.crf import text as textcrf
from sandcrawler.docparse.features.text import Gazetteers
from sandcrawler.tagging.corpus import LabelledText
from sandcrawler.tagging.scoring import FieldScores


@dataclass(frozen=True, slots=True)
class TextModelSpec:
    name: str
    #: where GROBID keeps the model's corpus, under grobid-trainer/resources/dataset
    corpus: str
    read: Callable[[Path], list[LabelledText]]
    gazetteers: Callable[[], Gazetteers]
    default_path: Callable[[], Path]
    params: dict[str, Any]


TEXT_MODELS = {
    spec.name: spec
    for spec in (
        TextModelSpec(names.MODEL_NAME, "name/header/corpus", names.read_names,
                      names.gazetteers, names.default_model_path, {}),
        TextModelSpec(affiliations.MODEL_NAME, "affiliation-address/corpus",
                      affiliations.read_affiliations, affiliations.gazetteers,
                      affiliations.default_model_path,
                      # less L1 than the names model: a quick 3-fold check gave +0.5 micro F1
                      # (docs/extraction-names.md)
                      {"c1": 0.02, "c2": 0.01}),
    )
}


@dataclass(frozen=True, slots=True)
class TrainedModel:
    name: str
    path: Path
    sequences: int
    tokens: int
    iterations: int | None
    active_features: int | None
    size: int  # bytes of the model file
    seconds: float


def spec_of(name: str) -> TextModelSpec:
    return entry(TEXT_MODELS, name, "text model")


def _params(spec: TextModelSpec, params: dict[str, Any] | None) -> dict[str, Any]:
    return {**textcrf.DEFAULT_PARAMS, **spec.params, **(params or {})}


def train_model(name: str, corpus_dir: Path | str, out_path: Path | str | None = None,
                params: dict[str, Any] | None = None) -> TrainedModel:
    """Train model ``name`` on every sequence of ``corpus_dir`` into ``out_path``
    (default: the shipped model's place in the package)."""
    spec = spec_of(name)
    started = time.monotonic()
    texts = spec.read(Path(corpus_dir))
    out = Path(out_path) if out_path is not None else spec.default_path()
    meta = textcrf.train(spec.name, texts, out, spec.gazetteers(), _params(spec, params),
                         info={"corpus_files": len({t.source for t in texts})})
    return TrainedModel(
        name=spec.name, path=out, sequences=int(meta["sequences"]), tokens=int(meta["tokens"]),
        iterations=meta.get("iterations"), active_features=meta.get("active_features"),
        size=out.stat().st_size, seconds=time.monotonic() - started,
    )


def cross_validate(name: str, corpus_dir: Path | str, folds: int = 10,
                   params: dict[str, Any] | None = None, jobs: int = 1,
                   on_fold: Callable[[int, FieldScores], None] | None = None) -> FieldScores:
    """k-fold cross-validation of model ``name`` on ``corpus_dir``, scored per field
    as GROBID scores it; counts summed over the folds."""
    spec = spec_of(name)
    texts = spec.read(Path(corpus_dir))
    return textcrf.cross_validate(spec.name, texts, spec.gazetteers(), folds,
                                  _params(spec, params), jobs, on_fold)
