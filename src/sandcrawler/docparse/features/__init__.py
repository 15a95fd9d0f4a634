"""GROBID's feature rows per model, computed from our layout tokens exactly as
GROBID's raw training files hold them, so that models trained on those files
read our rows as they read GROBID's: ``segmentation``, ``header`` and
``reference_segmenter`` over the shared token stream (``stream``), the derived
columns (``derived``), the lexicons (``lexicon``), the text models' features
(``text``), and how closely ours match GROBID's (``parity``).
"""

from sandcrawler.docparse.features.header import HEADER_COLUMNS, header_rows
from sandcrawler.docparse.features.reference_segmenter import REFSEG_COLUMNS, refseg_rows
from sandcrawler.docparse.features.segmentation import SEGMENTATION_COLUMNS, segmentation_rows
from sandcrawler.docparse.features.stream import (
    TokenRows,
    affixes,
    punctuation_type,
    word_features,
)

__all__ = [
    "HEADER_COLUMNS",
    "REFSEG_COLUMNS",
    "SEGMENTATION_COLUMNS",
    "TokenRows",
    "affixes",
    "header_rows",
    "punctuation_type",
    "refseg_rows",
    "segmentation_rows",
    "word_features",
]
