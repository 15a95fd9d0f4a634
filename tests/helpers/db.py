"""Databases at the latest schema without migrating each one: SQLite files copied from
one migrated once per process (PostgreSQL's copies are the conftest fixtures')."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from sqlalchemy import Engine

from sandcrawler.db import migrate
from sandcrawler.db.engine import make_engine

_template: Path | None = None


def sqlite_template() -> Path:
    """A SQLite file migrated to the latest schema, made on first use in this process."""
    global _template
    if _template is None:
        path = Path(tempfile.mkdtemp(prefix="sandcrawler-sqlite-template-")) / "migrated.sqlite3"
        eng = make_engine(f"sqlite:///{path}")
        migrate.upgrade(eng)
        eng.dispose()
        _template = path
    return _template


def migrated_sqlite(path: Path) -> Engine:
    """An engine on a new SQLite file at ``path``, at the latest schema."""
    shutil.copyfile(sqlite_template(), path)
    return make_engine(f"sqlite:///{path}")
