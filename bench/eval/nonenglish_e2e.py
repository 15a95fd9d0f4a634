"""``sandcrawler extract`` on real Portuguese, Spanish, French and German articles.

The set (../shared/data/nonenglish: ``pdfs/<id>.pdf``, ``truth/<id>.json``, and
SOURCES.md saying where each file and its truth come from): SciELO articles
beside their JATS (Revista de Saúde Pública, Transinformação, Cadernos Saúde
Coletiva, Hoehnea, Salud Pública de México), Érudit articles and SSOAR papers
with a hand-checked bibliography. Not in the repository (their licences differ);
the bench skips without it.

Per document and per language:

- **title**: the title in the article's own language, soft-equal (lower-cased,
  whitespace and punctuation removed) to the truth's or to its form without the
  subtitle; the translation printed under it is not part of it. Also counted:
  any of its titles (the translation given instead), and Levenshtein >= 0.8.
  Goal (issue 41): >= 0.90.
- **first author**: the last word of the extracted first surname soft-equal to
  the truth's (SciELO's JATS writes "Santos" where the page and we say "dos
  Santos"; the matcher compares surnames the same way).
- **references found**: sum of min(found, printed) / sum of printed, over the
  documents that print a bibliography, and how many were found beyond the
  printed count (junk or entries cut in two). Goal: >= 0.95.
- **reference strings**, stricter, on the documents whose truth holds the
  strings: the share of the truth's strings that an extracted string matches
  (rapidfuzz ratio >= 85 on lower-cased, whitespace-collapsed text), and the
  share of the extracted strings that match one (the rest are junk, or two
  references run together, or one cut in two).

Run:  python bench/eval/nonenglish_e2e.py [--data DIR] [-j N] [--options '--header-only']
          [--keep FILE] [--json FILE]
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
import orjson
from _common import SHARED_DATA, print_header, resolve_command, skip
from extract_e2e import add_run_options, levenshtein_ratio, run_extract, soft
from rapidfuzz.fuzz import ratio

DATA = SHARED_DATA / "nonenglish"


@dataclass(slots=True)
class Scored:
    name: str
    language: str
    status: str
    title: str | None
    want: str
    title_right: bool
    title_any: bool
    title_close: bool
    first_author: bool
    refs: int
    printed: int
    #: truth strings (0 when the truth has none), those matched, extracted strings matching
    strings: int
    strings_matched: int
    extracted_matching: int


def score(truth: dict[str, Any], line: dict[str, Any]) -> Scored:
    header = line.get("header") or {}
    title: str | None = header.get("title")
    given = title or ""
    own = [truth["title"], *truth.get("title_variants", [])]
    every = [*own, *truth.get("other_titles", [])]
    authors = header.get("authors") or []
    # the first surname's last word, else the full name's
    first = (authors[0].get("surname") or authors[0].get("full_name") or "").split()[-1:] \
        if authors else []
    return Scored(
        name=Path(line["path"]).stem, language=truth["language"], status=line["status"],
        title=title, want=truth["title"],
        title_right=bool(given) and any(soft(given) == soft(t) for t in own),
        title_any=bool(given) and any(soft(given) == soft(t) for t in every),
        title_close=bool(given) and any(levenshtein_ratio(given, t) >= 0.8 for t in every),
        first_author=bool(first) and bool(truth["authors"])
        and soft(first[0]) == soft(truth["authors"][0].split()[-1]),
        refs=len(line.get("references") or []), printed=int(truth["refs"]),
        **_strings(truth.get("ref_strings") or [],
                   [r.get("unstructured") or "" for r in line.get("references") or []]))


def _strings(truth: list[str], got: list[str]) -> dict[str, int]:
    def norm(text: str) -> str:
        return " ".join(text.lower().split())

    want, have = [norm(t) for t in truth], [norm(g) for g in got]
    return {"strings": len(want),
            "strings_matched": sum(any(ratio(w, h) >= 85 for h in have) for w in want),
            "extracted_matching": sum(any(ratio(w, h) >= 85 for w in want) for h in have)
            if want else 0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA, metavar="DIR",
                        help=f"the set (default: {DATA})")
    add_run_options(parser)
    args = parser.parse_args()
    pdfs = sorted((args.data / "pdfs").glob("*.pdf"))
    if not pdfs:
        skip(f"no PDFs under {args.data / 'pdfs'}")
    truth = {p.stem: orjson.loads((args.data / "truth" / f"{p.stem}.json").read_bytes())
             for p in pdfs}
    command = resolve_command(args.command)
    print_header(f"sandcrawler extract on {len(pdfs)} non-English articles ({args.data}), "
                 f"-j {args.jobs} {args.options}".rstrip())
    with tempfile.TemporaryDirectory(prefix="sandcrawler-bench-") as tmp:
        lines, stderr, code, wall = run_extract(command, shlex.split(args.options), pdfs,
                                                args.jobs, Path(tmp))
    print(f"   exit {code}, {len(lines)} lines, wall {wall:.1f} s")
    if code != 0 and not lines:
        sys.exit(f"sandcrawler extract failed (exit {code}):\n{stderr[-2000:]}")
    if args.keep is not None:
        args.keep.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    rows = [score(truth[Path(x["path"]).stem], x) for x in lines]

    print(f"   {'document':32} {'status':8} {'title':6} {'1st':4} refs")
    for r in rows:
        print(f"   {r.name:32} {r.status:8} {'ok' if r.title_right else 'NO':6} "
              f"{'ok' if r.first_author else 'NO':4} {r.refs}/{r.printed}")
    groups: dict[str, list[Scored]] = defaultdict(list)
    for r in rows:
        groups[r.language].append(r)
        groups["all"].append(r)
    figures: dict[str, Any] = {}
    print(f"\n   {'language':8} {'docs':>4} {'title':>7} {'any title':>9} "
          f"{'lev>=0.8':>8} {'1st author':>10} {'refs found':>10} {'beyond':>6} "
          f"{'strings matched':>15} {'extracted right':>15}")
    for language in sorted(groups, key=lambda g: (g == "all", g)):
        rs = groups[language]
        printed = sum(r.printed for r in rs)
        found = sum(min(r.refs, r.printed) for r in rs)
        beyond = sum(max(0, r.refs - r.printed) for r in rs)
        strings = sum(r.strings for r in rs)
        given = sum(r.refs for r in rs if r.strings)
        fig = {"documents": len(rs),
               "title": round(sum(r.title_right for r in rs) / len(rs), 4),
               "any_title": round(sum(r.title_any for r in rs) / len(rs), 4),
               "title_levenshtein": round(sum(r.title_close for r in rs) / len(rs), 4),
               "first_author": round(sum(r.first_author for r in rs) / len(rs), 4),
               "references_found": round(found / printed, 4) if printed else None,
               "references_beyond": beyond,
               "strings_matched": round(sum(r.strings_matched for r in rs) / strings, 4)
               if strings else None,
               "extracted_right": round(sum(r.extracted_matching for r in rs) / given, 4)
               if given else None}
        figures[language] = fig
        refs = f"{fig['references_found']:.3f}" if printed else "-"
        matched = f"{fig['strings_matched']:.3f}" if strings else "-"
        right = f"{fig['extracted_right']:.3f}" if given else "-"
        print(f"   {language:8} {len(rs):>4} {fig['title']:>7.3f} {fig['any_title']:>9.3f} "
              f"{fig['title_levenshtein']:>8.3f} {fig['first_author']:>10.3f} {refs:>10} "
              f"{beyond:>6} {matched:>15} {right:>15}")
    print("\n   titles not right:")
    for r in rows:
        if not r.title_right:
            print(f"     {r.name}: {r.title!r}\n       want {r.want!r}")
    if args.json is not None:
        args.json.write_bytes(orjson.dumps(figures, option=orjson.OPT_INDENT_2))


if __name__ == "__main__":
    main()
