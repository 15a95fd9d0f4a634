"""Precision and recall as the catalog grows to 10^6 works with realistic distractors
(issue 41, item 5; docs/matching-evaluation.md).

For each size (``--sizes``), in a fresh data directory (SQLite), the catalog is

  the sets' catalog (refs and headers share their 2,047 real works: one catalog,
  persisted and indexed once, serves every set whose catalog is the same)
  + ``--confusables K`` confusables of each of its works (bench/build/match_confusables.py:
    another version, an erratum, series parts; for a generic title, that title in many
    journals, ``--generic-copies`` of them)
  + ``--absent-confusables`` confusables of each work *kept out* of the catalog, whose
    strings and headers are the queries expected ``null`` (its preprint or its Part II
    is in the catalog, the work is not)
  + synthetic works (bench/build/match_synth.py) up to the size.

It is persisted (``persist crossref`` with the index feed off) and indexed (``match index
--rebuild``), both timed; each set's queries run through ``match biblio`` (``-j`` per
``--jobs``, the first scored by bench/eval/match_score.py), timed whole command and after
start-up; the refs queries ``--speed-repeat`` times over at the highest ``-j``: strings/s
of the whole command; ``--lookups`` queries carrying the right DOI with the work's title,
authors and year (bench/perf/match_scale.py's), timed.

Every wrong answer (a DOI that is not the expected one, or a DOI where none was
expected) is told by what it took: a confusable (its kind; ``absent:`` when it is one of
a work not in the catalog; ``own`` when it is one of the expected work's), a synthetic
work (``synthetic:`` its kind), or another real work of the catalog. The expected
works missed are told the same way by the work the matcher found instead (its
candidate or runner-up).

Prints each set's table per size, the wrong answers by kind and a summary; writes
``--json`` (default bench/out/match_scale_eval.json) and every wrong answer and miss to
bench/out/match_scale_misses_<size>_<set>.jsonl.

Run:  python bench/eval/match_scale_eval.py [--sizes 10000,100000,1000000]
          [--sets refs,headers] [--confusables 3] [--absent-confusables 1]
          [--generic-copies 20] [--jobs 1,2] [--speed-repeat 5] [--lookups 20000]
          [--seed 1] [--json FILE] [--out bench/out] [--keep DIR]
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import shutil
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
import orjson
from _common import print_header, rate
from match_confusables import Confusable, Confusables, absent_works
from match_eval import (
    GOLD,
    SETS,
    Run,
    fmt_rate,
    net_rate,
    read_lines,
    startup_seconds,
    write_jsonl,
)
from match_scale import lookup_queries
from match_score import Score, score, table
from match_synth import DOI_PREFIX, ERRATUM_FORMS, GENERIC_TITLES, SynthWorks
from match_works import DATA_DIR, container_of, title_of, year_of

REPO = Path(__file__).resolve().parents[2]
#: issue 41's goals, at 10^6 works
GOALS = {"refs": (0.99, 0.95), "headers": (0.995, 0.93)}
_SYNTH_GENERIC = frozenset(t.lower() for t in GENERIC_TITLES)
_NOTICE_PREFIXES = tuple(p for p, _ in ERRATUM_FORMS)


def matcher_source() -> dict[str, str]:
    """Which sandcrawler the commands run (``python -m sandcrawler`` finds the same
    package as this process) and a digest of its matcher's code: the figures are of
    that code, whatever the working tree held before or after."""
    import sandcrawler.match as match

    root = Path(match.__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return {"package": str(root.parent), "match_sha256": digest.hexdigest()[:16]}


def synthetic_kind(work: dict[str, Any] | None) -> str:
    """What a synthetic (padding) work is, from its record."""
    if work is None:
        return "synthetic:?"
    title = title_of(work) or ""
    if work.get("type") == "component":
        return "synthetic:component"
    if title.startswith(_NOTICE_PREFIXES):
        return "synthetic:notice"
    if title.lower() in _SYNTH_GENERIC:
        return "synthetic:generic"
    if work.get("type") != "journal-article":
        return f"synthetic:{work.get('type')}"
    if "issued" not in work:
        return "synthetic:sparse"
    return "synthetic:work"


def summary(work: dict[str, Any] | None) -> dict[str, Any] | None:
    """The fields a reader needs to see why a work was taken for another."""
    if work is None:
        return None
    return {"doi": work.get("DOI"), "type": work.get("type"), "title": title_of(work),
            "authors": [a.get("family") for a in (work.get("author") or [])[:4]],
            "year": year_of(work), "container": container_of(work),
            "volume": work.get("volume"), "page": work.get("page"),
            "update-to": [u.get("DOI") for u in work.get("update-to") or []] or None}


class Catalog:
    """One evaluation catalog, its confusables, and what each DOI in it is."""

    def __init__(self, real: list[dict[str, Any]], args: argparse.Namespace) -> None:
        self.real = real
        self.seed = args.seed
        gen = Confusables(args.seed, args.generic_copies, synth=SynthWorks(args.seed))
        self.confusables: list[Confusable] = list(gen.for_works(real, args.confusables))
        real_dois = {w["DOI"].lower() for w in real}
        absent = [w for w in absent_works() if w["DOI"].lower() not in real_dois]
        self.absent_bases = {w["DOI"].lower() for w in absent}
        self.absent: list[Confusable] = (list(gen.for_works(absent, args.absent_confusables))
                                         if args.absent_confusables else [])
        self.by_doi: dict[str, dict[str, Any]] = {w["DOI"].lower(): w for w in real}
        self.kind: dict[str, tuple[str, str]] = {}  # DOI -> (kind, base DOI)
        for c in self.confusables + self.absent:
            doi = c.work["DOI"].lower()
            if doi in self.by_doi:
                sys.exit(f"confusable DOI {doi} collides with another work's")
            self.by_doi[doi] = c.work
            label = ("absent:" if c.base.lower() in self.absent_bases else "") + c.kind
            self.kind[doi] = (label, c.base.lower())
        self.real_dois = real_dois

    def composition(self) -> dict[str, Any]:
        return {"real": len(self.real),
                "confusables": dict(Counter(c.kind for c in self.confusables)),
                "absent_confusables": dict(Counter(c.kind for c in self.absent))}

    def write(self, path: Path, size: int) -> tuple[int, int]:
        """The catalog file at ``size`` works (more when the confusables alone are more);
        (works written, synthetic works among them)."""
        n = 0
        with open(path, "wb") as f:
            for work in self.real:
                f.write(orjson.dumps(work) + b"\n")
                n += 1
            for c in self.confusables + self.absent:
                f.write(orjson.dumps(c.work) + b"\n")
                n += 1
            pad = max(0, size - n)
            for line in SynthWorks(self.seed).lines(pad):
                f.write(line)
            n += pad
        return n, pad

    def label(self, doi: str | None, expected: str | None,
              db: dict[str, dict[str, Any] | None]) -> str:
        """What kind of work ``doi`` is, as this catalog made it."""
        if doi is None:
            return "none"
        if doi in self.kind:
            kind, base = self.kind[doi]
            return kind + (" (own)" if expected and base == expected else "")
        if doi in self.real_dois:
            return "catalog:another-work"
        if doi.startswith(f"{DOI_PREFIX}/synth."):
            return synthetic_kind(db.get(doi))
        return "unknown"

    def work(self, doi: str | None, db: dict[str, dict[str, Any] | None]
             ) -> dict[str, Any] | None:
        if doi is None:
            return None
        return self.by_doi.get(doi) or db.get(doi)


def read_records(data_dir: Path, dois: set[str]) -> dict[str, dict[str, Any] | None]:
    """The crossref table's records of these DOIs (the synthetic ones are not kept)."""
    out: dict[str, dict[str, Any] | None] = {}
    path = data_dir / "sandcrawler.sqlite3"
    if not dois or not path.exists():
        return out
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        for doi in dois:
            row = con.execute("SELECT record FROM crossref WHERE doi = ?", (doi,)).fetchone()
            out[doi] = orjson.loads(row[0]) if row else None
    finally:
        con.close()
    return out


