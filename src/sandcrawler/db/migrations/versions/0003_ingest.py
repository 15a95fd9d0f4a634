"""ingest_file_result and ingest_fileset_platform

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

from sandcrawler.db.types import JsonDoc, UTCDateTime, octet_length

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

FILESET_TEXT_CHECKS = ("ingest_type", "base_url", "status", "platform_name", "platform_domain",
                       "platform_id", "ingest_strategy", "archiveorg_item_name",
                       "archiveorg_item_bundle_path", "web_bundle_url")


def _result_columns() -> list[sa.Column]:  # type: ignore[type-arg]
    return [
        sa.Column("ingest_type", sa.Text, nullable=False),
        sa.Column("base_url", sa.Text, nullable=False),
        sa.Column("updated", UTCDateTime, nullable=False, server_default=sa.func.now()),
        sa.Column("hit", sa.Boolean, nullable=False),
        sa.Column("status", sa.Text, nullable=True),
    ]


def upgrade() -> None:
    col = sa.literal_column
    op.create_table(
        "ingest_file_result",
        *_result_columns(),
        sa.Column("terminal_url", sa.Text, nullable=True),
        sa.Column("terminal_dt", sa.Text, nullable=True),
        sa.Column("terminal_status_code", sa.Integer, nullable=True),
        sa.Column("terminal_sha1hex", sa.Text, nullable=True),
        sa.PrimaryKeyConstraint("ingest_type", "base_url", name="ingest_file_result_pkey"),
        sa.CheckConstraint(octet_length(col("ingest_type")) >= 1,
                           name="ingest_file_result_ingest_type_check"),
        sa.CheckConstraint(octet_length(col("base_url")) >= 1,
                           name="ingest_file_result_base_url_check"),
    )
    op.create_index("ingest_file_result_terminal_url_idx", "ingest_file_result",
                    ["terminal_url"])
    op.create_index("ingest_file_result_terminal_sha1hex_idx", "ingest_file_result",
                    ["terminal_sha1hex"])
    op.create_table(
        "ingest_fileset_platform",
        *_result_columns(),
        sa.Column("platform_name", sa.Text, nullable=False),
        sa.Column("platform_domain", sa.Text, nullable=False),
        sa.Column("platform_id", sa.Text, nullable=False),
        sa.Column("ingest_strategy", sa.Text, nullable=True),
        sa.Column("total_size", sa.BigInteger, nullable=True),
        sa.Column("file_count", sa.Integer, nullable=True),
        sa.Column("archiveorg_item_name", sa.Text, nullable=True),
        sa.Column("archiveorg_item_bundle_path", sa.Text, nullable=True),
        sa.Column("web_bundle_url", sa.Text, nullable=True),
        sa.Column("web_bundle_dt", sa.Text, nullable=True),
        sa.Column("manifest", JsonDoc, nullable=True),
        sa.PrimaryKeyConstraint("ingest_type", "base_url", name="ingest_fileset_platform_pkey"),
        *(
            sa.CheckConstraint(octet_length(col(name)) >= 1,
                               name=f"ingest_fileset_platform_{name}_check")
            for name in FILESET_TEXT_CHECKS
        ),
        sa.CheckConstraint(octet_length(col("web_bundle_dt")) == 14,
                           name="ingest_fileset_platform_web_bundle_dt_check"),
    )
    op.create_index("ingest_fileset_platform_name_domain_id_idx", "ingest_fileset_platform",
                    ["platform_name", "platform_domain", "platform_id"])


def downgrade() -> None:
    op.drop_index("ingest_fileset_platform_name_domain_id_idx",
                  table_name="ingest_fileset_platform")
    op.drop_table("ingest_fileset_platform")
    op.drop_index("ingest_file_result_terminal_sha1hex_idx", table_name="ingest_file_result")
    op.drop_index("ingest_file_result_terminal_url_idx", table_name="ingest_file_result")
    op.drop_table("ingest_file_result")
