"""The catalogue: every document's ``<uuid>.metadata.json`` in the store, indexed in SQL.

The metadata files are the truth; the ``catalogue`` table is an index over them
that ``rebuild`` re-derives from the store alone. A metadata file carries the
UUID (``id``) and the primary file's ``sha1``, so identifiers survive a rebuild;
what each source wrote is folded in by ``storage.precedence`` (docs/storage.md,
"Catalogue").
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, NotRequired, TypedDict

import orjson
from sqlalchemy import Connection, Engine, delete, func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from sandcrawler.core.errors import CorruptData, InvalidName, NotFound, RecordError
from sandcrawler.core.filemeta import hash_stream, open_file
from sandcrawler.core.identifiers import sha1_hex
from sandcrawler.core.mime import SNIFF_BYTES, sniff_mime
from sandcrawler.core.timestamps import iso_utc
from sandcrawler.db.engine import begin
from sandcrawler.db.locks import exclusive
from sandcrawler.db.persist import UpsertSpec, upsert
from sandcrawler.db.rows import JsonObject
from sandcrawler.db.schema import catalogue
from sandcrawler.db.words import holds_every_word
from sandcrawler.records.statuses import StoreStatus
from sandcrawler.storage.docid import SCHEMES, document_uuid, parse_uuid
from sandcrawler.storage.precedence import IDENTIFIER_FIELDS, Layer, Source, merge
from sandcrawler.storage.resources import (
    KINDS,
    ResourceKind,
    ResourceStore,
    resource_key,
    resource_kind,
)

IDENTIFIERS = tuple(SCHEMES)  # sha1, doi, pmid, pmcid, arxiv
#: where each identifier may sit in a metadata record
_METADATA_FIELDS = {**IDENTIFIER_FIELDS, "sha1": ("sha1",)}
_SPEC = UpsertSpec(catalogue, ("uuid",))


class CatalogueIds(TypedDict):
    """A catalogue entry's name, identifiers and resources: what its JSON and the
    document page share."""

    id: str
    sha1: str | None
    doi: str | None
    pmid: str | None
    pmcid: str | None
    arxiv: str | None
    resources: list[str]


class CatalogueJson(CatalogueIds):
    """A catalogue entry as JSON (``store`` commands, the document page)."""

    #: the resources' keys in the store, where asked for
    paths: NotRequired[dict[str, str]]
    updated: str | None
    #: the document's metadata, where a command adds it (``catalogue show``)
    metadata: NotRequired[JsonObject]


@dataclass(slots=True)
class CatalogueEntry:
    uuid: str
    sha1: str | None = None
    doi: str | None = None
    pmid: str | None = None
    pmcid: str | None = None
    arxiv: str | None = None
    resources: tuple[str, ...] = ()
    updated: datetime | None = None
    #: the metadata's first title (searched by title words; not part of the JSON)
    title: str | None = None

    def to_json(self, paths: Mapping[str, str] | None = None) -> CatalogueJson:
        updated = iso_utc(self.updated)
        if paths is None:
            return {"id": self.uuid, "sha1": self.sha1, "doi": self.doi, "pmid": self.pmid,
                    "pmcid": self.pmcid, "arxiv": self.arxiv,
                    "resources": list(self.resources), "updated": updated}
        return {"id": self.uuid, "sha1": self.sha1, "doi": self.doi, "pmid": self.pmid,
                "pmcid": self.pmcid, "arxiv": self.arxiv, "resources": list(self.resources),
                "paths": dict(paths), "updated": updated}


def identifiers_from_metadata(metadata: Mapping[str, Any]) -> dict[str, str]:
    """Normalised strong identifiers found in a metadata record; malformed ones are left
    out (the metadata is kept as it is, only the index skips them)."""
    found: dict[str, str] = {}
    for scheme, fields in _METADATA_FIELDS.items():
        for name in fields:
            value = metadata.get(name)
            if isinstance(value, str | int) and str(value).strip():
                try:
                    found[scheme] = SCHEMES[scheme](value)
                except RecordError:
                    continue
                break
    return found


def title_of(metadata: Mapping[str, Any], limit: int = 2000) -> str | None:
    """The metadata's title (a string, or the first string of a list), white
    space folded, at most ``limit`` characters."""
    title = metadata.get("title")
    if isinstance(title, list):
        title = next((t for t in title if isinstance(t, str)), None)
    if not isinstance(title, str) or not title.strip():
        return None
    return " ".join(title.split())[:limit]


def parse_identifier(text: str) -> tuple[str, str]:
    """(scheme, normalised value) for what a user typed: a UUID, ``doi:…``/``10.…``,
    ``pmid:…``, ``pmcid:``/``PMC…``, ``arxiv:…``, or a sha1 (hex, base32, ``sha1:…``)."""
    value = text.strip()
    scheme, sep, rest = value.partition(":")
    if sep and scheme.lower() in SCHEMES:
        return scheme.lower(), SCHEMES[scheme.lower()](rest if scheme.lower() != "doi" else value)
    if len(value) == 36:
        return "uuid", parse_uuid(value)
    if value.lower().startswith(("10.", "https://doi.org/", "http://doi.org/", "https://dx.doi",
                                 "http://dx.doi")):
        return "doi", SCHEMES["doi"](value)
    if len(value) in (32, 40):  # before PMC…: a base32 sha1 may start with those letters
        return "sha1", sha1_hex(value)
    if value.upper().startswith("PMC"):
        return "pmcid", SCHEMES["pmcid"](value)
    raise InvalidName(
        f"cannot tell what identifier {text!r} is: give a UUID, a DOI, a sha1, "
        "or prefix it (doi:, pmid:, pmcid:, arxiv:, sha1:)",
        status=StoreStatus.BAD_IDENTIFIER,
    )


class Catalogue:
    def __init__(self, engine: Engine, resources: ResourceStore) -> None:
        self.engine = engine  # its schema is current (checked by whoever built it)
        self.resources = resources

    # -- lookups

    def lookup(self, scheme: str, value: str) -> list[str]:
        """UUIDs of documents with this identifier (normalised form)."""
        column = catalogue.c["uuid" if scheme == "uuid" else scheme]
        with begin(self.engine) as conn:
            return list(conn.execute(
                select(catalogue.c.uuid).where(column == value).order_by(catalogue.c.uuid)
            ).scalars())

    def find(self, scheme: str, value: str, *, limit: int | None = None,
             conn: Connection | None = None) -> list[CatalogueEntry]:
        """The documents with this identifier (``uuid``, ``sha1``, ``doi``, ``pmid``,
        ``pmcid``, ``arxiv``; normalised form), by UUID: "document by identifier"."""
        column = catalogue.c["uuid" if scheme == "uuid" else scheme]
        query = select(catalogue).where(column == value).order_by(catalogue.c.uuid)
        return self._entries(query.limit(limit) if limit else query, conn)

    def with_dois(self, dois: Sequence[str], *,
                  conn: Connection | None = None) -> list[CatalogueEntry]:
        """The documents with any of these DOIs, by UUID."""
        if not dois:
            return []
        return self._entries(select(catalogue).where(catalogue.c.doi.in_(list(dois)))
                             .order_by(catalogue.c.uuid), conn)

    def with_title_words(self, words: Sequence[str], *, offset: int = 0, limit: int = 50,
                         conn: Connection | None = None) -> list[CatalogueEntry]:
        """The documents whose title holds every word (case-insensitive), by UUID."""
        return self._entries(select(catalogue).where(holds_every_word(catalogue.c.title, words))
                             .order_by(catalogue.c.uuid)
                             .offset(offset).limit(limit), conn)

    def recent(self, limit: int, *, conn: Connection | None = None) -> list[CatalogueEntry]:
        """The documents updated last, newest first."""
        return self._entries(select(catalogue).order_by(catalogue.c.updated.desc(),
                                                        catalogue.c.uuid).limit(limit), conn)

    def _entries(self, query: Any, conn: Connection | None) -> list[CatalogueEntry]:
        if conn is not None:
            return [_entry(r) for r in conn.execute(query).mappings()]
        with begin(self.engine) as own:
            return [_entry(r) for r in own.execute(query).mappings()]

    def resolve(self, text: str) -> list[str]:
        return self.lookup(*parse_identifier(text))

    def get(self, doc_uuid: str, *, conn: Connection | None = None) -> CatalogueEntry | None:
        """The entry; on ``conn`` when given (a caller reading several things at once)."""
        query = select(catalogue).where(catalogue.c.uuid == parse_uuid(doc_uuid))
        if conn is not None:
            row = conn.execute(query).mappings().first()
        else:
            with begin(self.engine) as own:
                row = own.execute(query).mappings().first()
        return _entry(row) if row else None

    def assign_uuid(self, **identifiers: str | None) -> str:
        """The UUID for a document with these identifiers: the one already given to any
        of them (sha1 first), else the one derived by rule (storage.docid).

        A document found by DOI, PMID, PMCID or arXiv id is reused only if it has no
        primary file yet or the same one: another file with the same DOI (a preprint
        and the published version, say) is another document, never an overwrite."""
        given = {k: SCHEMES[k](v) for k, v in identifiers.items() if v}
        if given:
            sha1 = given.get("sha1")
            with begin(self.engine) as conn:
                for scheme in IDENTIFIERS:
                    if scheme not in given:
                        continue
                    query = select(catalogue.c.uuid).where(catalogue.c[scheme] == given[scheme])
                    if sha1 and scheme != "sha1":
                        query = query.where(
                            catalogue.c.sha1.is_(None) | (catalogue.c.sha1 == sha1)
                        )
                    found = conn.execute(query.order_by(catalogue.c.uuid).limit(1)).scalar()
                    if found:
                        return str(found)
        return document_uuid(**given)

    def metadata(self, doc_uuid: str) -> JsonObject:
        raw = self.resources.get(doc_uuid, "metadata")
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError as e:
            raise CorruptData(f"{doc_uuid}.metadata.json is not JSON: {e}") from None
        if not isinstance(value, dict):
            raise CorruptData(f"{doc_uuid}.metadata.json is not a JSON object")
        return value  # as stored: open to any field a user gives (storage.precedence)

    # -- writing

    def add_file(
        self,
        path: str | Path,
        *,
        kind: str | ResourceKind = "pdf",
        metadata: Mapping[str, Any] | None = None,
        source: Source = Source.USER,
        layers: Sequence[Layer] = (),
        sha1: str | None = None,
        resources: Mapping[str, bytes] | None = None,
    ) -> CatalogueEntry:
        """Store a primary file under its document's UUID, with metadata and any
        secondary ``resources`` (kind -> content), then index it once; idempotent.
        ``metadata`` is ``source``'s (by default the user's), ``layers`` what
        other sources say (merged by precedence, ``storage.precedence``).
        ``sha1``: the file's, when the caller has hashed it already."""
        k = resource_kind(kind)
        if not k.primary:
            raise InvalidName(f"{k.name} is not a primary resource kind",
                              status=StoreStatus.BAD_KIND)
        with open_file(path) as f:
            mime = sniff_mime(f.read(SNIFF_BYTES))
            if k.mimetypes and mime not in k.mimetypes:
                raise RecordError(f"{path}: the bytes are {mime}, not a {k.name} file "
                                  f"({', '.join(k.mimetypes)})", status=StoreStatus.WRONG_KIND)
            if sha1:
                sha1 = sha1_hex(sha1)
            else:
                f.seek(0)
                sha1 = hash_stream(f, ["sha1"])["sha1"]
        given = [Layer(source, metadata), *layers] if metadata else list(layers)
        # the identifiers the layers agree on by precedence, as they will be stored
        ids = identifiers_from_metadata(merge({}, given).values)
        ids["sha1"] = sha1
        doc = self.assign_uuid(**ids)
        with open(path, "rb") as f:
            self.resources.put(doc, k, f)
        for name, content in (resources or {}).items():
            self.resources.put(doc, name, content)
        return self._merge_metadata(doc, given, sha1=sha1)

    def put_metadata(self, doc_uuid: str, metadata: Mapping[str, Any], *,
                     source: Source = Source.USER) -> CatalogueEntry:
        """Write ``<uuid>.metadata.json`` (``id`` set to the UUID) and index it:
        ``metadata`` is ``source``'s, merged into the earlier file by precedence
        (``storage.precedence``); keys it does not mention are kept."""
        return self._merge_metadata(doc_uuid, [Layer(source, metadata)])

    def _merge_metadata(self, doc_uuid: str, layers: Sequence[Layer],
                        sha1: str | None = None) -> CatalogueEntry:
        doc = parse_uuid(doc_uuid)
        for layer in layers:
            if "id" in layer.fields and str(layer.fields["id"]).lower() != doc:
                raise RecordError(
                    f"metadata id {layer.fields['id']!r} is not the document's UUID {doc}",
                    status=StoreStatus.BAD_METADATA,
                )
        # Read, merge, write and index as one step among every writer of this
        # document: two writers at once must not each drop the other's keys.
        with exclusive(self.engine, f"sandcrawler-document:{doc}"):
            existing = self.metadata(doc) if self.resources.exists(doc, "metadata") else {}
            merged = merge(existing, layers).to_json()
            if sha1 is not None:  # the primary file's, whoever wrote the metadata
                merged["sha1"] = sha1
            merged = {"id": doc, **{k: v for k, v in merged.items() if k != "id"}}
            self.resources.put(doc, "metadata", orjson.dumps(merged))
            return self.refresh(doc)

    def refresh(self, doc_uuid: str) -> CatalogueEntry:
        """Re-derive one document's row from the store (its metadata and listing)."""
        doc = parse_uuid(doc_uuid)
        kinds = self.resources.kinds(doc)
        if not kinds:
            self.forget(doc)
            raise NotFound(f"document {doc} has no files in {self.resources.blobs.url}")
        entry = self._entry_from_store(doc, kinds)
        self._write([entry])
        return self.get(doc) or entry

    def forget(self, doc_uuid: str) -> bool:
        with begin(self.engine) as conn:
            return bool(conn.execute(
                delete(catalogue).where(catalogue.c.uuid == parse_uuid(doc_uuid))
            ).rowcount)

    def _entry_from_store(self, doc: str, kinds: list[ResourceKind]) -> CatalogueEntry:
        names = {k.name for k in kinds}
        ids: dict[str, str] = {}
        title = None
        if "metadata" in names:
            metadata = self.metadata(doc)
            ids = identifiers_from_metadata(metadata)
            title = title_of(metadata)
        if "sha1" not in ids:
            primary = next((k for k in kinds if k.primary), None)
            if primary is not None:
                with self.resources.open(doc, primary) as f:
                    ids["sha1"] = hash_stream(f, ["sha1"])["sha1"]
        return CatalogueEntry(doc, sha1=ids.get("sha1"), doi=ids.get("doi"),
                              pmid=ids.get("pmid"), pmcid=ids.get("pmcid"),
                              arxiv=ids.get("arxiv"), resources=tuple(sorted(names)),
                              title=title)

    def _write(self, entries: list[CatalogueEntry]) -> None:
        rows = [
            {"uuid": e.uuid, **{n: getattr(e, n) for n in IDENTIFIERS},
             "resources": list(e.resources), "title": e.title}
            for e in entries
        ]
        with begin(self.engine) as conn:
            upsert(conn, _SPEC, rows)

    # -- whole catalogue

    def entries(self) -> Iterator[CatalogueEntry]:
        with self.engine.connect() as conn:
            result = conn.execution_options(stream_results=True, yield_per=1000).execute(
                select(catalogue).order_by(catalogue.c.uuid)
            )
            for row in result.mappings():
                yield _entry(row)

    def count(self) -> int:
        with begin(self.engine) as conn:
            return int(conn.execute(select(func.count()).select_from(catalogue)).scalar_one())

    def rebuild(
        self, *, on_progress: Callable[[int], None] | None = None, batch: int = 500
    ) -> dict[str, int]:
        """Re-derive the whole table from the store; rows of documents no longer in
        the store are removed. A document whose metadata cannot be read is counted
        and indexed from its listing alone. A row that already says what the store
        says keeps its ``updated`` (so it still tells when the document last
        changed); a document new to the table gets the time its files were last
        written. Returns counts."""
        counts = {"documents": 0, "with-metadata": 0, "corrupt-metadata": 0, "removed": 0,
                  "changed": 0}
        seen: set[str] = set()
        pending: list[CatalogueEntry] = []
        for listing in self.resources.listings():
            doc, kinds = listing.uuid, listing.kinds
            try:
                entry = self._entry_from_store(doc, kinds)
            except CorruptData:
                counts["corrupt-metadata"] += 1
                entry = self._entry_from_store(doc, [k for k in kinds if k.name != "metadata"])
                entry.resources = tuple(sorted(k.name for k in kinds))
            entry.updated = listing.modified
            counts["documents"] += 1
            counts["with-metadata"] += "metadata" in entry.resources
            seen.add(doc)
            pending.append(entry)
            if len(pending) >= batch:
                counts["changed"] += self._write_changed(pending)
                pending = []
                if on_progress:
                    on_progress(counts["documents"])
        if pending:
            counts["changed"] += self._write_changed(pending)
        stale = [e.uuid for e in self.entries() if e.uuid not in seen]
        for start in range(0, len(stale), batch):
            with begin(self.engine) as conn:
                conn.execute(delete(catalogue).where(
                    catalogue.c.uuid.in_(stale[start : start + batch])
                ))
        counts["removed"] = len(stale)
        if on_progress:
            on_progress(counts["documents"])
        return counts

    def _write_changed(self, entries: list[CatalogueEntry]) -> int:
        """Write the entries whose row is missing or says something else; a new row's
        ``updated`` is the entry's (when its files were written), a changed row's
        now. Returns how many rows were written."""
        with begin(self.engine) as conn:
            stored = {e.uuid: e for e in map(_entry, conn.execute(select(catalogue).where(
                catalogue.c.uuid.in_([e.uuid for e in entries]))).mappings())}
        changed = [e for e in entries if e.uuid in stored and not _same(e, stored[e.uuid])]
        new = [e for e in entries if e.uuid not in stored]
        if changed:
            self._write(changed)
        if new:
            rows = [{"uuid": e.uuid, **{n: getattr(e, n) for n in IDENTIFIERS},
                     "resources": list(e.resources), "title": e.title,
                     **({"updated": e.updated} if e.updated is not None else {})}
                    for e in new]
            with begin(self.engine) as conn:
                # a row another writer added meanwhile is newer than this listing
                insert = (pg_insert if conn.dialect.name == "postgresql" else sqlite_insert)
                for row in rows:  # rows with and without ``updated`` differ in columns
                    conn.execute(insert(catalogue).values(row).on_conflict_do_nothing(
                        index_elements=["uuid"]))
        return len(changed) + len(new)

    def paths(self, entry: CatalogueEntry) -> dict[str, str]:
        return {name: resource_key(entry.uuid, name) for name in entry.resources if name in KINDS}


def _same(a: CatalogueEntry, b: CatalogueEntry) -> bool:
    """Whether two entries say the same (``updated`` aside)."""
    return (all(getattr(a, n) == getattr(b, n) for n in IDENTIFIERS)
            and sorted(a.resources) == sorted(b.resources) and a.title == b.title)


def _entry(row: Mapping[Any, Any]) -> CatalogueEntry:
    return CatalogueEntry(
        uuid=row["uuid"],
        **{name: row[name] for name in IDENTIFIERS},
        resources=tuple(row["resources"] or ()),
        updated=row["updated"],
        title=row.get("title"),
    )
