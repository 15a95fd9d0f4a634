"""pdftable_files: the PDF table as one relational row per file (PostgreSQL), for
the read-only API; an index for its lookup by sha1hex

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23
"""

from alembic import op

from sandcrawler.db.schema import PDFTABLE_FILES_SELECT

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return  # the view decodes cells with PostgreSQL's functions; PostgREST needs it anyway
    op.execute("CREATE INDEX pdftable_cells_sha1hex_idx ON pdftable_cells "
               "((encode(row_key, 'hex')))")
    op.execute("CREATE VIEW pdftable_files AS" + PDFTABLE_FILES_SELECT)


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP VIEW IF EXISTS pdftable_files")
    op.execute("DROP INDEX IF EXISTS pdftable_cells_sha1hex_idx")
