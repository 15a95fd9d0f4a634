"""Input that is not what a command reads, and where the command reads from
(issue 23, item 4): real processes, their stderr and exit status."""

from __future__ import annotations

import os
import pty
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sandcrawler.cli.exits import EXIT_FAILED
from sandcrawler.pipeline.opening import OPENING, guess
from tests.helpers.cli import run_cli
from tests.helpers.paths import REPO

ROOT = REPO
PDF = ROOT / "examples" / "paper.pdf"
WORKS = ROOT / "examples" / "crossref-works.jsonl"


def test_a_pdf_given_to_persist_crossref_is_one_line() -> None:
    result = run_cli(["persist", "crossref", str(PDF)])
    assert result.returncode == EXIT_FAILED
    lines = result.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"Error: {PDF}: the first {OPENING} lines are unreadable (")
    assert "this command reads Crossref works" in lines[0]
    assert lines[0].endswith("is it a PDF?")
    assert result.stdout == b""


def test_gzip_on_stdin_is_named_too() -> None:
    import gzip

    data = gzip.compress(os.urandom(20_000))  # incompressible: many "lines"
    result = run_cli(["persist", "crossref", "-j", "2", "-"], input=data)
    assert result.returncode == EXIT_FAILED
    [line] = result.stderr.decode().splitlines()
    assert line.startswith("Error: stdin: the first 5 lines are unreadable")
    assert "gzip-compressed" in line


def test_a_bad_line_in_a_good_file_keeps_its_status(tmp_path: Path) -> None:
    good = WORKS.read_bytes().splitlines()[0]
    path = tmp_path / "works.jsonl"
    path.write_bytes(b"\n".join([good] + [b"{not json"] * 7) + b"\n")
    result = run_cli(["persist", "crossref", str(path)])
    assert result.returncode == 0
    err = result.stderr.decode().splitlines()
    assert next(x for x in err if ": bad-json: " in x).startswith("line 2: bad-json")
    assert len([x for x in err if ": bad-json: " in x]) == 7
    assert "success 1" in err[-1]


def test_fewer_bad_lines_than_judged_are_reported_each(tmp_path: Path) -> None:
    path = tmp_path / "short.jsonl"
    path.write_bytes(b"{bad\n{bad\n")
    result = run_cli(["persist", "crossref", str(path)])
    assert result.returncode == 0
    err = result.stderr.decode().splitlines()
    assert [x.split(":")[0] for x in err[:2]] == ["line 1", "line 2"]
    assert "bad-json 2" in err[-1]


@pytest.mark.parametrize(("first", "what"), [
    (b"%PDF-1.7", "a PDF"), (b"\x1f\x8b\x08\x00", "gzip-compressed"),
    (b"PK\x03\x04rest", "a zip file"), (b"WARC/1.1", "a WARC file"),
    (b"  <!DOCTYPE html>", "HTML"), (b"<?xml version='1.0'?>", "XML"), (b"abc", None),
])
def test_guess(first: bytes, what: str | None) -> None:
    found = guess(first)
    assert (found is None and what is None) or (found or "").startswith(what or "")


def test_citations_parse_on_a_terminal_says_it_reads_stdin() -> None:
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "sandcrawler", "citations", "parse"],
                            stdin=follower, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.close(follower)
    try:
        os.write(leader, b"Smith J. A title. Nature. 2001;1:2-3.\n\x04")
        out, err = proc.communicate(timeout=60)
    finally:
        os.close(leader)
    assert proc.returncode == 0, err.decode()
    assert err.decode().splitlines()[0] == (
        "reading reference strings from stdin, one per line (Ctrl-D to end)")
    assert b'"journal":"Nature"' in out


def test_citations_parse_from_a_pipe_says_nothing_of_stdin() -> None:
    result = run_cli(["citations", "parse", "-s"],
                     input=b"Smith J. A title. Nature. 2001;1:2-3.\n")
    assert result.returncode == 0
    assert b"stdin" not in result.stderr
    assert b'"journal":"Nature"' in result.stdout


def test_serve_on_a_busy_port_is_one_line() -> None:
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        result = run_cli(["serve", "--port", str(port)], timeout=60)
    assert result.returncode == EXIT_FAILED
    assert result.stderr.decode().splitlines() == [
        f"Error: cannot listen on 127.0.0.1:{port}: Address already in use: another "
        "program listens there; choose another with --port"]


def test_serve_port_zero_says_the_port_it_got() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "sandcrawler", "serve", "--port", "0"],
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline().decode()
        port = int(line.split("http://127.0.0.1:")[1].split("/")[0])
        assert port > 0
        deadline = time.monotonic() + 30
        while True:  # the socket is ours from the start: it accepts
            try:
                socket.create_connection(("127.0.0.1", port), timeout=5).close()
                break
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture
def stored(tmp_path: Path) -> dict[str, str]:
    env = {"SANDCRAWLER_DATA_DIR": str(tmp_path / "data")}
    added = run_cli(["store", "add", str(PDF), "--metadata",
                     str(ROOT / "examples" / "paper.metadata.json")], env=env)
    assert added.returncode == 0, added.stderr.decode()
    return env


@pytest.mark.slow  # seconds: real processes, killed or side by side
def test_store_cat_takes_a_document_and_a_resource_name(
        stored: dict[str, str], tmp_path: Path) -> None:
    primary = run_cli(["store", "cat", "doi:10.5555/sandcrawler.example"], env=stored)
    assert primary.returncode == 0 and primary.stdout == PDF.read_bytes()
    metadata = run_cli(["store", "cat", "doi:10.5555/sandcrawler.example", "metadata"],
                       env=stored)
    assert b'"DOI"' in metadata.stdout or b'"doi"' in metadata.stdout  # decompressed JSON
    raw = run_cli(["store", "cat", "--raw", "doi:10.5555/sandcrawler.example", "metadata"],
                  env=stored)
    assert raw.stdout[:2] == b"\x1f\x8b"  # as stored
    out = tmp_path / "copy.pdf"
    run_cli(["store", "cat", "doi:10.5555/sandcrawler.example", "pdf", "-o", str(out)],
            env=stored)
    assert out.read_bytes() == PDF.read_bytes()
    missing = run_cli(["store", "cat", "doi:10.5555/sandcrawler.example", "text"], env=stored)
    assert missing.returncode == 1 and b"has no text" in missing.stderr
    assert missing.stderr.count(b"\n") == 1
    unknown = run_cli(["store", "cat", "doi:10.9999/nothing"], env=stored)
    assert unknown.returncode == 1 and unknown.stderr.count(b"\n") == 1


def test_store_cat_writes_no_binary_to_a_terminal(stored: dict[str, str]) -> None:
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "sandcrawler", "store", "cat",
                             "doi:10.5555/sandcrawler.example"],
                            stdout=follower, stderr=subprocess.PIPE,
                            env={**os.environ, **stored})
    os.close(follower)
    try:
        _, err = proc.communicate(timeout=60)
        os.set_blocking(leader, False)
        try:
            written = os.read(leader, 65536)
        except OSError:  # nothing was written to the terminal
            written = b""
    finally:
        os.close(leader)
    assert proc.returncode == 1
    assert b"%PDF" not in written
    assert b"is binary: not written to a terminal" in err and err.count(b"\n") == 1
