"""Citation parsers: reference strings in, ``GrobidBiblio`` (grobid_tei_xml 0.1.x) out.

Every backend returns, for a list of strings, one biblio per string in the same
order, or raises: CitationParseError for that list, InfrastructureError when
the backend itself is unusable.
"""

from sandcrawler.citations.base import CitationParser

__all__ = ["CitationParser"]
