"""`sandcrawler parse-crossref-refs` end to end against the loopback GROBID."""

from __future__ import annotations

import json

import grobid_tei_xml
import orjson
import pytest

from sandcrawler_testkit.grobid_server import FakeGrobid
from tests.helpers.cli import invoke, run_cli
from tests.helpers.paths import FIXTURES, GROBID_TEI
from tests.refs.test_refs_selection import EXPECTED_KEYS


def rows(stdout: str | bytes) -> list[dict]:
    return [json.loads(line) for line in (stdout.splitlines() if stdout else [])]


@pytest.fixture
def grobid_env(fake_grobid: FakeGrobid, monkeypatch: pytest.MonkeyPatch) -> FakeGrobid:
    monkeypatch.setenv("SANDCRAWLER_GROBID_URL", fake_grobid.url)
    return fake_grobid


def test_real_works_exact_output(grobid_env: FakeGrobid, crossref_lines: dict[str, bytes]) -> None:
    stdin = b"\n".join(crossref_lines.values()) + b"\n"
    result = invoke(["parse-crossref-refs", "-"], input=stdin)
    assert result.exit_code == 0, result.stderr
    out = rows(result.stdout)
    assert [r["source_id"] for r in out] == list(crossref_lines)
    assert [r["source_ts"] for r in out] == ["2021-05-10T22:08:45Z", "2021-06-10T05:35:02Z"]
    assert all(r["source"] == "crossref" and set(r) == {"source", "source_id", "source_ts",
                                                         "refs_json"} for r in out)
    for row, tei_name in zip(out, GROBID_TEI, strict=True):
        keys = EXPECTED_KEYS[row["source_id"]]
        assert [ref["id"] for ref in row["refs_json"]] == keys
        # Each parsed reference is exactly what real GROBID returned for that
        # string, with the upstream key and position woven in.
        real = grobid_tei_xml.parse_citation_list_xml((FIXTURES / tei_name).read_text())
        by_raw = {" ".join(b.unstructured.split()): b.to_dict() for b in real}
        work = orjson.loads(crossref_lines[row["source_id"]])["message"]
        for ref in row["refs_json"]:
            expected = dict(by_raw[" ".join(ref["unstructured"].split())])
            expected["id"], expected["index"] = ref["id"], ref["index"]
            assert ref == expected
            assert work["reference"][ref["index"]]["key"] == ref["id"]
    assert "success 2" in result.stderr


@pytest.mark.slow  # waits out timeouts, retries or stalls
def test_output_order_with_jobs(grobid_env: FakeGrobid, crossref_lines: dict[str, bytes],
                                tmp_path) -> None:  # type: ignore[no-untyped-def]
    lines = []
    for i in range(60):
        work = orjson.loads(list(crossref_lines.values())[i % 2])
        work["message"]["DOI"] = f"10.5555/order.{i}"
        lines.append(orjson.dumps(work))
    path = tmp_path / "works.json"
    path.write_bytes(b"\n".join(lines) + b"\n")
    one = run_cli(["parse-crossref-refs", str(path), "-j", "1", "--batch-size", "7"])
    two = run_cli(["parse-crossref-refs", str(path), "-j", "2", "--batch-size", "7"])
    assert one.returncode == two.returncode == 0, two.stderr
    assert [r["source_id"] for r in rows(two.stdout)] == [f"10.5555/order.{i}" for i in range(60)]
    assert one.stdout == two.stdout


def work_line(doi: str | None = "10.5555/X", refs: object = None, **extra: object) -> bytes:
    work: dict = {"type": "journal-article", "indexed": {"date-time": "2022-01-02T03:04:05Z"}}
    if doi is not None:
        work["DOI"] = doi
    if refs is not None:
        work["reference"] = refs
    work.update(extra)
    return orjson.dumps(work)


def test_bad_input_per_record(grobid_env: FakeGrobid) -> None:
    lines = [
        work_line("10.5555/GOOD.1", [{"key": "r1", "unstructured": "Smith J. A title. 2001."}]),
        b"{not json",
        b"[1, 2, 3]",
        work_line(None),
        work_line(""),
        work_line("10.5555/badrefs", {"key": "r1"}),
        b'{"DOI": "10.5555/\xff\xfe", "type": "x"}',
        work_line("10.5555/nokeys", [{"unstructured": "Jones K. Untitled work. 1999."},
                                     {"unstructured": "Brown L. Other work. 2000."}]),
        work_line("10.5555/g500", [{"key": "a", "unstructured": "Failing ref #500 here."}]),
        work_line("10.5555/garbage", [{"key": "a", "unstructured": "Garbage XML #garbage x."}]),
        work_line("10.5555/drop", [{"key": "a", "unstructured": "Dropped ref #drop one."},
                                   {"key": "b", "unstructured": "Second ref of drop."}]),
        work_line("10.5555/empty", []),
        work_line("10.5555/GOOD.2"),
    ]
    result = invoke(["parse-crossref-refs", "-"], input=b"\n".join(lines) + b"\n")
    assert result.exit_code == 0
    assert [r["source_id"] for r in rows(result.stdout)] == [
        "10.5555/good.1", "10.5555/nokeys", "10.5555/empty", "10.5555/good.2"]
    out = {r["source_id"]: r for r in rows(result.stdout)}
    assert [ref["id"] for ref in out["10.5555/nokeys"]["refs_json"]] == ["0", "1"]
    assert out["10.5555/empty"]["refs_json"] == [] and out["10.5555/good.2"]["refs_json"] == []
    err = result.stderr
    for expected in [
        "line 2: bad-json:", "line 3: not-crossref-work:", "line 4: missing-doi:",
        "line 5: missing-doi:", "line 6: bad-references:", "line 7: bad-utf8:",
        "line 9: grobid-error: GROBID /api/processCitationList answered HTTP 500",
        "line 10: grobid-bad-xml:", "line 11: ref-count-mismatch: GROBID returned 1 references"
        " for 2 submitted",
    ]:
        assert expected in err, err
    assert "Traceback" not in err
    assert "13 records" in err and "success 2" in err and "empty 2" in err


