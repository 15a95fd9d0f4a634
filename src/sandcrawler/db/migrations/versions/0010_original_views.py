"""The original system's relations as views (cdx, file_meta, grobid, pdf_meta,
html_meta; PostgreSQL), and the PDF table's small columns stored plain so that
they can read them

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02
"""

import zlib

import sqlalchemy as sa
from alembic import op

from sandcrawler.db.original_views import HELPER_SCHEMA, ORIGINAL_VIEWS, PDF_DATE_FUNCTION

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

#: the columns of compressed families that are now stored plain (storage/pdftable.py)
PLAIN = {"grobid0": ("status_code", "quality", "status", "metadata"),
         "pdf0": ("pdf_status", "pdf_meta")}
BATCH = 1000


def _store_plain(inflate: bool) -> None:
    """Inflate (or deflate again, going down) the cells of ``PLAIN``, in batches by
    key. A value that is already in the wanted form is left as it is."""
    conn = op.get_bind()
    cells = sa.table("pdftable_cells", sa.column("table_id"), sa.column("row_key"),
                     sa.column("family"), sa.column("qualifier"), sa.column("value"))
    c = cells.c
    for family, qualifiers in PLAIN.items():
        for qualifier in qualifiers:
            after: tuple[int, bytes] = (-1, b"")
            while True:
                rows = conn.execute(
                    sa.select(c.table_id, c.row_key, c.value)
                    .where(c.family == family, c.qualifier == qualifier,
                           sa.tuple_(c.table_id, c.row_key) > sa.tuple_(*after))
                    .order_by(c.table_id, c.row_key).limit(BATCH)).all()
                if not rows:
                    break
                changed = [{"t": table_id, "k": key, "v": new}
                           for table_id, key, value in rows
                           if (new := _converted(bytes(value), inflate)) is not None]
                if changed:  # one statement, executed for the whole batch
                    conn.execute(sa.update(cells).where(
                        c.table_id == sa.bindparam("t"), c.row_key == sa.bindparam("k"),
                        c.family == family, c.qualifier == qualifier,
                    ).values(value=sa.bindparam("v")), changed)
                after = (rows[-1][0], bytes(rows[-1][1]))


def _converted(value: bytes, inflate: bool) -> bytes | None:
    if not inflate:
        return zlib.compress(value, 6)
    try:
        return zlib.decompress(value)
    except zlib.error:
        return None  # not deflated: written plain already


def upgrade() -> None:
    _store_plain(inflate=True)
    if op.get_bind().dialect.name != "postgresql":
        return  # the views decode cells with PostgreSQL's functions; PostgREST needs it
    op.execute(f"CREATE SCHEMA IF NOT EXISTS {HELPER_SCHEMA}")
    op.execute(PDF_DATE_FUNCTION)
    for name, select in ORIGINAL_VIEWS.items():
        op.execute(f"CREATE VIEW {name} AS {select}")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for name in reversed(ORIGINAL_VIEWS):
            op.execute(f"DROP VIEW IF EXISTS {name}")
        op.execute(f"DROP FUNCTION IF EXISTS {HELPER_SCHEMA}.pdf_date(text)")
    _store_plain(inflate=False)
