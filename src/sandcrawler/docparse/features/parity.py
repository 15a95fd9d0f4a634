"""How closely our feature rows match GROBID's own feature files: for the
documents of GROBID's corpora whose PDF we have, our rows for one model aligned
to GROBID's and counted column by column (``bench/eval/layout_parity.py``
prints it). How rows are aligned: docs/extraction.md, "Notes by module".
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sandcrawler.docparse.features.fulltext import Callouts, fulltext_rows
from sandcrawler.docparse.features.header import header_rows
from sandcrawler.docparse.features.lexicon import Lexicon
from sandcrawler.docparse.features.reference_segmenter import refseg_rows
from sandcrawler.docparse.features.segmentation import segmentation_rows
from sandcrawler.docparse.features.stream import TokenRows, affixes, punctuation_type, word_features
from sandcrawler.docparse.layout.elements import Layout, Line

#: model -> (its corpus directory, the endings of its feature files' names)
MODELS = {
    "segmentation": ("segmentation", (".training.segmentation",)),
    "header": ("header", (".training.header",)),
    "reference-segmenter": (
        "reference-segmenter",
        (".training.references.referenceSegmenter", ".training.referenceSegmenter"),
    ),
    "fulltext": ("fulltext", (".training.fulltext",)),
}


def _feature_files(dataset: Path, model: str) -> list[tuple[str, Path]]:
    """A model's corpus feature files, with the document each is of."""
    folder, endings = MODELS[model]
    found = []
    for raw in sorted((dataset / folder / "corpus" / "raw").iterdir()):
        ending = next((e for e in endings if raw.name.endswith(e)), None)
        if ending is not None:
            found.append((raw.name[: -len(ending)], raw))
    return found


# where GROBID's test PDFs are kept, by name: ../shared/data/pdfs has them under
# their own name, GROBID's test resources under a prefixed one
_PDF_NAMES = ("{stem}.pdf", "grobid-core_src_test_resources_test_{stem}.pdf")


@dataclass(frozen=True, slots=True)
class Pair:
    model: str
    stem: str
    pdf: Path
    raw: Path


@dataclass(slots=True)
class Agreement:
    """Per-column counts of equal values over aligned rows."""

    model: str
    raw_rows: int = 0
    our_rows: int = 0
    aligned: int = 0
    equal: list[int] = field(default_factory=list)
    #: (column, GROBID's value, ours) -> how often, for the disagreements
    differences: Counter[tuple[int, str, str]] = field(default_factory=Counter)

    def add(self, other: Agreement) -> None:
        self.raw_rows += other.raw_rows
        self.our_rows += other.our_rows
        self.aligned += other.aligned
        if len(self.equal) < len(other.equal):
            self.equal += [0] * (len(other.equal) - len(self.equal))
        for i, n in enumerate(other.equal):
            self.equal[i] += n
        self.differences.update(other.differences)

    def column(self, i: int) -> float:
        return self.equal[i] / self.aligned if self.aligned else 0.0

    @property
    def coverage(self) -> float:
        return self.aligned / self.raw_rows if self.raw_rows else 0.0


def find_pairs(grobid_dir: Path, pdf_dirs: Sequence[Path]) -> list[Pair]:
    """Every (model, document) whose GROBID feature file and PDF we have."""
    dataset = grobid_dir / "grobid-trainer" / "resources" / "dataset"
    pairs = []
    for model in MODELS:
        for stem, raw in _feature_files(dataset, model):
            for d in pdf_dirs:
                pdf = next(
                    (
                        d / n.format(stem=stem)
                        for n in _PDF_NAMES
                        if _non_empty(d / n.format(stem=stem))
                    ),
                    None,
                )
                if pdf is not None:
                    pairs.append(Pair(model, stem, pdf, raw))
                    break
    return pairs


def _non_empty(path: Path) -> bool:
    return path.is_file() and path.stat().st_size > 0


