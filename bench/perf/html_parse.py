"""Landing page analysis (``web.landing.parse_html``) in-process and in its child
process (issue 22), and what hostile pages cost.

Real pages, median of ``--repeat`` rounds (default 30) each, all in the same run:

  in-process   the page's analysis in the calling process: what ``parse_html`` did
               before the limits (``landing._analyse``, the same code)
  bounded      ``parse_html``: that analysis in the process's HTML child, under
               10 s and 1 GiB, the page and the result pickled through a pipe

over the six real article pages of ../shared/data (PLOS ONE, eLife, PeerJ, First
Monday x2, D-Lib; skipped without them) and the pages of tests/data/landing.

Hostile pages, once each:

  nested <div>s in-process at 5,000 to 40,000 levels: the cost grows as the square
  of the depth (Lexbor looks down the stack of open elements for each <div>);
  the 2.2 MB page of issue 22 (440,000 levels) and 56 KB of formatting elements
  that the parser re-opens in every paragraph, through ``parse_html``: the time
  to their status. ``--full`` also parses the 2.2 MB page in-process (minutes).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
from _common import FIXTURES, REPO, arg_parser, median, print_header

from sandcrawler.core.errors import RecordError
from sandcrawler.web.html import landing

URL = "https://journal.example.org/articles/7"
HEAD = b"<!DOCTYPE html><html><head><title>Deep</title></head><body>"


def real_pages() -> list[tuple[str, bytes]]:
    paths = sorted(FIXTURES.glob("*.html")) + sorted((REPO / "tests/data/landing").glob("*.html"))
    return [(p.name, p.read_bytes()) for p in paths]


def per_page(pages: list[tuple[str, bytes]], fn: Callable[[bytes], object],
             repeat: int) -> dict[str, float]:
    out: dict[str, float] = {}
    for name, body in pages:
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            fn(body)
            times.append(time.perf_counter() - start)
        out[name] = median(times)
    return out


def outcome(body: bytes) -> tuple[float, str]:
    start = time.perf_counter()
    try:
        landing.parse_html(body, URL)
        said = "parsed"
    except RecordError as e:
        said = f"{e.status}: {str(e).removeprefix(URL + ': ')}"
    return time.perf_counter() - start, said


def main() -> None:
    parser = arg_parser(__doc__, count="repeat", default=30)
    parser.add_argument("--full", action="store_true",
                        help="also parse the 2.2 MB page in-process (minutes of CPU)")
    args = parser.parse_args()
    print_header("landing page analysis: in-process and bounded (web/html/landing.py)")
    pages = real_pages()
    started = time.perf_counter()
    landing.parse_html(b"<p>start</p>", URL)
    print(f"   the child's start (once per process): {time.perf_counter() - started:.2f} s")
    # both in one run, interleaved by page, warm
    inproc = per_page(pages, lambda b: landing._analyse(b[:landing.MAX_PARSE_BYTES], URL, None),
                      args.repeat)
    bounded = per_page(pages, lambda b: landing.parse_html(b, URL), args.repeat)
    print(f"\n{'page':40} {'bytes':>9} {'in-process':>11} {'bounded':>9} {'ratio':>6}")
    for name, body in pages:
        print(f"{name:40} {len(body):9,} {inproc[name] * 1000:9.2f}ms "
              f"{bounded[name] * 1000:7.2f}ms {bounded[name] / inproc[name]:6.2f}")
    total_in, total_b = sum(inproc.values()), sum(bounded.values())
    print(f"{'all ' + str(len(pages)) + ' pages':40} {'':9} {total_in * 1000:9.2f}ms "
          f"{total_b * 1000:7.2f}ms {total_b / total_in:6.2f}")

    print("\nnested <div>s in-process (the square law):")
    for depth in (5_000, 10_000, 20_000, 40_000):
        body = HEAD + b"<div>" * depth
        start = time.process_time()
        landing._analyse(body, URL, None)
        took = time.process_time() - start
        print(f"   {depth:7,} levels, {len(body):9,} bytes: {took:7.2f} s CPU")
    deep = HEAD + b"<div>" * 440_000 + b"</body></html>"
    formatting = HEAD + b"".join(b"<p><b id=%d>x</p>" % i for i in range(3000))
    print("\nhostile pages through parse_html (time to the status):")
    for name, body in (("2.2 MB of nested <div>s", deep), ("56 KB of formatting", formatting)):
        took, said = outcome(body)
        print(f"   {name:24} {len(body):9,} bytes: {took:6.2f} s  {said}")
    if args.full:
        start = time.process_time()
        landing._analyse(deep, URL, None)
        print(f"   in-process, the 2.2 MB page: {time.process_time() - start:.1f} s CPU")


if __name__ == "__main__":
    main()
