"""Whether a database is at this version's schema, read without alembic.

Every command that touches the database checks its schema first, and importing
alembic to do so took about half a second of each command's start-up (and of
each worker process's). The check that passes is one query; only a database
that is not at the head (or cannot say) goes to ``migrate.ensure_schema``.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, text
from sqlalchemy.exc import SQLAlchemyError

VERSIONS_DIR = Path(__file__).parent / "migrations" / "versions"


def head() -> str:
    """The newest migration's revision: each file under migrations/versions is
    named by its revision ("0010_original_views.py" is revision "0010"; a test
    holds this to alembic's own head)."""
    return max(p.name.partition("_")[0] for p in VERSIONS_DIR.glob("[0-9]*_*.py"))


def at_head(engine: Engine) -> bool:
    """True when the database says it is at ``head()``. False for anything
    else, an error included: the caller then checks (and reports) the slow way."""
    try:
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT version_num FROM alembic_version")).all()
    except SQLAlchemyError:
        return False
    return [r[0] for r in rows] == [head()]
