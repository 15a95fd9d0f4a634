"""The SQL schema as SQLAlchemy Core tables: the single definition the code queries.

Migrations under ``migrations/versions`` create exactly these objects; a test
compares the two on both SQLite and PostgreSQL.
"""

from __future__ import annotations

from sqlalchemy import (
    CheckConstraint,
    Column,
    Index,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    func,
)
from sqlalchemy import literal_column as col

from sandcrawler.db.types import JsonDoc, UTCDateTime, octet_length

metadata = MetaData()

crossref = Table(
    "crossref",
    metadata,
    Column("doi", Text, nullable=False),
    Column("indexed", UTCDateTime, nullable=False),
    Column("record", JsonDoc, nullable=False),
    PrimaryKeyConstraint("doi", name="crossref_pkey"),
    CheckConstraint(
        (octet_length(col("doi")) >= 4) & (col("doi") == func.lower(col("doi"))),
        name="crossref_doi_check",
    ),
)
Index("crossref_indexed_idx", crossref.c.indexed)

# Exactly the seed's grobid_refs (grobid-refs-proposal.md).
grobid_refs = Table(
    "grobid_refs",
    metadata,
    Column("source", Text, nullable=False),
    Column("source_id", Text, nullable=False),
    Column("source_ts", UTCDateTime, nullable=True),
    Column("updated", UTCDateTime, nullable=False, server_default=func.now()),
    Column("refs_json", JsonDoc, nullable=False),
    PrimaryKeyConstraint("source", "source_id", name="grobid_refs_pkey"),
    CheckConstraint(octet_length(col("source")) >= 1, name="grobid_refs_source_check"),
    CheckConstraint(octet_length(col("source_id")) >= 1, name="grobid_refs_source_id_check"),
)

# The view is not a Table: created by migration, queried by name.
CROSSREF_WITH_REFS_SELECT = """
    SELECT
        crossref.doi AS doi,
        crossref.indexed AS indexed,
        crossref.record AS record,
        grobid_refs.source_ts AS source_ts,
        grobid_refs.refs_json AS refs_json
    FROM crossref
    LEFT JOIN grobid_refs ON
        grobid_refs.source_id = crossref.doi
        AND grobid_refs.source = 'crossref'
"""

VIEWS = {"crossref_with_refs": "(doi, indexed, record, source_ts, refs_json)"}
