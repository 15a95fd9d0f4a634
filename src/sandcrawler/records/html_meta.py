"""``html_meta``: what file ingest keeps of an HTML page it processed as full text,
the ``html0:html_meta`` cell of the PDF table beside ``html0:html_status``.

It is the original system's ``html_meta`` row (what its persist worker made of an
HTML ingest result) less the columns the read-only API's view takes from elsewhere:
``sha1hex`` is the row key, ``status`` the ``html_status`` cell, ``updated`` the
cell's time. docs/ingest.md, "What the PDF table keeps of an HTML page".
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from sandcrawler.records.html_biblio import HtmlBiblio

#: the original's scope of a page that is an article's full text: the one scope this
#: project tells (a page with enough main text is taken as the article)
SCOPE_ARTICLE_FULLTEXT = "article-fulltext"


class HtmlResource(BaseModel):
    """A sub-resource of the page under the original's field names (its
    ``WebResource``): the absolute URL and ``resource_type`` (image, script,
    stylesheet, media, iframe). The original also had each sub-resource's capture
    (surt, timestamp, sha1hex, mimetype, status_code), from fetching it; file ingest
    does not fetch sub-resources, so those are left out, as the original left out
    what it did not know."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str
    resource_type: str


class HtmlMeta(BaseModel):
    """The ``html0:html_meta`` cell. ``scope`` is None when the page was not taken
    as full text (this project does not classify landing pages, stubs, walls...);
    ``has_teixml`` and ``has_thumbnail`` are False: no TEI or thumbnail is made of
    an HTML page."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scope: str | None = None
    has_teixml: bool = False
    has_thumbnail: bool = False
    word_count: int | None = Field(None, ge=0)
    #: the page's ``html_biblio``
    biblio: HtmlBiblio | None = None
    resources: list[HtmlResource] | None = None

    def to_json(self) -> dict[str, Any]:
        """The cell's JSON: every column's key, null when unknown (the view reads each
        key as its column); an empty biblio or resource list is null, as the original
        stored them."""
        biblio = self.biblio.to_json() if self.biblio is not None else None
        return {
            "scope": self.scope,
            "has_teixml": self.has_teixml,
            "has_thumbnail": self.has_thumbnail,
            "word_count": self.word_count,
            "biblio": biblio or None,
            "resources": [r.model_dump(mode="json") for r in self.resources or ()] or None,
        }
