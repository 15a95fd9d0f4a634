"""`sandcrawler citations parse`: one string, or lines on stdin, through either parser."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sandcrawler_testkit.grobid_server import FakeGrobid
from tests.helpers.cli import invoke, run_cli


def lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_parse_one_string() -> None:
    result = invoke(["citations", "parse",
                     "Smith JA, Doe B. A study of sleep. N Engl J Med. 2001;345(12):1234-40."])
    assert result.exit_code == 0, result.stderr
    [biblio] = lines(result.stdout)
    assert biblio["unstructured"].startswith("Smith JA")
    assert [a["surname"] for a in biblio["authors"]] == ["Smith", "Doe"]
    assert biblio["volume"] == "345" and biblio["first_page"] == "1234"


def test_parse_stdin_mixed_lines() -> None:
    stdin = "\n".join([
        "Knuth DE. The Art of Computer Programming. Addison-Wesley; 1968.",
        json.dumps("Doe J. Another title. Science. 2002;3:4-5."),
        json.dumps({"unstructured": "Roe B. Third. Cell. 2003;6:7-8.", "key": "ref3",
                    "index": 7}),
        '{"unstructured": ',
        json.dumps({"text": "no unstructured key"}),
        json.dumps(""),
        "1234 5678",
        '"Quoted title," Smith J, Nature 2001.',
    ]) + "\n"
    result = invoke(["citations", "parse", "-"], input=stdin)
    assert result.exit_code == 0, result.stderr
    out = lines(result.stdout)
    assert len(out) == 6  # two unusable lines are reported, not output
    assert out[0]["date"] == "1968"
    assert out[1]["unstructured"] == "Doe J. Another title. Science. 2002;3:4-5."
    assert (out[2]["id"], out[2]["index"]) == ("ref3", 7)
    assert out[3] == {"authors": []}  # the empty string: nothing to find, but a result
    assert out[4]["unstructured"] == "1234 5678"
    assert out[5]["unstructured"] == '"Quoted title," Smith J, Nature 2001.'  # not JSON: text
    assert "line 4: bad-json" in result.stderr
    assert "line 5: missing-unstructured" in result.stderr
    assert "success" in result.stderr and "empty" in result.stderr


def test_parse_stdin_bad_utf8() -> None:
    stdin = b"Smith J. \xff\xfe Title. 2001.\nok line\n"
    result = run_cli(["citations", "parse", "-"], input=stdin)
    assert result.returncode == 0
    assert b"line 1: bad-utf8" in result.stderr
    assert len(result.stdout.splitlines()) == 1


def test_parse_with_grobid(fake_grobid: FakeGrobid) -> None:
    text = ("Goodman, N. (1972). A world of individuals. In Problems and projects "
            "(pp. 155\u2013172). Bobs-Merrill company.")
    result = invoke(["citations", "parse", "--parser", "grobid", "--grobid-url", fake_grobid.url,
                     text])
    assert result.exit_code == 0, result.stderr
    [biblio] = lines(result.stdout)
    assert biblio["title"] == "A world of individuals"
    assert len(fake_grobid.requests) == 1


def test_parse_with_missing_model(monkeypatch: pytest.MonkeyPatch) -> None:
    result = invoke(["citations", "parse", "--model", "/nonexistent.crfmodel", "x"])
    assert result.exit_code == 2  # click checks the path exists
    monkeypatch.setenv("SANDCRAWLER_CITATION_MODEL", "/nope")
    result = invoke(["citations", "parse", "x"])
    assert result.exit_code == 1 and "cannot read citation model" in result.stderr


def test_grobid_error_fails_only_its_string(fake_grobid: FakeGrobid) -> None:
    """GROBID answers 500 for a batch holding one poisoned string: the batch is asked
    again string by string, and only that string fails."""
    good = ("Goodman, N. (1972). A world of individuals. In Problems and projects "
            "(pp. 155\u2013172). Bobs-Merrill company.")
    stdin = f"{good}\nSmith J. Broken #500. 2001.\n{good}\n"
    result = invoke(["citations", "parse", "--parser", "grobid", "--grobid-url", fake_grobid.url,
                     "-"], input=stdin)
    assert result.exit_code == 0, result.stderr
    out = lines(result.stdout)
    assert [b["title"] for b in out] == ["A world of individuals"] * 2
    assert "line 2: grobid-error" in result.stderr
    assert len(fake_grobid.requests) == 4  # the batch, then each string alone
