"""``sandcrawler db``: create, upgrade and inspect the SQL database."""

from __future__ import annotations

import os
from pathlib import Path

import click
import orjson

from sandcrawler.cli.options import open_services
from sandcrawler.db import api, migrate
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


@db.command("api")
@click.option("-o", "--output", default="postgrest.conf", show_default=True,
              help="Where to write PostgREST's configuration file; - for stdout.")
@click.option("--anon-role", default=api.DEFAULT_ANON_ROLE, show_default=True,
              help="The role every API request runs as (created NOLOGIN if missing).")
@click.option("--authenticator", default=None, metavar="ROLE",
              help="Role PostgREST logs in as (created LOGIN NOINHERIT, no password, if "
              "missing); default: the configured database user.")
@click.option("--host", default="127.0.0.1", show_default=True, help="PostgREST's listen address.")
@click.option("--port", default=3000, show_default=True, type=click.IntRange(0, 65535),
              help="PostgREST's port.")
@click.option("--max-rows", default=1000, show_default=True, type=click.IntRange(1),
              help="Most rows one API request returns (db-max-rows).")
def api_command(output: str, anon_role: str, authenticator: str | None, host: str, port: int,
                max_rows: int) -> None:
    """Set up the read-only PostgREST API of a PostgreSQL database: the anonymous
    role, SELECT on exactly the exposed relations, and PostgREST's configuration file.

    \b
    Exposed: grobid_refs, crossref, crossref_with_refs, ingest_file_result,
    ingest_fileset_platform, ingest_request, web_cdx, catalogue, pdftable_files,
    citation, and the original system's relations as views (cdx, file_meta,
    grobid, pdf_meta, html_meta, pdftrio), so that its PostgREST client works
    unchanged. Writes, and reads of anything else, are refused. Run it again
    after `db upgrade`; it is idempotent. See docs/api.md, docs/migration.md.

    \b
    Examples:
      sandcrawler db api -o /etc/postgrest/sandcrawler.conf
      sandcrawler db api --authenticator authenticator --port 3030 -o -
      postgrest postgrest.conf
    """
    engine = open_services().raw_engine
    api.require_postgres(engine)
    grants = api.grant_api(engine, anon_role=anon_role, authenticator=authenticator)
    config = api.postgrest_config(api.postgrest_db_uri(engine, authenticator),
                                  anon_role=anon_role, host=host, port=port, max_rows=max_rows)
    if output == "-":
        click.echo(config, nl=False)
    else:
        path = Path(output)
        # the db-uri may hold a password: the file is the owner's only
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(config)
    created = f"; created {', '.join(grants.created_roles)}" if grants.created_roles else ""
    click.echo(f"{describe_engine(engine)}: {grants.anon_role} may read "
               f"{len(grants.relations)} relations, {grants.authenticator} may act as it"
               f"{created}" + ("" if output == "-" else f"; wrote {output}"), err=True)
