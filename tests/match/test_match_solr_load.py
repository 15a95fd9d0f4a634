"""`sandcrawler match index --engine` on the real SolrCloud cluster (2 nodes, the
index on 2 shards of 2 replicas: the test kit's ``solr`` fixture), run as a real
process: from the crossref table and from Crossref dumps (JSON lines, gzip, the
public data file's directory, API answers, bad lines), with progress; loaded
twice, killed part-way and run again, rebuilt behind its alias.

What the index holds is read over Solr's own HTTP API (``SolrMatch``), not
through the client under test.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from sqlalchemy import Engine

from sandcrawler.config import MatchSettings
from sandcrawler.match.dump import load_dump
from sandcrawler.match.solr import open_writer
from sandcrawler.match.solr.index import META_ID
from sandcrawler_testkit.solr_cluster import SolrCluster
from tests.helpers.cli import run_cli
from tests.helpers.solr import whole
from tests.helpers.waiting import wait_until
from tests.match.test_match_index import persist, synthetic
from tests.match.test_match_refs import as_ref, catalog

Work = dict[str, Any]


@dataclass
class SolrMatch:
    """The match settings of one test (its own alias on the shared cluster) and
    what Solr says the alias holds."""

    cluster: SolrCluster
    alias: str

    @property
    def env(self) -> dict[str, str]:
        return {"SANDCRAWLER_MATCH_ENGINE": "solr",
                "SANDCRAWLER_MATCH_ENGINE_URLS": json.dumps(self.cluster.urls),
                "SANDCRAWLER_MATCH_ENGINE_COLLECTION": self.alias}

    def settings(self) -> MatchSettings:
        return MatchSettings(engine="solr", engine_urls=self.cluster.urls,
                             engine_collection=self.alias)

    def get(self, path: str, **params: str | int) -> Any:
        query = urllib.parse.urlencode({**params, "wt": "json"})
        for url in self.cluster.urls:  # the first node that answers
            try:
                with urllib.request.urlopen(f"{url}{path}?{query}", timeout=60) as answer:
                    return json.loads(answer.read())
            except OSError as e:
                error = e
        raise error

    def commit(self, collection: str | None = None) -> None:
        self.get(f"/{collection or self.alias}/update", commit="true")

    def dois(self, collection: str | None = None) -> list[str]:
        """Every work's id (its DOI) in the alias, or ``collection``, committed
        first: one entry per document, so a work loaded twice shows twice."""
        self.commit(collection)
        answer = self.get(f"/{collection or self.alias}/select", q="kind:work", fl="id",
                          rows=1_000_000, sort="id asc")
        docs = answer["response"]["docs"]
        assert answer["response"]["numFound"] == len(docs)
        return [d["id"] for d in docs]

    def marks(self) -> dict[str, str]:
        """The loader's marks, read in real time (from the update log: no commit),
        from the alias's collection or, during a first load, the one being loaded."""
        target = self.aliases().get(self.alias) or max(self.collections(), default=None)
        if target is None:
            return {}
        doc = self.get(f"/{target}/get", id=META_ID, fl="marks").get("doc")
        return json.loads(doc["marks"]) if doc else {}

    def segments(self, collection: str) -> dict[str, int]:
        """The index segments of each core of ``collection``, on every node."""
        counts = {}
        for url in self.cluster.urls:
            with urllib.request.urlopen(f"{url}/admin/cores?action=STATUS&wt=json",
                                        timeout=60) as answer:
                for core, status in json.loads(answer.read())["status"].items():
                    if core.startswith(collection + "_"):
                        counts[core] = int(status["index"]["segmentCount"])
        return counts

    def aliases(self) -> dict[str, str]:
        return {str(k): str(v)
                for k, v in self.get("/admin/collections", action="LISTALIASES")
                ["aliases"].items()}

    def collections(self) -> list[str]:
        return [c for c in self.get("/admin/collections", action="LIST")["collections"]
                if c.startswith(self.alias + "-")]


@contextlib.contextmanager
def alias_of_its_own(cluster: SolrCluster, request: pytest.FixtureRequest,
                     monkeypatch: pytest.MonkeyPatch) -> Iterator[SolrMatch]:
    """match.engine = solr in the environment, on an alias of this test's own on
    ``cluster``; its collections deleted afterwards, the cluster whole again first
    if the test took it down (tests/helpers/solr.py ``whole``)."""
    name = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower()).strip("-")[:40]
    sm = SolrMatch(cluster, f"t-{name}-{uuid.uuid4().hex[:6]}")
    for key, value in sm.env.items():
        monkeypatch.setenv(key, value)
    yield sm
    # the cluster's disk and heap back
    whole(cluster)
    if sm.alias in sm.aliases():  # Solr deletes no collection an alias points at
        sm.get("/admin/collections", action="DELETEALIAS", name=sm.alias)
    for collection in sm.collections():
        sm.get("/admin/collections", action="DELETE", name=collection)


