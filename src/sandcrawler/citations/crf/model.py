"""The citation CRF model: the one tagger (``sandcrawler.tagging.crf``) over the
citation features, whose lexicons and weighted attributes travel in the model
file's header; labelling a reference string, parsing it, and training.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from grobid_tei_xml.types import GrobidBiblio

from sandcrawler.citations.crf.biblio import build_biblio
from sandcrawler.citations.crf.features import Featurizer, Lexicons
from sandcrawler.citations.crf.labels import OUTSIDE
from sandcrawler.core.errors import ConfigError
from sandcrawler.tagging.corpus import LabelledText
from sandcrawler.tagging.crf import BASE_PARAMS, CrfTagger, ModelKind, TaggedModel
from sandcrawler.tagging.tokens import Token, tokenize

KIND = ModelKind("citation", b"sandcrawler citation CRF\n")
#: tokens labelled per string; a reference rarely has 150. Longer input (glued
#: references, prose) keeps its tail unlabelled so time per string stays bounded.
MAX_TOKENS = 400

DEFAULT_PARAMS: dict[str, Any] = {**BASE_PARAMS, "c1": 0.1, "c2": 0.01, "max_iterations": 200}


def default_model_path() -> Path:
    return Path(str(resources.files("sandcrawler.citations.crf") / "citations.crfmodel"))


@dataclass
class CrfModel(TaggedModel):
    tagger: CrfTagger
    featurizer: Featurizer

    @classmethod
    def load(cls, path: Path | str | None = None) -> CrfModel:
        tagger = CrfTagger.load(Path(path) if path else default_model_path(), KIND)
        lexicons, attributes = tagger.take("lexicons", dict), tagger.take("attributes", list)
        return cls(tagger, Featurizer(Lexicons(lexicons), frozenset(attributes)))

    def label(self, text: str) -> tuple[list[Token], list[str]]:
        tokens = tokenize(text)
        if not tokens:
            return tokens, []
        head = tokens[:MAX_TOKENS]
        labels = self.tagger.tag(self.featurizer.sequence(head))
        labels.extend([OUTSIDE] * (len(tokens) - len(head)))
        return tokens, labels

    def parse(self, text: str) -> GrobidBiblio:
        tokens, labels = self.label(text)
        return build_biblio(text, tokens, labels)


def train(
    refs: list[LabelledText],
    out: Path,
    params: dict[str, Any] | None = None,
    info: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Train on ``refs`` and write the model to ``out`` atomically. Deterministic:
    the same references in the same order give the same file."""
    if not refs:
        raise ConfigError("no training references")
    params = {**DEFAULT_PARAMS, **(params or {})}
    sequences = [(tokenize(r.text), r.plain_labels()) for r in refs]
    lexicons = Lexicons.build(sequences)
    featurizer = Featurizer(lexicons)
    tagger = CrfTagger.train(KIND, ((featurizer.sequence(tokens[:MAX_TOKENS]), labels[:MAX_TOKENS])
                                    for tokens, labels in sequences if tokens), params)
    meta = tagger.save(Path(out), {
        "labels": sorted({label for _, labels in sequences for label in labels}),
        "references": len(refs),
        "tokens": sum(len(t) for t, _ in sequences),
        **(info or {}),
        "lexicons": lexicons.words,
        "attributes": tagger.state_attributes(),
    })
    meta.pop("lexicons")
    meta.pop("attributes")
    return meta
