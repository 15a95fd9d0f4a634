"""The layout models: GROBID's corpora read into labelled sequences, the column
CRF (templates, training, tagging, model files), field-level scoring and the
shipped models. Fixtures: a few real corpus files (tests/data/grobid-layout/,
SOURCES.md there)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from sandcrawler.core.errors import ConfigError
from sandcrawler.docparse.crf import columns as crf
from sandcrawler.docparse.crf.columns import (
    MODELS,
    ColumnModel,
    attributes,
    model_spec,
    parse_template,
    split_folds,
    train_model,
    train_sequences,
)
from sandcrawler.docparse.features.derived import reference_lines
from sandcrawler.docparse.training.grobid_corpus import (
    CorpusRead,
    LabelledSequence,
    SkipReason,
    normalise_token,
    read_corpus,
    read_document,
    read_figure_rows,
)
from sandcrawler.tagging.scoring import FieldScores, fields
from tests.helpers.paths import TEST_DATA

DATA = TEST_DATA / "grobid-layout"
#: a few iterations: the tests check the machinery, not the accuracy
QUICK = {"max_iterations": 15}
#: the fulltext's fields start at the I- marks of long paragraphs, which a tiny
#: corpus teaches after more iterations, with less of the spec's L1 weight
QUICK_FOR: dict[str, dict[str, float]] = {"fulltext": {"max_iterations": 30, "c1": 0.1}}

SEGMENTATION_LABELS = {"<header>", "<body>", "<references>", "<footnote>", "<headnote>",
                       "<marginnote>", "<page>", "<annex>", "<acknowledgement>", "<cover>",
                       "<toc>", "<availability>", "<funding>", "<other>"}
HEADER_LABELS = {"<title>", "<author>", "<affiliation>", "<address>", "<email>", "<abstract>",
                 "<keyword>", "<date>", "<pubnum>", "<reference>", "<copyright>", "<funding>",
                 "<submission>", "<doctype>", "<editor>", "<meeting>", "<web>", "<group>",
                 "<availability>", "<other>"}
REFERENCE_LABELS = {"<reference>", "<label>", "<other>"}
LABELS = {"segmentation": SEGMENTATION_LABELS, "header": HEADER_LABELS,
          "reference-segmenter": REFERENCE_LABELS}
FIGURE_LABELS = {"<label>", "<figure_head>", "<figDesc>", "<content>", "<other>"}
LABELS["figure"] = FIGURE_LABELS
LABELS["table"] = FIGURE_LABELS | {"<note>"}
#: the shipped models learnt from every usable document; the figure and table
#: corpora are small (docs/extraction-models.md)
MIN_DOCUMENTS = {"figure": 14, "table": 20}
#: GROBID's fulltext trainer labels a list item a paragraph (its <item> is unused)
FULLTEXT_LABELS = {"<section>", "<paragraph>", "<citation_marker>", "<figure_marker>",
                   "<table_marker>", "<equation_marker>", "<section_marker>", "<equation>",
                   "<equation_label>", "<figure>", "<table>", "<other>"}
LABELS["fulltext"] = FULLTEXT_LABELS
MIN_DOCUMENTS["fulltext"] = 88  # every annotated body of GROBID's corpus


def plain_set(labels: list[str]) -> set[str]:
    return {label.removeprefix("I-") for label in labels}


def corpus(model: str) -> CorpusRead:
    return read_corpus(model, DATA / model)


def doc(read: CorpusRead, prefix: str) -> LabelledSequence:
    return next(s for s in read.sequences if s.doc.startswith(prefix))


# -- reading GROBID's corpora ------------------------------------------------------


def test_header_alignment() -> None:
    read = corpus("header")
    assert (len(read.sequences), read.skipped) == (3, [])
    seq = doc(read, "AUSSANT2014INTER")
    assert len(seq.rows) == len(seq.labels) == 26
    pairs = [(row[0], label) for row, label in zip(seq.rows, seq.labels, strict=True)]
    assert pairs[:8] == [("DOSSIERS", "I-<reference>"), ("D", "<reference>"),
                         ("'", "<reference>"), ("HEL", "<reference>"), ("2014", "<reference>"),
                         ("SHESL", "<reference>"), ("1", "<reference>"), ("LA", "I-<title>")]
    assert ("Émilie", "I-<author>") in pairs
    assert pairs[-1] == ("France", "I-<address>")
    assert all(len(row) == 32 for row in seq.rows)
    assert plain_set(seq.labels) == {"<reference>", "<title>", "<author>", "<affiliation>",
                                     "<address>"}


def test_segmentation_alignment() -> None:
    read = corpus("segmentation")
    assert (len(read.sequences), read.skipped) == (3, [])
    seq = doc(read, "10.1371_journal.pone.0210128")
    assert all(len(row) == 33 for row in seq.rows)
    firsts = [(row[0], label) for row, label in zip(seq.rows, seq.labels, strict=True)]
    assert firsts[:4] == [("RESEARCH", "I-<header>"), ("PLOS", "<header>"),
                          ("Thank", "<header>"), ("PLOS", "I-<body>")]
    # a zone that comes back after another is a new field: its first line is marked
    assert [label for label in seq.labels if label.startswith("I-")] == [
        "I-<header>", "I-<body>", "I-<annex>", "I-<references>", "I-<header>",
        "I-<references>", "I-<headnote>", "I-<footnote>", "I-<page>"]
    assert read.rows == read.matched + read.guessed + read.dropped


def test_reference_segmenter_alignment_and_misaligned_file() -> None:
    read = corpus("reference-segmenter")
    assert [(s.doc, s.reason) for s in read.skipped] == [
        ("submission_103.training.referenceSegmenter", SkipReason.MISALIGNED)]
    assert read.skipped[0].detail == "128 of 157 rows labelled"
    seq = doc(read, "2041162")
    pairs = [(row[0], label) for row, label in zip(seq.rows, seq.labels, strict=True)]
    assert pairs[:4] == [("REFERENCES", "I-<other>"), ("1", "I-<label>"),
                         (".", "I-<reference>"), ("I", "<reference>")]
    assert sum(label == "I-<reference>" for label in seq.labels) == sum(
        label == "I-<label>" for label in seq.labels)
    assert "3 used, 1 skipped (1 misaligned)" in read.summary()


def test_figure_alignment_a_sequence_per_figure() -> None:
    read = corpus("figure")
    assert (read.documents, read.skipped) == (3, [])
    assert len(read.sequences) == 22  # 5 + 12 + 5 figures
    first = doc(read, "0807.3577")
    pairs = [(row[0], label) for row, label in zip(first.rows, first.labels, strict=True)]
    # GROBID's labels: "Figure <label>1</label>." is a head, a label and a head again
    assert pairs[:5] == [("Figure", "I-<figure_head>"), ("1", "I-<label>"),
                         (".", "I-<figure_head>"), ("The", "I-<figDesc>"),
                         ("residual", "<figDesc>")]
    assert pairs[-1] == (".", "<figDesc>")
    # 26-column rows get the superscript flag GROBID added since, as "0"
    assert {len(row) for s in read.sequences for row in s.rows} == {27}
    assert {row[26] for s in read.sequences for row in s.rows} == {"0"}
    # 1309.7222's annotation leaves out two of its raw file's runs: kept, their rows dropped
    assert sum(s.doc.startswith("1309.7222") for s in read.sequences) == 12
    assert (read.rows, read.matched, read.dropped) == (479, 394, 85)
    # <trash> (text inside the drawing) is content
    assert "I-<content>" in [label for s in read.sequences if s.doc.startswith("Y05")
                             for label in s.labels]
    assert "3 used (22 sequences)" in read.summary()


def test_table_alignment_with_notes_and_27_columns() -> None:
    read = corpus("table")
    assert (read.documents, len(read.sequences), read.skipped) == (3, 4, [])
    seq = doc(read, "12862_2014_Article_245")
    plain = plain_set(seq.labels)
    assert plain == {"<figure_head>", "<label>", "<figDesc>", "<content>", "<note>"}
    assert [row[0] for row, label in zip(seq.rows, seq.labels, strict=True)
            if label == "I-<label>"] == ["1"]
    newer = [s for s in read.sequences if s.doc.startswith("474.")]
    assert [len(s.rows) for s in newer] == [111, 48]
    raw = (DATA / "table" / "raw" / "474._10.1.1.117.8006.training.table").read_text("utf-8")
    # its own 27 columns, read as they are
    assert {line.count("\t") for line in raw.splitlines() if line} == {26}
    assert all(len(row) == 27 for s in newer for row in s.rows)


@pytest.mark.parametrize(("line", "expected"), [
    ("a\tb\tc", ["a", "b", "c", "0"]),  # 26 columns of GROBID's older files, tab-separated
    ("a   b c", ["a", "b", "c", "0"]),  # spaces, in runs (1309.7222-bis)
    ("a b c d", ["a", "b", "c", "d"]),
])
def test_figure_raw_rows_are_read_whatever_the_separator(
        tmp_path: Path, line: str, expected: list[str]) -> None:
    raw = tmp_path / "x.training.figure"
    raw.write_text(f"{line}\n\n{line}\n", encoding="utf-8")
    assert read_figure_rows(raw, 4) == [expected, expected]
    raw.write_text("a b\n", encoding="utf-8")
    with pytest.raises(Exception, match="2 columns, expected 4"):
        read_figure_rows(raw, 4)


def test_figure_annotation_as_grobids_figure_parser_reads_it(tmp_path: Path) -> None:
    tei = ('<figure type="table"><head>Table <label>2</label>: </head>'
           '<figDesc>A caption<lb/> on two lines</figDesc><table>x 1<lb/>y 2</table>'
           '<note>a note</note></figure>'
           '<figure><head>Fig. <label>3</label></head> stray <figDesc>More</figDesc></figure>')
    words = ["Table", "2", ":", "A", "caption", "on", "two", "lines", "x", "1", "y", "2", "a",
             "note", "Fig", ".", "3", "stray", "More"]
    write_pair(tmp_path, "t", tei, words, 27)
    read = read_corpus("table", tmp_path)
    assert [s.doc for s in read.sequences] == ["t", "t"]
    assert [[(r[0], label) for r, label in zip(s.rows, s.labels, strict=True)]
            for s in read.sequences] == [
        [("Table", "I-<figure_head>"), ("2", "I-<label>"), (":", "I-<figure_head>"),
         ("A", "I-<figDesc>"), ("caption", "<figDesc>"), ("on", "<figDesc>"),
         ("two", "<figDesc>"), ("lines", "<figDesc>"), ("x", "I-<content>"),
         ("1", "<content>"), ("y", "<content>"), ("2", "<content>"), ("a", "I-<note>"),
         ("note", "<note>")],
        # text after </head> takes the label last written, as in GROBID's parser
        [("Fig", "I-<figure_head>"), (".", "<figure_head>"), ("3", "I-<label>"),
         ("stray", "I-<figure_head>"), ("More", "I-<figDesc>")],
    ]


@pytest.mark.parametrize(("raw", "expected"), [
    ("well\u2013known", "well-known"),  # en dash
    ("a\u2212b", "a-b"),  # minus sign
    ("x\u00a0y", "xy"),  # a no-break space is removed
    ("\uff08a\uff09", "(a)"),  # full-width brackets
    ("plain", "plain"),
    ("\u00b7", "\u2022"),  # middle dot: a bullet
])
def test_tokens_are_compared_as_grobid_normalises_them(raw: str, expected: str) -> None:
    assert normalise_token(raw) == expected


def copy_corpus(model: str, tmp_path: Path) -> Path:
    target = tmp_path / model
    shutil.copytree(DATA / model, target)
    return target


def test_corrupt_raw_file_is_skipped_with_its_reason(tmp_path: Path) -> None:
    directory = copy_corpus("header", tmp_path)
    raw = directory / "raw" / "French_in_Auvergne.training.header"
    lines = raw.read_text(encoding="utf-8").splitlines()
    lines[5] = " ".join(lines[5].split(" ")[:20])  # a row cut short
    raw.write_text("\n".join(lines) + "\n", encoding="utf-8")
    read = read_corpus("header", directory)
    assert len(read.sequences) == 2
    (skip,) = read.skipped
    assert (skip.doc, skip.reason) == ("French_in_Auvergne.training.header", SkipReason.BAD_ROW)
    assert skip.detail == "French_in_Auvergne.training.header:6: 20 columns, expected 32"


def test_bad_xml_missing_raw_and_lone_raw_are_counted(tmp_path: Path) -> None:
    directory = copy_corpus("segmentation", tmp_path)
    tei = directory / "tei" / "PMC4317227.training.segmentation.tei.xml"
    tei.write_bytes(tei.read_bytes()[:500])  # truncated XML
    (directory / "raw" / "PMC4104102.training.segmentation").unlink()
    shutil.copy(DATA / "header" / "raw" / "AUSSANT2014INTER.training.header",
                directory / "raw")
    read = read_corpus("segmentation", directory)
    assert len(read.sequences) == 1
    assert read.skip_counts() == {SkipReason.NO_RAW_FILE: 1, SkipReason.BAD_XML: 1,
                                  SkipReason.NO_TEI_FILE: 1}
    assert read.documents == 4


def test_misaligned_raw_file_is_skipped(tmp_path: Path) -> None:
    # another document's feature rows under this annotation's name
    directory = copy_corpus("header", tmp_path)
    shutil.copy(directory / "raw" / "submission_363.training.header",
                directory / "raw" / "French_in_Auvergne.training.header")
    read = read_corpus("header", directory)
    (skip,) = read.skipped
    assert (skip.doc, skip.reason) == ("French_in_Auvergne.training.header",
                                       SkipReason.MISALIGNED)


def test_read_document_raises_with_the_reason() -> None:
    name = "submission_103.training.referenceSegmenter"
    refseg = DATA / "reference-segmenter"
    with pytest.raises(ConfigError, match="misaligned: 128 of 157 rows labelled"):
        read_document("reference-segmenter", refseg / "tei" / f"{name}.tei.xml",
                      refseg / "raw" / name)
    name = "AUSSANT2014INTER.training.header"
    seq = read_document("header", DATA / "header" / "tei" / f"{name}.tei.xml",
                        DATA / "header" / "raw" / name)
    assert len(seq.labels) == 26


def write_pair(directory: Path, name: str, tei_body: str, first_words: list[str],
               columns: int) -> None:
    (directory / "tei").mkdir(parents=True, exist_ok=True)
    (directory / "raw").mkdir(parents=True, exist_ok=True)
    (directory / "tei" / f"{name}.tei.xml").write_text(
        f'<tei><teiHeader><fileDesc xml:id="_{name}"/></teiHeader><text>{tei_body}</text></tei>',
        encoding="utf-8")
    rows = [" ".join([w] + ["x"] * (columns - 1)) for w in first_words]
    (directory / "raw" / name).write_text("\n".join(rows) + "\n", encoding="utf-8")


def test_segmentation_rows_out_of_step_take_the_previous_label(tmp_path: Path) -> None:
    # the annotation's lines: zones, a footnote inside the body, <other> unmarked
    body = [f"line{i}" for i in range(12)]
    write_pair(tmp_path, "a", "<front>Title here<lb/>Authors<lb/></front>"
               "<body>Intro text<lb/>more<lb/><note place=\"footnote\">1 note<lb/></note>"
               "again<lb/>" + "<lb/>".join(body) + "</body><other>junk<lb/></other>", [
                   "Title", "Authors", "Intro", "STRAY", "more", "1", "again", *body, "junk"],
               33)
    read = read_corpus("segmentation", tmp_path)
    (seq,) = read.sequences
    assert seq.labels == ["I-<header>", "<header>", "I-<body>", "<body>", "<body>",
                          "I-<footnote>", "I-<body>", *["<body>"] * 12, "<other>"]
    assert (read.matched, read.guessed) == (19, 1)


def test_segmentation_file_ending_out_of_step_is_unsynchronised(tmp_path: Path) -> None:
    words = [f"w{i}" for i in range(30)]
    # the raw file's last 12 rows are not in the annotation, which goes on
    write_pair(tmp_path, "b", "<body>" + "<lb/>".join(words) + "<lb/></body>",
               words[:15] + [f"other{i}" for i in range(12)], 33)
    read = read_corpus("segmentation", tmp_path)
    assert [s.reason for s in read.skipped] == [SkipReason.UNSYNCHRONISED]


def test_header_single_gap_takes_its_neighbours_label(tmp_path: Path) -> None:
    write_pair(tmp_path, "c", "<front><titlePart>A B C D E F G H I J K</titlePart></front>",
               ["A", "B", "C", "D", "E", "F", "?", "G", "H", "I", "J", "K"], 32)
    read = read_corpus("header", tmp_path)
    (seq,) = read.sequences
    assert seq.labels == ["I-<title>"] + ["<title>"] * 11
    assert (read.matched, read.guessed, read.dropped) == (11, 1, 0)


# -- templates and attributes ----------------------------------------------------------


@pytest.mark.parametrize("name", sorted(MODELS))
def test_windows_are_grobids_templates(name: str) -> None:
    template = (DATA / "templates" / f"{name}.template").read_text(encoding="utf-8")
    assert set(parse_template(template)) == set(model_spec(name).windows)
    assert len(model_spec(name).windows) == len(set(model_spec(name).windows))


def test_fulltext_windows_are_its_template_file() -> None:
    # GROBID's fulltext.template: 89 windows over the 27 columns, the superscript
    # flag's (26) included; its commented-out lines (the token with the page
    # position, vector graphics, spacing, density) are not windows
    template = (DATA / "templates" / "fulltext.template").read_text(encoding="utf-8")
    windows = parse_template(template)
    assert len(windows) == len(crf.FULLTEXT_WINDOWS) == 89
    assert set(windows) == set(crf.FULLTEXT_WINDOWS)
    assert {c for w in windows for _, c in w} == set(range(27))
    assert ((0, 0), (-1, 22)) not in windows and ((-2, 24),) not in windows
    assert model_spec("fulltext").columns == 27


def test_attributes_read_windows_and_pad_the_ends() -> None:
    rows = [["a", "0"], ["b", "1"], ["c", "0"]]
    windows = (((-1, 0),), ((0, 0),), ((1, 0),), ((0, 1),), ((-1, 0), (0, 0)))
    assert attributes(windows, rows) == [
        ["0:-1=_B-1", "0:0=a", "0:1=b", "1:0=0", "0:-1,0:0=_B-1/a"],
        ["0:-1=a", "0:0=b", "0:1=c", "1:0=1", "0:-1,0:0=a/b"],
        ["0:-1=b", "0:0=c", "0:1=_B+1", "1:0=0", "0:-1,0:0=b/c"],
    ]
    # a flag column's usual value gives no attribute
    assert attributes(windows, rows, {1: "0"})[0] == [
        "0:-1=_B-1", "0:0=a", "0:1=b", "0:-1,0:0=_B-1/a"]


def test_unknown_model_is_a_config_error() -> None:
    with pytest.raises(ConfigError,
                       match=r"unknown layout model 'footer' \(known: [a-z, -]*header, "):
        model_spec("footer")
    with pytest.raises(ConfigError, match="unknown layout model"):
        ColumnModel.load("footer")


# -- training, files, tagging -------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("models")
    paths = {}
    for name in MODELS:
        params = QUICK_FOR.get(name, QUICK)
        summary = train_model(name, DATA / name, out / f"{name}.crfmodel", params)
        assert summary.documents == len({s.doc for s in corpus(name).sequences})
        assert summary.iterations is not None
        assert summary.iterations <= params["max_iterations"]
        paths[name] = summary.path
    return paths


@pytest.mark.parametrize("name", sorted(MODELS))
def test_tiny_model_tags_its_training_documents(name: str, tiny_models: dict[str, Path]) -> None:
    model = ColumnModel.load(tiny_models[name])
    assert model.name == name
    assert model.columns == model_spec(name).columns
    assert len(model.version) == 12
    scores = FieldScores()
    for seq in corpus(name).sequences:
        predicted = model.tag(seq.rows)
        assert len(predicted) == len(seq.rows)
        assert plain_set(predicted) <= LABELS[name]
        scores.add(seq.labels, predicted)
    # a model tags the documents it learnt from mostly right, even after 15 iterations
    assert scores.micro().f1 > 0.5


def test_training_is_deterministic(tmp_path: Path) -> None:
    seqs = corpus("reference-segmenter").sequences
    spec = model_spec("reference-segmenter")
    train_sequences(spec, seqs, tmp_path / "a.crfmodel", QUICK)
    train_sequences(spec, seqs, tmp_path / "b.crfmodel", QUICK)
    assert (tmp_path / "a.crfmodel").read_bytes() == (tmp_path / "b.crfmodel").read_bytes()


def test_rows_of_another_layout_are_refused(tiny_models: dict[str, Path]) -> None:
    model = ColumnModel.load(tiny_models["header"])
    with pytest.raises(ValueError, match="row 0 has 28 columns, the model reads 32"):
        model.tag([["x"] * 28])
    assert model.tag([]) == []


def test_long_sequences_are_tagged_in_chunks(tiny_models: dict[str, Path],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    model = ColumnModel.load(tiny_models["segmentation"])
    rows = [row for seq in corpus("segmentation").sequences for row in seq.rows]
    whole = model.tag(rows)
    monkeypatch.setattr(crf, "CHUNK", 60)
    monkeypatch.setattr(crf, "OVERLAP", 15)
    chunked = model.tag(rows)
    assert len(chunked) == len(rows) > 2 * 60
    assert chunked == whole


def test_corrupt_model_files_are_refused(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    data = tiny_models["header"].read_bytes()
    truncated = tmp_path / "truncated.crfmodel"
    truncated.write_bytes(data[:-100])
    with pytest.raises(ConfigError, match="truncated or altered"):
        ColumnModel.load(truncated)
    other = tmp_path / "other.crfmodel"
    other.write_bytes(b"not a model")
    with pytest.raises(ConfigError, match="is not a sandcrawler column CRF model file"):
        ColumnModel.load(other)
    with pytest.raises(ConfigError, match="cannot read column CRF model"):
        ColumnModel.load(tmp_path / "missing.crfmodel")


def test_folds_hold_each_document_once() -> None:
    seqs = [LabelledSequence(f"doc{i}", [["x"]], ["<other>"]) for i in range(50)]
    pairs = split_folds(seqs, 10)
    tested = [s.doc for _, test in pairs for s in test]
    assert sorted(tested) == sorted(s.doc for s in seqs)
    for train, test in pairs:
        assert not {s.doc for s in train} & {s.doc for s in test}
    assert split_folds(seqs, 10) == pairs  # deterministic
    assert {len(test) for _, test in split_folds(seqs[:25], 10)} == {2, 3}
    with pytest.raises(ConfigError):
        split_folds(seqs, 1)
    with pytest.raises(ConfigError, match="5 documents cannot make 10 folds"):
        split_folds(seqs[:5], 10)


def test_folds_keep_a_documents_figures_together() -> None:
    seqs = [LabelledSequence(f"doc{i // 3}", [["x"]], ["<figDesc>"]) for i in range(30)]
    pairs = split_folds(seqs, 5)
    for train, test in pairs:
        assert not {s.doc for s in train} & {s.doc for s in test}
        assert len(test) == 6  # two documents of three figures each
    with pytest.raises(ConfigError, match="10 documents cannot make 11 folds"):
        split_folds(seqs, 11)


def test_cross_validation_sums_the_folds(tmp_path: Path) -> None:
    seen: list[int] = []
    total = crf.cross_validate("header", DATA / "header", folds=2, params=QUICK,
                               on_fold=lambda k, scores: seen.append(scores.sequences))
    assert sorted(seen) == [1, 2] and total.sequences == 3
    assert total.micro().support > 0


# -- scoring as GROBID scores -------------------------------------------------------------


def test_fields_start_at_a_new_label_or_a_beginning_mark() -> None:
    labels = ["I-<title>", "<title>", "I-<author>", "<author>", "I-<author>", "<other>",
              "<other>", "<title>"]
    assert fields(labels) == [("<title>", 0, 2), ("<author>", 2, 4), ("<author>", 4, 5),
                              ("<other>", 5, 7), ("<title>", 7, 8)]


def test_averages_leave_out_other_and_labels_never_expected() -> None:
    scores = FieldScores()
    scores.add(["I-<title>", "<title>", "I-<author>", "<other>"],
               ["I-<title>", "<title>", "I-<email>", "<other>"])
    assert scores.labels["<email>"].fp == 1
    micro = scores.micro()
    # <email> was never expected: its false positive is not in the averages (GROBID's rule)
    assert (micro.tp, micro.fp, micro.fn) == (1, 0, 1)
    assert scores.macro_f1() == pytest.approx((1.0 + 0.0) / 2)


# -- the shipped models -------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(MODELS))
def test_shipped_model_loads_and_tags_a_real_raw_file(name: str) -> None:
    started = time.perf_counter()
    model = ColumnModel.load(name)
    assert time.perf_counter() - started < 1.0
    assert model.meta["documents"] >= MIN_DOCUMENTS.get(name, 101)  # the whole corpus
    seq = corpus(name).sequences[0]
    predicted = model.tag(seq.rows)
    assert len(predicted) == len(seq.rows)
    assert plain_set(predicted) <= LABELS[name]
    assert plain_set(model.labels) <= LABELS[name]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_shipped_model_reads_rows_as_its_spec_says(name: str) -> None:
    # the windows, columns, flags and derived columns travel in the model file:
    # a spec changed without retraining (or a file trained on another layout) fails here
    model = ColumnModel.load(name)
    spec = model_spec(name)
    assert (model.columns, model.windows, model.omit, model.derived) == (
        spec.columns, spec.windows, dict(spec.omit), spec.derived)


def test_reference_lines_describe_how_lines_follow() -> None:
    def row(token: str, mark: str, place: str) -> list[str]:
        cells = [token] + ["x"] * 27
        cells[10], cells[23] = mark, place
        return cells

    rows = [row("1", "LINESTART", "0"), row("Smith", "LINEIN", "3"), row(".", "LINEEND", "9"),
            row("2", "LINESTART", "0"), row("Doe", "LINEEND", "4"),
            row("Nature", "LINESTART", "0")]
    columns = reference_lines(rows)
    assert columns == {
        28: ["N2"] * 6,  # two of three lines start with a number
        29: ["-", "-", "-", ".", "-", "Aa"],
        30: ["-", "-", "-", "9", "-", "4"],
    }
