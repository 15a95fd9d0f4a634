"""The layout models (segmentation, header, reference segmenter): linear-chain
CRFs on the one tagger over rows laid out as GROBID's raw feature files, whose
attributes are the values of columns around a row as GROBID's CRF++ templates
define them; the registry of the three models, training and k-fold
cross-validation (docs/extraction-models.md, "Notes by module").
"""

from __future__ import annotations

import hashlib
import re
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandcrawler.core.errors import ConfigError
from sandcrawler.core.imports import entry
from sandcrawler.docparse.crf import shipped_model_path
from sandcrawler.docparse.features.derived import derivation, derived_columns
from sandcrawler.docparse.training.grobid_corpus import LabelledSequence, SkipReason, read_corpus
from sandcrawler.tagging.crf import BASE_PARAMS, CrfTagger, ModelKind, TaggedModel
from sandcrawler.tagging.folds import fold_results
from sandcrawler.tagging.scoring import FieldScores

KIND = ModelKind("column CRF", b"sandcrawler column CRF\n")
#: rows tagged per CRFsuite call: a longer sequence (a book) is tagged in
#: overlapping chunks so that memory stays bounded; the labels of a chunk's
#: overlap come from the chunk that sees most context around them
CHUNK = 5000
OVERLAP = 100

#: a window: (row offset, column) pairs whose values make one attribute
Window = tuple[tuple[int, int], ...]


_PLACEHOLDER = re.compile(r"%x\[(-?\d+),(\d+)\]")


def parse_template(text: str) -> tuple[Window, ...]:
    """The windows of a CRF++/Wapiti template: each unigram line (``U..:%x[r,c]``,
    ``/``-joined for several positions) once, in order; comments and the
    bigram line ``B`` left out (CRFsuite always has label transitions)."""
    out: list[Window] = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line.startswith("U"):
            continue
        window = tuple((int(r), int(c)) for r, c in _PLACEHOLDER.findall(line))
        if window and window not in out:
            out.append(window)
    return tuple(out)


def _columns(column: int, *offsets: int) -> tuple[Window, ...]:
    return tuple(((offset, column),) for offset in offsets)


def _spread(spec: Mapping[int, Sequence[int]]) -> tuple[Window, ...]:
    return tuple(w for column, offsets in spec.items() for w in _columns(column, *offsets))


# GROBID's templates (grobid-trainer/resources/dataset/<model>/crfpp-templates/,
# read from its repository; tests/docparse/test_docparse_models.py checks the windows
# against the files): column -> offsets, then the two-position windows
_AROUND = (-1, 0, 1)
SEGMENTATION_WINDOWS = _spread({
    0: range(-4, 6), 1: range(-4, 5), 2: range(-2, 3), 3: (0,), 4: (0,), 5: (0,), 6: (0,),
    **dict.fromkeys(range(7, 16), _AROUND), **dict.fromkeys(range(16, 23), (0, 1)),
    **dict.fromkeys(range(23, 28), _AROUND), **dict.fromkeys((28, 29, 30), range(-2, 4)),
    31: _AROUND, 32: (-2, -1, 0, 1),
})
_TOKEN_PAIRS: tuple[Window, ...] = (((-1, 0), (0, 0)), ((0, 0), (1, 0)), ((1, 0), (2, 0)),
                                     ((-2, 0), (-1, 0)))
