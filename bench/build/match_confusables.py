"""Confusable works for the works of a matching catalog: the lookalikes that a real
catalog of 10^6 works holds beside the work a reference or a header names (issue 41).

For one catalog work, deterministically (seeded by ``seed`` and the work's DOI, so a
work's confusables do not depend on which other works are asked for), Crossref REST API
works (the shapes bench/build/match_synth.py emits; DOIs under the test prefix 10.5555,
``10.5555/cf.<kind>.<hash>.<n>``, never a real work's):

``version:preprint``     the same title, or the title without its subtitle, the same first
                         authors, a year earlier, ``posted-content`` of subtype ``preprint``
                         on a preprint server (``institution``), half of them with
                         Crossref's ``relation`` ``is-preprint-of`` the work (works of 1995
                         on)
``version:proceedings``  the same as a ``proceedings-article`` a year earlier, in a
                         conference's proceedings (for a journal article or a chapter)
``version:journal``      for a proceedings article: its journal article a year later
``erratum``              "Erratum: <title>", "Correction to: <title>" or the title itself,
                         in the same journal a year or two later, with ``update-to`` the
                         work's DOI (the shapes of tests/match/test_match_hard_cases.py)
``series``               "<title>. Part II", "<title> II.", "<title> (2)", ...: the same
                         authors and journal, the same year or the next ones
``generic``              for a work with a generic title ("Editorial", "Introduction",
                         "Book reviews", "Preface", ...): many works of that title in
                         other journals and years, a few in its own journal's other issues

The work itself is not changed: it stays the right answer to its queries. A titled
work gets ``k`` confusables of kinds drawn by weight, without replacement, from those
that fit its type (``MIX``; an erratum and a series part may come twice: a correction
after an erratum, part III after part II); a work with a generic title gets
``generic`` works of its title instead; a work without a title (or with ``k`` 0) gets
none.

Use as a module (``Confusables(seed).for_work(work, k)``) or a command:

  python bench/build/match_confusables.py bench/data/match/refs/catalog.jsonl.gz [--k 3]
      [--generic 20] [--seed 1] > confusables.jsonl
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from match_synth import DOI_PREFIX, GENERIC_TITLES, SynthWorks
from match_works import INDEXED, container_of, first_page_of, rme_works, title_of, year_of

Work = dict[str, Any]

KINDS = ("version:preprint", "version:proceedings", "version:journal", "erratum", "series",
         "generic")
_SHORT = {"version:preprint": "pre", "version:proceedings": "proc", "version:journal": "jour",
          "erratum": "err", "series": "ser", "generic": "gen"}

#: kinds that fit a work of each Crossref type, with their weights: a repeated kind
#: is a second of it (a correction after an erratum, part III after part II)
MIX: dict[str, list[tuple[str, float]]] = {
    "journal-article": [("version:preprint", 3), ("version:proceedings", 2), ("erratum", 2),
                        ("series", 2), ("erratum", 0.5), ("series", 0.5)],
    "proceedings-article": [("version:preprint", 3), ("version:journal", 2), ("erratum", 1),
                            ("series", 2), ("series", 0.5)],
    "book-chapter": [("version:preprint", 1), ("version:proceedings", 1), ("erratum", 2),
                     ("series", 2), ("erratum", 0.5), ("series", 0.5)],
    "book": [("series", 2), ("erratum", 1), ("series", 1)],
}
#: "other": what citeproc rendered without a container (reports, books, conference papers)
MIX["other"] = [("version:preprint", 1), ("version:proceedings", 1), ("erratum", 1),
                ("series", 2), ("series", 0.5)]

#: titles many works share: match_synth's, and the ones the real catalogs hold
GENERIC = frozenset(t.lower() for t in GENERIC_TITLES) | {
    "book review", "book reviews", "reviews", "bibliography", "notes", "letters to the editor",
    "letters", "news", "abstracts", "errata", "editorial board", "guest editorial",
    "acknowledgements", "acknowledgments", "in memoriam", "front matter", "back matter",
    "table of contents", "discussion", "conclusion", "summary",
}
_FOLD = re.compile(r"[^a-z ]+")

PREPRINT_SERVERS = [
    ("bioRxiv", "Cold Spring Harbor Laboratory"), ("medRxiv", "Cold Spring Harbor Laboratory"),
    ("Research Square", "Research Square Platform LLC"), ("Preprints", "MDPI AG"),
    ("ChemRxiv", "American Chemical Society (ACS)"), ("SocArXiv", "Center for Open Science"),
    ("PsyArXiv", "Center for Open Science"), ("EarthArXiv", "California Digital Library"),
    ("Authorea", "Authorea, Inc."),
]
BIORXIV_GROUPS = ["Neuroscience", "Microbiology", "Genomics", "Cell Biology", "Ecology",
                  "Bioinformatics", "Epidemiology", "Immunology"]
CONF_TOPICS = ["Pattern Recognition", "Signal Processing", "Materials Science",
               "Biomedical Engineering", "Education Technology", "Power Systems",
               "Computational Biology", "Environmental Engineering", "Applied Mechanics",
               "Information Systems", "Public Health", "Chemical Engineering"]
PREPRINTS_SINCE = 1995  # no preprint server posts older works' preprints
ROMAN = ["I", "II", "III", "IV", "V", "VI"]
SERIES_FORMS = ["{t}. Part {R}", "{t}: Part {n}", "{t} Part {R}", "{t} {R}.", "{t} {R}",
                "{t} ({n})", "{t}, Part {R}"]
#: a title that is part one already: "... I.", "... Part 1", "..., part I"
_PART_ONE = re.compile(r"^(?P<t>.*?)(?P<sep>(?:[.,:]\s*|\s+)[Pp]art\s+|[.,:]\s*)(?:I|1)\.?$")
ERRATUM_FORMS = [("Erratum: {t}", "erratum", 0.4), ("Correction to: {t}", "correction", 0.4),
                 ("{t}", "correction", 0.2)]  # Crossref marks the last by update-to alone


def fold_title(title: str) -> str:
    return " ".join(_FOLD.sub(" ", title.lower()).split())


def is_generic_title(title: str | None) -> bool:
    return bool(title) and fold_title(title or "") in GENERIC


def absent_works() -> list[Work]:
    """The rebuilt works kept out of the evaluation catalogs: the works whose strings
    and headers are the sets' queries expected ``null``."""
    return rme_works()[1]


