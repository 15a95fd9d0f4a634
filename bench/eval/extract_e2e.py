"""``sandcrawler extract`` end to end on real PDFs, against a hand-made truth set.

The truth (bench/data/extract/truth.jsonl, bench/data/extract/SOURCES.md): for 14
scholarly PDFs of GROBID's test resources, the title as printed, the authors in
order, the DOI when printed and the number of entries in the printed bibliography.
The PDFs themselves are not in the repository: ``--pdfs DIR`` names directories that
hold them (default: ``../shared/data/pdfs`` and ``../grobid/testpdfs`` beside the
project, where present); every ``*.pdf`` under them is matched to the truth by its
SHA-1, so names do not matter and a file present twice is extracted once.

Runs ``sandcrawler extract -j N`` on the matched PDFs (one subprocess, the installed
package) and prints per PDF and overall, scored as GROBID's end-to-end evaluation
scores a header field (no consolidation on either side):

- title, **soft** (the headline): lower-cased, whitespace and punctuation removed,
  equal; and the Levenshtein variant: 1 - distance / longer length >= 0.8 on the
  lower-cased, whitespace-collapsed strings. Precision = correct / titles given,
  recall = correct / titles expected, so a wrong title costs both, a missing one
  recall only. Goal: soft F1 >= 0.90.
- first author: surnames soft-equal (the extracted ``surname``, else the last word
  of ``full_name``). Goal: F1 >= 0.90.
- authors: F1 over names (surnames soft-equal, as multisets), and GROBID's own
  "authors" field (a document's surnames joined in order, soft-equal).
- DOI: lower-cased equality, on the PDFs that print one; DOIs given for the others.
- references found: sum over PDFs of min(found, printed) / sum of printed (goal
  >= 90 %), the per-PDF ratio, and how many were found beyond the printed count.
- status counts, then every mismatch (the extractor's to-do list).

Skips (exit 0) when none of the truth set's PDFs is found.

Run:  python bench/extract_e2e.py [--pdfs DIR ...] [--truth FILE] [-j N]
                                  [--options OPTS] [--keep FILE] [--json FILE]
                                  [--command CMD]
"""

from __future__ import annotations

import argparse
import hashlib
import shlex
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
import orjson
from _common import (
    REPO,
    SHARED_DATA,
    add_extract_options,
    bench_env,
    print_header,
    resolve_command,
    skip,
)
from rapidfuzz.distance import Levenshtein

TRUTH = REPO / "bench" / "data" / "extract" / "truth.jsonl"
DEFAULT_DIRS = (SHARED_DATA / "pdfs", REPO.parent / "grobid" / "testpdfs")

GOAL_TITLE = 0.90
GOAL_FIRST_AUTHOR = 0.90
GOAL_REFERENCES = 0.90
#: GROBID's Levenshtein criterion: 1 - distance / longer length at least this
MIN_LEVENSHTEIN = 0.8

#: The characters GROBID's "soft" comparison ignores besides case: its punctuation
#: set, dashes and spaces of several kinds, and the placeholders its OCR output uses.
IGNORED = frozenset(
    '([ *,:;?.!/)-"\'`$#@]\t\n\r'
    "\uff08\u2022\uff09\u2212\u2013\u2010\u00ab\u00bb\u201e\u201c\u201d\u2018\u2019"
    "\u2666\u2665\u2663\u2660\u00a0\u3002\u3001\uff0c\u30fb\u00b7"
    "\u25fc\u25b2\u25ba\u25c6\u25cb\u25c7\u25cf\u25ce\u25fd\u25f8\u25f9\u25fa"
)


# --- the truth and the extraction, as records -------------------------------------------


@dataclass(frozen=True, slots=True)
class Author:
    full_name: str
    surname: str


@dataclass(frozen=True, slots=True)
class Truth:
    file: str
    sha1: str
    title: str
    authors: tuple[Author, ...]
    doi: str | None
    references_printed: int


