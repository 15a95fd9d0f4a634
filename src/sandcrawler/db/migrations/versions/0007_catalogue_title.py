"""catalogue.title: the metadata's first title, for finding documents by title words

Rows indexed before this migration have no title until ``catalogue rebuild``
(or the document's next metadata write) fills it.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("catalogue", sa.Column("title", sa.Text, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("catalogue") as batch:
        batch.drop_column("title")
