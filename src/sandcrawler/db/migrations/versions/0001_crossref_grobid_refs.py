"""crossref and grobid_refs tables, crossref_with_refs view

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

from sandcrawler.db.schema import CROSSREF_WITH_REFS_SELECT
from sandcrawler.db.types import JsonDoc, UTCDateTime, octet_length

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    col = sa.literal_column
    op.create_table(
        "crossref",
        sa.Column("doi", sa.Text, nullable=False),
        sa.Column("indexed", UTCDateTime, nullable=False),
        sa.Column("record", JsonDoc, nullable=False),
        sa.PrimaryKeyConstraint("doi", name="crossref_pkey"),
        sa.CheckConstraint(
            (octet_length(col("doi")) >= 4) & (col("doi") == sa.func.lower(col("doi"))),
            name="crossref_doi_check",
        ),
    )
    op.create_index("crossref_indexed_idx", "crossref", ["indexed"])
    op.create_table(
        "grobid_refs",
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("source_id", sa.Text, nullable=False),
        sa.Column("source_ts", UTCDateTime, nullable=True),
        sa.Column("updated", UTCDateTime, nullable=False, server_default=sa.func.now()),
        sa.Column("refs_json", JsonDoc, nullable=False),
        sa.PrimaryKeyConstraint("source", "source_id", name="grobid_refs_pkey"),
        sa.CheckConstraint(octet_length(col("source")) >= 1, name="grobid_refs_source_check"),
        sa.CheckConstraint(
            octet_length(col("source_id")) >= 1, name="grobid_refs_source_id_check"
        ),
    )
    if op.get_bind().dialect.name == "postgresql" and _has_lz4():
        # Crossref records are ~10 kB of JSON: with the default pglz, TOAST
        # compression was most of the server's time on bulk loads (lz4: ~1.7x rows/s).
        op.execute("ALTER TABLE crossref ALTER COLUMN record SET COMPRESSION lz4")
        op.execute("ALTER TABLE grobid_refs ALTER COLUMN refs_json SET COMPRESSION lz4")
    op.execute(
        "CREATE VIEW crossref_with_refs (doi, indexed, record, source_ts, refs_json) AS"
        + CROSSREF_WITH_REFS_SELECT
    )


def _has_lz4() -> bool:
    """PostgreSQL >= 14 built with lz4 (Debian's is)."""
    return bool(
        op.get_bind()
        .execute(sa.text(
            "SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'"
        ))
        .scalar()
    )


def downgrade() -> None:
    op.execute("DROP VIEW IF EXISTS crossref_with_refs")
    op.drop_table("grobid_refs")
    op.drop_index("crossref_indexed_idx", table_name="crossref")
    op.drop_table("crossref")