@dataclass(slots=True)
class Extracted:
    """One ``sandcrawler extract`` line, the fields scored here."""

    path: str
    status: str
    title: str
    authors: list[Author]
    doi: str
    abstract: str
    references: list[str]
    pages: int | None
    seconds: float | None

    @classmethod
    def from_line(cls, line: dict[str, Any]) -> Extracted:
        header = line.get("header") or {}
        authors = []
        for a in header.get("authors") or []:
            full = str(a.get("full_name") or "").strip()
            surname = str(a.get("surname") or "").strip() or (full.split()[-1] if full else "")
            authors.append(Author(full, surname))
        return cls(
            path=str(line.get("path", "")),
            status=str(line.get("status", "")),
            title=str(header.get("title") or ""),
            authors=authors,
            doi=str(header.get("doi") or ""),
            abstract=str(line.get("abstract") or ""),
            references=[str(r.get("unstructured") or "") for r in line.get("references") or []],
            pages=line.get("pages"),
            seconds=line.get("seconds"),
        )


def read_truth(path: Path) -> list[Truth]:
    out = []
    for raw in path.read_bytes().splitlines():
        if raw.strip():
            d = orjson.loads(raw)
            out.append(Truth(
                file=d["file"], sha1=d["sha1"], title=d["title"],
                authors=tuple(Author(a["full_name"], a["surname"]) for a in d["authors"]),
                doi=d.get("doi"), references_printed=int(d["references_printed"]),
            ))
    return out


def sha1_of(path: Path) -> str:
    h = hashlib.sha1()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def find_pdfs(dirs: Iterable[Path], truth: Sequence[Truth]) -> tuple[dict[str, Path], int]:
    """The first file found for each truth SHA-1 (in name order), and how many PDFs
    were seen in all."""
    wanted = {t.sha1 for t in truth}
    found: dict[str, Path] = {}
    seen = 0
    for d in dirs:
        for path in sorted(d.rglob("*.pdf")) if d.is_dir() else []:
            seen += 1
            digest = sha1_of(path)
            if digest in wanted and digest not in found:
                found[digest] = path.resolve()
    return found, seen


# --- scoring ------------------------------------------------------------------------------


def soft(text: str) -> str:
    return "".join(c for c in text.lower() if c not in IGNORED)


def basic(text: str) -> str:
    """Lower-cased, whitespace collapsed (what GROBID compares before its soft rule)."""
    return " ".join(text.split()).lower()


def levenshtein_ratio(a: str, b: str) -> float:
    a, b = basic(a), basic(b)
    longer = max(len(a), len(b))
    return 1.0 if longer == 0 else (longer - Levenshtein.distance(a, b)) / longer


@dataclass(slots=True)
class Counts:
    """Correct, given and expected values of one field over the set."""

    correct: int = 0
    given: int = 0
    expected: int = 0

    def add(self, correct: int, given: int, expected: int) -> None:
        self.correct += correct
        self.given += given
        self.expected += expected

    @property
    def precision(self) -> float:
        return self.correct / self.given if self.given else 0.0

    @property
    def recall(self) -> float:
        return self.correct / self.expected if self.expected else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def line(self, goal: float | None = None) -> str:
        text = (f"P {self.precision:.3f}  R {self.recall:.3f}  F1 {self.f1:.3f}  "
                f"({self.correct} correct, {self.given} given, {self.expected} expected)")
        if goal is not None:
            text += f"  goal F1 >= {goal:.2f}: {'met' if self.f1 >= goal else 'NOT met'}"
        return text


def multiset_overlap(a: Iterable[str], b: Iterable[str]) -> int:
    return sum((Counter(a) & Counter(b)).values())


@dataclass(slots=True)
class PdfScore:
    truth: Truth
    got: Extracted | None
    title_soft: bool = False
    title_lev: bool = False
    first_author: bool = False
    authors_correct: int = 0
    authors_all: bool = False
    doi_ok: bool | None = None
    refs_found: int = 0