HEADER_WINDOWS = (*_spread({
    0: range(-4, 5), 1: range(-2, 3), **dict.fromkeys(range(2, 10), (0,)),
    **dict.fromkeys(range(10, 17), _AROUND), 17: range(-2, 3), 18: _AROUND, 19: _AROUND,
    **dict.fromkeys(range(20, 27), (0, 1)), 27: range(-2, 3), 28: _AROUND,
}), *_TOKEN_PAIRS, ((0, 0), (-1, 28)))
REFERENCE_SEGMENTER_WINDOWS = (*_spread({
    0: range(-3, 4), 1: range(-2, 3), **dict.fromkeys(range(2, 10), (0,)),
    10: _AROUND, 11: _AROUND, 12: _AROUND, 13: _AROUND, 14: _AROUND,
    **dict.fromkeys(range(15, 22), (0, 1)), 22: range(-2, 3), 23: _AROUND, 24: _AROUND,
    25: _AROUND,
}), *_TOKEN_PAIRS, ((0, 12), (1, 12)), ((-1, 12), (0, 12)))
FULLTEXT_WINDOWS = (*_spread({
    0: range(-4, 6), 1: range(-2, 3), **dict.fromkeys(range(2, 10), (0,)), 10: _AROUND,
    11: range(-2, 3), **dict.fromkeys(range(12, 20), _AROUND), 20: range(-2, 3),
    21: _AROUND, 22: _AROUND, 23: range(-2, 4), 24: (0,), 25: range(-2, 3), 26: range(-2, 3),
}), *_TOKEN_PAIRS, ((0, 17), (1, 17)), ((-1, 17), (0, 17)))
# figure and table: one template for both, over the fulltext rows' columns (the
# superscript flag, column 26, is read by no window)
FIGURE_WINDOWS = (*_spread({
    0: range(-4, 6), 1: range(-2, 3), **dict.fromkeys(range(2, 10), (0,)), 10: _AROUND,
    11: range(-2, 3), **dict.fromkeys(range(12, 20), _AROUND), 20: range(-2, 3), 21: _AROUND,
    22: _AROUND, 23: range(-2, 4), 24: (0,), 25: range(-2, 3),
}), *_TOKEN_PAIRS, ((0, 17), (1, 17)), ((-1, 17), (0, 17)))


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """One model: its name (GROBID's), its raw files' column count, its
    windows and its CRFsuite training parameters."""

    name: str
    columns: int
    windows: tuple[Window, ...]
    params: Mapping[str, Any]
    #: what a row is: a line (segmentation) or a token
    unit: str
    summary: str
    #: flag columns (0/1) -> the value whose one-column attributes are left out:
    #: an attribute that is on for nearly every row is a bias the others already
    #: give, and it costs CRFsuite a weight per label on every row
    omit: Mapping[int, str] = field(default_factory=dict)
    #: columns computed from the whole sequence (``docparse/derived.py``), which
    #: windows read as columns numbered on from the raw ones
    derived: str | None = None

    def model_path(self) -> Path:
        return shipped_model_path(self.name)


_LBFGS: dict[str, Any] = {**BASE_PARAMS, "num_memories": 6, "period": 10}

# the flag columns of GROBID's feature vectors (FeaturesVectorSegmentation,
# FeaturesVectorHeader, FeaturesVectorReferenceSegmenter): bold, italic, a
# single character, the dictionary lookups, bitmaps and graphics near the
# block, repeated patterns, the largest font; "in the page's main area" is
# usually 1, the others 0
_SEGMENTATION_FLAGS = {**dict.fromkeys((11, 12, 15, *range(16, 23), 28, 29, 30, 31), "0"),
                       32: "1"}
_HEADER_FLAGS = dict.fromkeys((15, 16, *range(19, 27), 28), "0")
_REFERENCE_SEGMENTER_FLAGS = dict.fromkeys(range(14, 22), "0")
# FeaturesVectorFulltext: bold, italic, a single character, a bitmap near the
# block, a known callout, superscript
_FULLTEXT_FLAGS = dict.fromkeys((15, 16, 19, 23, 25, 26), "0")
# figure and table (the fulltext rows): bold, italic, a single character, a
# bitmap near the block, a known callout
_FIGURE_FLAGS = dict.fromkeys((15, 16, 19, 23, 25), "0")

