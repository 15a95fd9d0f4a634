"""The embedded PDF extraction cascade, GROBID's without a GROBID server
(docs/extraction.md), by stage: layout tokens (``layout``) -> GROBID's feature
rows per model (``features``) -> the CRF models (``crf``) -> a header and
reference strings (``assembly``); ``training`` trains and evaluates the models.
The models' files are ``models/``, the lexicons ``lexicons/``.
"""
