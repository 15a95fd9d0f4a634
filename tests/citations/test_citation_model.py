"""The shipped CRF model, bad input, training determinism, evaluation and the CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from grobid_tei_xml.types import GrobidBiblio

from sandcrawler.citations.base import biblio_to_dict
from sandcrawler.citations.crf.corpus import read_corpus
from sandcrawler.citations.crf.evaluate import Report, soft
from sandcrawler.citations.crf.model import MAX_TOKENS, CrfModel, default_model_path, train
from sandcrawler.core.errors import ConfigError
from tests.helpers.cli import invoke
from tests.helpers.paths import SHARED_DATA
from tests.helpers.skips import unavailable

# seconds per test: real processes
pytestmark = pytest.mark.slow

CORPUS = SHARED_DATA / "grobid-citation-corpus" / "corpus"
EVALUATION = SHARED_DATA / "grobid-citation-corpus" / "evaluation"


@pytest.fixture(scope="module")
def model() -> CrfModel:
    return CrfModel.load()


@pytest.fixture(scope="module")
def corpus() -> Path:
    if not CORPUS.is_dir():
        unavailable(f"GROBID citation corpus not found at {CORPUS}", "SHARED_DATA")
    return CORPUS


def test_shipped_model_is_in_the_package(model: CrfModel) -> None:
    assert default_model_path().is_file()
    assert model.meta["format"] == 1
    assert model.meta["references"] > 5000  # trained on the whole corpus, not a slice
    assert {"author", "title", "journal", "date", "pages"} <= set(model.tagger.labels())


def test_vancouver(model: CrfModel) -> None:
    b = model.parse("Smith JA, Doe B. Effects of caffeine on sleep in older adults. "
                    "N Engl J Med. 2001;345(12):1234-40.")
    assert [(a.surname, a.given_name, a.middle_name) for a in b.authors] == [
        ("Smith", "J", "A"), ("Doe", "B", None)]
    assert b.title == "Effects of caffeine on sleep in older adults"
    assert b.journal == "N Engl J Med"
    assert (b.date, b.volume, b.issue) == ("2001", "345", "12")
    assert (b.first_page, b.last_page) == ("1234", "1240")


def test_apa(model: CrfModel) -> None:
    b = model.parse("Gmytrasiewicz, P. J., & Durfee, E. H. (1991). A decision theoretic "
                    "approach to coordinating multiagent interaction. Artificial Intelligence, "
                    "45(2), 62–68. https://doi.org/10.1016/0004-3702(91)90001-X")
    assert [a.surname for a in b.authors] == ["Gmytrasiewicz", "Durfee"]
    assert b.date == "1991"
    assert b.title == "A decision theoretic approach to coordinating multiagent interaction"
    assert b.journal == "Artificial Intelligence"
    assert (b.volume, b.issue, b.first_page, b.last_page) == ("45", "2", "62", "68")
    assert b.doi == "10.1016/0004-3702(91)90001-X"
    assert b.url is None


def test_chicago(model: CrfModel) -> None:
    b = model.parse("Shapiro, Marc, and Susan Horwitz. 1997. “Fast and Accurate Flow-Insensitive "
                    "Points-to Analysis.” Journal of Programming Languages 24 (3): 1–14.")
    assert [a.surname for a in b.authors][:1] == ["Shapiro"]
    assert b.date == "1997"
    assert b.title == "Fast and Accurate Flow-Insensitive Points-to Analysis"
    assert b.journal == "Journal of Programming Languages"
    assert (b.volume, b.first_page) == ("24", "1")


def test_physics_abbreviated(model: CrfModel) -> None:
    b = model.parse("A. Abel, G. L. Bryan and M. Norman, Phys. Rev. Lett. 119, 044802 (2017), "
                    "arXiv:1708.00594 [hep-ph].")
    assert [a.full_name for a in b.authors] == ["A Abel", "G L Bryan", "M Norman"]
    assert b.journal == "Phys. Rev. Lett."
    assert (b.volume, b.first_page, b.date) == ("119", "044802", "2017")
    assert b.arxiv_id == "1708.00594"


def test_book(model: CrfModel) -> None:
    b = model.parse("Knuth, D. E. (1968). The Art of Computer Programming. Reading, MA: "
                    "Addison-Wesley.")
    assert [a.surname for a in b.authors] == ["Knuth"]
    assert b.title == "The Art of Computer Programming"
    assert b.date == "1968"
    assert b.publisher == "Addison-Wesley"


BAD_INPUTS = {
    "empty": "",
    "whitespace": " \t\n ",
    "huge": "Smith J. A title. Nature 2001;1:1-2. " * 560,  # about 20 kB
    "control": "Smith\x00 J\x07. Title\x1b[0m. 2001\x7f;\x0c 12:3-4.",
    "digits": "1234 5678 91011 1213",
    "cyrillic": "Иванов И. И. Теория чисел. М.: Наука, 1985. 320 с.",
    "chinese": "张三, 李四. 计算机科学导论[J]. 计算机学报, 2001, 24(3): 1-10.",
    "prose": ("It was the best of times, it was the worst of times, it was the age of "
              "wisdom, it was the age of foolishness, it was the epoch of belief. ") * 4,
    "glued": ("Smith J. Title one. Nature. 2001;1:1-2. Doe A. Title two. Science. "
              "2002;3:4-5. Roe B. Title three. Cell. 2003;6:7-8."),
    "symbols": "§§§ ¶¶ ††† *** ### @@@ !!!",
    "emoji": "🙂 Smith J 🙃 2001 💥",
    "surrogate": "Smith J. \ud800 Title. 2001.",
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_input_gives_a_result(model: CrfModel, name: str) -> None:
    text = BAD_INPUTS[name]
    b = model.parse(text)  # the model itself, without the parser's safety net
    assert isinstance(b, GrobidBiblio)
    assert b.unstructured == text
    json.dumps(biblio_to_dict(b))  # serialisable as it is


def test_long_input_is_labelled_up_to_the_cap(model: CrfModel) -> None:
    tokens, labels = model.label(BAD_INPUTS["huge"])
    assert len(tokens) > MAX_TOKENS
    assert len(labels) == len(tokens)
    assert set(labels[MAX_TOKENS:]) == {"O"}
    assert len(set(labels[:MAX_TOKENS])) > 3


def test_load_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read citation model"):
        CrfModel.load(tmp_path / "missing")
    (tmp_path / "junk").write_bytes(b"junk")
    with pytest.raises(ConfigError, match="not a sandcrawler citation model"):
        CrfModel.load(tmp_path / "junk")
    data = default_model_path().read_bytes()
    (tmp_path / "cut").write_bytes(data[: len(data) // 2])
    with pytest.raises(ConfigError, match="corrupt"):
        CrfModel.load(tmp_path / "cut")


def test_training_is_deterministic(corpus: Path, tmp_path: Path) -> None:
    refs = read_corpus(corpus)[:300]
    meta = train(refs, tmp_path / "a.crfmodel", {"max_iterations": 15})
    train(refs, tmp_path / "b.crfmodel", {"max_iterations": 15})
    assert (tmp_path / "a.crfmodel").read_bytes() == (tmp_path / "b.crfmodel").read_bytes()
    assert meta["references"] == 300 and meta["iterations"] == 15
    small = CrfModel.load(tmp_path / "a.crfmodel")
    assert small.parse("Smith J. A title. Nature. 2001;409:1-5.").unstructured


def test_train_command_is_deterministic_and_holds_out_evaluation(
    corpus: Path, tmp_path: Path
) -> None:
    # a corpus directory with an `evaluation` sibling, as in the shared data
    root = tmp_path / "data"
    (root / "corpus").mkdir(parents=True)
    for name in ("0506081.training.references.tei.xml", "citations.xml"):
        shutil.copy(corpus / name, root / "corpus" / name)
    (root / "evaluation").mkdir()
    eval_file = root / "evaluation" / "held.xml"
    first = read_corpus(root / "corpus")[0]
    eval_file.write_text('<tei xmlns="http://www.tei-c.org/ns/1.0"><listBibl><bibl>'
                         f"{first.text.replace('&', '&amp;').replace('<', '&lt;')}"
                         "</bibl></listBibl></tei>")
    outs = []
    for name in ("m1", "m2"):
        out = tmp_path / f"{name}.crfmodel"
        result = invoke(["citations", "train", "--corpus", str(root / "corpus"), "--out",
                         str(out), "--iterations", "10"])
        assert result.exit_code == 0, result.output
        assert "(1 evaluation references held out)" in result.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    total = len(read_corpus(root / "corpus"))
    assert CrfModel.load(tmp_path / "m1.crfmodel").meta["references"] == total - 1


def test_report_counts() -> None:
    gold = GrobidBiblio(authors=[], title="A Title", journal="Nature", volume="1")
    pred = GrobidBiblio(authors=[], title="a title.", journal="Science", date="2001")
    r = Report()
    r.add_pair(gold, pred)
    t, j, v, d = r.strict["title"], r.strict["journal"], r.strict["volume"], r.strict["date"]
    assert (t.tp, t.fp, t.fn) == (0, 1, 1)
    assert (j.tp, j.fp, j.fn) == (0, 1, 1)
    assert (v.tp, v.fp, v.fn) == (0, 0, 1)
    assert (d.tp, d.fp, d.fn) == (0, 1, 0)
    assert r.soft["title"].tp == 1 and soft("A  Title,") == "atitle"
    micro = Report.micro(r.strict)
    assert (micro.tp, micro.fp, micro.fn) == (0, 3, 3)
    assert "micro average" in r.table()


def test_evaluate_command(corpus: Path) -> None:
    result = invoke(["citations", "evaluate", "--corpus", str(EVALUATION), "--json"])
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)
    assert scores["references"] == 327
    assert set(scores["fields"]) >= {"authors", "first_author", "title", "journal", "book_title",
                                     "date", "volume", "issue", "first_page", "publisher", "doi"}
    # the shipped model has never seen these references; it must still do well
    assert scores["micro"]["soft"]["f1"] > 0.85


def test_cross_validation_command(corpus: Path, tmp_path: Path) -> None:
    small = tmp_path / "small"
    small.mkdir()
    shutil.copy(corpus / "0506081.training.references.tei.xml", small)
    result = invoke(["citations", "evaluate", "--corpus", str(small), "--folds", "2",
                     "--iterations", "10"])
    assert result.exit_code == 0, result.output
    assert "2-fold cross-validation" in result.stdout
    assert "fold 2/2: strict micro-F1" in result.stderr
    assert "micro average" in result.stdout
    bad = invoke(["citations", "evaluate", "--corpus", str(small), "--folds", "2",
                  "--model", str(default_model_path())])
    assert bad.exit_code == 1 and "exclude each other" in bad.stderr
