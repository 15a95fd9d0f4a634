"""The SQL schema as SQLAlchemy Core tables: the single definition the code queries.

Migrations under ``migrations/versions`` create exactly these objects; a test
compares the two on both SQLite and PostgreSQL.
"""

from __future__ import annotations

from sqlalchemy import (
    CheckConstraint,
    Column,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    UniqueConstraint,
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

# One row per document in the resource store (storage/catalogue.py); the store's
# <uuid>.metadata.json files are the truth, this table their index.
catalogue = Table(
    "catalogue",
    metadata,
    Column("uuid", Text, nullable=False),
    Column("sha1", Text, nullable=True),
    Column("doi", Text, nullable=True),
    Column("pmid", Text, nullable=True),
    Column("pmcid", Text, nullable=True),
    Column("arxiv", Text, nullable=True),
    Column("resources", JsonDoc, nullable=False),
    Column("updated", UTCDateTime, nullable=False, server_default=func.now()),
    PrimaryKeyConstraint("uuid", name="catalogue_pkey"),
    CheckConstraint(octet_length(col("uuid")) == 36, name="catalogue_uuid_check"),
    CheckConstraint(
        col("sha1").is_(None) | (octet_length(col("sha1")) == 40), name="catalogue_sha1_check"
    ),
    CheckConstraint(
        col("doi").is_(None) | (col("doi") == func.lower(col("doi"))), name="catalogue_doi_check"
    ),
)
for _name in ("sha1", "doi", "pmid", "pmcid", "arxiv"):
    Index(f"catalogue_{_name}_idx", catalogue.c[_name])

# The PDF table (storage/pdftable.py) stored as HBase stores it: one row per cell,
# keyed by (table, row key, family, column), one version per cell. Tables are
# named (wbgrp-journal-extract-<version>-<env>) in pdftables.
pdftables = Table(
    "pdftables",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", Text, nullable=False),
    Column("created", UTCDateTime, nullable=False, server_default=func.now()),
    UniqueConstraint("name", name="pdftables_name_key"),
)

pdftable_cells = Table(
    "pdftable_cells",
    metadata,
    Column("table_id", Integer, nullable=False),
    Column("row_key", LargeBinary, nullable=False),
    Column("family", Text, nullable=False),
    Column("qualifier", Text, nullable=False),
    Column("value", LargeBinary, nullable=False),
    Column("updated", UTCDateTime, nullable=False, server_default=func.now()),
    PrimaryKeyConstraint("table_id", "row_key", "family", "qualifier", name="pdftable_cells_pkey"),
    CheckConstraint(octet_length(col("row_key")) == 20, name="pdftable_cells_row_key_check"),
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