@dataclass(slots=True)
class Report:
    pdfs: list[PdfScore] = field(default_factory=list)
    title_soft: Counts = field(default_factory=Counts)
    title_lev: Counts = field(default_factory=Counts)
    first_author: Counts = field(default_factory=Counts)
    authors: Counts = field(default_factory=Counts)
    authors_field: Counts = field(default_factory=Counts)
    doi: Counts = field(default_factory=Counts)
    doi_unprinted: int = 0
    refs_printed: int = 0
    refs_found_capped: int = 0
    refs_extra: int = 0
    statuses: Counter[str] = field(default_factory=Counter)

    @property
    def refs_ratio(self) -> float:
        return self.refs_found_capped / self.refs_printed if self.refs_printed else 0.0


def score(truth: Sequence[Truth], extracted: dict[str, Extracted]) -> Report:
    """``extracted``: SHA-1 -> the line for that PDF (absent: no line came out)."""
    rep = Report()
    for t in truth:
        got = extracted.get(t.sha1)
        s = PdfScore(t, got)
        rep.pdfs.append(s)
        rep.statuses[got.status if got else "(no line)"] += 1
        title = got.title if got else ""
        authors = got.authors if got else []
        s.title_soft = bool(title) and soft(title) == soft(t.title)
        s.title_lev = bool(title) and levenshtein_ratio(title, t.title) >= MIN_LEVENSHTEIN
        rep.title_soft.add(s.title_soft, bool(soft(title)), 1)
        rep.title_lev.add(s.title_lev, bool(soft(title)), 1)

        truth_names = [soft(a.surname) for a in t.authors]
        got_names = [soft(a.surname) for a in authors if soft(a.surname)]
        s.first_author = bool(got_names) and got_names[0] == truth_names[0]
        rep.first_author.add(s.first_author, bool(got_names), 1)
        s.authors_correct = multiset_overlap(got_names, truth_names)
        rep.authors.add(s.authors_correct, len(got_names), len(truth_names))
        s.authors_all = "".join(got_names) == "".join(truth_names)
        rep.authors_field.add(s.authors_all, bool(got_names), 1)

        got_doi = (got.doi if got else "").strip().lower()
        if t.doi:
            s.doi_ok = got_doi == t.doi.lower()
            rep.doi.add(s.doi_ok, bool(got_doi), 1)
        elif got_doi:
            rep.doi_unprinted += 1

        s.refs_found = len(got.references) if got else 0
        rep.refs_printed += t.references_printed
        rep.refs_found_capped += min(s.refs_found, t.references_printed)
        rep.refs_extra += max(s.refs_found - t.references_printed, 0)
    return rep


# --- running the command ------------------------------------------------------------------


