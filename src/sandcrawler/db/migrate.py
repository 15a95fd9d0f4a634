"""Schema migrations (alembic) driven from Python: ``db init | upgrade | status``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError
from sqlalchemy import Engine, func, inspect, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError

from sandcrawler.core.errors import ConfigError
from sandcrawler.db import schema
from sandcrawler.db.engine import begin, describe_engine, make_engine, unavailable
from sandcrawler.db.locks import exclusive

MIGRATIONS_DIR = Path(__file__).parent / "migrations"


def _alembic_config() -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    return cfg


def _revisions() -> list[str]:
    """Every revision id, oldest first."""
    script = ScriptDirectory.from_config(_alembic_config())
    return [r.revision for r in reversed(list(script.walk_revisions()))]


def head_revision() -> str | None:
    return ScriptDirectory.from_config(_alembic_config()).get_current_head()


def current_revision(engine: Engine) -> str | None:
    with begin(engine) as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade(engine: Engine, revision: str = "head") -> tuple[str | None, str | None]:
    """Apply migrations up to ``revision``; returns (before, after). Two processes
    upgrading at once take turns: the second finds the work done."""
    with exclusive(engine, "sandcrawler-migrations"):
        before = current_revision(engine)
        cfg = _alembic_config()
        with begin(engine) as conn:
            cfg.attributes["connection"] = conn
            try:
                command.upgrade(cfg, revision)
            except CommandError as e:
                known = ", ".join(["head", *_revisions()])
                raise ConfigError(f"cannot upgrade to {revision!r}: {e} (known: {known})") from None
        return before, current_revision(engine)


def create_database_if_missing(engine: Engine) -> bool:
    """PostgreSQL: create the named database through the maintenance DB. True if created."""
    url = engine.url
    if url.get_backend_name() != "postgresql" or not url.database:
        return False
    try:
        with engine.connect():
            return False
    except OperationalError as e:
        if "does not exist" not in str(e.orig):
            raise unavailable(engine, e) from e
    admin = make_engine(
        make_url(url).set(database="postgres").render_as_string(hide_password=False)
    )
    try:
        with admin.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text(f'CREATE DATABASE "{url.database}"'))
    finally:
        admin.dispose()
    return True


@dataclass
class DatabaseStatus:
    url: str
    backend: str
    current: str | None
    head: str | None
    row_counts: dict[str, int] = field(default_factory=dict)

    @property
    def up_to_date(self) -> bool:
        return self.current == self.head


def status(engine: Engine) -> DatabaseStatus:
    st = DatabaseStatus(
        url=describe_engine(engine),
        backend=engine.dialect.name,
        current=current_revision(engine),
        head=head_revision(),
    )
    with begin(engine) as conn:
        existing = set(inspect(conn).get_table_names())
        for name, table in schema.metadata.tables.items():
            if name in existing:
                st.row_counts[name] = conn.execute(
                    select(func.count()).select_from(table)
                ).scalar_one()
    return st


def ensure_schema(engine: Engine) -> None:
    """Before writing: the embedded SQLite database initialises (or upgrades) itself; anything else
    must have been initialised (and upgraded) on purpose by an operator."""
    current, head = current_revision(engine), head_revision()
    if current == head:
        return
    if engine.dialect.name == "sqlite":
        # The embedded database belongs to this installation: bring it up to date.
        upgrade(engine)
        return
    if current is None:
        raise ConfigError(
            f"database {describe_engine(engine)} is not initialised: run `sandcrawler db init`"
        )
    raise ConfigError(
        f"database {describe_engine(engine)} is at schema {current}, this version needs {head}: "
        "run `sandcrawler db upgrade`"
    )
