"""``html_biblio``: the bibliographic metadata a landing page's HTML gives
(``web/html/biblio.py`` reads it), as file and fileset ingest results carry it.

Every field is optional: a page says what it says. The JSON leaves out what the
page did not give, and keeps its keys in the order they were found (meta tags,
then JSON-LD, then the page's ``<title>``, then ``release_year``), the order
results have always had: a record built from a mapping remembers its keys'
order, and the serialiser writes them so (two records with the same fields in another
order are not equal: their JSON differs).
"""

from __future__ import annotations

from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    ModelWrapValidatorHandler,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)


class HtmlBiblio(BaseModel):
    """A landing page's metadata; field names are the original system's."""

    model_config = ConfigDict(extra="forbid")

    #: every value of the first author meta name the page has, in document order
    contrib_raw_names: list[str] | None = None
    #: the page's ``citation_reference`` strings
    raw_references: list[str] | None = None
    title: str | None = None
    #: normalised (lower-cased, no resolver prefix)
    doi: str | None = None
    pmid: str | None = None
    pmcid: str | None = None
    arxiv_id: str | None = None
    #: ``YYYY-MM-DD``, ``YYYY-MM`` or ``YYYY`` when readable, else as the page wrote it
    release_date: str | None = None
    publisher: str | None = None
    container_name: str | None = None
    container_abbrev: str | None = None
    container_issn: str | None = None
    volume: str | None = None
    issue: str | None = None
    first_page: str | None = None
    last_page: str | None = None
    abstract: str | None = None
    release_type: str | None = None
    lang: str | None = None
    #: absolute URLs
    pdf_fulltext_url: str | None = None
    xml_fulltext_url: str | None = None
    html_fulltext_url: str | None = None
    #: the year of ``release_date``, when it starts with a plausible one
    release_year: int | None = None

    #: the order the fields were given in, which the JSON keeps
    _order: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _remember_order(cls, data: Any,
                        handler: ModelWrapValidatorHandler[HtmlBiblio]) -> HtmlBiblio:
        biblio = handler(data)
        if isinstance(data, dict):
            biblio._order = tuple(data)
        return biblio

    @model_serializer(mode="wrap")
    def _in_given_order(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        ordered = {key: data[key] for key in self._order if key in data}
        if len(ordered) < len(data):  # fields set after construction, or None ones kept
            ordered.update(data)
        return ordered

    def to_json(self) -> dict[str, Any]:
        """The ``html_biblio`` JSON object: the fields the page gave, in their order."""
        return self.model_dump(mode="json", exclude_none=True)