def run_extract(command: Sequence[str], options: Sequence[str], paths: Sequence[Path],
                jobs: int, workdir: Path) -> tuple[list[dict[str, Any]], str, int, float]:
    """The command's JSON lines, its stderr, its exit code and its wall time."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        [*command, "extract", "-j", str(jobs), *options, *map(str, paths)],
        env=bench_env(workdir), cwd=workdir, capture_output=True, stdin=subprocess.DEVNULL,
        check=False,
    )
    wall = time.perf_counter() - t0
    lines = [orjson.loads(x) for x in proc.stdout.splitlines() if x.strip()]
    return lines, proc.stderr.decode(errors="replace"), proc.returncode, wall


def by_sha1(lines: Sequence[dict[str, Any]], pdfs: dict[str, Path]) -> dict[str, Extracted]:
    sha1_by_path = {str(p): digest for digest, p in pdfs.items()}
    sha1_by_path |= {str(p.resolve()): digest for digest, p in pdfs.items()}
    out = {}
    for line in lines:
        got = Extracted.from_line(line)
        digest = sha1_by_path.get(got.path) or sha1_by_path.get(str(Path(got.path).resolve()))
        if digest is not None:
            out[digest] = got
    return out



# --- printing -----------------------------------------------------------------------------


def mark(ok: bool | None) -> str:
    return "-" if ok is None else ("ok" if ok else "NO")


def short(text: str, n: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def print_report(rep: Report) -> None:
    print("-- per PDF (title soft/Levenshtein, first author, authors correct/given/expected, "
          "DOI, references found/printed)")
    print(f"   {'file':36} {'status':13} {'pages':>5} {'s':>6}  {'title':7} {'1st':3} "
          f"{'authors':>8} {'doi':3} {'refs':>7}")
    for s in rep.pdfs:
        got, t = s.got, s.truth
        pages = "" if got is None or got.pages is None else str(got.pages)
        secs = "" if got is None or got.seconds is None else f"{got.seconds:.2f}"
        given = len(got.authors) if got else 0
        print(f"   {short(t.file, 36):36} {(got.status if got else '(no line)'):13} "
              f"{pages:>5} {secs:>6}  {mark(s.title_soft) + '/' + mark(s.title_lev):7} "
              f"{mark(s.first_author):3} "
              f"{f'{s.authors_correct}/{given}/{len(t.authors)}':>8} {mark(s.doi_ok):3} "
              f"{f'{s.refs_found}/{t.references_printed}':>7}")
    print("-- overall")
    print("   status: " + ", ".join(f"{k} {v}" for k, v in sorted(rep.statuses.items())))
    print(f"   title, soft (headline):         {rep.title_soft.line(GOAL_TITLE)}")
    print(f"   title, Levenshtein >= {MIN_LEVENSHTEIN}:     {rep.title_lev.line()}")
    print(f"   first author (surname, soft):   {rep.first_author.line(GOAL_FIRST_AUTHOR)}")
    print(f"   authors (per name, surnames):   {rep.authors.line()}")
    print(f"   authors (GROBID's field: all surnames in order, soft): {rep.authors_field.line()}")
    print(f"   DOI (PDFs that print one):      {rep.doi.line()}; "
          f"DOIs given for PDFs printing none: {rep.doi_unprinted}")
    abstracts = sum(bool(s.got and s.got.abstract.strip()) for s in rep.pdfs)
    print(f"   abstract given for {abstracts} of {len(rep.pdfs)} PDFs (no truth for its text)")
    ok = rep.refs_ratio >= GOAL_REFERENCES
    print(f"   references found: {rep.refs_found_capped} of {rep.refs_printed} printed = "
          f"{rep.refs_ratio:.1%} (goal >= {GOAL_REFERENCES:.0%}: {'met' if ok else 'NOT met'}); "
          f"{rep.refs_extra} found beyond the printed counts")
    with_printed = [s for s in rep.pdfs if s.truth.references_printed]
    ratios = ", ".join(f"{s.truth.file.removesuffix('.pdf')} "
                       f"{s.refs_found / s.truth.references_printed:.2f}" for s in with_printed)
    print(f"   per-PDF found/printed: {ratios}")


def print_mismatches(rep: Report) -> None:
    print("-- mismatches (truth | extracted)")
    for s in rep.pdfs:
        got, t = s.got, s.truth
        if got is None:
            print(f"   {t.file}: no line")
            continue
        if not s.title_soft:
            print(f"   {t.file} title: {short(t.title)!r} | {short(got.title)!r}")
        if not s.authors_all:
            print(f"   {t.file} authors: {[a.surname for a in t.authors]} | "
                  f"{[a.surname for a in got.authors]} (surnames scored; full names: "
                  f"{[short(a.full_name, 60) for a in got.authors]})")
        if s.doi_ok is False:
            print(f"   {t.file} doi: {t.doi} | {got.doi or None}")
        if s.refs_found != t.references_printed:
            print(f"   {t.file} references: {t.references_printed} printed | {s.refs_found} found")


def figures(rep: Report) -> dict[str, Any]:
    def c(x: Counts) -> dict[str, float | int]:
        return {"precision": round(x.precision, 4), "recall": round(x.recall, 4),
                "f1": round(x.f1, 4), "correct": x.correct, "given": x.given,
                "expected": x.expected}
    return {
        "pdfs": len(rep.pdfs), "statuses": dict(rep.statuses),
        "title_soft": c(rep.title_soft), "title_levenshtein": c(rep.title_lev),
        "first_author": c(rep.first_author), "authors": c(rep.authors),
        "authors_field": c(rep.authors_field), "doi": c(rep.doi),
        "doi_unprinted": rep.doi_unprinted,
        "references": {"printed": rep.refs_printed, "found_capped": rep.refs_found_capped,
                       "ratio": round(rep.refs_ratio, 4), "extra": rep.refs_extra},
        "per_pdf": [{"file": s.truth.file, "status": s.got.status if s.got else None,
                     "title_soft": s.title_soft, "first_author": s.first_author,
                     "authors_correct": s.authors_correct,
                     "references_found": s.refs_found,
                     "references_printed": s.truth.references_printed} for s in rep.pdfs],
    }


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """-j, --keep and --json, and the command's own options: what a bench that
    runs ``sandcrawler extract`` over a set and scores it takes."""
    parser.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                        help="-j for sandcrawler extract (default: 1)")
    parser.add_argument("--keep", type=Path, default=None, metavar="FILE",
                        help="write the command's JSON lines to FILE")
    parser.add_argument("--json", type=Path, default=None, metavar="FILE",
                        help="write the figures to FILE as JSON")
    add_extract_options(parser)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pdfs", type=Path, nargs="+", default=None, metavar="DIR",
                        help="directories holding the PDFs (default: "
                        + ", ".join(str(d) for d in DEFAULT_DIRS) + ")")
    parser.add_argument("--truth", type=Path, default=TRUTH, metavar="FILE",
                        help=f"the truth set (default: {TRUTH.relative_to(REPO)})")
    add_run_options(parser)
    args = parser.parse_args()

    truth = read_truth(args.truth)
    dirs = args.pdfs or [d for d in DEFAULT_DIRS if d.is_dir()]
    pdfs, seen = find_pdfs(dirs, truth)
    if not pdfs:
        skip(f"none of the {len(truth)} PDFs of {args.truth} found under "
             f"{', '.join(map(str, dirs)) or '(no directory)'}")
    present = [t for t in truth if t.sha1 in pdfs]
    command = resolve_command(args.command)
    print_header(f"sandcrawler extract end to end: {len(present)} of the {len(truth)} PDFs "
                 f"of the truth set ({seen} PDFs under {', '.join(map(str, dirs))}), "
                 f"-j {args.jobs}")
    with tempfile.TemporaryDirectory(prefix="sandcrawler-bench-") as tmp:
        lines, stderr, code, wall = run_extract(
            command, shlex.split(args.options), [pdfs[t.sha1] for t in present], args.jobs,
            Path(tmp))
    shown = " ".join([*command, "extract", "-j", str(args.jobs), args.options]).strip()
    print(f"   {shown}: exit {code}, {len(lines)} lines, wall {wall:.1f} s")
    if code != 0:
        print("   its stderr ends:\n     " + "\n     ".join(stderr.strip().splitlines()[-10:]))
    if code != 0 and not lines:
        sys.exit(f"sandcrawler extract failed (exit {code}) and gave no line")
    if args.keep is not None:
        args.keep.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    rep = score(present, by_sha1(lines, pdfs))
    print_report(rep)
    print_mismatches(rep)
    if args.json is not None:
        args.json.write_bytes(orjson.dumps(figures(rep), option=orjson.OPT_INDENT_2))


if __name__ == "__main__":
    main()