@pytest.fixture
def solr_match(solr: SolrCluster, request: pytest.FixtureRequest,
               monkeypatch: pytest.MonkeyPatch) -> Iterator[SolrMatch]:
    """match.engine = solr in the environment, on an alias of this test's own on the
    session's shared cluster (the fault tests have one on their own cluster)."""
    with alias_of_its_own(solr, request, monkeypatch) as sm:
        yield sm


def match_index(*args: str, timeout: float = 300) -> str:
    """``match index --engine`` as a real process; its stderr."""
    result = run_cli(["match", "index", "--engine", *args], timeout=timeout)
    assert result.returncode == 0, result.stderr.decode()
    return result.stderr.decode()


def works_read(stderr: str) -> int:
    # the command's last line: "match index: 1,234 works read (…/s), …"
    found = re.search(r"^match index: ([\d,]+) works read", stderr, re.MULTILINE)
    assert found, stderr
    return int(found[1].replace(",", ""))


def in_the_index(stderr: str) -> int:
    # "match index: 1,234 works read (…/s), 1,234 in the index, …"
    return int(re.search(r"([\d,]+) in the index", stderr)[1].replace(",", ""))  # type: ignore[index]


def jsonl(works: Sequence[object]) -> bytes:
    return b"".join(orjson.dumps(w) + b"\n" for w in works)


def made_up(n: int, seed: int = 28) -> list[Work]:
    """``n`` made-up works with distinct DOIs (10.5555/syn.<i>)."""
    return [row["record"] for row in synthetic(n, seed)]


# --- from the crossref table ----------------------------------------------------------------


def test_load_from_the_crossref_table_then_match(engine: Engine, solr_match: SolrMatch) -> None:
    works = catalog(60)
    persist(works)
    first = match_index()
    assert works_read(first) == 60 and in_the_index(first) == 60, first
    assert f"solr {solr_match.alias}" in first
    expected = sorted(w["DOI"].lower() for w in works)
    assert solr_match.dois() == expected

    # again: nothing new is written (the overlap may be read again), same documents
    again = match_index()
    assert in_the_index(again) == 60
    assert solr_match.dois() == expected

    # what was loaded is what matching reads
    query = as_ref(works[7], "q", 0)
    result = run_cli(["match", "biblio", "-"], input=orjson.dumps(query) + b"\n")
    assert result.returncode == 0, result.stderr.decode()
    [out] = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert (out["status"], out["doi"]) == ("exact", works[7]["DOI"].lower())


# --- from a dump ------------------------------------------------------------------------------

BAD_LINES = [b"this is not JSON", b'{"title": ["a work without a DOI"]}', b'["a list"]',
             b'{"DOI": "not a doi"}']