def other_found(row: dict[str, Any], expected: str | None) -> str | None:
    """The work a miss found instead: its candidate, or the runner-up when the
    candidate was the expected work."""
    cand = row.get("candidate")
    if isinstance(cand, str) and cand.lower() != expected:
        return cand.lower()
    ru = row.get("runner_up")
    if isinstance(ru, dict) and isinstance(ru.get("doi"), str) and ru["doi"].lower() != expected:
        return str(ru["doi"]).lower()
    return None


def analyse(cat: Catalog, s: Score, rows: list[dict[str, Any]], data_dir: Path
            ) -> tuple[list[dict[str, Any]], Counter[str], Counter[str]]:
    """Every wrong answer and miss with what it took or found instead; the wrong
    answers by kind; the misses by status and kind."""
    by_id = {str(r.get("id")): r for r in rows}
    found = {m.id: other_found(by_id.get(m.id, {}), m.expected) for m in s.misses}
    wanted = {d for d in [m.got for m in s.misses] + list(found.values())
              if d and d not in cat.by_doi}
    db = read_records(data_dir, wanted)
    out: list[dict[str, Any]] = []
    wrong: Counter[str] = Counter()
    missed: Counter[str] = Counter()
    for m in s.misses:
        row = by_id.get(m.id, {})
        taken = m.got if m.kind != "missed" else found[m.id]
        label = cat.label(taken, m.expected, db)
        if m.kind == "missed":
            missed[f"{m.status} / {label}"] += 1
        else:
            wrong[label] += 1
        out.append({"id": m.id, "miss": m.kind, "case": m.case, "expected": m.expected,
                    "got": m.got, "status": m.status, "score": m.score, "reasons": m.reasons,
                    "taken": taken, "taken_kind": label,
                    "taken_work": summary(cat.work(taken, db)),
                    "expected_work": summary(cat.work(m.expected, db)),
                    "runner_up": row.get("runner_up"), "query": m.query})
    return out, wrong, missed