def test_ten_thousand_references(grobid_env: FakeGrobid, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDCRAWLER_GROBID_MAX_CITATIONS", "1000")
    refs = [{"key": f"k{i}", "unstructured": f"Author{i} X. Title of work {i}. 2001."}
            for i in range(10_000)]
    result = invoke(["parse-crossref-refs", "-"], input=work_line("10.5555/huge", refs))
    assert result.exit_code == 0, result.stderr
    (row,) = rows(result.stdout)
    assert [r["id"] for r in row["refs_json"]] == [f"k{i}" for i in range(10_000)]
    assert all(r["unstructured"] == refs[r["index"]]["unstructured"] for r in row["refs_json"])
    assert len(grobid_env.requests) == 10


def test_fail_fast(grobid_env: FakeGrobid) -> None:
    lines = [work_line("10.5555/a"), b"nope", work_line("10.5555/b")]
    result = invoke(["parse-crossref-refs", "-", "--fail-fast", "--batch-size", "1"],
                    input=b"\n".join(lines))
    assert result.exit_code == 1
    assert [r["source_id"] for r in rows(result.stdout)] == ["10.5555/a"]


def test_grobid_unreachable_is_one_line() -> None:
    result = run_cli(["parse-crossref-refs", "-"], input=work_line(),
                     env={"SANDCRAWLER_GROBID_URL": "http://127.0.0.1:9"})
    assert result.returncode == 3
    assert result.stderr.decode().strip().splitlines() == [
        "Error: GROBID at http://127.0.0.1:9 is not reachable (isalive)"]


@pytest.mark.slow  # waits out timeouts, retries or stalls
def test_grobid_dies_mid_run(fake_grobid: FakeGrobid) -> None:
    """The server answers isalive, then every request is 503: infrastructure, exit 3."""
    fake_grobid.busy = 10_000
    result = run_cli(
        ["parse-crossref-refs", "-"],
        input=work_line("10.5555/a", [{"key": "a", "unstructured": "Smith J. Title. 2001."}]),
        env={"SANDCRAWLER_GROBID_URL": fake_grobid.url, "SANDCRAWLER_GROBID_RETRIES": "1"},
    )
    assert result.returncode == 3
    assert b"Error: GROBID at" in result.stderr and b"503" in result.stderr
    assert b"Traceback" not in result.stderr


def test_embedded_parser_by_default(crossref_lines: dict[str, bytes]) -> None:
    """Nothing configured: the CRF parser; the same keys, in the same order, as GROBID."""
    stdin = b"\n".join(crossref_lines.values()) + b"\n"
    result = invoke(["parse-crossref-refs", "-"], input=stdin)
    assert result.exit_code == 0, result.stderr
    out = rows(result.stdout)
    assert [r["source_id"] for r in out] == list(crossref_lines)
    for row in out:
        refs = row["refs_json"]
        assert [ref["id"] for ref in refs] == EXPECTED_KEYS[row["source_id"]]
        assert all(ref["unstructured"] for ref in refs)
    # compared with what real GROBID answered for the same strings, field by field
    fields = ("date", "volume", "first_page", "last_page")
    agree = total = 0
    for row, tei_name in zip(out, GROBID_TEI, strict=True):
        real = grobid_tei_xml.parse_citation_list_xml((FIXTURES / tei_name).read_text())
        for ours, theirs in zip(row["refs_json"], real, strict=True):
            pairs = [(ours.get(f), getattr(theirs, f)) for f in fields]
            pairs.append(([a["surname"] for a in ours["authors"]],
                          [a.surname for a in theirs.authors]))
            agree += sum(a == b for a, b in pairs)
            total += len(pairs)
    assert agree >= 0.9 * total, f"{agree}/{total} fields agree with GROBID"


def test_parser_choice(grobid_env: FakeGrobid, crossref_lines: dict[str, bytes]) -> None:
    """With GROBID configured, --parser crf still parses in-process: GROBID sees nothing."""
    line = crossref_lines["10.1017/s1047951103000064"] + b"\n"
    result = invoke(["parse-crossref-refs", "--parser", "crf", "-"], input=line)
    assert result.exit_code == 0, result.stderr
    assert len(rows(result.stdout)[0]["refs_json"]) == 24
    assert grobid_env.requests == []


def test_grobid_parser_needs_a_url() -> None:
    result = invoke(["parse-crossref-refs", "--parser", "grobid", "-"], input=work_line())
    assert result.exit_code == 1
    assert "GROBID" in result.stderr and "Traceback" not in result.stderr



@pytest.mark.parametrize("batch", [[], ["--batch-size", "10"]])
def test_fail_fast_writes_nothing_after_the_failed_record(grobid_env: FakeGrobid,
                                                          batch: list[str]) -> None:
    """Issue 14 C4: --fail-fast finished the batch, writing the records after the
    failed one."""
    lines = [work_line("10.5555/a"), b"nope", work_line("10.5555/b"), work_line("10.5555/c")]
    result = invoke(["parse-crossref-refs", "-", "--fail-fast", *batch], input=b"\n".join(lines))
    assert result.exit_code == 1
    assert [r["source_id"] for r in rows(result.stdout)] == ["10.5555/a"]
