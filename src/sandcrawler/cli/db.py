"""``sandcrawler db``: create, upgrade and inspect the SQL database."""

from __future__ import annotations

import click
import orjson

from sandcrawler.cli.options import open_services
from sandcrawler.db import migrate
from sandcrawler.db.engine import describe_engine


@click.group()
def db() -> None:
    """Create, upgrade and inspect the SQL database (SQLite or PostgreSQL)."""


@db.command("init")
def init() -> None:
    """Create the database if needed and bring its schema to the latest version."""
    engine = open_services().raw_engine
    created = migrate.create_database_if_missing(engine)
    before, after = migrate.upgrade(engine)
    what = "created and initialised" if created else (
        "already up to date" if before == after else "initialised")
    click.echo(f"{describe_engine(engine)}: {what} (schema {after})", err=True)


@db.command("upgrade")
@click.option("--to", "revision", default="head", show_default=True, help="Target revision.")
def upgrade(revision: str) -> None:
    """Apply pending schema migrations."""
    engine = open_services().raw_engine
    before, after = migrate.upgrade(engine, revision)
    if before == after:
        click.echo(f"{describe_engine(engine)}: already at schema {after}", err=True)
    else:
        click.echo(f"{describe_engine(engine)}: schema {before or '(none)'} -> {after}", err=True)


@db.command("status")
@click.option("--json", "as_json", is_flag=True, help="One JSON object instead of text.")
def status(as_json: bool) -> None:
    """Schema version, pending migrations and row counts. Exit 1 if not up to date."""
    engine = open_services().raw_engine
    st = migrate.status(engine)
    if as_json:
        click.echo(orjson.dumps({**st.__dict__, "up_to_date": st.up_to_date}).decode())
    else:
        click.echo(f"database: {st.url} ({st.backend})")
        click.echo(f"schema:   {st.current or '(not initialised)'} (latest {st.head})"
                   + ("" if st.up_to_date else
                      f"  -> run `sandcrawler db {'init' if st.current is None else 'upgrade'}`"))
        width = max((len(name) for name in st.row_counts), default=0)
        for name, count in st.row_counts.items():
            click.echo(f"  {name:<{width}} {count:>12,} rows")
    if not st.up_to_date:
        raise SystemExit(1)
