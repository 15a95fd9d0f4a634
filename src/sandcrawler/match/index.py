"""Candidate retrieval: the interface, and the embedded index (SQLite FTS5).

``CandidateIndex`` is all the matcher asks of an index (records by identifier,
by title words, by volume + first page), so a search engine can stand in for
the embedded one. The embedded index is one SQLite file: its tables, and why
retrieval by the rarest known title words keeps a query's time nearly flat,
are in docs/matching.md, "The index" (which also says why SQLite rather than
tantivy).
"""

from __future__ import annotations

import sqlite3
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Protocol

from sandcrawler.config import MatchSettings
from sandcrawler.core.errors import ConfigError
from sandcrawler.match.records import CatalogRecord

SCHEMA_VERSION = "3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS works (id INTEGER PRIMARY KEY, doi TEXT NOT NULL UNIQUE,
                                  rec BLOB NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS titles USING fts5(
    t, a, content='', tokenize='unicode61 remove_diacritics 0');
CREATE TABLE IF NOT EXISTS df (term TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS locators (volume TEXT NOT NULL, page TEXT NOT NULL,
                                     id INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS locators_key ON locators (volume, page);
CREATE INDEX IF NOT EXISTS locators_id ON locators (id);
CREATE TABLE IF NOT EXISTS alt_ids (key TEXT NOT NULL, id INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS alt_ids_key ON alt_ids (key);
CREATE INDEX IF NOT EXISTS alt_ids_id ON alt_ids (id);
"""


class CandidateIndex(Protocol):
    """What the matcher reads; an engine-backed index implements the same."""

    def size(self) -> int:
        """How many works the index holds."""
        ...

    def by_doi(self, doi: str) -> CatalogRecord | None: ...

    def by_alt_id(self, key: str) -> CatalogRecord | None:
        """A work by "pmid:…", "pmcid:pmc…" or "arxiv:…" (lower-case)."""
        ...

    def by_words(self, words: Sequence[str], limit: int) -> list[CatalogRecord]:
        """The works whose titles hold the most informative of ``words``
        (folded), best first."""
        ...

    def by_locators(self, pairs: Sequence[tuple[str, str]], limit: int
                    ) -> list[list[CatalogRecord]]:
        """For each (volume, first page), the works at it (any journal), at most
        ``limit``; asked together (a reference string's numbers give many)."""
        ...

    def by_names(self, surnames: Sequence[str], limit: int) -> list[CatalogRecord]:
        """The works whose first authors include all of ``surnames`` (one or more:
        the matcher asks one only with a page and a year to sift its works by)."""
        ...

    def expect(self, words: Iterable[str]) -> None:
        """The title words a batch's matches are about to ask ``by_words``: an
        engine reads their counts in one request instead of one per match."""
        ...

    #: lookups of one batch the matcher may run at once (1: one after another)
    concurrency: int

    def close(self) -> None: ...


class IndexWriter(Protocol):
    """What ``match.sync`` (and ``match index``) writes through: the embedded
    index, or a search engine's collection."""

    def size(self) -> int: ...

    def meta(self, key: str) -> str | None: ...

    def set_meta(self, key: str, value: str) -> None: ...

    def transaction(self) -> AbstractContextManager[None]: ...

    def upsert(self, records: Iterable[CatalogRecord]) -> int: ...

    def optimize(self) -> None: ...

    def clear(self) -> None:
        """Every work and mark removed (``match index --rebuild``)."""
        ...

    def close(self) -> None: ...


def _connect(path: Path, readonly: bool) -> sqlite3.Connection:
    if readonly:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False,
                               timeout=60)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, check_same_thread=False, timeout=60,
                               isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA cache_size=-65536")  # 64 MiB of pages
    return conn


class SqliteIndex:
    """The embedded index: one SQLite file; readers share it with one writer."""

    #: lookups the matcher may run at once: one SQLite connection, one at a time
    concurrency = 1

    def expect(self, words: Iterable[str]) -> None:
        """Nothing to do: a word's count is one indexed read of the same file."""

    def __init__(self, path: Path, *, readonly: bool = True, rebuild: bool = False) -> None:
        """Open the index at ``path``; for writing, create it when missing.
        ``rebuild``: an index of another schema version is replaced by an
        empty one. A file that is not a match index is never written."""
        self.path = path
        if readonly and not path.exists():
            raise IndexMissing(path)
        try:
            self.conn = _connect(path, readonly)
            version = self._open(path, readonly, rebuild)
        except sqlite3.DatabaseError as e:
            raise ConfigError(f"match index {path} cannot be read: {e}") from None
        if version != SCHEMA_VERSION:
            self.conn.close()
            raise ConfigError(
                f"match index {path} has schema {version!r}, this version reads "
                f"{SCHEMA_VERSION!r}: rebuild it with `sandcrawler match index --rebuild`")
        self._lock = threading.Lock()

    def _open(self, path: Path, readonly: bool, rebuild: bool) -> str | None:
        """Check the file (and, for a writer, create its tables) under one write
        lock: two writers opening a new file at once never see it half made."""
        if not readonly:
            self.conn.execute("BEGIN IMMEDIATE")
        try:
            tables = {r[0] for r in self.conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
            if tables and "meta" not in tables:
                raise ConfigError(
                    f"{path} is an SQLite database but not a match index: set match.index "
                    "to another path, or move the file away")
            version = self.meta("schema") if tables else None
            if not readonly and tables and version != SCHEMA_VERSION and rebuild:
                self.conn.execute("ROLLBACK")
                self.conn.close()
                for p in (path, path.with_name(path.name + "-wal"),
                          path.with_name(path.name + "-shm")):
                    p.unlink(missing_ok=True)
                self.conn = _connect(path, readonly)
                return self._open(path, readonly, rebuild=False)
            if not readonly and not tables:
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        self.conn.execute(statement)
                self._set_meta_default("schema", SCHEMA_VERSION)
                self._set_meta_default("works", "0")
                version = SCHEMA_VERSION
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            self.conn.close()
            raise
        if not readonly:
            self.conn.execute("COMMIT")
        return version

    # --- reading ----------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        try:
            row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        except sqlite3.OperationalError:
            return None
        return row[0] if row else None

    def size(self) -> int:
        # kept in meta by every write: count(*) reads the whole table (125 ms
        # at 10^6 works, asked by every command and worker at start-up); an
        # index written before the count was kept is counted
        kept = self.meta("works")
        if kept is not None:
            return int(kept)
        return int(self.conn.execute("SELECT count(*) FROM works").fetchone()[0])

    def by_doi(self, doi: str) -> CatalogRecord | None:
        row = self.conn.execute("SELECT rec FROM works WHERE doi = ?", (doi,)).fetchone()
        return CatalogRecord.loads(row[0]) if row else None

    def by_alt_id(self, key: str) -> CatalogRecord | None:
        row = self.conn.execute(
            "SELECT w.rec FROM alt_ids a JOIN works w ON w.id = a.id WHERE a.key = ? LIMIT 1",
            (key,)).fetchone()
        return CatalogRecord.loads(row[0]) if row else None

    def document_frequency(self, words: Sequence[str]) -> dict[str, int]:
        """Works per word (0 for a word no title has)."""
        marks = ",".join("?" * len(words))
        out = dict.fromkeys(words, 0)
        out.update(self.conn.execute(f"SELECT term, n FROM df WHERE term IN ({marks})",
                                     list(words)).fetchall())
        return out

    def by_words(self, words: Sequence[str], limit: int) -> list[CatalogRecord]:
        return find_by_words(words, self.document_frequency,
                             lambda expression: self._match(expression, limit), _phrase, limit)

    def by_names(self, surnames: Sequence[str], limit: int) -> list[CatalogRecord]:
        """The works whose first three authors include all of ``surnames``
        (folded last words; the first ``limit`` by BM25: one common name alone
        holds thousands, so the matcher asks one only with a page and a year)."""
        names = list(dict.fromkeys(n for n in surnames if n))[:3]
        if not names:
            return []
        return self._match("a : (" + " AND ".join(_phrase(n) for n in names) + ")", limit)

    def _match(self, expression: str, limit: int) -> list[CatalogRecord]:
        rows = self.conn.execute(
            # bm25() itself, not its "rank" alias: half the time (SQLite 3.40)
            "SELECT w.rec FROM (SELECT rowid FROM titles WHERE titles MATCH ? "
            "ORDER BY bm25(titles) LIMIT ?) m JOIN works w ON w.id = m.rowid",
            (expression, limit)).fetchall()
        return [CatalogRecord.loads(r[0]) for r in rows]

    def by_locators(self, pairs: Sequence[tuple[str, str]], limit: int
                    ) -> list[list[CatalogRecord]]:
        return [[CatalogRecord.loads(r[0]) for r in self.conn.execute(
            "SELECT w.rec FROM locators l JOIN works w ON w.id = l.id "
            "WHERE l.volume = ? AND l.page = ? LIMIT ?", (volume, page, limit))]
            for volume, page in pairs]

    def close(self) -> None:
        self.conn.close()

    # --- writing ----------------------------------------------------------------------

    def _set_meta_default(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT INTO meta (key, value) VALUES (?, ?) "
                          "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (key, value))

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction (IMMEDIATE: two writers queue, never deadlock)."""
        with self._lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def upsert(self, records: Iterable[CatalogRecord]) -> int:
        """Add or replace works (inside ``transaction()``); returns how many.
        In bulk: one lookup of the DOIs already there per 500, then one
        ``executemany`` per table (``match index`` writes every work through it)."""
        batch = {rec.doi: rec for rec in records}  # one DOI twice: the last wins
        if not batch:
            return 0
        conn = self.conn
        existing: dict[str, tuple[int, bytes]] = {}
        dois = list(batch)
        for i in range(0, len(dois), 500):
            chunk = dois[i:i + 500]
            marks = ",".join("?" * len(chunk))
            for doi, wid, data in conn.execute(
                    f"SELECT doi, id, rec FROM works WHERE doi IN ({marks})", chunk):
                existing[doi] = (wid, data)
        (next_id,) = conn.execute("SELECT coalesce(max(id), 0) + 1 FROM works").fetchone()
        new_works, changed, stale = [], [], []
        written: list[tuple[int, CatalogRecord]] = []
        for doi, rec in batch.items():
            data = rec.dumps()
            if doi in existing:
                wid, old = existing[doi]
                if old == data:
                    continue
                # a contentless FTS5 row is deleted by giving back what it held
                previous = CatalogRecord.loads(old)
                stale.append((wid, previous.index_text(), previous.index_names()))
                changed.append((data, wid))
            else:
                wid = next_id
                next_id += 1
                new_works.append((wid, doi, data))
            written.append((wid, rec))
        if stale:
            conn.executemany(
                "INSERT INTO titles (titles, rowid, t, a) VALUES ('delete', ?, ?, ?)", stale)
            conn.executemany("DELETE FROM locators WHERE id = ?", [(w, ) for w, *_ in stale])
            conn.executemany("DELETE FROM alt_ids WHERE id = ?", [(w, ) for w, *_ in stale])
            conn.executemany("UPDATE works SET rec = ? WHERE id = ?", changed)
        conn.executemany("INSERT INTO works (id, doi, rec) VALUES (?, ?, ?)", new_works)
        if new_works:
            conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + ? WHERE key = 'works'",
                         (len(new_works),))
        texts = [(w, rec.index_text(), rec.index_names()) for w, rec in written]
        conn.executemany("INSERT INTO titles (rowid, t, a) VALUES (?, ?, ?)",
                         [row for row in texts if row[1] or row[2]])
        conn.executemany("INSERT INTO locators (volume, page, id) VALUES (?, ?, ?)",
                         [(*loc, w) for w, rec in written if (loc := rec.locator)])
        conn.executemany("INSERT INTO alt_ids (key, id) VALUES (?, ?)",
                         [(k, w) for w, rec in written for k in rec.alt_ids])
        counts: Counter[str] = Counter()
        for _, rec in written:
            counts.update(rec.index_text().split())
        for _, old_text, _ in stale:
            counts.subtract(old_text.split())
        conn.executemany("INSERT INTO df (term, n) VALUES (?, ?) "
                         "ON CONFLICT (term) DO UPDATE SET n = n + excluded.n",
                         [(t, n) for t, n in counts.items() if n])
        return len(batch)

    def optimize(self) -> None:
        """Merge the FTS5 segments a long build left (smaller, faster to query)."""
        self.conn.execute("INSERT INTO titles (titles) VALUES ('optimize')")

    def clear(self) -> None:
        with self.transaction():
            for table in ("works", "locators", "alt_ids", "df"):
                self.conn.execute(f"DELETE FROM {table}")
            self.conn.execute("INSERT INTO titles (titles) VALUES ('delete-all')")
            self.conn.execute("DELETE FROM meta WHERE key != 'schema'")
            self.set_meta("works", "0")


def _phrase(word: str) -> str:
    return '"' + word.replace('"', '""') + '"'


#: words asked per query: the rarest of the query's known words
QUERY_WORDS = 6
#: works a query's words may hold between them, beyond its first MIN_WORDS:
#: ranking costs about 2 µs per work held (bench/perf/match_scale.py)
POSTINGS_BUDGET = 400
MIN_WORDS = 3
#: works a title's words hold between them when they are all common ones
COMMON_POSTINGS = 4000


@dataclass(frozen=True, slots=True)
class WordChoice:
    """The words of a title query, asked in up to three steps, each ranked by
    BM25: the works holding all of ``all_of`` (when any does, they are the
    answer); else those holding two or more of ``two_of``; then, while fewer
    than the limit are found, those holding any of ``any_of``."""

    all_of: tuple[str, ...]
    two_of: tuple[str, ...]
    any_of: tuple[str, ...]

    def search(self, ask: Callable[[str], list[CatalogRecord]],
               phrase: Callable[[str], str], limit: int) -> list[CatalogRecord]:
        """Run the steps through ``ask``: a boolean expression of ``phrase``-quoted
        words with AND, OR and parentheses (both engines' syntax) → its first
        ``limit`` works, best first."""
        if self.all_of:
            found = ask(" AND ".join(phrase(w) for w in self.all_of))
            if found:
                return found
        found = []
        if len(self.two_of) >= 2:
            found = ask(" OR ".join(f"({phrase(a)} AND {phrase(b)})"
                                    for a, b in combinations(self.two_of, 2)))
            if len(found) >= limit:
                return found
        if self.any_of:
            seen = {rec.doi for rec in found}
            found += [rec for rec in ask(" OR ".join(phrase(w) for w in self.any_of))
                      if rec.doi not in seen]
        return found[:limit]


def choose_words(words: Sequence[str], df: Mapping[str, int]) -> WordChoice:
    """Which of a query's words to ask, from the works per word (``df``; a word
    no work has is skipped: a typo, an extraction error). Every index asks the
    same words, so every engine finds the same candidates."""
    known = sorted((w for w in words if df.get(w, 0) > 0), key=lambda w: df[w])
    # The rarest words, while the works holding them stay within a budget:
    # ranking reads every posting of every word asked, so a query's cost is
    # the sum of its words' frequencies, whatever the catalog's size.
    chosen: list[str] = []
    total = 0
    for w in known[:QUERY_WORDS]:
        if len(chosen) >= MIN_WORDS and total + df[w] > POSTINGS_BUDGET:
            break
        chosen.append(w)
        total += df[w]
    if total <= POSTINGS_BUDGET or len(chosen) < 2:
        return WordChoice((), (), tuple(chosen))
    # Over the budget, ranking every work that holds one of the words is the
    # cost (SQLite's bm25() takes about 1.5 µs a work: 15 ms for "physical" OR
    # "review" at 10^6 works), while intersecting the words' lists is cheap.
    # The work a title names holds most of its words: first the works holding
    # two of them, then, to fill up, those holding the rarest within the budget.
    rare: list[str] = []
    held = 0
    for w in chosen:
        if rare and held + df[w] > POSTINGS_BUDGET:
            break
        rare.append(w)
        held += df[w]
    if total > COMMON_POSTINGS and len(known) >= 3:
        # only common words: the works holding all of the rarest four first
        return WordChoice(tuple(known[:4]), tuple(chosen), tuple(rare))
    return WordChoice((), tuple(chosen), tuple(rare))


def find_by_words(words: Sequence[str], frequency: Callable[[Sequence[str]], Mapping[str, int]],
                  ask: Callable[[str], list[CatalogRecord]], phrase: Callable[[str], str],
                  limit: int) -> list[CatalogRecord]:
    """``by_words`` of every engine: the words chosen by their works per word
    (``frequency``), asked through the engine's ``ask`` and ``phrase``; every
    engine asks the same words, so every engine finds the same candidates."""
    unique = list(dict.fromkeys(w for w in words if w))
    return choose_words(unique, frequency(unique)).search(ask, phrase, limit)


class IndexMissing(ConfigError):
    def __init__(self, path: Path) -> None:
        super().__init__(f"no match index at {path}: build it with `sandcrawler match index`")
        self.path = path


def open_reader(match: MatchSettings) -> SqliteIndex:
    assert match.index is not None  # CoreSettings fills it in
    return SqliteIndex(match.index)


def open_writer(match: MatchSettings, *, rebuild: bool = False
                ) -> tuple[SqliteIndex, Callable[[], None]]:
    """The embedded index for writing; what is written is read at once (no
    finishing step)."""
    assert match.index is not None
    return SqliteIndex(match.index, readonly=False, rebuild=rebuild), lambda: None
