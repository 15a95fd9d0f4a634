"""The parser's fast path gives what the plain path gives: the packed features are
the plain features packed, token by token, whatever the caches hold; the direct
tagger's labels and the biblios are python-crfsuite's."""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor

import pytest

from sandcrawler.citations.base import biblio_to_dict
from sandcrawler.citations.crf import features
from sandcrawler.citations.crf.biblio import column_spans, spans
from sandcrawler.citations.crf.corpus import read_corpus
from sandcrawler.citations.crf.features import PackedFeaturizer, shape
from sandcrawler.citations.crf.model import MAX_TOKENS, CrfModel
from sandcrawler.tagging.direct import DirectTagger
from sandcrawler.tagging.tokens import token_columns, tokenize
from tests.citations.test_citation_model import BAD_INPUTS
from tests.helpers.paths import SHARED_DATA
from tests.helpers.skips import unavailable

CITATION_CORPUS = SHARED_DATA / "grobid-citation-corpus"
VANCOUVER = "Smith JA, Doe B. Effects of caffeine on sleep. N Engl J Med. 2001;345(12):1234-40."
REFERENCES = [
    *BAD_INPUTS.values(),
    VANCOUVER,
    "Gmytrasiewicz, P. J., & Durfee, E. H. (1991). A decision theoretic approach. "
    "Artificial Intelligence, 45(2), 62–68. https://doi.org/10.1016/0004-3702(91)90001-X",
    'Shapiro, Marc. 1997. "Fast (and [Accurate]) Analysis." J. Prog. Lang. 24 (3): 1–14.',
    "A. Abel, G. L. Bryan, Phys. Rev. Lett. 119, 044802 (2017), arXiv:1708.00594 [hep-ph].",
    "x", "2001", "Smith J", ". . . .", '" " " (',
]


@pytest.fixture(scope="module")
def model() -> CrfModel:
    loaded = CrfModel.load()
    assert loaded.direct is not None, "the shipped model should tag through the direct tagger"
    return loaded


@pytest.fixture(scope="module")
def plain() -> CrfModel:
    loaded = CrfModel.load(direct=False)
    assert loaded.direct is None and loaded.packed is None
    return loaded


def corpus_texts() -> list[str]:
    if not (CITATION_CORPUS / "corpus").is_dir():
        unavailable(f"GROBID citation corpus not found at {CITATION_CORPUS}", "SHARED_DATA")
    return [r.text for d in ("corpus", "evaluation") for r in read_corpus(CITATION_CORPUS / d)]


def assert_packed_features_are_the_plain_ones_packed(model: CrfModel, texts: list[str]) -> None:
    assert model.direct is not None
    # a fresh packed featurizer: its caches fill as the texts go
    packed = PackedFeaturizer(model.featurizer, model.direct.pack, model.direct.pack_one,
                              model.attributes)
    pack = model.direct.pack
    for text in texts:
        tokens = tokenize(text)[:MAX_TOKENS]
        want = [pack(attrs) for attrs in model.featurizer.sequence(tokens)]
        got = packed.sequence([t.text for t in tokens], [t.space_before for t in tokens])
        assert got == want, text


def test_packed_features_are_the_plain_ones_packed(model: CrfModel) -> None:
    assert_packed_features_are_the_plain_ones_packed(model, REFERENCES * 2)


def test_packed_features_with_caches_starting_again(model: CrfModel,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(features, "CACHE_MAX", 7)  # every memo clears again and again
    assert_packed_features_are_the_plain_ones_packed(model, REFERENCES * 2)


def test_fast_parse_is_the_plain_parse(model: CrfModel, plain: CrfModel) -> None:
    for text in REFERENCES:
        assert model.label(text) == plain.label(text)
        assert biblio_to_dict(model.parse(text)) == biblio_to_dict(plain.parse(text)), text


def test_column_spans_are_token_spans(plain: CrfModel) -> None:
    for text in REFERENCES:
        tokens, labels = plain.label(text)
        columns = token_columns(text)
        assert column_spans(text, columns.starts, columns.ends, labels) \
            == spans(text, tokens, labels)


WORDS = ["Smith", "SMITH", "smith", "O'Neil", "Ünal", "e1234", "ApJ", "1977", "0977", "2100",
         "12345", "--", "Ω", "张三", "İstanbul", "ß", "ǅ", "ﬁ", "X", "x", "Ab", "aB", "McDonald",
         "https://x.org/a?b=1", "www.x.org/p", "10.1000/x1", "arXiv:1708.00594", "a" * 40, ""]


def test_memoised_shape_is_shape() -> None:
    for word in WORDS * 2:
        assert features._shape(word) == shape(word)


def test_kind_and_shape_at_once() -> None:
    texts = WORDS + [t for text in REFERENCES for t in token_columns(text).texts]
    for text in texts:
        assert features._kind_shape(text) == (features._kind(text), shape(text)), text


def test_steps_are_the_substring_tests() -> None:
    """A token's step by table is the chain of ``in`` tests it replaced."""
    def chain(text: str, kind: str) -> int:
        return (features._TOGGLE_QUOTE if text in features._QUOTES
                else features._OPEN_PAREN if text in features._OPEN
                else features._CLOSE_PAREN if text in features._CLOSE
                else features._YEAR if kind == "year"
                else features._PERIOD if text == "." else 0)

    chars = features._QUOTES + features._OPEN + features._CLOSE + ".a1"
    texts = ["", *chars, *(a + b for a in chars for b in chars), "1999", "(((", "“”"]
    for text in texts:
        for kind in ("year", "num", "punct", "other"):
            table = features._STEPS.get(text) or (
                features._YEAR if kind == "year" else features._PERIOD if text == "." else 0)
            assert table == chain(text, kind), (text, kind)


def test_a_direct_tagger_that_disagrees_is_not_used(monkeypatch: pytest.MonkeyPatch,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(DirectTagger, "tag", lambda self, items: ["O"] * len(items))
    with caplog.at_level(logging.WARNING):
        loaded = CrfModel.load()
    assert loaded.direct is None and "disagrees" in caplog.text
    assert loaded.parse(VANCOUVER).date == "2001"


def test_without_the_c_interface_the_plain_path_parses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(DirectTagger, "open", classmethod(lambda cls, crf_bytes: None))
    loaded = CrfModel.load()
    assert loaded.direct is None
    assert loaded.parse(VANCOUVER).date == "2001"


def test_direct_tagging_from_several_threads(model: CrfModel, plain: CrfModel) -> None:
    want = [plain.label(text)[1] for text in REFERENCES]
    with ThreadPoolExecutor(4) as pool:
        runs = [pool.submit(lambda: [model.label(text)[1] for text in REFERENCES])
                for _ in range(8)]
        assert all(run.result() == want for run in runs)


@pytest.mark.slow
def test_the_whole_corpus_parses_the_same_on_both_paths(model: CrfModel,
                                                        plain: CrfModel) -> None:
    texts = corpus_texts()
    assert len(texts) > 8000
    assert_packed_features_are_the_plain_ones_packed(model, texts)
    for text in texts:
        assert biblio_to_dict(model.parse(text)) == biblio_to_dict(plain.parse(text)), text
        for token in token_columns(text).texts:
            assert features._kind_shape(token) == (features._kind(token), shape(token))
