"""GROBID's annotated references (its ``citation`` training data): each ``<bibl>``
read by the one corpus reader (``tagging.corpus``) into a labelled text, so that
training tokenizes the very string the parser will later see; the evaluation
references held out of training.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from sandcrawler.citations.crf.labels import OUTSIDE, label_for
from sandcrawler.tagging.corpus import LabelledText, TeiReading, corpus_files, read_tei

#: a ``<bibl>`` as written: no normalisation, ``<lb/>`` a space, and a space
#: between two characters of one label keeps it (a field's runs read whole)
READING = TeiReading("bibl", label_for, OUTSIDE, breaks=frozenset({"lb"}), line_break=" ",
                     split_glued=False, spaces_keep_label=True)


def read_corpus(
    directory: Path, exclude: Iterable[LabelledText] = ()
) -> list[LabelledText]:
    """All references of a corpus directory in a stable order (sorted file names,
    document order), without those whose text is in ``exclude`` (the evaluation
    set: the corpus holds older copies of it)."""
    held_out = {_key(r.text) for r in exclude}
    refs: list[LabelledText] = []
    for path in corpus_files(directory):
        refs.extend(r for r in read_tei(path, READING) if _key(r.text) not in held_out)
    return refs


def training_references(
    corpus: Path, exclude: Path | None = None, *, hold_out: bool = True
) -> tuple[list[LabelledText], int]:
    """(references to train on, how many were held out).

    Held out: the references of ``exclude``, by default the ``evaluation``
    directory beside ``corpus`` (as GROBID lays out its data), so that a model
    is never trained on what it will be evaluated on."""
    if exclude is None and hold_out:
        sibling = corpus.parent / "evaluation"
        if sibling.is_dir() and sibling.resolve() != corpus.resolve():
            exclude = sibling
    held_out = read_corpus(exclude) if exclude is not None and hold_out else []
    return read_corpus(corpus, exclude=held_out), len(held_out)


def _key(text: str) -> str:
    return re.sub(r"\W+", "", text).lower()
