"""ingest_request: every ingest request seen, as the original system keeps them

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

from sandcrawler.db.types import JsonDoc, UTCDateTime, octet_length

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

_CHECKED = ("link_source", "link_source_id", "ingest_type", "base_url",
            "ingest_request_source", "release_stage")


def upgrade() -> None:
    op.create_table(
        "ingest_request",
        sa.Column("link_source", sa.Text, nullable=False),
        sa.Column("link_source_id", sa.Text, nullable=False),
        sa.Column("ingest_type", sa.Text, nullable=False),
        sa.Column("base_url", sa.Text, nullable=False),
        sa.Column("ingest_request_source", sa.Text, nullable=True),
        sa.Column("created", UTCDateTime, nullable=False, server_default=sa.func.now()),
        sa.Column("release_stage", sa.Text, nullable=True),
        sa.Column("request", JsonDoc, nullable=True),
        sa.PrimaryKeyConstraint("link_source", "link_source_id", "ingest_type", "base_url",
                                name="ingest_request_pkey"),
        *(sa.CheckConstraint(octet_length(sa.literal_column(name)) >= 1,
                             name=f"ingest_request_{name}_check") for name in _CHECKED),
    )
    op.create_index("ingest_request_base_url_idx", "ingest_request",
                    ["base_url", "ingest_type"])
    op.create_index("ingest_request_source_created_idx", "ingest_request",
                    ["ingest_request_source", "created"])


def downgrade() -> None:
    op.drop_index("ingest_request_source_created_idx", table_name="ingest_request")
    op.drop_index("ingest_request_base_url_idx", table_name="ingest_request")
    op.drop_table("ingest_request")
