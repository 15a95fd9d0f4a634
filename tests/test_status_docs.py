"""The status tables of ``docs/`` and the status enums (``records/statuses.py``) agree.

A table is marked in the Markdown source by the comment on the line before it:

    <!-- statuses: HomeEnum[, HomeEnum …][; from: OtherEnum, …] -->

Its first column names statuses in backticks (several to a cell is fine). The
table holds every member of its home enums, and nothing that is not a member
of its home enums or of the enums it takes statuses ``from``. Every enum is
the home of exactly one table, so every status the code can give is documented.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import typing
from dataclasses import dataclass
from enum import StrEnum

import pytest

import sandcrawler
from sandcrawler.core.errors import RecordError
from sandcrawler.records import statuses
from sandcrawler.records.statuses import DOMAINS
from tests.helpers.paths import REPO

ROOT = REPO
DOCS = ROOT / "docs"
SRC = ROOT / "src" / "sandcrawler"
MARK = re.compile(r"^<!-- statuses: (?P<home>[^;]+?)(?:; from: (?P<others>.+?))? -->$")
STATUS = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Table:
    where: str
    home: tuple[type[StrEnum], ...]
    others: tuple[type[StrEnum], ...]
    statuses: frozenset[str]

    def __str__(self) -> str:
        return self.where


def _enums(names: str | None, where: str) -> tuple[type[StrEnum], ...]:
    found = []
    for name in (names or "").split(","):
        if name.strip():
            enum = getattr(statuses, name.strip(), None)
            assert enum in DOMAINS, f"{where}: {name.strip()} is not a status enum"
            found.append(enum)
    return tuple(found)


def _first_column(lines: list[str], start: int, where: str) -> frozenset[str]:
    assert lines[start].startswith("|"), f"{where}: no table after the mark"
    assert set(lines[start + 1]) <= set("|-: "), f"{where}: no header separator"
    found: set[str] = set()
    for row in lines[start + 2:]:
        if not row.startswith("|"):
            break
        names = re.findall(r"`([^`]+)`", row.split("|")[1])
        assert names, f"{where}: a row names no status: {row}"
        found.update(names)
    return frozenset(found)


def read_tables() -> list[Table]:
    tables = []
    for path in sorted(DOCS.glob("*.md")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if not line.startswith("<!-- statuses:"):
                continue
            where = f"docs/{path.name}:{i + 1}"
            m = MARK.match(line)
            assert m, f"{where}: malformed mark {line!r}"
            tables.append(Table(where, _enums(m["home"], where), _enums(m["others"], where),
                                _first_column(lines, i + 1, where)))
    return tables


TABLES = read_tables()


def _values(enums: tuple[type[StrEnum], ...]) -> set[str]:
    return {m.value for enum in enums for m in enum}


def test_every_enum_is_documented_by_one_table() -> None:
    defined = {v for v in vars(statuses).values()
               if isinstance(v, type) and issubclass(v, StrEnum) and v is not StrEnum}
    assert defined == set(DOMAINS)
    homes = [enum for t in TABLES for enum in t.home]
    assert sorted(e.__name__ for e in homes) == sorted(e.__name__ for e in DOMAINS)


@pytest.mark.parametrize("table", TABLES, ids=str)
def test_table_equals_its_enums(table: Table) -> None:
    own = _values(table.home)
    assert own - table.statuses == set(), f"{table}: statuses of the code not in the table"
    assert table.statuses - own - _values(table.others) == set(), (
        f"{table}: statuses in the table that no enum it names has")


@pytest.mark.parametrize("enum", DOMAINS, ids=lambda e: e.__name__)
def test_members_are_status_strings(enum: type[StrEnum]) -> None:
    for member in enum:
        assert STATUS.match(member.value), member
        assert member.name == member.value.upper().replace("-", "_"), member


def _error_classes() -> set[type[RecordError]]:
    for info in pkgutil.walk_packages(sandcrawler.__path__, "sandcrawler."):
        if not info.name.endswith("__main__") and ".migrations" not in info.name:
            importlib.import_module(info.name)
    found: set[type[RecordError]] = set()
    todo = [RecordError]
    while todo:
        cls = todo.pop()
        found.add(cls)
        todo += cls.__subclasses__()
    return found


def test_error_classes_carry_enum_statuses() -> None:
    for cls in _error_classes():
        assert isinstance(cls.status, DOMAINS), f"{cls.__qualname__}.status = {cls.status!r}"


def _literal_statuses(tree: ast.AST) -> list[tuple[int, str]]:
    """``status="…"`` arguments, ``status = "…"`` in class bodies, and a status
    literal as the second argument of an ``…Error`` / ``…Failure`` call."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "status":
            values = [node.value]
        elif isinstance(node, ast.ClassDef):
            values = [s.value for s in node.body if isinstance(s, ast.Assign)
                      and any(isinstance(t, ast.Name) and t.id == "status" for t in s.targets)]
        elif (isinstance(node, ast.Call) and len(node.args) >= 2
              and getattr(node.func, "id", getattr(node.func, "attr", "")).endswith(
                  ("Error", "Failure"))):
            values = [node.args[1]]
        else:
            continue
        found += [(v.lineno, v.value) for v in values
                  if isinstance(v, ast.Constant) and isinstance(v.value, str)]
    return found


def test_statuses_are_set_with_enum_members() -> None:
    literals = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        literals += [f"{path.relative_to(ROOT)}:{line}: {value!r}"
                     for line, value in _literal_statuses(tree)]
    assert literals == []


def test_status_is_every_domain() -> None:
    """``Status``, the type of results' and errors' statuses, is every domain's enum."""
    assert set(typing.get_args(statuses.Status)) == set(DOMAINS)
