"""The one CRF tagger, its model files and the one TEI corpus reader: every shipped
model file loads through it whatever its kind, a file of another kind is refused,
training is deterministic, and the reader's options give each corpus its text."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandcrawler.citations.crf import model as citation_model
from sandcrawler.core.errors import ConfigError
from sandcrawler.docparse.crf import columns, shipped_model_path
from sandcrawler.docparse.crf import text as text_models
from sandcrawler.tagging.corpus import TeiReading, read_tei
from sandcrawler.tagging.crf import BASE_PARAMS, CrfTagger, ModelKind
from sandcrawler.tagging.folds import fold_results, folds_of

SHIPPED = [
    (citation_model.default_model_path(), citation_model.KIND),
    *((shipped_model_path(name), columns.KIND) for name in columns.MODELS),
    *((shipped_model_path(name), text_models.KIND) for name in ("name-header",
                                                                "affiliation-address")),
]
TOY = ModelKind("toy", b"sandcrawler toy CRF\n")
SEQUENCES = [([["w=a"], ["w=b"], ["w=c"]], ["X", "Y", "Y"]),
             ([["w=b"], ["w=a"]], ["Y", "X"])]


@pytest.mark.parametrize(("path", "kind"), SHIPPED, ids=lambda x: getattr(x, "name", ""))
def test_every_shipped_model_file_loads_through_the_one_tagger(path: Path,
                                                               kind: ModelKind) -> None:
    tagger = CrfTagger.load(path, kind)
    assert tagger.header["format"] == 1 and len(tagger.version) == 12
    assert tagger.labels()
    other = next(k for _, k in SHIPPED if k != kind)
    with pytest.raises(ConfigError, match=f"is not a sandcrawler {other.name} model file"):
        CrfTagger.load(path, other)


def test_training_is_deterministic_and_the_file_round_trips(tmp_path: Path) -> None:
    params = {**BASE_PARAMS, "max_iterations": 20}
    written = []
    for name in ("a", "b"):
        tagger = CrfTagger.train(TOY, SEQUENCES, params)
        header = tagger.save(tmp_path / f"{name}.crfmodel", {"lexicon": {"a": "X"}})
        written.append((tmp_path / f"{name}.crfmodel").read_bytes())
    assert written[0] == written[1] and header["params"] == params
    loaded = CrfTagger.load(tmp_path / "a.crfmodel", TOY)
    assert loaded.tag([["w=a"], ["w=b"]]) == ["X", "Y"] and loaded.tag([]) == []
    assert loaded.take("lexicon", dict) == {"a": "X"} and "lexicon" not in loaded.header
    with pytest.raises(ConfigError, match="lacks its lexicon"):
        loaded.take("lexicon", dict)


def test_a_truncated_file_is_refused_before_crfsuite_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "m.crfmodel"
    CrfTagger.train(TOY, SEQUENCES, BASE_PARAMS).save(path, {})
    path.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(ConfigError, match="truncated or altered"):
        CrfTagger.load(path, TOY)
    with pytest.raises(ConfigError, match="cannot read toy model"):
        CrfTagger.load(tmp_path / "missing.crfmodel", TOY)


def _label_of(tag: str, attrs: object) -> str | None:
    return {"a": "<a>", "b": "<b>"}.get(tag)


def test_the_reader_s_options_give_each_corpus_its_text(tmp_path: Path) -> None:
    path = tmp_path / "c.xml"
    path.write_text("<TEI><u><a>ﬁrst</a><b>Two</b><lb/>three <a>x  y</a></u></TEI>")
    text_kind = TeiReading("u", _label_of, "<o>", normalize=str.lower)
    glued, = read_tei(path, text_kind)
    # fields written glued are kept apart; <lb/> is a line break; a space is nobody's
    assert glued.text == "ﬁrst two\nthree x y"
    assert glued.fields("<o>") == [("<a>", "ﬁrst"), ("<b>", "two"), ("<a>", "x y")]
    assert glued.token_labels()[:3] == ["I-<a>", "I-<b>", "I-<o>"]
    citation_kind = TeiReading("u", _label_of, "<o>", breaks=frozenset({"lb"}), line_break=" ",
                               split_glued=False, spaces_keep_label=True)
    plain, = read_tei(path, citation_kind)
    assert plain.text == "ﬁrstTwo three x y"
    assert plain.spans("<o>") == [("<a>", "ﬁrst"), ("<b>", "Two"), ("<a>", "x y")]


def _double(x: int) -> int:
    return 2 * x


def test_folds_test_each_item_once_and_run_in_order_in_a_pool() -> None:
    folds = folds_of(list(range(7)), 3)
    assert sorted(i for _, test in folds for i in test) == list(range(7))
    with pytest.raises(ConfigError, match="at least 2 folds"):
        folds_of([1, 2], 1)
    runs = [(k,) for k in range(4)]
    assert list(fold_results(_double, runs, jobs=2)) == list(fold_results(_double, runs)) \
        == [0, 2, 4, 6]
