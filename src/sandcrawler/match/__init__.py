"""Bibliographic matching against the catalog of Crossref works (docs/matching.md).

``text`` (the one folding of titles, names, journals), ``records`` (the fields of a
Crossref work matching reads), ``query`` (a biblio made ready to compare),
``index`` (``CandidateIndex`` and the embedded SQLite FTS5 index), ``compare``
(evidence, score, reasons), ``matcher`` (the status decided), ``sync`` (the index
kept current with the ``crossref`` table).
"""