def strip_gold(queries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in q.items() if k not in GOLD} for q in queries]


def run_size(size: int, names: list[str], real: list[dict[str, Any]], cat: Catalog,
             queries: dict[str, list[dict[str, Any]]], args: argparse.Namespace
             ) -> dict[str, Any]:
    t_size = time.perf_counter()
    keep = args.keep / f"{size}-{'-'.join(names)}" if args.keep else None
    if keep is not None:
        shutil.rmtree(keep, ignore_errors=True)
        keep.mkdir(parents=True)
    workdir = keep or Path(tempfile.mkdtemp(prefix=f"match-scale-eval-{size}-"))
    try:
        run = Run(workdir)
        # one bulk load, then one index build: the feed would index every work twice
        run.env["SANDCRAWLER_MATCH_FEED"] = "false"
        catalog_file = workdir / "catalog.jsonl"
        t0 = time.perf_counter()
        n, pad = cat.write(catalog_file, size)
        write_s = time.perf_counter() - t0
        persist, index, again, index_bytes, _ = run.load(catalog_file)
        catalog_file.unlink()
        startup = startup_seconds(run)
        comp = cat.composition()
        n_conf = sum(comp["confusables"].values())
        n_abs = sum(comp["absent_confusables"].values())
        print(f"\n== {n:,} works ({len(real):,} real + {n_conf:,} confusables of them + "
              f"{n_abs:,} of works not in the catalog + {pad:,} synthetic); written in "
              f"{write_s:.1f} s, persist {persist.wall:.1f} s "
              f"({rate(n, persist.wall):,.0f} works/s), index --rebuild {index.wall:.1f} s "
              f"({fmt_rate(net_rate(n, index.wall - again.wall))} records/s net), "
              f"{index_bytes / n:,.0f} bytes/record; match biblio start-up {startup:.2f} s")
        result: dict[str, Any] = {
            "works": n, "real": len(real), "confusables": n_conf, "absent_confusables": n_abs,
            "synthetic": pad, "write_s": write_s, "persist_s": persist.wall,
            "index_s": index.wall, "index_noop_s": again.wall,
            "index_records_per_s_net": net_rate(n, index.wall - again.wall),
            "index_bytes_per_record": index_bytes / n, "startup_s": startup, "sets": {}}
        for name in names:
            qs = queries[name]
            qfile = workdir / f"queries-{name}.jsonl"
            write_jsonl(qfile, strip_gold(qs))
            timings: dict[str, Any] = {}
            rows: list[dict[str, Any]] = []
            for jobs in args.jobs:
                t, out = run.match(qfile, jobs)
                timings[f"j{jobs}"] = {"wall_s": t.wall, "cpu_s": t.cpu,
                                       "per_s": rate(len(qs), t.wall),
                                       "per_s_after_startup": net_rate(len(qs),
                                                                       t.wall - startup)}
                if not rows:
                    rows = out
                elif [(r.get("id"), r.get("status"), r.get("doi")) for r in out] != \
                        [(r.get("id"), r.get("status"), r.get("doi")) for r in rows]:
                    timings[f"j{jobs}"]["differs_from_first"] = True
            s = score(qs, rows)
            misses, wrong, missed = analyse(cat, s, rows, run.data)
            print(table(f"{name} at {n:,} works", s))
            for key, t in timings.items():
                print(f"   match biblio -{key}: {t['wall_s']:.2f} s wall, {t['per_s']:,.0f} "
                      f"queries/s whole command ({fmt_rate(t['per_s_after_startup'])}/s after "
                      f"start-up)" + ("  OUTPUT DIFFERS" if t.get("differs_from_first") else ""))
            print("   wrong answers by what was taken: "
                  + (", ".join(f"{k} {v}" for k, v in wrong.most_common()) or "none"))
            print("   expected works missed, by status / what was found instead: "
                  + (", ".join(f"{k} {v}" for k, v in missed.most_common()) or "none"))
            args.out.mkdir(parents=True, exist_ok=True)
            misses_file = args.out / f"match_scale_misses_{size}_{name}.jsonl"
            write_jsonl(misses_file, misses)
            result["sets"][name] = {
                "queries": len(qs), "score": s.to_json(max_misses=0), "match": timings,
                "wrong_by_kind": dict(wrong), "missed_by_status_and_kind": dict(missed),
                "misses_file": str(misses_file)}
        if "refs" in names and args.speed_repeat > 1:
            qs = strip_gold(queries["refs"])
            many = [dict(q, id=f"{q['id']}.{i}") for i in range(args.speed_repeat) for q in qs]
            qfile = workdir / "queries-speed.jsonl"
            write_jsonl(qfile, many)
            jobs = max(args.jobs)
            t, out = run.match(qfile, jobs)
            result["speed"] = {"strings": len(many), "jobs": jobs, "wall_s": t.wall,
                               "per_s": rate(len(many), t.wall),
                               "per_s_after_startup": net_rate(len(many), t.wall - startup),
                               "lines_out": len(out)}
            print(f"   speed: {len(many):,} raw reference strings (refs x{args.speed_repeat}), "
                  f"match biblio -j {jobs}: {t.wall:.1f} s = {rate(len(many), t.wall):,.0f} "
                  f"strings/s whole command "
                  f"({fmt_rate(net_rate(len(many), t.wall - startup))}/s after start-up)")
        if args.lookups:
            works = real + [c.work for c in cat.confusables]
            lq = lookup_queries(works, pad, args.lookups, args.seed)
            lfile = workdir / "lookups.jsonl"
            write_jsonl(lfile, strip_gold(lq))
            lt, lrows = run.match(lfile, 1)
            ls = score(lq, lrows)
            lrate = net_rate(len(lq), lt.wall - startup)
            statuses = Counter(str(r.get("status")) for r in lrows)
            # the works whose lookups were not confirmed, by status and kind
            db = read_records(run.data, {m.expected for m in ls.misses
                                         if m.expected and m.expected not in cat.by_doi})
            unconfirmed = Counter(f"{m.status} / {cat.label(m.expected, None, db)}"
                                  for m in ls.misses)
            result["lookups"] = {"queries": len(lq), "wall_s": lt.wall,
                                 "per_s": rate(len(lq), lt.wall), "per_s_after_startup": lrate,
                                 "matched": ls.matched, "correct": ls.correct,
                                 "statuses": dict(statuses), "unconfirmed": dict(unconfirmed)}
            write_jsonl(args.out / f"match_scale_lookup_misses_{size}.jsonl",
                        [m.__dict__ for m in ls.misses])
            print(f"   DOI lookups (-j 1): {len(lq):,} in {lt.wall:.2f} s = "
                  f"{rate(len(lq), lt.wall):,.0f}/s whole command ({fmt_rate(lrate)}/s after "
                  f"start-up); {ls.correct:,} confirmed, {ls.matched - ls.correct} wrong, "
                  f"{len(lq) - ls.matched:,} not confirmed: "
                  + (", ".join(f"{k} {v}" for k, v in unconfirmed.most_common()) or "none"))
        result["wall_s"] = time.perf_counter() - t_size
        print(f"   this size took {result['wall_s'] / 60:.1f} min")
        return result
    finally:
        if keep is None:
            shutil.rmtree(workdir, ignore_errors=True)