def _write(path: Path, data: bytes, gz: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def dump_of(kind: str, works: list[Work], tmp_path: Path) -> Path:
    """``works`` as a dump of ``kind``, bad entries mixed in (``BAD_LINES``) where
    the format has lines."""
    half = len(works) // 2
    lines = jsonl(works[:half]) + b"\n".join(BAD_LINES) + b"\n\n" + jsonl(works[half:])
    if kind == "jsonl":
        return _write(tmp_path / "works.jsonl", lines)
    if kind == "gzip":
        return _write(tmp_path / "works.jsonl.gz", lines, gz=True)
    if kind == "api":  # each line an API answer of /works/{doi}
        answers = jsonl([{"status": "ok", "message-type": "work", "message": w}
                         for w in works[:half]])
        return _write(tmp_path / "answers.jsonl", answers + lines[lines.index(b"this"):])
    assert kind == "public-data-file"
    # Crossref's public data file: many *.json.gz, each one JSON object of items
    root = tmp_path / "crossref-public-data"
    for i in range(0, len(works), 7):
        items: list[object] = list(works[i:i + 7])
        if i == 14:
            items.insert(3, {"title": ["an item without a DOI"]})
        _write(root / f"{i // 7}.json.gz", orjson.dumps({"items": items}), gz=True)
    _write(root / "README.txt", b"not a dump file: passed over\n")
    return root


@pytest.mark.parametrize(("kind", "bad"), [("jsonl", 4), ("gzip", 4), ("api", 4),
                                           ("public-data-file", 1)])
def test_load_a_dump(kind: str, bad: int, solr_match: SolrMatch, tmp_path: Path) -> None:
    works = made_up(40)
    dump = dump_of(kind, works, tmp_path)
    stderr = match_index("--dump", str(dump))
    # every entry is read; the bad ones are counted, said once and passed over
    assert works_read(stderr) == 40 + bad, stderr
    assert in_the_index(stderr) == 40, stderr
    assert re.search(rf"\b{bad} entries of .* were not works with a DOI; passed over", stderr)
    assert solr_match.dois() == sorted(w["DOI"] for w in works)

    # loading twice: the second run reads nothing, the index is the same
    again = match_index("--dump", str(dump))
    assert works_read(again) == 0 and in_the_index(again) == 40, again
    assert solr_match.dois() == sorted(w["DOI"] for w in works)


def test_progress_on_stderr(solr_match: SolrMatch, tmp_path: Path) -> None:
    dump = _write(tmp_path / "works.jsonl", jsonl(made_up(25)))
    stderr = match_index("--dump", str(dump), "--progress")
    assert re.search(r"match index: 25 works \[", stderr), stderr
    assert "match index: committing" in stderr
    quiet = match_index("--dump", str(dump), "--no-progress")
    assert "works [" not in quiet and "committing" not in quiet


def test_a_load_killed_part_way_resumes(solr_match: SolrMatch, tmp_path: Path) -> None:
    """SIGKILL once the first batches are in (a mark is written in the same update
    as its works); the next run starts each file after its mark: every work in,
    none twice, and the works before the mark not read again."""
    n, files = 60_000, 4
    works = made_up(n)
    root = tmp_path / "dump"
    per = n // files
    for i in range(files):
        _write(root / f"part-{i}.jsonl.gz", jsonl(works[i * per:(i + 1) * per]), gz=True)
    proc = subprocess.Popen([sys.executable, "-m", "sandcrawler", "match", "index", "--engine",
                             "--dump", str(root)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 180
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                if solr_match.marks():
                    break
            except urllib.error.HTTPError as e:
                # the collection is being made: not there yet, or no replica up yet
                assert e.code in (404, 503, 510), e
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL, f"the load ended before the kill: {err.decode()}"
    # an update the loader had sent whole before the kill is still applied by
    # Solr: the marks the next run starts from are those once no update runs
    wait_until(lambda: solr_match.cluster.updates_running() == 0, 120,
               "the updates sent before the kill applied")
    at_kill = solr_match.marks()
    done = sum(per if int(v) < 0 else int(v) for v in at_kill.values())
    assert 0 < done < n, at_kill

    stderr = match_index("--dump", str(root))
    assert works_read(stderr) == n - done, (stderr, at_kill)
    assert in_the_index(stderr) == n
    dois = solr_match.dois()
    assert len(dois) == n and dois == sorted(w["DOI"] for w in works)
    assert set(solr_match.marks().values()) == {"-1"}


# --- a rebuild behind the alias -----------------------------------------------------------------


def test_rebuild_moves_the_alias_and_deletes_the_old_collection(
        solr_match: SolrMatch, tmp_path: Path) -> None:
    old_works, new_works = made_up(30, seed=1), made_up(45, seed=2)[30:]
    old_dump = _write(tmp_path / "old.jsonl", jsonl(old_works))
    new_dumps = [_write(tmp_path / "new-a.jsonl", jsonl(new_works[:7])),
                 _write(tmp_path / "new-b.jsonl", jsonl(new_works[7:]))]
    match_index("--dump", str(old_dump))
    [old] = solr_match.collections()
    assert solr_match.aliases()[solr_match.alias] == old

    # the rebuild loaded but not finished: readers of the alias see the old index only
    writer, finish = open_writer(solr_match.settings(), rebuild=True)
    try:
        for i, dump in enumerate(new_dumps):  # committed one by one: two segments
            load_dump(writer, dump, rebuild=i == 0)
            writer.optimize()
        new = writer.collection
        assert set(solr_match.segments(new).values()) == {2}
        assert new != old and sorted(solr_match.collections()) == sorted([old, new])
        assert solr_match.aliases()[solr_match.alias] == old
        assert solr_match.dois() == sorted(w["DOI"] for w in old_works)
        assert solr_match.dois(new) == sorted(w["DOI"] for w in new_works)
        finish()
    finally:
        writer.close()
    # merged before the copies were added: one segment in every copy of each shard
    segments = solr_match.segments(new)
    assert len(segments) == 4 and set(segments.values()) == {1}, segments
    assert solr_match.aliases()[solr_match.alias] == new
    assert solr_match.collections() == [new]
    assert solr_match.dois() == sorted(w["DOI"] for w in new_works)

    # and through the command: a third collection, the alias moved, the second deleted
    stderr = match_index("--dump", str(old_dump), "--rebuild")
    assert works_read(stderr) == 30 and in_the_index(stderr) == 30, stderr
    [third] = solr_match.collections()
    assert third not in (old, new) and solr_match.aliases()[solr_match.alias] == third
    assert solr_match.dois() == sorted(w["DOI"] for w in old_works)
