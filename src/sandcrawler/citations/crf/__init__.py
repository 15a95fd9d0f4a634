"""The embedded citation parser: a linear-chain CRF over reference-string tokens.

- ``tokens``: tokenizer; ``features``: token features and lexicons
- ``labels``: the label set and how GROBID's TEI annotations map onto it
- ``corpus``: reading GROBID's annotated references
- ``names``, ``biblio``: labelled spans to a ``GrobidBiblio``
- ``model``: the model file, loading, labelling, training
- ``evaluate``: field-level scores and k-fold cross-validation
- ``parser``: the ``CitationParser`` backend
"""