def print_summary(report: dict[str, Any]) -> None:
    print("\n== summary")
    print(f"   {'works':>10} {'set':<8}{'queries':>8}{'matched':>8}{'right':>7}{'wrong':>6}"
          f"{'P':>8}{'R':>8}{'F1':>8}  {'goal':<18}{'q/s by -j, whole command':<28}")
    for size in report["sizes"].values():
        for name, r in size["sets"].items():
            sc = r["score"]
            p, rec, f1 = sc["precision"], sc["recall"], sc["f1"]
            goal = GOALS.get(name)
            met = "" if goal is None else (
                f"P>={goal[0]} {'met' if (p or 0) >= goal[0] else 'NOT'}, "
                f"R>={goal[1]} {'met' if (rec or 0) >= goal[1] else 'NOT'}")
            speeds = ", ".join(f"-{k} {t['per_s']:,.0f}" for k, t in r["match"].items())
            print(f"   {size['works']:>10,} {name:<8}{sc['queries']:>8}{sc['matched']:>8}"
                  f"{sc['correct']:>7}{sc['matched'] - sc['correct']:>6}"
                  f"{p or 0:>8.4f}{rec or 0:>8.4f}{f1 or 0:>8.4f}  {met:<32}{speeds}")
    for size in report["sizes"].values():
        extra = []
        if "speed" in size:
            sp = size["speed"]
            extra.append(f"match biblio -j {sp['jobs']} on {sp['strings']:,} strings "
                         f"{sp['per_s']:,.0f}/s whole command")
        if "lookups" in size:
            lk = size["lookups"]
            extra.append(f"DOI lookups {lk['per_s']:,.0f}/s whole command "
                         f"({fmt_rate(lk['per_s_after_startup'])}/s after start-up)")
        print(f"   {size['works']:>10,}: " + "; ".join(extra)
              + f"; persist {size['persist_s']:.0f} s, index {size['index_s']:.0f} s, "
              f"all {size['wall_s'] / 60:.1f} min")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--sets", default="refs,headers")
    parser.add_argument("--confusables", type=int, default=3,
                        help="confusables per titled catalog work (default 3)")
    parser.add_argument("--absent-confusables", type=int, default=1,
                        help="confusables per work kept out of the catalog (default 1)")
    parser.add_argument("--generic-copies", type=int, default=20,
                        help="works of the same title per work with a generic title")
    parser.add_argument("--jobs", default="1,2", help="-j values timed; the first is scored")
    parser.add_argument("--speed-repeat", type=int, default=5,
                        help="the refs strings this many times over, timed at the highest -j")
    parser.add_argument("--lookups", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out")
    parser.add_argument("--json", type=Path, default=None,
                        help="the figures (default <out>/match_scale_eval.json)")
    parser.add_argument("--keep", type=Path, help="keep each data directory here")
    args = parser.parse_args()
    args.jobs = [int(j) for j in args.jobs.split(",")]
    sizes = [int(s) for s in args.sizes.split(",")]
    names = [s for s in args.sets.split(",") if s]
    for s in names:
        if s not in SETS:
            sys.exit(f"unknown set {s!r}; sets: {', '.join(SETS)}")
    # sets whose catalogs are the same works share one data directory per size
    groups: dict[str, list[str]] = {}
    for name in names:
        with gzip.open(DATA_DIR / name / "catalog.jsonl.gz", "rb") as f:
            groups.setdefault(hashlib.sha256(f.read()).hexdigest(), []).append(name)
    print_header(f"match biblio at {', '.join(f'{s:,}' for s in sizes)} works with "
                 f"confusables: {' | '.join(','.join(g) for g in groups.values())}")
    source = matcher_source()
    print(f"   sandcrawler from {source['package']}, match/ sha256 {source['match_sha256']}")
    report: dict[str, Any] = {"config": {
        "sizes": sizes, "sets": names, "confusables": args.confusables,
        "absent_confusables": args.absent_confusables, "generic_copies": args.generic_copies,
        "jobs": args.jobs, "speed_repeat": args.speed_repeat, "lookups": args.lookups,
        "seed": args.seed}, "sandcrawler": source, "groups": {}}
    t_all = time.perf_counter()
    for group in groups.values():
        real = read_lines(DATA_DIR / group[0] / "catalog.jsonl.gz")
        queries = {name: read_lines(DATA_DIR / name / "queries.jsonl.gz") for name in group}
        cat = Catalog(real, args)
        comp = cat.composition()
        print(f"   {','.join(group)}: {len(real):,} works; confusables of them "
              f"{comp['confusables']}; of the {len(cat.absent_bases):,} works kept out "
              f"{comp['absent_confusables']}")
        sizes_out: dict[str, Any] = {}
        for size in sizes:
            sizes_out[str(size)] = run_size(size, group, real, cat, queries, args)
        g = {"composition": comp, "sizes": sizes_out}
        report["groups"][",".join(group)] = g
        print_summary(g)
    report["wall_s"] = time.perf_counter() - t_all
    out = args.json or args.out / "match_scale_eval.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2))
    print(f"written {out} ({report['wall_s'] / 60:.1f} min in all)")


if __name__ == "__main__":
    main()
