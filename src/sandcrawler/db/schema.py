"""The SQL schema as SQLAlchemy Core tables: the single definition the code queries.

Migrations under ``migrations/versions`` create exactly these objects; a test
compares the two on both SQLite and PostgreSQL. Text columns are ``SafeText``
(TEXT; what the database cannot hold replaced on the way in: db/types.py).
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    UniqueConstraint,
    func,
)
from sqlalchemy import literal_column as col

from sandcrawler.db.types import JsonDoc, SafeText, UTCDateTime, octet_length

metadata = MetaData()

crossref = Table(
    "crossref",
    metadata,
    Column("doi", SafeText, nullable=False),
    Column("indexed", UTCDateTime, nullable=False),
    Column("record", JsonDoc, nullable=False),
    # when the row was last written (not Crossref's date): the match index
    # follows the table by it (match/sync.py)
    Column("updated", UTCDateTime, nullable=False, server_default=func.now()),
    PrimaryKeyConstraint("doi", name="crossref_pkey"),
    CheckConstraint(
        (octet_length(col("doi")) >= 4) & (col("doi") == func.lower(col("doi"))),
        name="crossref_doi_check",
    ),
)
Index("crossref_indexed_idx", crossref.c.indexed)
Index("crossref_updated_idx", crossref.c.updated)

# Exactly the seed's grobid_refs (docs/refs.md).
grobid_refs = Table(
    "grobid_refs",
    metadata,
    Column("source", SafeText, nullable=False),
    Column("source_id", SafeText, nullable=False),
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
    Column("uuid", SafeText, nullable=False),
    Column("sha1", SafeText, nullable=True),
    Column("doi", SafeText, nullable=True),
    Column("pmid", SafeText, nullable=True),
    Column("pmcid", SafeText, nullable=True),
    Column("arxiv", SafeText, nullable=True),
    Column("resources", JsonDoc, nullable=False),
    Column("updated", UTCDateTime, nullable=False, server_default=func.now()),
    # the metadata's first title, for finding documents by title words
    Column("title", SafeText, nullable=True),
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
    Column("name", SafeText, nullable=False),
    Column("created", UTCDateTime, nullable=False, server_default=func.now()),
    UniqueConstraint("name", name="pdftables_name_key"),
)

pdftable_cells = Table(
    "pdftable_cells",
    metadata,
    Column("table_id", Integer, nullable=False),
    Column("row_key", LargeBinary, nullable=False),
    Column("family", SafeText, nullable=False),
    Column("qualifier", SafeText, nullable=False),
    Column("value", LargeBinary, nullable=False),
    Column("updated", UTCDateTime, nullable=False, server_default=func.now()),
    PrimaryKeyConstraint("table_id", "row_key", "family", "qualifier", name="pdftable_cells_pkey"),
    CheckConstraint(octet_length(col("row_key")) == 20, name="pdftable_cells_row_key_check"),
)

# Ingest results, as the original system's schema has them: one row per
# (ingest_type, base_url), the latest attempt.
def _ingest_result_columns() -> list[Column]:  # type: ignore[type-arg]
    """The columns every ingest result table begins with (one row per request)."""
    return [
        Column("ingest_type", SafeText, nullable=False),
        Column("base_url", SafeText, nullable=False),
        Column("updated", UTCDateTime, nullable=False, server_default=func.now()),
        Column("hit", Boolean, nullable=False),
        Column("status", SafeText, nullable=True),
    ]


ingest_file_result = Table(
    "ingest_file_result",
    metadata,
    *_ingest_result_columns(),
    Column("terminal_url", SafeText, nullable=True),
    Column("terminal_dt", SafeText, nullable=True),
    Column("terminal_status_code", Integer, nullable=True),
    Column("terminal_sha1hex", SafeText, nullable=True),
    PrimaryKeyConstraint("ingest_type", "base_url", name="ingest_file_result_pkey"),
    CheckConstraint(octet_length(col("ingest_type")) >= 1,
                    name="ingest_file_result_ingest_type_check"),
    CheckConstraint(octet_length(col("base_url")) >= 1, name="ingest_file_result_base_url_check"),
)
Index("ingest_file_result_terminal_url_idx", ingest_file_result.c.terminal_url)
Index("ingest_file_result_terminal_sha1hex_idx", ingest_file_result.c.terminal_sha1hex)

# Every ingest request seen (the original system's ingest_request): one row per
# (link_source, link_source_id, ingest_type, base_url); the request JSON whole.
ingest_request = Table(
    "ingest_request",
    metadata,
    Column("link_source", SafeText, nullable=False),
    Column("link_source_id", SafeText, nullable=False),
    Column("ingest_type", SafeText, nullable=False),
    Column("base_url", SafeText, nullable=False),
    Column("ingest_request_source", SafeText, nullable=True),
    Column("created", UTCDateTime, nullable=False, server_default=func.now()),
    Column("release_stage", SafeText, nullable=True),
    Column("request", JsonDoc, nullable=True),
    PrimaryKeyConstraint("link_source", "link_source_id", "ingest_type", "base_url",
                         name="ingest_request_pkey"),
    *(
        CheckConstraint(octet_length(col(name)) >= 1, name=f"ingest_request_{name}_check")
        for name in ("link_source", "link_source_id", "ingest_type", "base_url",
                     "ingest_request_source", "release_stage")
    ),
)
Index("ingest_request_base_url_idx", ingest_request.c.base_url, ingest_request.c.ingest_type)
Index("ingest_request_source_created_idx", ingest_request.c.ingest_request_source,
      ingest_request.c.created)

# The fileset-ingest seed's table. Its CHECKs name columns that do not exist
# (platform, item_name, item_path_bundle, terminal_url, terminal_dt); here each
# checks the column it sits on.
ingest_fileset_platform = Table(
    "ingest_fileset_platform",
    metadata,
    *_ingest_result_columns(),
    Column("platform_name", SafeText, nullable=False),
    Column("platform_domain", SafeText, nullable=False),
    Column("platform_id", SafeText, nullable=False),
    Column("ingest_strategy", SafeText, nullable=True),
    Column("total_size", BigInteger, nullable=True),
    Column("file_count", Integer, nullable=True),
    Column("archiveorg_item_name", SafeText, nullable=True),
    Column("archiveorg_item_bundle_path", SafeText, nullable=True),
    Column("web_bundle_url", SafeText, nullable=True),
    Column("web_bundle_dt", SafeText, nullable=True),
    Column("manifest", JsonDoc, nullable=True),
    PrimaryKeyConstraint("ingest_type", "base_url", name="ingest_fileset_platform_pkey"),
    *(
        CheckConstraint(octet_length(col(name)) >= 1, name=f"ingest_fileset_platform_{name}_check")
        for name in ("ingest_type", "base_url", "status", "platform_name", "platform_domain",
                     "platform_id", "ingest_strategy", "archiveorg_item_name",
                     "archiveorg_item_bundle_path", "web_bundle_url")
    ),
    CheckConstraint(octet_length(col("web_bundle_dt")) == 14,
                    name="ingest_fileset_platform_web_bundle_dt_check"),
)
Index("ingest_fileset_platform_name_domain_id_idx", ingest_fileset_platform.c.platform_name,
      ingest_fileset_platform.c.platform_domain, ingest_fileset_platform.c.platform_id)

# Our own web archive's index: one row per WARC record of a capture (responses,
# redirects, revisits), found by URL (check an existing capture, follow a
# redirect chain) or by payload sha1 (write a revisit instead of the bytes again).
web_cdx = Table(
    "web_cdx",
    metadata,
    Column("url", SafeText, nullable=False),
    Column("datetime", SafeText, nullable=False),
    Column("surt", SafeText, nullable=False),
    Column("status_code", Integer, nullable=True),
    Column("mimetype", SafeText, nullable=True),  # warc/revisit for revisit records
    Column("location", SafeText, nullable=True),  # where a redirect pointed
    Column("sha1hex", SafeText, nullable=True),
    Column("sha256hex", SafeText, nullable=True),
    Column("md5hex", SafeText, nullable=True),
    Column("size", BigInteger, nullable=True),
    Column("warc_path", SafeText, nullable=False),
    Column("warc_offset", BigInteger, nullable=False),
    Column("warc_csize", BigInteger, nullable=False),
    Column("row_created", UTCDateTime, nullable=False, server_default=func.now()),
    PrimaryKeyConstraint("warc_path", "warc_offset", name="web_cdx_pkey"),
    CheckConstraint(octet_length(col("datetime")) == 14, name="web_cdx_datetime_check"),
)
Index("web_cdx_url_datetime_idx", web_cdx.c.url, web_cdx.c.datetime)
Index("web_cdx_sha1hex_idx", web_cdx.c.sha1hex)
Index("web_cdx_surt_datetime_idx", web_cdx.c.surt, web_cdx.c.datetime)  # CDX API, CDXJ

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


def decoded_cell(family: str, qualifier: str, as_: str = "text") -> str:
    """SQL for one cell of a row grouped from ``pdftable_cells c``, decoded as
    storage/pdftable.py writes it (null when the row has none)."""
    value = "convert_from(c.value, 'UTF8')"
    if as_ == "bigint":  # 8 bytes big-endian (storage/pdftable.py)
        value = "('x' || encode(c.value, 'hex'))::bit(64)::bigint"
    out = f"max({value}) FILTER (WHERE c.family = '{family}' AND c.qualifier = '{qualifier}')"
    return f"({out})::jsonb" if as_ == "jsonb" else out


# The PDF table as one row per (table, file) with the cells of its uncompressed
# families decoded (PostgreSQL only: migration 0006). The compressed families'
# large cells are deflated, which SQL cannot undo: ``families`` says which a file
# has (their small plain cells: db/original_views.py).
PDFTABLE_FILES_SELECT = f"""
    SELECT
        t.name AS table_name,
        encode(c.row_key, 'hex') AS sha1hex,
        array_agg(DISTINCT c.family ORDER BY c.family) AS families,
        {decoded_cell("file", "size", "bigint")} AS size,
        {decoded_cell("file", "mime")} AS mime,
        {decoded_cell("file", "cdx", "jsonb")} AS cdx,
        {decoded_cell("f", "c", "jsonb")} AS dedupe,
        {decoded_cell("match0", "mstatus")} AS mstatus,
        {decoded_cell("match0", "doi")} AS match_doi,
        {decoded_cell("match0", "minfo", "jsonb")} AS minfo,
        max(c.updated) AS updated
    FROM pdftable_cells c
    JOIN pdftables t ON t.id = c.table_id
    GROUP BY t.name, c.row_key
