"""Matching: crossref.updated (when a work was last written, so the match index
follows the table incrementally) and the citation table (each reference of a
Crossref work or a document, resolved against the catalog).

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26
"""

from collections.abc import Callable

import sqlalchemy as sa
from alembic import op
from alembic.operations import BatchOperations

from sandcrawler.db.schema import CROSSREF_WITH_REFS_SELECT
from sandcrawler.db.types import JsonDoc, UTCDateTime, octet_length

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # SQLite adds a column with a non-constant default only by copying the table
    # (batch mode), and a view over the table must go while it is copied;
    # PostgreSQL evaluates now() once and stores no value per row.
    _alter_crossref(lambda batch: batch.add_column(
        sa.Column("updated", UTCDateTime, nullable=False, server_default=sa.func.now())))
    op.create_index("crossref_updated_idx", "crossref", ["updated"])
    col = sa.literal_column
    op.create_table(
        "citation",
        sa.Column("citing", sa.Text, nullable=False),
        sa.Column("ref_index", sa.Integer, nullable=False),
        sa.Column("ref_key", sa.Text, nullable=True),
        sa.Column("cited_doi", sa.Text, nullable=True),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("score", sa.Float, nullable=True),
        sa.Column("reasons", JsonDoc, nullable=True),
        sa.Column("updated", UTCDateTime, nullable=False, server_default=sa.func.now()),
        sa.PrimaryKeyConstraint("citing", "ref_index", name="citation_pkey"),
        sa.CheckConstraint(octet_length(col("citing")) >= 4, name="citation_citing_check"),
        sa.CheckConstraint(col("ref_index") >= 0, name="citation_ref_index_check"),
    )
    op.create_index("citation_cited_doi_idx", "citation", ["cited_doi"])


def downgrade() -> None:
    op.drop_index("citation_cited_doi_idx", table_name="citation")
    op.drop_table("citation")
    op.drop_index("crossref_updated_idx", table_name="crossref")
    _alter_crossref(lambda batch: batch.drop_column("updated"))


def _alter_crossref(change: Callable[[BatchOperations], None]) -> None:
    op.execute("DROP VIEW IF EXISTS crossref_with_refs")
    with op.batch_alter_table("crossref") as batch:
        change(batch)
    op.execute("CREATE VIEW crossref_with_refs (doi, indexed, record, source_ts, refs_json) AS"
               + CROSSREF_WITH_REFS_SELECT)