def read_works(path: Path) -> list[Work]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        return [orjson.loads(line) for line in f if line.strip()]


@dataclass
class Confusable:
    kind: str  # one of KINDS
    base: str  # the DOI of the work it is confusable with
    work: Work


def _date(year: int, month: int | None = None, day: int | None = None) -> dict[str, Any]:
    parts = [year] + ([month] if month else []) + ([day] if month and day else [])
    return {"date-parts": [parts]}


def _main_title(title: str) -> str | None:
    """The title without its subtitle, when that leaves three words or more."""
    for sep in (": ", " - ", ". "):
        if sep in title:
            main = title.split(sep, 1)[0].strip()
            if len(main.split()) >= 3:
                return main
    return None


class Confusables:
    """Confusable works of catalog works, deterministic per (seed, DOI)."""

    def __init__(self, seed: int = 1, generic: int = 20, prefix: str = DOI_PREFIX,
                 synth: SynthWorks | None = None) -> None:
        self.seed = seed
        self.generic = generic
        self.prefix = prefix
        self.synth = synth or SynthWorks(seed)

    # --- pieces ------------------------------------------------------------------------

    def _doi(self, kind: str, base: str, n: int) -> str:
        h = hashlib.blake2b(f"{self.seed}:{base.lower()}".encode(), digest_size=6).hexdigest()
        return f"{self.prefix}/cf.{_SHORT[kind]}.{h}.{n}"

    def _year(self, rng: random.Random) -> int:
        if rng.random() < 0.2:
            return 1950 + rng.randrange(75)
        return max(1900, 2024 - int(rng.expovariate(0.08)))

    def _pages(self, rng: random.Random, avoid: str | None, span: int = 25) -> str:
        while True:
            first = 1 + rng.randrange(3000)
            if str(first) != avoid:
                return f"{first}-{first + rng.randrange(span)}" if span > 1 else str(first)

    def _journal(self, rng: random.Random) -> tuple[str, str]:
        return self.synth.journals[rng.randrange(len(self.synth.journals))]

    @staticmethod
    def _authors(base: Work) -> list[dict[str, Any]]:
        return [dict(a) for a in base.get("author") or []]

    def _new(self, kind: str, base: Work, n: int, type_: str, title: str) -> Work:
        return {"DOI": self._doi(kind, base["DOI"], n), "indexed": INDEXED, "type": type_,
                "title": [title]}

    def _version_title(self, rng: random.Random, title: str) -> str:
        main = _main_title(title)
        return main if main and rng.random() < 0.5 else title

    def _version_authors(self, rng: random.Random, base: Work) -> list[dict[str, Any]]:
        """The same first authors: all of them, the last left out, or one more."""
        authors = self._authors(base)
        r = rng.random()
        if r < 0.3 and len(authors) > 2:
            authors = authors[:-1]
        elif r < 0.5 and authors:
            surnames = self.synth.surnames
            authors.append({"given": "A.", "family": surnames[rng.randrange(len(surnames))],
                            "sequence": "additional"})
        return authors

    # --- the kinds ---------------------------------------------------------------------

    def preprint(self, rng: random.Random, base: Work, n: int) -> Work:
        title = title_of(base) or ""
        server, publisher = PREPRINT_SERVERS[rng.randrange(len(PREPRINT_SERVERS))]
        w = self._new("version:preprint", base, n, "posted-content",
                      self._version_title(rng, title))
        w.update({"subtype": "preprint", "author": self._version_authors(rng, base),
                  "institution": [{"name": server}], "publisher": publisher,
                  "container-title": []})
        if server == "bioRxiv":
            w["group-title"] = BIORXIV_GROUPS[rng.randrange(len(BIORXIV_GROUPS))]
        year = year_of(base)
        if year:
            date = _date(year - 1, 1 + rng.randrange(12), 1 + rng.randrange(28))
            w.update(posted=date, issued=date)
        if rng.random() < 0.5:
            w["relation"] = {"is-preprint-of": [{"id-type": "doi", "id": base["DOI"],
                                                 "asserted-by": "subject"}]}
        return w

    def proceedings(self, rng: random.Random, base: Work, n: int) -> Work:
        title = title_of(base) or ""
        year = year_of(base)
        topic = CONF_TOPICS[rng.randrange(len(CONF_TOPICS))]
        cy = (year - 1) if year else 2000
        container = rng.choice([
            f"Proceedings of the {cy} International Conference on {topic}",
            f"{cy} IEEE International Conference on {topic}",
            f"Proceedings of the {1 + rng.randrange(40)}th Annual Meeting on {topic}",
        ])
        w = self._new("version:proceedings", base, n, "proceedings-article",
                      self._version_title(rng, title))
        w.update({"author": self._version_authors(rng, base), "container-title": [container],
                  "page": self._pages(rng, first_page_of(base), 12),
                  "event": {"name": container.removeprefix("Proceedings of the ")}})
        if year:
            w["issued"] = _date(year - 1, 1 + rng.randrange(12))
        return w

    def journal_version(self, rng: random.Random, base: Work, n: int) -> Work:
        title = title_of(base) or ""
        year = year_of(base)
        journal, abbr = self._journal(rng)
        w = self._new("version:journal", base, n, "journal-article", title)
        w.update({"author": self._version_authors(rng, base), "container-title": [journal],
                  "short-container-title": [abbr], "volume": str(1 + rng.randrange(80)),
                  "issue": str(1 + rng.randrange(12)),
                  "page": self._pages(rng, first_page_of(base))})
        if year:
            w["issued"] = _date(year + 1, 1 + rng.randrange(12))
        return w

    def erratum(self, rng: random.Random, base: Work, n: int) -> Work:
        title = title_of(base) or ""
        r, acc = rng.random(), 0.0
        form, utype = ERRATUM_FORMS[-1][:2]
        for f, t, p in ERRATUM_FORMS:
            acc += p
            if r < acc:
                form, utype = f, t
                break
        w = self._new("erratum", base, n, base.get("type") or "journal-article",
                      form.format(t=title))
        for key in ("container-title", "short-container-title", "publisher"):
            if key in base:
                w[key] = list(base[key]) if isinstance(base[key], list) else base[key]
        r = rng.random()
        authors = self._authors(base)
        if r < 0.6:
            w["author"] = authors
        elif r < 0.8 and authors:
            w["author"] = authors[:1]
        year = year_of(base)
        later = 1 if rng.random() < 0.75 else 2
        if year:
            month = 1 + rng.randrange(12)
            w["issued"] = _date(year + later, month)
        else:
            month = 1
        volume = base.get("volume")
        if volume:
            w["volume"] = str(int(volume) + later) if volume.isdigit() else volume
        if base.get("page"):
            w["page"] = self._pages(rng, first_page_of(base), 1)
        w["update-to"] = [{"DOI": base["DOI"], "type": utype, "label": utype.capitalize(),
                           "source": "publisher",
                           "updated": _date((year or 2000) + later, month, 1)}]
        return w

    def series(self, rng: random.Random, base: Work, n: int, part: int) -> Work:
        title = title_of(base) or ""
        one = _PART_ONE.match(title)
        if one and one["t"].strip():  # "... I." goes on as "... II."
            numbered = f"{one['t']}{one['sep']}{ROMAN[part - 1]}."
        else:
            form = SERIES_FORMS[rng.randrange(len(SERIES_FORMS))]
            numbered = form.format(t=title.rstrip(". "), R=ROMAN[part - 1], n=part)
        w = self._new("series", base, n, base.get("type") or "journal-article", numbered)
        for key in ("container-title", "short-container-title", "publisher"):
            if key in base:
                w[key] = list(base[key]) if isinstance(base[key], list) else base[key]
        authors = self._authors(base)
        if rng.random() < 0.2 and len(authors) > 2:
            surnames = self.synth.surnames
            authors = [*authors[:2], {"given": "B.",
                                      "family": surnames[rng.randrange(len(surnames))],
                                      "sequence": "additional"}]
        w["author"] = authors
        r = rng.random()
        later = 0 if r < 0.3 else 1 if r < 0.8 else 2
        later += part - 2  # part III comes after part II
        year = year_of(base)
        if year:
            w["issued"] = _date(year + later, 1 + rng.randrange(12))
        volume = base.get("volume")
        if volume:
            w["volume"] = str(int(volume) + later) if volume.isdigit() and later else volume
        if base.get("page"):
            page = base["page"]
            last = page.rsplit("-", 1)[-1]
            if not later and last.isdigit():  # the same issue: the next pages
                first = int(last) + 1 + rng.randrange(40)
                w["page"] = f"{first}-{first + 5 + rng.randrange(20)}"
            else:
                w["page"] = self._pages(rng, first_page_of(base))
        if base.get("issue") and not later:
            w["issue"] = base["issue"]
        return w

    def generic_copies(self, rng: random.Random, base: Work) -> Iterator[Work]:
        """The base's generic title in other journals and years, some in its own."""
        title = title_of(base) or ""
        year = year_of(base) or 2000
        book = base.get("type") in ("book-chapter", "book")
        for n in range(self.generic):
            shown = title if rng.random() < 0.6 else rng.choice(
                [title.upper(), title.capitalize(), title.title()])
            w = self._new("generic", base, n, "book-chapter" if book else "journal-article",
                          shown)
            r = rng.random()
            if book:
                w["container-title"] = [self.synth._title(rng.random)]
                w["issued"] = _date(self._year(rng))
                w["page"] = rng.choice(["v-vii", "ix-xii", "1-4", "xi", "1"])
            else:
                if r < 0.7 or not container_of(base):
                    journal, abbr = self._journal(rng)
                    y = self._year(rng)
                    volume = str(max(1, y - 1950 + rng.randrange(70) - 30))
                else:
                    journal = container_of(base) or ""
                    abbr = (base.get("short-container-title") or [None])[0]
                    # the same journal: other years, or another issue of the same one
                    y = year if r >= 0.85 else year + rng.choice([-1, 1]) * (1 + rng.randrange(12))
                    vol = base.get("volume") or ""
                    if not vol.isdigit():
                        volume = str(1 + rng.randrange(60))
                    else:
                        volume = str(max(1, int(vol) + y - year))
                w["container-title"] = [journal]
                if abbr:
                    w["short-container-title"] = [abbr]
                w.update(issued=_date(y, 1 + rng.randrange(12)), volume=volume,
                         issue=str(1 + rng.randrange(12)), page=self._pages(rng, None, 4))
            r = rng.random()
            if r < 0.6:
                w["author"] = self.synth._authors(rng)[: 1 if r < 0.4 else 3]
            yield w

    # --- a work's confusables ---------------------------------------------------------

    def for_work(self, base: Work, k: int) -> list[Confusable]:
        title = title_of(base)
        if not title or k <= 0:
            return []
        doi = base["DOI"]
        rng = random.Random(f"{self.seed}:confusables:{doi.lower()}")
        if is_generic_title(title):
            return [Confusable("generic", doi, w) for w in self.generic_copies(rng, base)]
        pool = list(MIX.get(base.get("type") or "other", MIX["other"]))
        if (year_of(base) or 0) < PREPRINTS_SINCE:
            pool = [p for p in pool if p[0] != "version:preprint"]
        out: list[Confusable] = []
        parts = 1
        for n in range(min(k, len(pool))):
            r, acc, pick = rng.random() * sum(w for _, w in pool), 0.0, len(pool) - 1
            for i, (_, weight) in enumerate(pool):
                acc += weight
                if r < acc:
                    pick = i
                    break
            kind = pool.pop(pick)[0]
            if kind == "version:preprint":
                work = self.preprint(rng, base, n)
            elif kind == "version:proceedings":
                work = self.proceedings(rng, base, n)
            elif kind == "version:journal":
                work = self.journal_version(rng, base, n)
            elif kind == "erratum":
                work = self.erratum(rng, base, n)
            else:
                parts += 1
                work = self.series(rng, base, n, parts)
            out.append(Confusable(kind, doi, work))
        return out

    def for_works(self, works: Iterable[Work], k: int) -> Iterator[Confusable]:
        for work in works:
            yield from self.for_work(work, k)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("catalog", type=Path, help="Crossref works, JSON lines (.gz or not)")
    parser.add_argument("--k", type=int, default=3, help="confusables per titled work")
    parser.add_argument("--generic", type=int, default=20,
                        help="works of the same title per work with a generic title")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    works = read_works(args.catalog)
    t0 = time.perf_counter()
    gen = Confusables(args.seed, args.generic)
    kinds: Counter[str] = Counter()
    out = sys.stdout.buffer
    for c in gen.for_works(works, args.k):
        kinds[c.kind] += 1
        out.write(orjson.dumps(c.work) + b"\n")
    dt = time.perf_counter() - t0
    print(f"{sum(kinds.values()):,} confusables of {len(works):,} works in {dt:.2f} s: "
          + ", ".join(f"{k} {v:,}" for k, v in sorted(kinds.items())), file=sys.stderr)


if __name__ == "__main__":
    main()
