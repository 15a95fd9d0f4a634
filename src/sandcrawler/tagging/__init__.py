"""Sequence labelling shared by the citation parser (``citations``) and the
extraction cascade (``docparse``): the one CRF tagger and its model files
(``crf``), the TEI corpus reader (``corpus``), the text tokenizer (``tokens``) and
field-level scores (``scoring``)."""
