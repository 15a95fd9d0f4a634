"""Tokenizer, features, labels and corpus reading of the embedded citation parser."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandcrawler.citations.crf.corpus import read_corpus
from sandcrawler.citations.crf.features import Featurizer, Lexicons, shape
from sandcrawler.citations.crf.labels import OUTSIDE, label_for
from sandcrawler.core.errors import ConfigError
from sandcrawler.tagging.corpus import LabelledText
from sandcrawler.tagging.folds import folds_of
from sandcrawler.tagging.tokens import tokenize


def test_tokens_keep_exact_offsets() -> None:
    text = "Smith, J.A. (2001) «Títle»: 12–15.  10.1000/xyz123. https://x.org/a?b=1."
    tokens = tokenize(text)
    assert all(text[t.start : t.end] == t.text for t in tokens)
    assert [t.text for t in tokens[:6]] == ["Smith", ",", "J", ".", "A", "."]
    assert "10.1000/xyz123" in [t.text for t in tokens]  # trailing dot not part of the DOI
    assert "https://x.org/a?b=1" in [t.text for t in tokens]


def test_tokens_space_before_and_identifiers() -> None:
    tokens = tokenize("Phys. Rev. D 95, 076006 arXiv:1708.00594v2 [hep-ph]")
    by_text = {t.text: t for t in tokens}
    assert by_text["Phys"].space_before and not by_text["."].space_before
    assert by_text["arXiv:1708.00594v2"].space_before
    assert by_text["95"].space_before and not by_text[","].space_before


def test_tokens_skip_control_characters() -> None:
    tokens = tokenize("Smith\x00J\u200b.\x1f 2001")
    assert [t.text for t in tokens] == ["Smith", "J", ".", "2001"]
    assert tokens[1].space_before  # a control character separates like a space
    assert tokenize("") == [] and tokenize(" \t\n") == []


@pytest.mark.parametrize(
    ("word", "expected"),
    [("Smith", "Xx"), ("1977", "d"), ("O'Neil", "X'Xx"), ("J.", "X."), ("Ünal", "Xx"),
     ("e1234", "xd"), ("ApJ", "XxX")],
)
def test_shape(word: str, expected: str) -> None:
    assert shape(word) == expected


def test_features_describe_token_and_context() -> None:
    lexicons = Lexicons({"smith": "author"})
    feats = Featurizer(lexicons).sequence(tokenize('Smith J. "A title" 2001'))
    assert len(feats) == 8
    first, year = feats[0], feats[-1]
    assert {"w=smith", "sh=Xx", "k=cap", "lex=author", "-1w=BOUND", "1w=j", "pos=0"} <= set(first)
    assert "bi+=smith|j" in first and "sp" in first
    assert {"k=year", "1w=BOUND", "-1w=\"", "yrs=0"} <= set(year)
    inside = feats[4]  # "title", between the quotes
    assert "inq" in inside and "inq" not in first
    assert "lex=-" in inside


def test_lexicons_keep_words_mostly_in_one_field() -> None:
    seqs = []
    for label_a in ("author", "author", "author", "title"):
        seqs.append((tokenize("Smith Nature"), [label_a, "journal"]))
    lex = Lexicons.build(seqs)
    assert lex.words == {"smith": "author", "nature": "journal"}
    once = Lexicons.build([(tokenize("Rare"), ["author"])])
    assert once.words == {}  # below the minimum count


@pytest.mark.parametrize(
    ("tag", "attrs", "label"),
    [
        ("biblScope", {"unit": "volume"}, "volume"),
        ("biblScope", {"type": "vol"}, "volume"),
        ("biblScope", {"type": "pp"}, "pages"),
        ("biblScope", {"unit": "page"}, "pages"),
        ("biblScope", {"type": "issue"}, "issue"),
        ("title", {"level": "a"}, "title"),
        ("title", {"level": "j"}, "journal"),
        ("title", {"level": "m"}, "booktitle"),
        ("title", {"leve": "m"}, "booktitle"),
        ("title", {"level": "s"}, "series"),
        ("idno", {"type": "DOI"}, "doi"),
        ("idno", {"type": "arXiv"}, "arxiv"),
        ("idno", {"type": "PMC"}, "pmcid"),
        ("idno", {}, "pubnum"),
        ("orgName", {"type": "collaboration"}, "collaboration"),
        ("orgName", {}, "institution"),
        ("pubPlace", {}, "location"),
        ("note", {"type": "report"}, "tech"),
        ("ptr", {"type": "web"}, "web"),
        ("lb", {}, None),
    ],
)
def test_label_for_both_conventions(tag: str, attrs: dict[str, str], label: str | None) -> None:
    assert label_for(tag, attrs) == label


NEW_STYLE = """<?xml version="1.0"?>
<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><back><listBibl>
<bibl><author>Abel T., Bryan G.</author>, <date>2000</date>, <title level="j">ApJ</title>,
  <biblScope unit="volume">540</biblScope>, <biblScope unit="page">39</biblScope></bibl>
