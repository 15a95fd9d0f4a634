"""Alembic environment: always run through sandcrawler.db.migrate with a live connection."""

from alembic import context

from sandcrawler.db.schema import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations with `sandcrawler db upgrade`, not the alembic CLI")

context.configure(
    connection=connection,
    target_metadata=metadata,
    # SQLite cannot ALTER most things in place; batch mode rebuilds tables instead.
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
