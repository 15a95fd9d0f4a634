"""The ``crf`` citation parser: the embedded CRF model behind the
``CitationParser`` interface, with no service and no network; a string the
model fails on stays unstructured instead of failing its batch."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from grobid_tei_xml.types import GrobidBiblio

from sandcrawler.citations.crf.model import CrfModel
from sandcrawler.config import CitationSettings
from sandcrawler.core.errors import CitationParseError

log = logging.getLogger(__name__)


class CrfCitationParser:
    def __init__(self, model: CrfModel):
        self.model = model

    def parse(self, text: str) -> GrobidBiblio:
        try:
            return self.model.parse(text)
        except Exception:  # a parser bug must not cost the other references of the work
            log.exception("citation parser failed on %r; keeping it unstructured", text[:200])
            return GrobidBiblio(authors=[], unstructured=text)

    def parse_lists(
        self, lists: Sequence[Sequence[str]]
    ) -> list[list[GrobidBiblio] | CitationParseError]:
        parse = self.parse
        return [[parse(s) for s in strings] for strings in lists]

    def check(self) -> None:
        pass  # loading the model was the check

    def close(self) -> None:
        pass


def build(citation: CitationSettings) -> CrfCitationParser:
    """The registry's builder: the model of ``citation.model``, or the shipped one."""
    return CrfCitationParser(CrfModel.load(citation.model))
