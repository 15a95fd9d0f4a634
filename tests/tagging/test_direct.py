"""The direct tagger (CRFsuite's C interface, packed attributes) labels every
sequence as python-crfsuite does, and the tokenizer's columns are its tokens."""

from __future__ import annotations

import random
import sys

import pytest

from sandcrawler.tagging.crf import BASE_PARAMS, CrfTagger, ModelKind
from sandcrawler.tagging.direct import ATTRIBUTE, DirectTagger
from sandcrawler.tagging.tokens import token_columns, tokenize

TOY = ModelKind("toy", b"sandcrawler toy CRF\n")
WORDS = [f"w={c}" for c in "abcdefgh"] + [f"k={c}" for c in "xyz"] + ["sp", "bi=a|b"]
LABELS = ["X", "Y", "Z"]


def _random_sequences(seed: int, count: int, longest: int) -> list[list[list[str]]]:
    rng = random.Random(seed)
    return [[rng.sample(WORDS, rng.randint(0, 6)) for _ in range(rng.randint(1, longest))]
            for _ in range(count)]


@pytest.fixture(scope="module")
def toy() -> CrfTagger:
    rng = random.Random(7)
    training = [(seq, [rng.choice(LABELS) if rng.random() < 0.3 else LABELS[len(item) % 3]
                       for item in seq]) for seq in _random_sequences(1, 60, 12)]
    return CrfTagger.train(TOY, training, {**BASE_PARAMS, "max_iterations": 40})


def _direct(tagger: CrfTagger) -> DirectTagger:
    direct = DirectTagger.open(tagger.crf_bytes)
    if direct is None:
        if sys.platform.startswith("linux"):  # the wheels the project runs on export it
            pytest.fail("python-crfsuite no longer exports CRFsuite's C interface: "
                        "the citation parser falls back to its slower path")
        pytest.skip("no CRFsuite C interface in this python-crfsuite")
    return direct


def test_direct_tagger_labels_as_python_crfsuite(toy: CrfTagger) -> None:
    direct = _direct(toy)
    assert sorted(direct.labels) == sorted(toy.labels())
    # unknown attributes, repeated ones, empty items, and sequences past the
    # tagger's first buffers (512 items)
    sequences = _random_sequences(2, 300, 40) + _random_sequences(3, 3, 1500)
    seen = set()
    for seq in sequences:
        seq = [[*item, "unknown=1", *item[:1]] for item in seq]
        labels = toy.tag(seq)
        assert direct.tag([direct.pack(item) for item in seq]) == labels
        seen.update(labels)
    assert seen == set(LABELS)  # the weights decide, not one label everywhere


def test_pack_leaves_out_what_the_model_does_not_know(toy: CrfTagger) -> None:
    direct = _direct(toy)
    one = direct.pack(["w=a"])
    assert len(one) == ATTRIBUTE.size
    assert direct.pack(["nope", "w=a", "nope"]) == one
    assert direct.pack(["w=a", "w=b"]) == one + direct.pack(["w=b"])
    assert direct.pack([]) == b"" and direct.tag([]) == []


CHARS = ("aZé1 9.,;:-–()[]\"“”«»'/\t\n\x00\x07\x1f\x7f\x85\u200b\u200f\ufeff\ud800"
         "张Иß\u0130")
PIECES = ["arXiv: 1708.00594v2", "arxiv:hep-th/9901001", "10.1000/xyz.", "https://x.org/a?b=1).",
          "www.example.org/p", "ftp://h/p", "  ", "J.-P.", "1234–56"]


def test_token_columns_are_the_tokenizer_s_tokens() -> None:
    rng = random.Random(11)
    texts = ["", " ", "a", " a ", "\x00Smith"]
    for _ in range(3000):
        texts.append("".join(rng.choice(PIECES) if rng.random() < 0.1 else rng.choice(CHARS)
                             for _ in range(rng.randint(1, 60))))
    for text in texts:
        tokens = tokenize(text)
        columns = token_columns(text)
        assert columns.texts == [t.text for t in tokens]
        assert columns.space_before == [t.space_before for t in tokens]
        assert columns.starts[:len(tokens)] == [t.start for t in tokens]
        assert columns.ends == [t.end for t in tokens]
