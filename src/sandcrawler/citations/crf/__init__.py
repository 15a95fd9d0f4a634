"""The embedded citation parser: a linear-chain CRF over reference-string tokens.

- ``features``: token features and lexicons (tokens: ``sandcrawler.tagging.tokens``)
- ``labels``: the label set and how GROBID's TEI annotations map onto it
- ``corpus``: GROBID's annotated references (read by ``sandcrawler.tagging.corpus``)
- ``names``, ``biblio``: labelled spans to a ``GrobidBiblio``
- ``model``: the model on the one tagger (``sandcrawler.tagging.crf``): load, label, train
- ``evaluate``: field-level scores and k-fold cross-validation
- ``parser``: the ``CitationParser`` backend
"""
