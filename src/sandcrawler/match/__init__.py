"""Bibliographic matching against the catalog of Crossref works (docs/matching.md).

- text.py      the one folding of titles, names and journals; generic titles, notices
- records.py   CatalogRecord: the few fields of a Crossref work that matching reads
- query.py     Query: a biblio (refs_json shape) made ready to compare
- index.py     CandidateIndex (the interface a search engine can implement) and
               the embedded SQLite FTS5 index
- compare.py   one query against one record: evidence, score, reasons
- matcher.py   Matcher: identifiers verified, candidates scored, the status decided
- sync.py      the index kept current with the ``crossref`` table
"""
