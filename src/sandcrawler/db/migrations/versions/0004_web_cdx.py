"""web_cdx: the index of our own web archive

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

from sandcrawler.db.types import UTCDateTime, octet_length

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "web_cdx",
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("datetime", sa.Text, nullable=False),
        sa.Column("surt", sa.Text, nullable=False),
        sa.Column("status_code", sa.Integer, nullable=True),
        sa.Column("mimetype", sa.Text, nullable=True),
        sa.Column("location", sa.Text, nullable=True),
        sa.Column("sha1hex", sa.Text, nullable=True),
        sa.Column("sha256hex", sa.Text, nullable=True),
        sa.Column("md5hex", sa.Text, nullable=True),
        sa.Column("size", sa.BigInteger, nullable=True),
        sa.Column("warc_path", sa.Text, nullable=False),
        sa.Column("warc_offset", sa.BigInteger, nullable=False),
        sa.Column("warc_csize", sa.BigInteger, nullable=False),
        sa.Column("row_created", UTCDateTime, nullable=False, server_default=sa.func.now()),
        sa.PrimaryKeyConstraint("warc_path", "warc_offset", name="web_cdx_pkey"),
        sa.CheckConstraint(octet_length(sa.literal_column("datetime")) == 14,
                           name="web_cdx_datetime_check"),
    )
    op.create_index("web_cdx_url_datetime_idx", "web_cdx", ["url", "datetime"])
    op.create_index("web_cdx_sha1hex_idx", "web_cdx", ["sha1hex"])


def downgrade() -> None:
    op.drop_index("web_cdx_sha1hex_idx", table_name="web_cdx")
    op.drop_index("web_cdx_url_datetime_idx", table_name="web_cdx")
    op.drop_table("web_cdx")