MODELS: dict[str, ModelSpec] = {
    spec.name: spec for spec in (
        ModelSpec("segmentation", 33, SEGMENTATION_WINDOWS,
                  {**_LBFGS, "c1": 0.5, "c2": 0.001, "max_iterations": 200, "delta": 1e-5},
                  "line", "zones of the document: header, body, references, notes...",
                  _SEGMENTATION_FLAGS),
        ModelSpec("header", 32, HEADER_WINDOWS,
                  {**_LBFGS, "c1": 0.5, "c2": 0.001, "max_iterations": 150, "delta": 1e-5},
                  "token", "title, authors, affiliations, abstract... of the header zone",
                  _HEADER_FLAGS),
        ModelSpec("reference-segmenter", 28, REFERENCE_SEGMENTER_WINDOWS,
                  {**_LBFGS, "c1": 0.5, "c2": 0.001, "max_iterations": 150, "delta": 1e-5},
                  "token", "the references zone cut into references and their labels",
                  _REFERENCE_SEGMENTER_FLAGS),
        # c1 1.0: 47,030 active features after 100 iterations (2.2 MB) where 0.5
        # keeps 964,000 after 20 (53 MB); 3.0 halves the file again for 0.3 F1 less
        ModelSpec("fulltext", 27, FULLTEXT_WINDOWS,
                  {**_LBFGS, "c1": 1.0, "c2": 0.001, "max_iterations": 150, "delta": 1e-5},
                  "token", "sections, paragraphs, callouts, figures, tables, equations "
                  "of the body zone", _FULLTEXT_FLAGS),
        ModelSpec("figure", 27, FIGURE_WINDOWS,
                  {**_LBFGS, "c1": 0.5, "c2": 0.001, "max_iterations": 150, "delta": 1e-5},
                  "token", "a figure's label, head, caption and content", _FIGURE_FLAGS),
        ModelSpec("table", 27, FIGURE_WINDOWS,
                  {**_LBFGS, "c1": 0.5, "c2": 0.001, "max_iterations": 150, "delta": 1e-5},
                  "token", "a table's label, head, caption, content and note", _FIGURE_FLAGS),
    )
}


def model_spec(name: str) -> ModelSpec:
    """The registry's entry for ``name``, or a ConfigError naming the known ones."""
    return entry(MODELS, name, "layout model")


# -- attributes ------------------------------------------------------------------


def window_name(window: Window) -> str:
    return ",".join(f"{column}:{offset}" for offset, column in window) + "="


def attributes(windows: Sequence[Window], rows: Sequence[Sequence[str]],
               omit: Mapping[int, str] | None = None,
               extra: Mapping[int, Sequence[str]] | None = None) -> list[list[str]]:
    """The attributes of every row: one per window, the window's name and the
    values at its positions (``_B-k`` / ``_B+k`` past the ends). ``omit`` maps a
    flag column to its usual value, whose one-column attributes are left out;
    ``extra`` holds derived columns (one value per row) by number."""
    n = len(rows)
    if not n:
        return []
    reach = max(abs(offset) for w in windows for offset, _ in w)
    head = [f"_B-{k}" for k in range(reach, 0, -1)]
    tail = [f"_B+{k}" for k in range(1, reach + 1)]
    padded: dict[int, list[str]] = {}
    for column in sorted({column for w in windows for _, column in w}):
        if extra is not None and column in extra:
            padded[column] = [*head, *extra[column], *tail]
        else:
            padded[column] = head + [row[column] for row in rows] + tail
    per_window: list[list[str]] = []
    for window in windows:
        name = window_name(window)
        if len(window) == 1:
            (offset, column), = window
            start = reach + offset
            values = padded[column][start:start + n]
            usual = omit.get(column) if omit else None
            if usual is None:
                per_window.append([name + v for v in values])
            else:
                per_window.append(["" if v == usual else name + v for v in values])
        else:
            parts = [padded[column][reach + offset:reach + offset + n]
                     for offset, column in window]
            per_window.append([name + "/".join(values) for values in zip(*parts, strict=True)])
    if omit:
        return [[a for a in item if a] for item in zip(*per_window, strict=True)]
    return [list(item) for item in zip(*per_window, strict=True)]


def _check_rows(rows: Sequence[Sequence[str]], columns: int, name: str) -> None:
    for i, row in enumerate(rows):
        if len(row) != columns:
            raise ValueError(f"{name}: row {i} has {len(row)} columns, the model reads "
                             f"{columns} (GROBID's raw layout)")


# -- the model -------------------------------------------------------------------


