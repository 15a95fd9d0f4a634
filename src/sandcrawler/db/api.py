"""The read-only HTTP API of the database: PostgREST's anonymous role, its grants
and its configuration file (``sandcrawler db api``; docs/api.md).

PostgREST connects with ``db-uri`` (the *authenticator*) and runs every request
as ``db-anon-role`` (``SET LOCAL ROLE``). That role may only ``SELECT`` the
relations in ``EXPOSED``: every write through the API, and every read of
anything else (``pdftable_cells``, ``alembic_version``), is refused by
PostgreSQL itself, whatever PostgREST is asked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlalchemy import Engine, text
from sqlalchemy.engine import make_url

from sandcrawler.core.errors import ConfigError
from sandcrawler.db.engine import begin, describe_engine

#: the relations a reader of this system needs, and nothing else
EXPOSED = (
    "grobid_refs",
    "crossref",
    "crossref_with_refs",
    "ingest_file_result",
    "ingest_fileset_platform",
    "ingest_request",
    "web_cdx",
    "catalogue",
    "pdftable_files",
    "citation",
    # the original system's relations, as views (db/original_views.py)
    "cdx",
    "file_meta",
    "grobid",
    "pdf_meta",
    "html_meta",
    "pdftrio",
)
DEFAULT_ANON_ROLE = "web_anon"
#: a schema PostgREST does not serve, for its pre-request guard
GUARD_SCHEMA = "sandcrawler_api"
GUARD = f"{GUARD_SCHEMA}.read_only"
# Before every request (db-pre-request): anything but GET/HEAD/OPTIONS is answered
# 405 before it reaches a table or view (a view that cannot take an INSERT would
# otherwise be a 500), and the transaction is made read-only, a second wall.
_GUARD_SQL = f"""
CREATE OR REPLACE FUNCTION {GUARD}() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF coalesce(current_setting('request.method', true), 'GET')
            NOT IN ('GET', 'HEAD', 'OPTIONS') THEN
        RAISE SQLSTATE 'PGRST' USING
            message = '{{"code":"SC405","message":"this API is read-only",'
                      '"details":null,"hint":"only GET and HEAD are answered"}}',
            detail = '{{"status":405,"headers":{{"Allow":"GET, HEAD"}}}}';
    END IF;
    PERFORM set_config('transaction_read_only', 'on', true);
END
$$
"""
_ROLE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


@dataclass(frozen=True)
class ApiGrants:
    anon_role: str
    authenticator: str
    relations: tuple[str, ...]
    created_roles: tuple[str, ...]


def require_postgres(engine: Engine) -> None:
    if engine.dialect.name != "postgresql":
        raise ConfigError(
            f"PostgREST needs PostgreSQL; the database is {describe_engine(engine)}: "
            "set SANDCRAWLER_DATABASE_URL=postgresql://user@host/db"
        )


def _check_role(name: str, what: str) -> str:
    if not _ROLE.match(name):
        raise ConfigError(f"{what} {name!r} is not a plain role name "
                          "(lower-case letters, digits and _)")
    return name


def grant_api(engine: Engine, *, anon_role: str = DEFAULT_ANON_ROLE,
              authenticator: str | None = None,
              statement_timeout: str = "10s") -> ApiGrants:
    """Create the anonymous role (NOLOGIN) if missing and make its privileges
    exactly ``SELECT`` on ``EXPOSED``; create ``authenticator`` (LOGIN NOINHERIT,
    no password: set one yourself) if asked, else the current user switches roles.
    Idempotent; PostgREST reloads its schema cache (``NOTIFY pgrst``)."""
    require_postgres(engine)
    anon = _check_role(anon_role, "anonymous role")
    created: list[str] = []
    with begin(engine) as conn:
        current = conn.execute(text("SELECT current_user")).scalar_one()
        auth = _check_role(authenticator, "authenticator") if authenticator else current
        if anon == auth:
            raise ConfigError(f"the anonymous role and the authenticator are both {anon!r}: "
                              "PostgREST must connect as another role")
        existing = set(conn.execute(text("SELECT rolname FROM pg_roles")).scalars())
        if anon not in existing:
            conn.execute(text(f'CREATE ROLE "{anon}" NOLOGIN'))
            created.append(anon)
        if authenticator and auth not in existing:
            conn.execute(text(f'CREATE ROLE "{auth}" LOGIN NOINHERIT'))
            created.append(auth)
        missing = [name for name in EXPOSED if conn.execute(
            text("SELECT to_regclass(:name)"), {"name": f"public.{name}"}).scalar() is None]
        if missing:
            raise ConfigError(f"database {describe_engine(engine)} has no {', '.join(missing)}: "
                              "run `sandcrawler db upgrade` first")
        # exactly the exposed relations: whatever was granted before is taken back
        conn.execute(text(f'REVOKE ALL ON ALL TABLES IN SCHEMA public FROM "{anon}"'))
        conn.execute(text(f'REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM "{anon}"'))
        conn.execute(text(f"CREATE SCHEMA IF NOT EXISTS {GUARD_SCHEMA}"))
        conn.exec_driver_sql(_GUARD_SQL)  # no bind parameters: its JSON has colons
        conn.execute(text(f"REVOKE ALL ON FUNCTION {GUARD}() FROM PUBLIC"))
        conn.execute(text(f'GRANT USAGE ON SCHEMA {GUARD_SCHEMA} TO "{anon}"'))
        conn.execute(text(f'GRANT EXECUTE ON FUNCTION {GUARD}() TO "{anon}"'))
        conn.execute(text(f'GRANT USAGE ON SCHEMA public TO "{anon}"'))
        relations = ", ".join(f'public."{name}"' for name in EXPOSED)
        conn.execute(text(f'GRANT SELECT ON {relations} TO "{anon}"'))
        conn.execute(text(f"ALTER ROLE \"{anon}\" SET statement_timeout = '{statement_timeout}'"))
        conn.execute(text(f'GRANT "{anon}" TO "{auth}"'))
        conn.execute(text("NOTIFY pgrst, 'reload schema'"))
    return ApiGrants(anon, auth, EXPOSED, tuple(created))


def postgrest_db_uri(engine: Engine, authenticator: str | None = None) -> str:
    """The libpq URI PostgREST connects with: the configured database, as
    ``authenticator`` when given (its password is yours to add)."""
    url = make_url(engine.url.render_as_string(hide_password=False)).set(
        drivername="postgresql")
    if authenticator:
        url = url.set(username=authenticator, password=None)
    return url.render_as_string(hide_password=False)


def postgrest_config(db_uri: str, *, anon_role: str = DEFAULT_ANON_ROLE,
                     host: str = "127.0.0.1", port: int = 3000, max_rows: int = 1000,
                     pool: int = 10) -> str:
    """A PostgREST 12 configuration file (``postgrest FILE``)."""

    def quoted(value: str) -> str:
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'

    lines = [
        "# PostgREST configuration written by `sandcrawler db api` (docs/api.md)",
        f"db-uri = {quoted(db_uri)}",
        'db-schemas = "public"',
        f"db-anon-role = {quoted(anon_role)}",
        "# every request is read-only: the anonymous role may only SELECT, and this",
        "# function answers 405 to anything but GET/HEAD before it reaches a relation",
        f"db-pre-request = {quoted(GUARD)}",
        f"db-max-rows = {max_rows}",
        f"db-pool = {pool}",
        "db-channel-enabled = true",
        f"server-host = {quoted(host)}",
        f"server-port = {port}",
        'log-level = "error"',
    ]
    return "\n".join(lines) + "\n"
