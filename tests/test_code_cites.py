"""Code comments and docstrings may name a doc, never a file that is not in the
repository (a reader of a fresh clone has nothing else): every ``*.md`` the
product and its test kit name exists here."""

from __future__ import annotations

import re
from pathlib import Path

from tests.helpers.paths import REPO

ROOT = REPO
SOURCES = [*sorted((ROOT / "src").rglob("*.py")), *sorted((ROOT / "testkit" / "src").rglob("*.py"))]
#: a path ending in .md, as written in code: docs/ingest.md, SOURCES.md, data/x/SOURCES.md
CITE = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w.-]+\.md)\b")


def _exists(name: str, cited_in: Path) -> bool:
    """``name`` relative to the repository, or to the citing file's directories."""
    if (ROOT / name).is_file():
        return True
    return any((parent / name).is_file() for parent in cited_in.parents
               if ROOT in parent.parents or parent == ROOT)


def test_every_doc_the_code_names_is_in_the_repository() -> None:
    missing = [f"{path.relative_to(ROOT)}: {name}"
               for path in SOURCES
               for name in CITE.findall(path.read_text(encoding="utf-8"))
               if not _exists(name, path)]
    assert missing == []


def test_the_citation_pattern_finds_what_it_should() -> None:
    text = 'see docs/ingest.md and (DESIGN.md, principle 3) or ``data/platforms/SOURCES.md``'
    assert CITE.findall(text) == ["docs/ingest.md", "DESIGN.md", "data/platforms/SOURCES.md"]