@dataclass
class ColumnModel(TaggedModel):
    name: str
    columns: int
    windows: tuple[Window, ...]
    omit: dict[int, str]
    derived: str | None
    tagger: CrfTagger

    @property
    def labels(self) -> list[str]:
        return self.tagger.labels()

    @classmethod
    def load(cls, name_or_path: str | Path) -> ColumnModel:
        """A shipped model by its name (``header``), or a model file by its path."""
        if isinstance(name_or_path, str) and name_or_path in MODELS:
            path = MODELS[name_or_path].model_path()
        else:
            path = Path(name_or_path)
            if not path.suffix and not path.exists():
                model_spec(str(name_or_path))  # raises: neither a model nor a file
        tagger = CrfTagger.load(path, KIND)
        meta = tagger.header
        try:
            windows = tuple(tuple((int(o), int(c)) for o, c in w) for w in meta["windows"])
            name, columns = str(meta["name"]), int(meta["columns"])
            omit = {int(c): str(v) for c, v in meta.get("omit", {}).items()}
            derived = meta.get("derived")
            if derived is not None:
                derivation(str(derived))  # a model of a newer version: say so now
        except (KeyError, TypeError, ValueError) as e:
            raise ConfigError(f"{path}: model header lacks its name, columns or windows") from e
        return cls(name, columns, windows, omit, derived, tagger)

    def tag(self, rows: Sequence[Sequence[str]]) -> list[str]:
        """One label per row, GROBID's names with the ``I-`` mark kept. Rows
        must have the model's column count (GROBID's raw layout)."""
        _check_rows(rows, self.columns, self.name)
        n = len(rows)
        extra = derived_columns(self.derived, rows)
        if n <= CHUNK:
            return self._tag(rows, extra)
        labels: list[str] = []
        start = 0
        while start < n:
            # each chunk: OVERLAP rows of context before and after the rows it answers for
            lo, hi = max(0, start - OVERLAP), min(n, start + CHUNK)
            end = hi if hi == n else hi - OVERLAP
            tagged = self._tag(rows[lo:hi], {c: v[lo:hi] for c, v in extra.items()})
            labels.extend(tagged[start - lo:end - lo])
            start = end
        return labels

    def _tag(self, rows: Sequence[Sequence[str]], extra: Mapping[int, Sequence[str]]) -> list[str]:
        return self.tagger.tag(attributes(self.windows, rows, self.omit, extra))


# -- training and evaluation -------------------------------------------------------


@dataclass
class TrainSummary:
    """What :func:`train_model` did."""

    model: str
    path: Path
    documents: int
    skipped: dict[SkipReason, int]
    rows: int
    labels: list[str]
    iterations: int | None
    active_features: int | None
    size: int
    seconds: float
    params: dict[str, Any]


def _params(spec: ModelSpec, params: Mapping[str, Any] | None) -> dict[str, Any]:
    return {**spec.params, **(params or {})}