def read_raw(path: Path) -> list[list[str]]:
    return [
        line.split(" ") for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def compare(
    model: str,
    layout: Layout,
    raw: list[list[str]],
    lexicon: Lexicon | None = None,
    callouts: Callouts | None = None,
) -> Agreement:
    """Our rows for ``model`` against GROBID's ``raw`` rows of the same document
    (``callouts``: the fulltext's, from the document's references)."""
    if model == "segmentation":
        ours = segmentation_rows(layout, lexicon)
        return _count(model, raw, ours, [tuple(r[:2]) for r in raw], [tuple(r[:2]) for r in ours])
    if model == "fulltext":
        lines = zone_lines(layout, [r[0] for r in raw])
        _, rows = fulltext_rows(layout, lines, lexicon, callouts or Callouts())
        return _count(model, raw, rows, [(r[0],) for r in raw], [(r[0],) for r in rows])
    function: Callable[[Layout, Sequence[Line], Lexicon | None], TokenRows] = (
        header_rows if model == "header" else refseg_rows
    )
    lines = zone_lines(layout, [r[0] for r in raw])
    _, rows = function(layout, lines, lexicon)
    return _count(model, raw, rows, [(r[0],) for r in raw], [(r[0],) for r in rows])


def document_callouts(layout: Layout) -> Callouts:
    """The fulltext's callout columns as our cascade finds them: the shipped
    segmentation, reference-segmenter and citation models read the document's
    references (their labels, their first authors' surnames)."""
    # the models are imported here: the feature rows need none of them
    from sandcrawler.citations.crf.model import CrfModel
    from sandcrawler.docparse.assembly.references import reference_strings
    from sandcrawler.docparse.crf.columns import ColumnModel
    from sandcrawler.docparse.features.fulltext import reference_callouts
    from sandcrawler.tagging.scoring import plain

    zones = ColumnModel.load("segmentation").tag(segmentation_rows(layout))
    lines = [ln for ln, z in zip(layout.lines(), zones, strict=True) if plain(z) == "<references>"]
    if not lines:
        return Callouts()
    tokens, rows = refseg_rows(layout, lines)
    strings = reference_strings(tokens, ColumnModel.load("reference-segmenter").tag(rows))
    citations = CrfModel.load(None)
    found = []
    for ref in strings:
        authors = citations.parse(ref.text).authors
        found.append((ref.label, authors[0].surname if authors else None))
    return reference_callouts(found)


def zone_lines(layout: Layout, words: list[str]) -> list[Line]:
    """The lines of ``layout`` that GROBID's rows of one zone (their tokens,
    ``words``) come from: those with at least half their tokens matched."""
    lines = layout.lines()
    where = [(i, t.text) for i, line in enumerate(lines) for t in line.tokens]
    matcher = difflib.SequenceMatcher(None, words, [w for _, w in where], autojunk=False)
    hits: Counter[int] = Counter()
    for _, b, n in matcher.get_matching_blocks():
        for k in range(n):
            hits[where[b + k][0]] += 1
    return [lines[i] for i in sorted(hits) if hits[i] * 2 >= len(lines[i].tokens)]


def _count(
    model: str,
    raw: list[list[str]],
    ours: list[list[str]],
    raw_keys: list[tuple[str, ...]],
    our_keys: list[tuple[str, ...]],
) -> Agreement:
    out = Agreement(model, raw_rows=len(raw), our_rows=len(ours))
    width = max((len(r) for r in raw), default=0)
    out.equal = [0] * width
    matcher = difflib.SequenceMatcher(None, raw_keys, our_keys, autojunk=False)
    for a, b, n in matcher.get_matching_blocks():
        for k in range(n):
            theirs, mine = raw[a + k], ours[b + k]
            out.aligned += 1
            for c in range(width):
                x = theirs[c] if c < len(theirs) else ""
                y = mine[c] if c < len(mine) else ""
                if x == y:
                    out.equal[c] += 1
                else:
                    out.differences[(c, x, y)] += 1
    return out


# the columns a word decides alone, over GROBID's whole corpora ------------------

#: model -> {column: how to compute it from the row's word}; GROBID's rows give
#: the word (a segmentation row: its line's first word)
_WORD_COLUMNS: dict[str, dict[int, Callable[[str, Lexicon], str]]] = {}


def _word_columns() -> dict[str, dict[int, Callable[[str, Lexicon], str]]]:
    if _WORD_COLUMNS:
        return _WORD_COLUMNS

    def feature(i: int) -> Callable[[str, Lexicon], str]:
        return lambda word, lex: word_features(word, lex)[i]

    def affix(i: int) -> Callable[[str, Lexicon], str]:
        return lambda word, lex: affixes(word, True)[i]

    header = {i: affix(i) for i in range(1, 10)}
    header.update({17 + i: feature(i) for i in range(7)})
    header[27] = lambda word, lex: punctuation_type(word)
    refseg = {i: affix(i) for i in range(1, 10)}
    refseg.update({12 + i: feature(i) for i in range(5)})
    refseg[19] = feature(5)
    refseg[20] = feature(6)
    refseg[21] = lambda word, lex: "1" if "http" in word else "0"
    refseg[22] = lambda word, lex: punctuation_type(word)
    segmentation = {2 + i: affix(1 + i) for i in range(5)}
    segmentation.update({13 + i: feature(i) for i in range(5)})
    segmentation[19] = feature(5)
    segmentation[20] = feature(6)
    segmentation[22] = lambda word, lex: "1" if "http" in word else "0"
    fulltext = {i: affix(i) for i in range(1, 10)}
    fulltext.update({17 + i: feature(i) for i in range(3)})
    fulltext[20] = lambda word, lex: punctuation_type(word)
    _WORD_COLUMNS.update(
        {"segmentation": segmentation, "header": header, "reference-segmenter": refseg,
         "fulltext": fulltext}
    )
    return _WORD_COLUMNS


def corpus_word_agreement(grobid_dir: Path, lexicon: Lexicon) -> dict[str, dict[int, float]]:
    """For every row of GROBID's corpus of each model, the columns its word
    decides alone (affixes, capitals, digits, dictionary and name flags, year,
    month, punctuation kind) recomputed from the word by our code: the share
    equal to GROBID's, by column. No PDF needed: this covers the whole corpus,
    every era of GROBID that wrote it."""
    dataset = grobid_dir / "grobid-trainer" / "resources" / "dataset"
    out: dict[str, dict[int, float]] = {}
    for model in MODELS:
        columns = _word_columns()[model]
        equal: Counter[int] = Counter()
        rows = 0
        width = 0
        for _, raw in _feature_files(dataset, model):
            for row in read_raw(raw):
                if width == 0:
                    width = len(row)
                if len(row) != width:
                    continue
                rows += 1
                word = row[0]
                for c, compute in columns.items():
                    if compute(word, lexicon) == row[c]:
                        equal[c] += 1
        out[model] = {c: equal[c] / rows for c in sorted(columns)} if rows else {}
    return out
