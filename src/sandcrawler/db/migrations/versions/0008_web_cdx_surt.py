"""web_cdx: an index by SURT key and timestamp, for the CDX server API (`serve`'s
/cdx) and the CDXJ export, which look captures up and list them by key

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26
"""

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("web_cdx_surt_datetime_idx", "web_cdx", ["surt", "datetime"])


def downgrade() -> None:
    op.drop_index("web_cdx_surt_datetime_idx", table_name="web_cdx")
