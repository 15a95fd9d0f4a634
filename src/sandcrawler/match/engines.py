"""The match index's backends (``match.engine``): name -> the builder of its reader
and of its writer, loaded by ``imports.load_object`` when used.

A builder takes the ``match`` settings section; a writer builder also takes
``rebuild`` (a fresh, empty index, made visible by ``finish``). Adding a backend
is a module with these two builders and one line here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Engine:
    #: ``(match) -> CandidateIndex``
    reader: str
    #: ``(match, *, rebuild) -> (IndexWriter, finish)``: ``finish()`` makes what was
    #: written the index readers see
    writer: str
    #: what it is, for messages and docs
    title: str
    #: matching may create it when missing (the embedded file); a search engine's
    #: index is made by `match index --engine` only
    made_on_demand: bool = False


ENGINES: dict[str, Engine] = {
    "embedded": Engine("sandcrawler.match.index:open_reader",
                       "sandcrawler.match.index:open_writer",
                       "the embedded index: one SQLite file (match.index)",
                       made_on_demand=True),
    "solr": Engine("sandcrawler.match.solr:open_reader", "sandcrawler.match.solr:open_writer",
                   "Apache Solr (SolrCloud): a collection behind an alias"),
}
