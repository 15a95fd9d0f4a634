"""Status enum members are their strings wherever a status goes: JSON, pydantic
models with ``status: str``, SQL parameters, pickles between processes."""

from __future__ import annotations

import json
import pickle
import sqlite3

import orjson
import pytest
from pydantic import BaseModel

from sandcrawler.records.statuses import (
    DOMAINS,
    FILESET_SUCCESS,
    FilesetStatus,
    PdfStatus,
    PipelineStatus,
)

MEMBERS = [m for enum in DOMAINS for m in enum]


class _Row(BaseModel):
    status: str


@pytest.mark.parametrize("member", MEMBERS, ids=lambda m: f"{type(m).__name__}.{m.name}")
def test_a_member_is_its_string(member: str) -> None:
    value = member.value  # type: ignore[attr-defined]
    assert member == value and str(member) == value and f"{member}" == value
    assert orjson.dumps({"status": member}) == orjson.dumps({"status": value})
    assert json.dumps({"status": member}) == json.dumps({"status": value})
    row = _Row(status=member)
    assert type(row.status) is str and row.model_dump_json() == f'{{"status":"{value}"}}'
    assert pickle.loads(pickle.dumps(member)) is member


def test_sql_parameters_store_the_string() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (status TEXT)")
    conn.execute("INSERT INTO t VALUES (?)", (PdfStatus.NOT_PDF,))
    assert conn.execute("SELECT status, typeof(status) FROM t").fetchone() == ("not-pdf", "text")


def test_equal_strings_are_one_status_across_domains() -> None:
    counts = {PdfStatus.SUCCESS: 1}
    assert counts["success"] == 1 and PipelineStatus.BAD_JSON == "bad-json"
    assert {"success", "success-file", "success-existing"} == FILESET_SUCCESS
    assert FilesetStatus.SUCCESS_FILE in FILESET_SUCCESS
