"""The citation CRF model: the one tagger (``sandcrawler.tagging.crf``) over the
citation features, whose lexicons and weighted attributes travel in the model
file's header; labelling a reference string, parsing it, and training.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from grobid_tei_xml.types import GrobidBiblio

from sandcrawler.citations.crf.biblio import biblio_of_spans, build_biblio, column_spans
from sandcrawler.citations.crf.features import Featurizer, Lexicons, PackedFeaturizer
from sandcrawler.citations.crf.labels import OUTSIDE
from sandcrawler.core.errors import ConfigError
from sandcrawler.tagging.corpus import LabelledText
from sandcrawler.tagging.crf import BASE_PARAMS, CrfTagger, ModelKind, TaggedModel
from sandcrawler.tagging.direct import DirectTagger
from sandcrawler.tagging.tokens import Token, token_columns, tokenize

log = logging.getLogger(__name__)

KIND = ModelKind("citation", b"sandcrawler citation CRF\n")
#: tokens labelled per string; a reference rarely has 150. Longer input (glued
#: references, prose) keeps its tail unlabelled so time per string stays bounded.
MAX_TOKENS = 400

DEFAULT_PARAMS: dict[str, Any] = {**BASE_PARAMS, "c1": 0.1, "c2": 0.01, "max_iterations": 200}

#: labelled by both taggers when a model loads: the direct one is used only when
#: it agrees (quotes, brackets, years, periods, an identifier, a long string)
_CHECK = ('Smith, J. A., & de Roever, W.-P. (2001). "A title: (with) [brackets]." '
          "Phys. Rev. Lett. 119(2), 044802-10; 1999 2000. doi:10.1000/xyz123 "
          "https://example.org/a?b=1 arXiv:1708.00594v2 " + "Doe J. Title. Cell. 2003;6:7-8. " * 4)


def default_model_path() -> Path:
    return Path(str(resources.files("sandcrawler.citations.crf") / "citations.crfmodel"))


@dataclass
class CrfModel(TaggedModel):
    """Tags through the direct tagger (``tagging.direct``: packed attributes, the
    same labels) when python-crfsuite allows it, else through python-crfsuite."""

    tagger: CrfTagger
    featurizer: Featurizer
    #: the attributes with a weight, sorted
    attributes: list[str]
    direct: DirectTagger | None = None
    packed: PackedFeaturizer | None = None

    @classmethod
    def load(cls, path: Path | str | None = None, *, direct: bool = True) -> CrfModel:
        tagger = CrfTagger.load(Path(path) if path else default_model_path(), KIND)
        lexicons, attributes = tagger.take("lexicons", dict), tagger.take("attributes", list)
        attributes.sort()  # sorted when written: one pass to make sure
        model = cls(tagger, Featurizer(Lexicons(lexicons), frozenset(attributes)), attributes)
        if direct:
            model.use_direct()
        return model

    def use_direct(self) -> bool:
        """Tag through the direct tagger from now on, if it opens and labels a check
        string as python-crfsuite does; whether it does."""
        fast = DirectTagger.open(self.tagger.crf_bytes)
        if fast is None:
            return False
        packed = PackedFeaturizer(self.featurizer, fast.pack, fast.pack_one, self.attributes)
        check = tokenize(_CHECK)
        items = packed.sequence([t.text for t in check], [t.space_before for t in check])
        if fast.tag(items) != self.tagger.tag(self.featurizer.sequence(check)):
            log.warning("the direct CRFsuite tagger disagrees with python-crfsuite; not used")
            return False
        self.direct, self.packed = fast, packed
        return True

    def tag(self, tokens: Sequence[Token]) -> list[str]:
        """One label per token (of at most ``MAX_TOKENS``)."""
        if self.direct is not None and self.packed is not None:
            return self.direct.tag(self.packed.sequence([t.text for t in tokens],
                                                         [t.space_before for t in tokens]))
        return self.tagger.tag(self.featurizer.sequence(tokens))

    def label(self, text: str) -> tuple[list[Token], list[str]]:
        tokens = tokenize(text)
        if not tokens:
            return tokens, []
        if len(tokens) <= MAX_TOKENS:
            return tokens, self.tag(tokens)
        labels = self.tag(tokens[:MAX_TOKENS])
        labels.extend([OUTSIDE] * (len(tokens) - MAX_TOKENS))
        return tokens, labels

    def parse(self, text: str) -> GrobidBiblio:
        direct, packed = self.direct, self.packed
        if direct is None or packed is None:
            tokens, labels = self.label(text)
            return build_biblio(text, tokens, labels)
        # label() and build_biblio() without a Token per token
        texts, spaces, starts, ends = token_columns(text)
        n = len(texts)
        if n > MAX_TOKENS:
            labels = direct.tag(packed.sequence(texts[:MAX_TOKENS], spaces[:MAX_TOKENS]))
            labels.extend([OUTSIDE] * (n - MAX_TOKENS))
        else:
            labels = direct.tag(packed.sequence(texts, spaces))
        return biblio_of_spans(text, column_spans(text, starts, ends, labels))


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
