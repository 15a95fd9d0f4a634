"""From labelled tokens to a document: the cascade that runs the models
(``cascade``), the header (``header``, with persons from ``names`` and
affiliations from ``affiliations``), the reference strings (``references``) and
the TEI written from an extraction (``tei``)."""