"""

#: views (created by migrations, queried by name) -> their columns; pdftable_files
#: and the original system's (db/original_views.py) exist on PostgreSQL only
VIEWS = {
    "crossref_with_refs": "(doi, indexed, record, source_ts, refs_json)",
    "pdftable_files": "(table_name, sha1hex, families, size, mime, cdx, dedupe, mstatus, "
                      "match_doi, minfo, updated)",
    "cdx": "(url, datetime, sha1hex, cdx_sha1hex, mimetype, warc_path, warc_csize, "
           "warc_offset, row_created)",
    "file_meta": "(sha1hex, sha256hex, md5hex, size_bytes, mimetype)",
    "grobid": "(sha1hex, updated, grobid_version, status_code, status, fatcat_release, "
              "metadata, table_name)",
    "pdf_meta": "(sha1hex, updated, status, has_page0_thumbnail, page_count, word_count, "
                "page0_height, page0_width, permanent_id, pdf_created, pdf_version, "
                "metadata, table_name)",
    "html_meta": "(sha1hex, updated, status, scope, has_teixml, has_thumbnail, word_count, "
                 "biblio, resources, table_name)",
    "pdftrio": "(sha1hex, updated, status_code, status, pdftrio_version, models_date, "
               "ensemble_score, bert_score, linear_score, image_score)",
}


# Each reference of a citing work, resolved against the catalog (docs/matching.md).
# ``citing`` is ``doi:<lower-case DOI>`` for a Crossref work or ``uuid:<uuid>``
# for a document; ``ref_index`` is the reference's 0-based position in its list
# and ``ref_key`` its key upstream (Crossref's ``key``, a TEI ``xml:id``).
citation = Table(
    "citation",
    metadata,
    Column("citing", SafeText, nullable=False),
    Column("ref_index", Integer, nullable=False),
    Column("ref_key", SafeText, nullable=True),
    Column("cited_doi", SafeText, nullable=True),
    Column("status", SafeText, nullable=False),
    Column("score", Float, nullable=True),
    Column("reasons", JsonDoc, nullable=True),
    Column("updated", UTCDateTime, nullable=False, server_default=func.now()),
    PrimaryKeyConstraint("citing", "ref_index", name="citation_pkey"),
    CheckConstraint(octet_length(col("citing")) >= 4, name="citation_citing_check"),
    CheckConstraint(col("ref_index") >= 0, name="citation_ref_index_check"),
)
Index("citation_cited_doi_idx", citation.c.cited_doi)