</listBibl></back></text></TEI>"""

OLD_STYLE = """<?xml version="1.0"?>
<tei xmlns="http://www.tei-c.org/ns/1.0"><listBibl>
<bibl> <author>W. H.<lb/>Enright</author>.   <title level="a">Improving
  things</title>. <title level="j">ACM Trans.</title>, <biblScope type="vol">4</biblScope>
  (<biblScope type="issue">2</biblScope>), <biblScope type="pp">127-136</biblScope>,
  <date>June 1978</date>. </bibl>
</listBibl></tei>"""


def _write_corpus(directory: Path) -> Path:
    directory.mkdir()
    (directory / "a.training.references.tei.xml").write_text(NEW_STYLE)
    (directory / "b.references.xml").write_text(OLD_STYLE)
    return directory


def test_read_corpus_both_conventions(tmp_path: Path) -> None:
    refs = read_corpus(_write_corpus(tmp_path / "corpus"))
    assert [r.source for r in refs] == ["a.training.references.tei.xml", "b.references.xml"]
    new, old = refs
    assert new.text == "Abel T., Bryan G., 2000, ApJ, 540, 39"
    assert new.spans(OUTSIDE) == [("author", "Abel T., Bryan G."), ("date", "2000"),
                           ("journal", "ApJ"), ("volume", "540"), ("pages", "39")]
    # whitespace and <lb/> collapse to single spaces; spaces between fields are outside
    assert old.text == ("W. H. Enright. Improving things. ACM Trans., 4 (2), 127-136, "
                        "June 1978.")
    assert old.spans(OUTSIDE) == [("author", "W. H. Enright"), ("title", "Improving things"),
                           ("journal", "ACM Trans."), ("volume", "4"), ("issue", "2"),
                           ("pages", "127-136"), ("date", "June 1978")]
    labels = old.plain_labels()
    assert len(labels) == len(tokenize(old.text))
    assert labels[:5] == ["author"] * 5 and labels[5] == OUTSIDE  # "W . H . Enright" "."


def test_read_corpus_excludes_evaluation_references(tmp_path: Path) -> None:
    corpus = _write_corpus(tmp_path / "corpus")
    text = "Abel T. , Bryan G., 2000, ApJ 540, 39"
    held_out = [LabelledText(text, ("O",) * len(text), (0,) * len(text), "eval")]
    refs = read_corpus(corpus, exclude=held_out)
    assert [r.source for r in refs] == ["b.references.xml"]


def test_read_corpus_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        read_corpus(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match=r"no \.xml files"):
        read_corpus(tmp_path / "empty")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "x.xml").write_text("<tei><bibl>unclosed</tei>")
    with pytest.raises(ConfigError, match=r"x\.xml: not well-formed"):
        read_corpus(tmp_path / "bad")


def test_folds_partition_the_corpus() -> None:
    refs = [LabelledText(str(i), ("O",), (0,), "s") for i in range(23)]
    folds = folds_of(refs, 5)
    assert len(folds) == 5
    tested = [r.text for _, test in folds for r in test]
    assert sorted(tested, key=int) == [str(i) for i in range(23)]
    for train, test in folds:
        assert not {r.text for r in train} & {r.text for r in test}
        assert len(train) + len(test) == 23
