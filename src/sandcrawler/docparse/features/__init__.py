"""GROBID's feature rows per model, computed from our layout tokens exactly as
GROBID's raw training files hold them, so that models trained on those files
read our rows as they read GROBID's: ``segmentation``, ``header`` and
``reference_segmenter`` over the shared token stream (``stream``), the derived
columns (``derived``), the lexicons (``lexicon``), the text models' features
(``text``), and how closely ours match GROBID's (``parity``).
"""
