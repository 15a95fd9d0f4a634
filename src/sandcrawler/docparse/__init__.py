"""The embedded PDF extraction cascade, GROBID's without a GROBID server
(docs/extraction.md):

layout tokens (``layout``: pdfalto's ALTO or PDFium) -> GROBID's feature
vectors (``vectors``) -> segmentation -> header, with the name and affiliation
models -> reference segmenter -> the citation parser (``sandcrawler.citations``).
Models are linear-chain CRFs (python-crfsuite) trained on GROBID's corpora.
"""
