"""Spool files: under the data directory, named after their process, and
swept once their process is gone (SIGKILL leaves them; the next process
removes them), never left in the system's temporary directory."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from sandcrawler.core.spool import spool_file, sweep
from sandcrawler_testkit.hostile import HostileServer, Reply, raw_reply
from tests.helpers.cli import run_cli


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_sweep_removes_the_files_of_dead_processes_only(tmp_path: Path) -> None:
    mine = spool_file(tmp_path, ".body")
    host = mine.name.split("-")[1]
    dead = tmp_path / f"sandcrawler-{host}-{_dead_pid()}-abc.body"
    dead.write_bytes(b"left by a process killed with SIGKILL")
    other_old = tmp_path / "sandcrawler-otherhost-1-abc.body"
    other_old.write_bytes(b"x")
    os.utime(other_old, (time.time() - 7200, time.time() - 7200))
    other_new = tmp_path / "sandcrawler-otherhost-2-abc.body"
    other_new.write_bytes(b"x")
    unrelated = tmp_path / "notes.txt"
    unrelated.write_text("not a spool file")

    assert sweep(tmp_path) == 1
    assert not dead.exists() and mine.exists() and other_old.exists()
    assert sweep(tmp_path, older_than=3600) == 1
    assert not other_old.exists()
    assert mine.exists() and other_new.exists() and unrelated.exists()


def test_a_download_killed_midway_leaves_its_spool_under_the_data_dir_until_the_next_run(
        tmp_path: Path) -> None:
    data, tmp = tmp_path / "data", tmp_path / "tmp"
    tmp.mkdir()
    body = b"%PDF-1.4\n" + bytes(4 * 2**20)
    with HostileServer() as server:
        server.script("/robots.txt", Reply(raw_reply("404 Not Found")))
        server.script("/big.pdf", Reply(raw_reply("200 OK", [("Content-Type", "application/pdf")],
                                                  body), drip=0.1, piece=64 * 1024))
        server.script("/small.pdf", Reply(raw_reply(
            "200 OK", [("Content-Type", "application/pdf")], b"%PDF-1.4\n%%EOF\n")))
        env = {**os.environ, "SANDCRAWLER_DATA_DIR": str(data), "TMPDIR": str(tmp),
               "SANDCRAWLER_HTTP_ROUTES": json.dumps({"https://h.example": server.url})}
        proc = subprocess.Popen([sys.executable, "-m", "sandcrawler", "ingest", "file",
                                 "https://h.example/big.pdf"], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        spool = data / "spool"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(
                p.stat().st_size > 0 for p in spool.glob("sandcrawler-*")):
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        left = list(spool.glob("sandcrawler-*"))
        assert left, "the download was not spooled under the data dir"
        assert list(tmp.iterdir()) == []  # nothing in the system's temporary directory
        result = run_cli(["ingest", "file", "https://h.example/small.pdf"], env=env)
        assert result.returncode == 0, result.stderr.decode()
    assert not any(p.exists() for p in left)
