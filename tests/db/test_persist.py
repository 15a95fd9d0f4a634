"""`sandcrawler persist ...` into SQLite and PostgreSQL."""

from __future__ import annotations

import json

import orjson
import pytest
from sqlalchemy import func, select, text

from sandcrawler.core.jsontext import RawJSON
from sandcrawler.core.timestamps import iso_utc
from sandcrawler.core.work import Outcome, Rows
from sandcrawler.db.schema import crossref, grobid_refs
from sandcrawler.pipeline.db_sink import DatabaseSink
from sandcrawler.records.refs import CrossrefRow
from sandcrawler.records.statuses import RefsStatus
from sandcrawler_testkit.grobid_server import FakeGrobid
from tests.helpers.cli import invoke
from tests.refs.test_parse_crossref_refs import rows, work_line
from tests.refs.test_refs_selection import EXPECTED_KEYS

# SQL: on SQLite and PostgreSQL
pytestmark = pytest.mark.both_backends


def count(engine, table) -> int:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(table)).scalar_one()


def test_persist_crossref_with_parse_refs(engine, fake_grobid: FakeGrobid,  # type: ignore[no-untyped-def]
                                          crossref_lines: dict[str, bytes],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDCRAWLER_GROBID_URL", fake_grobid.url)
    stdin = b"\n".join(crossref_lines.values())
    for _ in range(2):  # the second run must change nothing
        result = invoke(["persist", "crossref", "--parse-refs", "-"], input=stdin)
        assert result.exit_code == 0, result.stderr
        assert "success 2" in result.stderr
    assert count(engine, crossref) == 2 and count(engine, grobid_refs) == 2
    with engine.connect() as conn:
        got = dict(conn.execute(select(grobid_refs.c.source_id, grobid_refs.c.refs_json)).all())
        records = dict(conn.execute(select(crossref.c.doi, crossref.c.record)).all())
        view = conn.execute(
            text("SELECT doi, refs_json FROM crossref_with_refs ORDER BY doi")
        ).all()
    assert {doi: [r["id"] for r in refs] for doi, refs in got.items()} == EXPECTED_KEYS
    # the stored record is the bare work, not the API envelope
    for doi, line in crossref_lines.items():
        assert records[doi] == orjson.loads(line)["message"]
    assert [d for d, refs in view if refs] == sorted(EXPECTED_KEYS)


def test_parse_then_persist_grobid_refs(engine, fake_grobid: FakeGrobid,  # type: ignore[no-untyped-def]
                                        crossref_lines: dict[str, bytes],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDCRAWLER_GROBID_URL", fake_grobid.url)
    parsed = invoke(["parse-crossref-refs", "-"], input=b"\n".join(crossref_lines.values()))
    assert parsed.exit_code == 0
    for _ in range(2):
        result = invoke(["persist", "grobid-refs", "-"], input=parsed.stdout)
        assert result.exit_code == 0, result.stderr
    with engine.connect() as conn:
        got = {r.source_id: r for r in conn.execute(select(grobid_refs)).all()}
    assert set(got) == set(EXPECTED_KEYS)
    for row in rows(parsed.stdout):
        assert got[row["source_id"]].refs_json == row["refs_json"]
        assert iso_utc(got[row["source_id"]].source_ts) == row["source_ts"]


def test_persist_bad_rows(engine) -> None:  # type: ignore[no-untyped-def]
    good = {"source": "crossref", "source_id": "10.1/GOOD", "source_ts": None, "refs_json": []}
    lines = [
        orjson.dumps(good),
        b"garbage",
        orjson.dumps({**good, "source_id": ""}),
        orjson.dumps({**good, "refs_json": "not a list"}),
        orjson.dumps({**good, "source_ts": "yesterday"}),
        orjson.dumps({**good, "extra": 1}),
        orjson.dumps({**good, "source": "other", "source_id": "MixedCase"}),
    ]
    result = invoke(["persist", "grobid-refs", "-"], input=b"\n".join(lines))
    assert result.exit_code == 0
    for n, status in [(2, "bad-json"), (3, "bad-row"), (4, "bad-row"), (5, "bad-row"),
                      (6, "bad-row")]:
        assert f"line {n}: {status}:" in result.stderr
    with engine.connect() as conn:
        ids = sorted(conn.execute(select(grobid_refs.c.source_id)).scalars())
    assert ids == ["10.1/good", "MixedCase"]  # DOIs lower-cased, other ids kept as they are


def test_persist_crossref_bad_records(engine) -> None:  # type: ignore[no-untyped-def]
    lines = [
        work_line("10.5555/OK"),
        orjson.dumps({"DOI": "10.5555/noindexed", "type": "x"}),
        b"\xff\xfe",
        work_line(None),
    ]
    result = invoke(["persist", "crossref", "-"], input=b"\n".join(lines))
    assert result.exit_code == 0
    assert "line 2: missing-indexed:" in result.stderr
    assert "line 3: bad-utf8:" in result.stderr
    assert "line 4: missing-doi:" in result.stderr
    with engine.connect() as conn:
        assert conn.execute(select(crossref.c.doi)).scalars().all() == ["10.5555/ok"]


def test_a_nul_is_stored_replaced(engine) -> None:  # type: ignore[no-untyped-def]
    """Issue 22: PostgreSQL refuses a NUL in JSON text (``\\u0000`` in jsonb), which
    made the record db-rejected there while SQLite kept it; both now store it as
    U+FFFD (db/types.py), and the rest of the batch with it."""
    lines = [work_line(f"10.5555/r{i}") for i in range(5)]
    bad = orjson.loads(work_line("10.5555/nul"))
    bad["title"] = ["nul \u0000 inside"]
    lines.insert(2, orjson.dumps(bad))
    result = invoke(["persist", "crossref", "-"], input=b"\n".join(lines))
    assert result.exit_code == 0
    assert "db-rejected" not in result.stderr and "success 6" in result.stderr
    with engine.connect() as conn:
        records = dict(conn.execute(select(crossref.c.doi, crossref.c.record)).all())
    assert set(records) == {"10.5555/nul", *(f"10.5555/r{i}" for i in range(5))}
    assert records["10.5555/nul"]["title"] == ["nul \ufffd inside"]


def test_database_rejection_isolated_to_record(engine) -> None:  # type: ignore[no-untyped-def]
    """A row the database refuses for its data (here its CHECK that a DOI is lower
    case, which the worker sees to and the sink does not) fails that record alone:
    the batch is retried row by row and the rest of it is written."""
    def outcome(i: int, doi: str) -> Outcome:
        row = CrossrefRow(doi=doi, indexed="2022-01-02T03:04:05Z",
                          record=RawJSON(orjson.dumps({"DOI": doi}).decode()))
        return Outcome(where=f"line {i + 1}", status=RefsStatus.SUCCESS, output=Rows((row,)))

    dois = ["10.5555/r0", "10.5555/r1", "10.5555/UPPER", "10.5555/r3"]
    rejected = DatabaseSink(engine).write([outcome(i, d) for i, d in enumerate(dois)])
    assert [(i, status) for i, status, _ in rejected] == [(2, "db-rejected")]
    assert "crossref_doi_check" in rejected[0][2]
    with engine.connect() as conn:
        stored = set(conn.execute(select(crossref.c.doi)).scalars())
    assert stored == {"10.5555/r0", "10.5555/r1", "10.5555/r3"}


def test_postgres_not_initialised(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDCRAWLER_DATABASE_URL", pg_url)
    result = invoke(["persist", "crossref", "-"], input=work_line())
    assert result.exit_code == 1
    assert "not initialised: run `sandcrawler db init`" in result.stderr


def test_database_down(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDCRAWLER_DATABASE_URL", "postgresql://nobody@127.0.0.1:9/none")
    result = invoke(["persist", "crossref", "-"], input=work_line())
    assert result.exit_code == 3
    assert result.stderr.startswith("Error: database postgresql+psycopg://nobody@127.0.0.1:9/none"
                                    " unavailable")


def _deep(levels: int) -> dict:
    root: dict = {}
    node = root
    for _ in range(levels):
        node["a"] = {}
        node = node["a"]
    return root


@pytest.mark.parametrize(("work", "status", "message"), [
    ({"DOI": "10.5555/ts", "indexed": {"timestamp": 10**20}}, "bad-indexed", "out of range"),
    ({"DOI": "10.5555/", "indexed": {"timestamp": 0}}, "bad-doi", "not a DOI"),
    ({"DOI": "10.5555/a\x01b", "indexed": {"timestamp": 0}}, "bad-doi", "control characters"),
    ({"DOI": "10.5555/" + "x" * 5000, "indexed": {"timestamp": 0}}, "bad-doi", "5,008 characters"),
    ({"status": "ok", "message": {"DOI": "10.5555/deep", "indexed": {"timestamp": 0},
                                  "deep": _deep(300)}}, "bad-work",
     "cannot be stored as JSON"),
])
def test_persist_crossref_statuses_not_internal_errors(engine, work: dict, status: str,  # type: ignore[no-untyped-def]
                                                        message: str) -> None:
    """Issue 14 B4: each of these was internal-error (or accepted) before."""
    line = json.dumps(work).encode()  # the standard library writes what orjson will not
    result = invoke(["persist", "crossref", "-"], input=line)
    assert result.exit_code == 0
    assert f"line 1: {status}:" in result.stderr and message in result.stderr
    assert "internal-error" not in result.stderr
