"""Where the CPU of `parse-crossref-refs` goes, per work, stage by stage.

Each stage runs alone, in this process, over the same synthetic works as
``parse_crossref_refs.py`` (the two real Crossref works, cycled):

- read: JSON decode, envelope, DOI, ``indexed``, reference selection and cleaning
- request: the GROBID client's HTTP round trip (client CPU only: the stand-in
  server runs in another process)
- TEI: GROBID's answer into ``GrobidBiblio`` (ours, and grobid_tei_xml's for scale)
- weave + dict: keys woven in, ``GrobidBiblio`` to JSON-ready dicts (ours, and
  ``to_dict()`` for scale)
- output: the row as a JSON line

Run: ``python bench/perf/refs_cost_breakdown.py [--works 2000]``.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
import _common
import grobid_tei_xml
import orjson

from sandcrawler.citations.base import biblio_to_dict
from sandcrawler.citations.tei import parse_citation_list
from sandcrawler.grobid.client import GrobidClient
from sandcrawler.pipeline import Item
from sandcrawler.refs.parse_workers import _read_work
from sandcrawler_testkit.grobid_server import FakeGrobid


def per_work(label: str, n: int, fn: Callable[[], Any]) -> Any:
    start = time.process_time()
    result = fn()
    ms = (time.process_time() - start) / n * 1000
    print(f"   {label:<54} {ms:7.3f} ms/work")
    return result


def main() -> None:
    args = _common.arg_parser(__doc__, count="works", default=2000).parse_args()
    works_paths, tei_paths = _common.require_fixtures()
    n = args.works
    lines = [line.rstrip(b"\n") for line in
             _common.synthetic_work_lines(_common.load_works(works_paths), n)]
    _common.print_header(f"parse-crossref-refs CPU by stage: {n:,} works")
    works = per_work("read (decode, select, clean)", n,
                     lambda: [_read_work(Item("x", line)) for line in lines])
    answers = [FakeGrobid(tei_paths).answer([r.text for r in w.refs])[1] for w in works]

    server = subprocess.Popen(
        [sys.executable, "-m", "sandcrawler_testkit.grobid_server", *map(str, tei_paths)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        with GrobidClient(server.stdout.readline().strip()) as client:
            per_work("request (urllib3 round trip, client CPU)", n,
                     lambda: [client.process_citation_list([r.text for r in w.refs])
                              for w in works])
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait()

    biblios = per_work("TEI -> GrobidBiblio (sandcrawler.citations.tei)", n,
                       lambda: [parse_citation_list(a) for a in answers])
    per_work("  for scale: grobid_tei_xml.parse_citation_list_xml", n,
             lambda: [grobid_tei_xml.parse_citation_list_xml(a) for a in answers])

    def weave() -> list[dict[str, Any]]:
        rows = []
        for w, bs in zip(works, biblios, strict=True):
            refs = []
            for ref, b in zip(w.refs, bs, strict=True):
                b.id, b.index = ref.key, ref.index
                refs.append(biblio_to_dict(b))
            rows.append({"source": "crossref", "source_id": w.doi, "source_ts": w.indexed,
                         "refs_json": refs})
        return rows

    rows = per_work("weave keys + biblio_to_dict", n, weave)
    per_work("  for scale: GrobidBiblio.to_dict()", n,
             lambda: [[b.to_dict() for b in bs] for bs in biblios])
    per_work("output JSON line", n, lambda: [orjson.dumps(r) for r in rows])


if __name__ == "__main__":
    main()
