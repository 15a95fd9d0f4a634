"""catalogue, pdftables and pdftable_cells

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

from sandcrawler.db.types import JsonDoc, UTCDateTime, octet_length

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

IDENTIFIERS = ("sha1", "doi", "pmid", "pmcid", "arxiv")


def upgrade() -> None:
    col = sa.literal_column
    op.create_table(
        "catalogue",
        sa.Column("uuid", sa.Text, nullable=False),
        *(sa.Column(name, sa.Text, nullable=True) for name in IDENTIFIERS),
        sa.Column("resources", JsonDoc, nullable=False),
        sa.Column("updated", UTCDateTime, nullable=False, server_default=sa.func.now()),
        sa.PrimaryKeyConstraint("uuid", name="catalogue_pkey"),
        sa.CheckConstraint(octet_length(col("uuid")) == 36, name="catalogue_uuid_check"),
        sa.CheckConstraint(
            col("sha1").is_(None) | (octet_length(col("sha1")) == 40),
            name="catalogue_sha1_check",
        ),
        sa.CheckConstraint(
            col("doi").is_(None) | (col("doi") == sa.func.lower(col("doi"))),
            name="catalogue_doi_check",
        ),
    )
    for name in IDENTIFIERS:
        op.create_index(f"catalogue_{name}_idx", "catalogue", [name])
    op.create_table(
        "pdftables",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("created", UTCDateTime, nullable=False, server_default=sa.func.now()),
        sa.UniqueConstraint("name", name="pdftables_name_key"),
    )
    op.create_table(
        "pdftable_cells",
        sa.Column("table_id", sa.Integer, nullable=False),
        sa.Column("row_key", sa.LargeBinary, nullable=False),
        sa.Column("family", sa.Text, nullable=False),
        sa.Column("qualifier", sa.Text, nullable=False),
        sa.Column("value", sa.LargeBinary, nullable=False),
        sa.Column("updated", UTCDateTime, nullable=False, server_default=sa.func.now()),
        sa.PrimaryKeyConstraint(
            "table_id", "row_key", "family", "qualifier", name="pdftable_cells_pkey"
        ),
        sa.CheckConstraint(
            octet_length(col("row_key")) == 20, name="pdftable_cells_row_key_check"
        ),
    )
    if op.get_bind().dialect.name == "postgresql":
        # Large values (GROBID's TEI and JSON) arrive deflated already: TOAST may
        # move them out of line but should not try to compress them again.
        op.execute("ALTER TABLE pdftable_cells ALTER COLUMN value SET STORAGE EXTERNAL")


def downgrade() -> None:
    op.drop_table("pdftable_cells")
    op.drop_table("pdftables")
    for name in IDENTIFIERS:
        op.drop_index(f"catalogue_{name}_idx", table_name="catalogue")
    op.drop_table("catalogue")
