"""The name-header and affiliation-address models: GROBID's TEI read into labelled
tokens, persons and affiliations read off labels, the shipped models on real
header strings, bad and huge input, training and cross-validation."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from sandcrawler.core.errors import ConfigError
from sandcrawler.docparse.assembly.affiliations import (
    Address,
    Affiliation,
    parse_affiliations,
    read_affiliations,
)
from sandcrawler.docparse.assembly.names import (
    PersonName,
    parse_names,
    persons_from_fields,
    read_names,
    split_markers,
)
from sandcrawler.docparse.crf import text as textcrf
from sandcrawler.docparse.crf.text import TextCrfModel
from sandcrawler.docparse.training.text_models import TEXT_MODELS, cross_validate, train_model
from sandcrawler.tagging.tokens import tokenize
from tests.helpers.paths import REPO, TEST_DATA
from tests.helpers.skips import unavailable

DATA = TEST_DATA / "grobid-names"
NAMES = DATA / "name-header"
AFFILIATIONS = DATA / "affiliation-address"
GROBID_DATASET = Path(REPO.parent / "grobid" / "grobid-trainer" / "resources" / "dataset")


# --- reading GROBID's corpus --------------------------------------------------------


def test_names_corpus_fields_and_line_breaks() -> None:
    bobnar = next(t for t in read_names(NAMES) if "Bobnar" in t.text)
    assert bobnar.text == ("Jaka Bobnar 1 , Katarina Susman 2 , V Adrian Parsegian 3 ,\n"
                           "Peter R Rand 4 , Mojca ˇČepi ˇ 2 ,5 and Rudolf Podgornik 1,5")
    assert bobnar.fields()[:7] == [
        ("<forename>", "Jaka"), ("<surname>", "Bobnar"), ("<marker>", "1"),
        ("<forename>", "Katarina"), ("<surname>", "Susman"), ("<marker>", "2"),
        ("<forename>", "V")]
    assert ("<marker>", "2 ,5") in bobnar.fields()


def test_token_labels_mark_where_each_field_starts() -> None:
    bobnar = next(t for t in read_names(NAMES) if "Bobnar" in t.text)
    assert bobnar.token_labels()[:6] == [
        "I-<forename>", "I-<surname>", "I-<marker>", "I-<other>", "I-<forename>", "I-<surname>"]
    # "2 ,5": one marker field of three tokens
    tokens = [t.text for t in tokenize(bobnar.text)]
    i = next(k for k in range(len(tokens)) if tokens[k : k + 3] == ["2", ",", "5"])
    assert bobnar.token_labels()[i : i + 3] == ["I-<marker>", "<marker>", "<marker>"]


def test_role_names_are_titles_and_text_outside_fields_is_other() -> None:
    gellad = next(t for t in read_names(NAMES) if "Gellad" in t.text)
    fields = gellad.fields()
    assert fields[:5] == [("<forename>", "Walid"), ("<middlename>", "F"),
                          ("<surname>", "Gellad"), ("<title>", "MD, MPH"),
                          ("<marker>", "1,2,3")]
    assert "Corresponding Author :" in gellad.text
    assert all("Corresponding" not in text for _, text in fields)


def test_affiliation_corpus_fields() -> None:
    finland = next(t for t in read_affiliations(AFFILIATIONS) if "Jyväskylä" in t.text)
    assert finland.fields() == [
        ("<marker>", "1"), ("<laboratory>", "Nanoscience Center"),
        ("<department>", "Department of Physics"), ("<institution>", "University of Jyväskylä"),
        ("<postBox>", "PO Box 35"), ("<postCode>", "FIN-40014"), ("<country>", "Finland"),
        ("<marker>", "2"), ("<department>", "Institute of Biomedical Technology"),
        ("<institution>", "University of Tampere"),
        ("<institution>", "Tampere University Hospital"),
        ("<postCode>", "FIN-33014"), ("<country>", "Finland")]


def test_fields_written_without_a_space_stay_apart(tmp_path: Path) -> None:
    (tmp_path / "a.xml").write_text(
        '<TEI xmlns="http://www.tei-c.org/ns/1.0"><author><persName><forename>Ann</forename>'
        "<surname>Lee</surname><marker>a</marker></persName></author></TEI>")
    [text] = read_names(tmp_path)
    assert text.text == "Ann Lee a"
    assert text.token_labels() == ["I-<forename>", "I-<surname>", "I-<marker>"]


def test_corpus_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        read_names(tmp_path / "missing")
    with pytest.raises(ConfigError, match=r"no \.xml files"):
        read_names(tmp_path)
    (tmp_path / "bad.xml").write_text("<TEI><author>")
    with pytest.raises(ConfigError, match="not well-formed"):
        read_names(tmp_path)


def test_whole_grobid_corpora_read() -> None:
    if not GROBID_DATASET.is_dir():
        unavailable(f"GROBID's dataset not found at {GROBID_DATASET}", "SHARED_DATA")
    names = read_names(GROBID_DATASET / "name" / "header" / "corpus")
    affiliations = read_affiliations(GROBID_DATASET / "affiliation-address" / "corpus")
    assert len(names) > 1400 and len(affiliations) > 1200
    for text in names + affiliations:
        assert len(text.token_labels()) == len(tokenize(text.text))


# --- persons and affiliations from labels ---------------------------------------


@pytest.mark.parametrize(("marker", "parts"), [
    ("1,*", ["1", "*"]), ("2 ,5", ["2", "5"]), ("a, b", ["a", "b"]), ("**", ["**"]),
    ("*†", ["*", "†"]), ("1*", ["1", "*"]), (",", []),
])
def test_split_markers(marker: str, parts: list[str]) -> None:
    assert split_markers(marker) == parts


F, S, T, K, X = "<forename>", "<surname>", "<title>", "<marker>", "<other>"


@pytest.mark.parametrize(("fields", "expected"), [
    # markers after names, one person's two markers in two fields
    ([(F, "Ann"), (S, "Lee"), (K, "1"), (K, "*"), (X, ","), (F, "Bo"), (S, "Ng"), (K, "2")],
     [("Ann", None, "Lee", ("1", "*")), ("Bo", None, "Ng", ("2",))]),
    # markers written first
    ([(K, "1"), (F, "Ann"), (S, "Lee"), (X, ","), (K, "2"), (F, "Bo"), (S, "Ng")],
     [("Ann", None, "Lee", ("1",)), ("Bo", None, "Ng", ("2",))]),
    # surname first, no markers; a second surname opens a person
    ([(S, "Lee"), (X, ","), (F, "Ann"), (X, ";"), (S, "Ng"), (X, ","), (F, "Bo")],
     [("Ann", None, "Lee", ()), ("Bo", None, "Ng", ())]),
    # "JA" as one forename is two initials; capitals recased
    ([(F, "JA"), (S, "SMITH")], [("J", "A", "Smith", ())]),
    # nothing but markers and other text: nobody
    ([(K, "1"), (X, "and")], []),
])
def test_persons_from_fields(fields: list[tuple[str, str]],
                             expected: list[tuple[str, str | None, str, tuple[str, ...]]]) -> None:
    persons = persons_from_fields(fields)
    assert [(p.given_name, p.middle_name, p.surname, p.markers) for p in persons] == expected


def test_a_prenominal_title_opens_the_next_person() -> None:
    persons = persons_from_fields([(F, "Ann"), (S, "Lee"), (T, "PhD"), (X, ","), (T, "Dr"),
                                   (F, "Bo"), (S, "Ng")])
    assert [(p.surname, p.title) for p in persons] == [("Lee", "PhD"), ("Ng", "Dr")]


# --- the shipped models ---------------------------------------------------------


def test_shipped_models_are_in_the_package() -> None:
    for name, spec in TEXT_MODELS.items():
        path = spec.default_path()
        assert path.is_file(), path
        assert path.stat().st_size <= 3_000_000  # the size budget
        model = TextCrfModel.load(path)
        assert model.name == name
        assert model.meta["sequences"] > 1000  # trained on the whole corpus


def test_header_author_string() -> None:
    assert parse_names("Matthew T. Maurano 1,* , Hao Wang 1,2") == [
        PersonName(full_name="Matthew T Maurano", given_name="Matthew", middle_name="T",
                   surname="Maurano", markers=("1", "*")),
        PersonName(full_name="Hao Wang", given_name="Hao", surname="Wang", markers=("1", "2")),
    ]


@pytest.mark.parametrize(("text", "expected"), [
    ("Jaka Bobnar1, Katarina Susman2 and Rudolf Podgornik1,3",
     [("Jaka", "Bobnar", ("1",)), ("Katarina", "Susman", ("2",)),
      ("Rudolf", "Podgornik", ("1", "3"))]),
    ("Walid F. Gellad, MD, MPH\n1,2 , Angela Li, MPH 5",
     [("Walid", "Gellad", ("1", "2")), ("Angela", "Li", ("5",))]),
    ("John Smith", [("John", "Smith", ())]),
    # Portuguese and Spanish names of four words, the model cutting them in two
    # (Rev Saúde Pública 38, Transinformação 35, SciELO)
    ("Roseli Mieko Yamamoto Nomura, Eliane Aparecida Alves e Marcelo Zugaib",
     [("Roseli", "Nomura", ()), ("Eliane", "Alves", ()), ("Marcelo", "Zugaib", ())]),
    ("Laura Lavínia Sabino dos Santos1 , Rosângela Schwarz Rodrigues2",
     [("Laura", "dos Santos", ("1",)), ("Rosângela", "Rodrigues", ("2",))]),
    ("Maria Lúcia F Penna", [("Maria", "Penna", ())]),
    ("María Teresa NEVADO-GIL 2", [("María", "Nevado-Gil", ("2",))]),
    ("Mayara Costa Carneiro Ramos I , Maria Augusta Bessa Rebelo I",
     [("Mayara", "Ramos", ("I",)), ("Maria", "Rebelo", ("I",))]),
    # two persons the page sets apart by nothing stay two
    ("John Smith Mary Jones", [("John", "Smith", ()), ("Mary", "Jones", ())]),
    # Vancouver's order, surname first (a real header, shared/data/pdfs/two_pages.pdf)
    ("Alabsi S1, *Alhadainy HA 2, Darrag AM 2, Mohammed AA 3",
     [("S", "Alabsi", ("1", "*")), ("H", "Alhadainy", ("2",)), ("A", "Darrag", ("2",)),
      ("A", "Mohammed", ("3",))]),
    ("Wang J", [("J", "Wang", ())]),
])
def test_real_author_lines(text: str, expected: list[tuple[str, str, tuple[str, ...]]]) -> None:
    assert [(p.given_name, p.surname, p.markers) for p in parse_names(text)] == expected


def test_header_affiliation_string() -> None:
    [aff] = parse_affiliations("1 Dept. of Genome Sciences, University of Washington School "
                               "of Medicine, Seattle WA, 98195 USA")
    assert aff == Affiliation(
        raw="Dept. of Genome Sciences, University of Washington School of Medicine, "
            "Seattle WA, 98195 USA",
        marker="1",
        institutions=("University of Washington School of Medicine",),
        departments=("Dept. of Genome Sciences",),
        address=Address(post_code="98195", settlement="Seattle", region="WA", country="USA"),
    )
    assert aff.to_grobid_affiliation().address is not None


def test_several_affiliations_split_by_markers() -> None:
    affs = parse_affiliations(
        "1 Nanoscience Center, Department of Physics, University of Jyväskylä, PO Box 35, "
        "FIN-40014, Finland\n2 Institute of Biomedical Technology, University of Tampere, "
        "FIN-33014, Finland")
    assert [(a.marker, a.institution, a.address.country) for a in affs] == [
        ("1", "University of Jyväskylä", "Finland"), ("2", "University of Tampere", "Finland")]
    assert affs[0].department == "Department of Physics"


@pytest.mark.parametrize("text", ["", "   ", "\n\n", ",;:!", "\x00\x01\x02", "%%%% ---- ////",
                                  "\ud800", "12345"])
def test_empty_and_garbage_give_nothing(text: str) -> None:
    assert parse_names(text) == []
    assert parse_affiliations(text) == []


def test_very_long_input_is_bounded() -> None:
    text = "Jane Doe 1, John Smith 2,\n" * 40_000  # a megabyte
    started = time.monotonic()
    persons = parse_names(text)
    affs = parse_affiliations(text)
    assert time.monotonic() - started < 20
    # only the head is read: MAX_CHARS characters, at most MAX_TOKENS tokens
    assert 0 < len(persons) <= textcrf.MAX_TOKENS // 3
    assert len(affs) <= textcrf.MAX_TOKENS


def test_a_corrupt_model_is_refused(tmp_path: Path) -> None:
    data = TEXT_MODELS["name-header"].default_path().read_bytes()
    bad = tmp_path / "bad.crfmodel"
    bad.write_bytes(data[:-10])
    with pytest.raises(ConfigError, match="corrupt"):
        TextCrfModel.load(bad)
    bad.write_bytes(b"not a model")
    with pytest.raises(ConfigError, match="not a sandcrawler text CRF"):
        TextCrfModel.load(bad)


# --- training and cross-validation ------------------------------------------------


def test_training_is_deterministic_and_the_model_labels(tmp_path: Path) -> None:
    params = {"max_iterations": 30}
    first = train_model("affiliation-address", AFFILIATIONS, tmp_path / "a.crfmodel", params)
    second = train_model("affiliation-address", AFFILIATIONS, tmp_path / "b.crfmodel", params)
    assert (tmp_path / "a.crfmodel").read_bytes() == (tmp_path / "b.crfmodel").read_bytes()
    assert first.sequences == 2 and first.size == second.size
    model = TextCrfModel.load(first.path)
    [aff] = parse_affiliations("2 Institute of Biomedical Technology, University of Tampere, "
                               "FIN-33014, Finland", model)
    assert aff.address.country == "Finland"


def test_cross_validation_scores_every_sequence(tmp_path: Path) -> None:
    scores = cross_validate("name-header", NAMES, folds=2, params={"max_iterations": 20})
    assert scores.sequences == len(read_names(NAMES))
    assert scores.micro().support > 20


def test_unknown_model_name() -> None:
    with pytest.raises(ConfigError, match="unknown text model"):
        train_model("names", NAMES, Path("x"))
