"""The name-header and affiliation-address models: short plain texts (a header's
author names, its affiliations) tagged with the one tagger over the text
features (``features.text``), trained and cross-validated on GROBID's TEI corpora
(docs/extraction-names.md). Labels are GROBID's, with its ``I-`` mark on the
first token of each field; the model file's header holds its name, labels,
lexicon and gazetteers.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from sandcrawler.core.errors import ConfigError
from sandcrawler.docparse.crf import shipped_model_path
from sandcrawler.docparse.features.text import Featurizer, Gazetteers, build_lexicon, normalize
from sandcrawler.tagging.corpus import LabelledText, LabelOf, TeiReading
from sandcrawler.tagging.corpus import read_corpus as read_tei_corpus
from sandcrawler.tagging.crf import BASE_PARAMS, CrfTagger, ModelKind, TaggedModel
from sandcrawler.tagging.folds import fold_results, folds_of
from sandcrawler.tagging.scoring import OTHER, FieldScores, fields, plain
from sandcrawler.tagging.tokens import Token, tokenize

KIND = ModelKind("text CRF", b"sandcrawler text CRF\n")
#: tokens labelled in one CRF pass; an author list or affiliation block rarely has
#: 300. Longer input is labelled in pieces cut at line breaks.
CHUNK_TOKENS = 400
#: tokens labelled per text at most; the rest is left ``<other>`` so that time per
#: call stays bounded whatever the caller hands in
MAX_TOKENS = 4000

DEFAULT_PARAMS: dict[str, Any] = {**BASE_PARAMS, "c1": 0.05, "c2": 0.01, "max_iterations": 300}



def reading(unit: str, label_of: LabelOf) -> TeiReading:
    """How a name or affiliation corpus is read: NFKC-folded as texts are tagged,
    ``<lb/>`` and ``<pb/>`` line breaks, fields written glued kept apart."""
    return TeiReading(unit, label_of, OTHER, normalize=normalize)


def read_corpus(directory: Path, unit: str, label_of: LabelOf) -> list[LabelledText]:
    """The sequences of every ``*.xml`` of a directory, in a stable order (sorted
    file names, document order)."""
    return read_tei_corpus(directory, reading(unit, label_of))


def _chunks(text: str, tokens: Sequence[Token]) -> list[tuple[int, int]]:
    """[start, end) token ranges of at most CHUNK_TOKENS, cut at a line break where
    there is one in the second half of a chunk."""
    out: list[tuple[int, int]] = []
    start, n = 0, len(tokens)
    while start < n:
        end = min(start + CHUNK_TOKENS, n)
        if end < n:
            for k in range(end, start + CHUNK_TOKENS // 2, -1):
                if "\n" in text[tokens[k - 1].end : tokens[k].start]:
                    end = k
                    break
        out.append((start, end))
        start = end
    return out


@dataclass
class TextCrfModel(TaggedModel):
    tagger: CrfTagger
    featurizer: Featurizer

    @property
    def name(self) -> str:
        return str(self.meta.get("model", ""))

    @classmethod
    def load(cls, path: Path | str) -> TextCrfModel:
        tagger = CrfTagger.load(Path(path), KIND)
        lexicon, gazetteers = tagger.take("lexicon", dict), tagger.take("gazetteers", dict)
        return cls(tagger, Featurizer(lexicon, Gazetteers(gazetteers)))

    def label(self, text: str) -> tuple[str, list[Token], list[str]]:
        """(the normalized text, its tokens, a GROBID label per token)."""
        text = normalize(text)
        tokens = tokenize(text)
        head = tokens[:MAX_TOKENS]
        labels: list[str] = []
        for a, b in _chunks(text, head):
            piece = head[a:b]
            labels.extend(self.tagger.tag(self.featurizer.sequence(text, piece)))
        labels.extend([OTHER] * (len(tokens) - len(head)))
        return text, tokens, labels


@cache
def shipped_text_model(name: str) -> TextCrfModel:
    """The shipped model ``name``, loaded once per process."""
    return TextCrfModel.load(shipped_model_path(name))


def _training_pairs(texts: Sequence[LabelledText]) -> list[tuple[str, list[Token], list[str]]]:
    out = []
    for t in texts:
        tokens = tokenize(t.text)
        if tokens:
            out.append((t.text, tokens, t.token_labels(tokens)))
    return out


def train(
    name: str,
    texts: Sequence[LabelledText],
    out: Path,
    gazetteers: Gazetteers,
    params: dict[str, Any] | None = None,
    info: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Train on ``texts`` and write the model to ``out`` atomically. Deterministic:
    the same texts in the same order give the same file."""
    pairs = _training_pairs(texts)
    if not pairs:
        raise ConfigError(f"no training sequences for {name}")
    params = {**DEFAULT_PARAMS, **(params or {})}
    lexicon = build_lexicon((tokens, labels) for _, tokens, labels in pairs)
    featurizer = Featurizer(lexicon, gazetteers)
    tagger = CrfTagger.train(KIND, ((featurizer.sequence(text, tokens[a:b]), labels[a:b])
                                    for text, tokens, labels in pairs
                                    for a, b in _chunks(text, tokens)), params)
    header = tagger.save(Path(out), {
        "model": name,
        "labels": sorted({plain(x) for _, _, labels in pairs for x in labels}),
        "sequences": len(pairs),
        "tokens": sum(len(t) for _, t, _ in pairs),
        **(info or {}),
        "lexicon": lexicon,
        "gazetteers": gazetteers.to_json(),
    })
    header.pop("lexicon")
    header.pop("gazetteers")
    return header


def score(model: TextCrfModel, texts: Iterable[LabelledText]) -> FieldScores:
    scores = FieldScores()
    for t in texts:
        _, tokens, predicted = model.label(t.text)
        scores.add(t.token_labels(tokens), predicted)
    return scores


def _run_fold(name: str, train_texts: Sequence[LabelledText], test_texts: Sequence[LabelledText],
              gazetteers: Gazetteers, params: dict[str, Any] | None) -> FieldScores:
    with tempfile.TemporaryDirectory(prefix="sandcrawler-fold-") as tmp:
        path = Path(tmp) / "fold.crfmodel"
        train(name, train_texts, path, gazetteers, params)
        return score(TextCrfModel.load(path), test_texts)


def cross_validate(
    name: str,
    texts: Sequence[LabelledText],
    gazetteers: Gazetteers,
    folds: int = 10,
    params: dict[str, Any] | None = None,
    jobs: int = 1,
    on_fold: Callable[[int, FieldScores], None] | None = None,
) -> FieldScores:
    """k-fold cross-validation: train on k-1 folds, score the held-out one, counts
    summed over the folds."""
    runs = [(name, tr, te, gazetteers, params) for tr, te in folds_of(texts, folds)]
    total = FieldScores()
    for k, result in enumerate(fold_results(_run_fold, runs, jobs)):
        total.merge(result)
        if on_fold:
            on_fold(k, result)
    return total


def labelled_fields(text: str, tokens: Sequence[Token], labels: Sequence[str]
                    ) -> list[tuple[str, str]]:
    """(label, text) of each field as the scorer cuts them, ``<other>`` included; the
    text runs from the field's first token to its last, spacing as written."""
    return [(name, text[tokens[a].start : tokens[b - 1].end])
            for name, a, b in fields(labels)]
