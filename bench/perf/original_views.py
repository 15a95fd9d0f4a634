"""Migration 0010 and the original system's views at size (issue 42; docs/api.md).

A durable throwaway PostgreSQL cluster gets a database at revision 0009 holding
``--files`` files of the PDF table as `sandcrawler process` wrote them before 0010
(``file``, ``pdf0`` and ``grobid0`` cells, every grobid0/pdf0 value deflated), and
a capture of each in ``web_cdx``. Then:

* the upgrade to 0010 (inflating each file's six small cells, creating the
  views), timed: cells a second;
* lookups by a random existing sha1hex of ``grobid``, ``pdf_meta`` and
  ``file_meta`` over SQL (the query PostgREST makes of ``?sha1hex=eq.``), one
  connection, for ``--seconds`` each: lookups a second, p50 and p99.

    python bench/perf/original_views.py [--files 100000] [--seconds 5]
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
import orjson
import psycopg
from _common import durable_cluster, print_header, psql

from sandcrawler.db import migrate
from sandcrawler.db.engine import make_engine

DATABASE = "bench_original_views"
TABLE = "wbgrp-journal-extract-0-prod"
BATCH = 5_000


def sha1(i: int) -> bytes:
    return hashlib.sha1(f"file {i}".encode()).digest()


def cells(i: int) -> list[tuple[str, str, bytes]]:
    """One file's cells as 0009's code stored them (grobid0 and pdf0 deflated)."""
    status = {"status": "success", "grobid_version": "0.8.1"}
    metadata = {"title": f"A study of things {i}", "date": "2020",
                "authors": [{"full_name": f"A. Author {i}", "surname": "Author"}],
                "doi": f"10.5555/bench.{i}", "abstract": "Words. " * 150, "references": 40,
                "language": "en", "grobid_version": "0.8.1"}
    meta = {"status": "success", "page_count": 12, "page0_width": 612.0,
            "page0_height": 792.0, "pdf_version": "1.7", "word_count": 6000,
            "info": {"title": f"A study of things {i}", "creator": "LaTeX",
                     "created": "D:20200101120000Z"}}
    z = zlib.compress
    return [("file", "size", (123456 + i).to_bytes(8, "big")),
            ("file", "mime", b"application/pdf"),
            ("grobid0", "status_code", z((200).to_bytes(8, "big"))),
            ("grobid0", "status", z(orjson.dumps(status))),
            ("grobid0", "metadata", z(orjson.dumps(metadata))),
            ("grobid0", "quality", z(b"good")),
            ("grobid0", "tei_xml", z(b"<TEI>" + b"text " * 4000 + b"</TEI>")),
            ("pdf0", "pdf_status", z(b"success")),
            ("pdf0", "pdf_meta", z(orjson.dumps(meta))),
            ("pdf0", "text", z(b"text " * 6000))]


def fill(url: str, files: int) -> None:
    with psycopg.connect(url.replace("postgresql+psycopg", "postgresql")) as conn:
        conn.execute("INSERT INTO pdftables (id, name) VALUES (1, %s)", (TABLE,))
        with conn.cursor() as cur:
            for start in range(0, files, BATCH):
                rows = [(1, sha1(i), f, q, v) for i in range(start, min(files, start + BATCH))
                        for f, q, v in cells(i)]
                cur.executemany("INSERT INTO pdftable_cells (table_id, row_key, family, "
                                "qualifier, value) VALUES (%s, %s, %s, %s, %s)", rows)
                caps = [(f"https://example.org/{i}.pdf", sha1(i).hex(), "a" * 64, "b" * 32, i)
                        for i in range(start, min(files, start + BATCH))]
                cur.executemany(
                    "INSERT INTO web_cdx (url, datetime, surt, status_code, mimetype, sha1hex, "
                    "sha256hex, md5hex, size, warc_path, warc_offset, warc_csize) VALUES "
                    "(%s, '20240101000000', 'org,example)/', 200, 'application/pdf', %s, %s, "
                    "%s, 1000, 'a.warc.gz', %s, 500)", caps)
        conn.commit()


def lookups(url: str, relation: str, files: int, seconds: float) -> tuple[int, list[float]]:
    rng = random.Random(1)
    latencies: list[float] = []
    with psycopg.connect(url.replace("postgresql+psycopg", "postgresql")) as conn:
        stop = time.perf_counter() + seconds
        while time.perf_counter() < stop:
            key = sha1(rng.randrange(files)).hex()
            t = time.perf_counter()
            row = conn.execute(f"SELECT * FROM {relation} WHERE sha1hex = %s",
                               (key,)).fetchone()
            latencies.append(time.perf_counter() - t)
            assert row is not None, (relation, key)
    return len(latencies), sorted(latencies)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    print_header(f"original views: {args.files:,} files")
    with durable_cluster() as cluster:
        psql(cluster, "postgres", f'CREATE DATABASE "{DATABASE}"')
        url = cluster.url_for(DATABASE)
        engine = make_engine(url)
        migrate.upgrade(engine, "0009")
        t = time.perf_counter()
        fill(url, args.files)
        print(f"fill: {args.files:,} files ({args.files * 10:,} cells) in "
              f"{time.perf_counter() - t:.1f}s")
        t = time.perf_counter()
        migrate.upgrade(engine)
        took = time.perf_counter() - t
        plain = args.files * 6
        print(f"upgrade 0009 -> 0010: {took:.1f}s, {plain:,} cells inflated "
              f"({plain / took:,.0f} cells/s, {args.files / took:,.0f} files/s)")
        engine.dispose()
        psql(cluster, DATABASE, "VACUUM ANALYZE")
        for relation in ("grobid", "pdf_meta", "file_meta"):
            n, lat = lookups(url, relation, args.files, args.seconds)
            p50, p99 = lat[len(lat) // 2] * 1000, lat[int(len(lat) * 0.99)] * 1000
            print(f"{relation:<10} {n / args.seconds:8,.0f} lookups/s  "
                  f"p50 {p50:.2f} ms  p99 {p99:.2f} ms")


if __name__ == "__main__":
    main()