def train_sequences(
    spec: ModelSpec,
    sequences: Sequence[LabelledSequence],
    out_path: Path,
    params: Mapping[str, Any] | None = None,
    info: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Train ``spec``'s model on ``sequences`` and write it to ``out_path``
    atomically; the model file's header (without the CRFsuite part) is
    returned. Deterministic: the same sequences give the same file."""
    if not sequences:
        raise ConfigError(f"{spec.name}: no training sequences")
    chosen = _params(spec, params)

    def attributed() -> Iterator[tuple[list[list[str]], Sequence[str]]]:
        for seq in sequences:
            _check_rows(seq.rows, spec.columns, f"{spec.name} {seq.doc}")
            extra = derived_columns(spec.derived, seq.rows)
            yield attributes(spec.windows, seq.rows, spec.omit, extra), seq.labels

    tagger = CrfTagger.train(KIND, attributed(), chosen)
    return tagger.save(Path(out_path), {
        "name": spec.name,
        "columns": spec.columns,
        "windows": [list(map(list, w)) for w in spec.windows],
        "omit": {str(c): v for c, v in sorted(spec.omit.items())},
        "derived": spec.derived,
        "labels": sorted({label for seq in sequences for label in seq.labels}),
        "documents": count_documents(sequences),
        "sequences": len(sequences),
        "rows": sum(len(seq.rows) for seq in sequences),
        **(info or {}),
    })


def train_model(
    name: str,
    corpus_dir: Path,
    out_path: Path | None = None,
    params: Mapping[str, Any] | None = None,
) -> TrainSummary:
    """Train model ``name`` (``segmentation``, ``header``,
    ``reference-segmenter``) on every usable document of a GROBID corpus
    directory (``raw/`` + ``tei/``) and write it to ``out_path`` (default: the
    shipped model's place in the package). ``params`` override the spec's
    CRFsuite parameters (``c1``, ``c2``, ``max_iterations``...)."""
    spec = model_spec(name)
    started = time.monotonic()
    read = read_corpus(name, Path(corpus_dir))
    out = Path(out_path) if out_path is not None else spec.model_path()
    meta = train_sequences(spec, read.sequences, out, params, info={
        "corpus": {"documents": read.documents, "used": count_documents(read.sequences),
                   "skipped": {str(k): v for k, v in read.skip_counts().items()},
                   "rows_matched": read.matched, "rows_guessed": read.guessed,
                   "rows_dropped": read.dropped},
    })
    return TrainSummary(
        model=name, path=out, documents=count_documents(read.sequences),
        skipped=read.skip_counts(),
        rows=int(meta["rows"]), labels=list(meta["labels"]), iterations=meta["iterations"],
        active_features=meta["active_features"], size=out.stat().st_size,
        seconds=round(time.monotonic() - started, 1), params=dict(meta["params"]))


def _shuffled(doc: str) -> bytes:
    return hashlib.sha256(doc.encode()).digest()


def count_documents(sequences: Sequence[LabelledSequence]) -> int:
    """Documents among ``sequences``: a figure or table document has a sequence
    per figure."""
    return len({seq.doc for seq in sequences})


def split_folds(
    sequences: Sequence[LabelledSequence], folds: int
) -> list[tuple[list[LabelledSequence], list[LabelledSequence]]]:
    """(train, test) per fold: documents in the order of a hash of their names
    (a fixed shuffle: the corpus's files are sorted by source, and a fold of
    one source would test what the others never trained on), then dealt to the
    folds in turn, so that folds differ in size by one document at most and
    no document is split (a figure or table document's sequences stay together)."""
    if folds < 2:
        raise ConfigError(f"cross-validation needs at least 2 folds, not {folds}")
    docs = sorted({seq.doc for seq in sequences}, key=_shuffled)
    if len(docs) < folds:
        raise ConfigError(f"{len(docs)} documents cannot make {folds} folds")
    fold_of = {doc: position % folds for position, doc in enumerate(docs)}
    which = [fold_of[seq.doc] for seq in sequences]
    return [([s for s, f in zip(sequences, which, strict=True) if f != k],
             [s for s, f in zip(sequences, which, strict=True) if f == k])
            for k in range(folds)]


def _run_fold(spec: ModelSpec, train: list[LabelledSequence], test: list[LabelledSequence],
              params: Mapping[str, Any] | None) -> FieldScores:
    scores = FieldScores()
    with tempfile.TemporaryDirectory(prefix="sandcrawler-fold-") as tmp:
        path = Path(tmp) / f"{spec.name}.crfmodel"
        train_sequences(spec, train, path, params)
        model = ColumnModel.load(path)
        for seq in test:
            scores.add(seq.labels, model.tag(seq.rows))
    return scores


def cross_validate(
    name: str,
    corpus_dir: Path,
    folds: int = 10,
    params: Mapping[str, Any] | None = None,
    jobs: int = 1,
    on_fold: Callable[[int, FieldScores], None] | None = None,
) -> FieldScores:
    """k-fold cross-validation of model ``name`` on a GROBID corpus directory:
    documents dealt to ``folds`` folds by :func:`split_folds` (never a document
    across two folds), a model trained on all folds but one and scored on that
    one (field level, as GROBID scores), the counts summed over the folds.
    ``on_fold(k, scores)`` sees each fold's own scores as it ends (in fold
    order); ``jobs`` folds train at once."""
    spec = model_spec(name)
    read = read_corpus(name, Path(corpus_dir))
    runs = [(spec, train, test, params) for train, test in split_folds(read.sequences, folds)]
    total = FieldScores()
    for k, scores in enumerate(fold_results(_run_fold, runs, jobs)):
        total.merge(scores)
        if on_fold:
            on_fold(k, scores)
    return total
