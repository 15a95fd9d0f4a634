"""Build the matching evaluation sets (docs/matching-evaluation.md) from the public
sources in bench/data/match/source/ (bench/data/match/SOURCES.md).

Each set is a directory bench/data/match/<set>/ with

  catalog.jsonl.gz   Crossref works (bare work objects, JSON lines) to persist
  queries.jsonl.gz   one biblio per line in the shape of refs_json objects, with
                     ``id`` (echoed by the matcher), the gold ``expected_doi`` (lower
                     case; null when the right answer is "not in the catalog"), the
                     ``case`` it tests and the ``noise`` applied; the evaluation strips
                     ``expected_doi``, ``case`` and ``noise`` before matching.

Sets: refs (raw reference strings), headers (GROBID-header-like biblios, DOI
withheld), hard (one case per hard case of issue 25), pairs (fuzzycat's labelled
release pairs). Deterministic: the same sources and seed give the same bytes.

  python bench/build/match_data.py [--seed 25] [--out bench/data/match]
"""

from __future__ import annotations

import argparse
import random
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from match_noise import damage_reference, line_breaks, mojibake
from match_sources import write_gz_lines
from match_synth import abbreviate_journal
from match_works import (
    DATA_DIR,
    INDEXED,
    SOURCE_DIR,
    biblio_of,
    container_of,
    first_page_of,
    read_gz_lines,
    rme_works,
    title_of,
    year_of,
)

Work = dict[str, Any]
Query = dict[str, Any]

#: styles a query string is drawn from, with weights (APA, which the catalog's
#: authors and containers were read from, least)
QUERY_STYLES = {"ieee": 3, "chicago": 2, "mla": 2, "harvard": 2, "acs": 2, "aip": 2,
                "elsevier": 2, "apa": 1}
GOLD_FIELDS = ("expected_doi", "case", "noise")


def strip_label(text: str) -> str:
    """Citeproc's numbered styles start with the label ("[1]", "(1) ", "1 ")."""
    for opener, closer in (("[", "]"), ("(", ")")):
        if text.startswith(opener) and closer in text[:6]:
            return text[text.index(closer) + 1:].lstrip()
    head, _, rest = text.partition(" ")
    return rest if head.isdigit() else text


def pick_style(rng: random.Random, styles: dict[str, str]) -> str:
    names = [s for s in QUERY_STYLES if styles.get(s)]
    return rng.choices(names, weights=[QUERY_STYLES[s] for s in names])[0]


def ref_query(qid: str, text: str, expected: str | None, case: str, noise: list[str]) -> Query:
    return {"id": qid, "unstructured": text, "expected_doi": expected, "case": case,
            "noise": noise}


def reference_string(work: Work) -> str:
    """A Vancouver-style reference of a work (for works that have no citeproc strings)."""
    names = [f"{a['family']} {''.join(p[0] for p in (a.get('given') or '').split() if p)}".strip()
             for a in work.get("author") or []]
    authors = ", ".join(names[:6]) + (", et al" if len(names) > 6 else "")
    parts = [authors + "." if authors else "", (title_of(work) or "") + "."]
    tail = container_of(work) or ""
    year = year_of(work)
    if year:
        tail += f". {year}"
    if work.get("volume"):
        tail += f";{work['volume']}"
        if work.get("issue"):
            tail += f"({work['issue']})"
    if work.get("page"):
        tail += f":{work['page']}"
    parts.append(tail + ".")
    return " ".join(p for p in parts if p and p != ".")


# --- refs ------------------------------------------------------------------------------


def build_refs(rng: random.Random, kept: list[Work], out: list[Work],
               strings: dict[str, dict[str, str]], n_in: int = 1400,
               n_out: int = 300, n_real: int = 300) -> tuple[list[Work], list[Query]]:
    queries: list[Query] = []
    for work in rng.sample(kept, min(n_in, len(kept))):
        styles = strings[work["DOI"]]
        style = pick_style(rng, styles)
        text = styles[style]
        text = text if rng.random() < 0.3 else strip_label(text)
        text, noise = damage_reference(text, rng, rng.randint(1, 80))
        queries.append(ref_query("", text, work["DOI"], f"in-catalog:{style}", noise))
    for work in rng.sample(out, min(n_out, len(out))):
        styles = strings[work["DOI"]]
        style = pick_style(rng, styles)
        text, noise = damage_reference(strip_label(styles[style]), rng, 1)
        queries.append(ref_query("", text, None, f"not-in-catalog:{style}", noise))
    real = [r["ref_string"] for r in read_gz_lines(SOURCE_DIR / "rme_real_nodoi.jsonl.gz")]
    for text in rng.sample(real, min(n_real, len(real))):
        noise = []
        if rng.random() < 0.6:
            text = line_breaks(text, rng)
            noise.append("line-breaks")
        queries.append(ref_query("", text, None, "not-in-catalog:real-no-doi", noise))
    rng.shuffle(queries)
    for i, q in enumerate(queries):
        q["id"] = f"refs-{i:05d}"
    return list(kept), queries


# --- headers ---------------------------------------------------------------------------

BOILERPLATE = ["Contents lists available at ScienceDirect", "ORIGINAL ARTICLE",
               "Research Article", "Accepted Manuscript", "Open Access",
               "This article appeared in a journal published by Elsevier",
               "Full Terms & Conditions of access and use can be found at",
               "Author manuscript; available in PMC 2014 June 01."]


def header_query(work: Work, rng: random.Random) -> tuple[Query, str]:
    """A GROBID-header-like biblio of a work (DOI withheld) and what was done to it."""
    b = biblio_of(work)
    b.pop("pages")
    case = "clean"
    title = b["title"]
    authors = b["authors"]
    r = rng.random()
    if r < 0.15 and title:
        kind = rng.randrange(4)
        if kind == 0 and b["journal"]:
            head = b["journal"] if rng.random() < 0.5 else b["journal"].upper()
            if b["volume"]:
                head += f" {b['volume']} ({b['date']}) {b['first_page'] or ''}".rstrip()
            b["title"] = head
            case = "garbage-title:running-head"
        elif kind == 1 and authors:
            b["title"] = " and ".join(a["full_name"] for a in authors[:4])
            case = "garbage-title:author-list"
        elif kind == 2:
            b["title"] = rng.choice(BOILERPLATE)
            case = "garbage-title:boilerplate"
        else:
            b["title"] = title + " " + ", ".join(a["full_name"] for a in authors[:3])
            case = "garbage-title:authors-run-on"
    elif r < 0.25:
        b["title"] = None
        case = "missing-title"
    elif r < 0.32 and title and ":" in title:
        b["title"] = title.split(":")[0]
        case = "title-main-part"
    elif r < 0.37 and title:
        b["title"] = title.upper()
        case = "title-upper"
    elif r < 0.42 and title and len(title) > 60:
        b["title"] = line_breaks(title, rng, 40).replace("\n", " ", 1)
        case = "title-line-break"
    # the rest of a header: GROBID often has no journal, sometimes no date, and
    # authors that lost an affiliation or a given name
    if rng.random() < 0.4:
        for key in ("journal", "volume", "issue", "first_page", "last_page"):
            b[key] = None
    if rng.random() < 0.15:
        b["date"] = None
    elif b["date"] and rng.random() < 0.07:
        b["date"] = str(int(b["date"]) - 1)  # online first, a year before print
        case += "+year-minus-1"
    if authors and rng.random() < 0.1:
        b["authors"] = authors[:1]
    elif authors and b["title"] and rng.random() < 0.05:
        b["authors"] = []
        case += "+no-authors"
    return b, case


def build_headers(rng: random.Random, kept: list[Work], out: list[Work], n_in: int = 900,
                  n_out: int = 300) -> tuple[list[Work], list[Query]]:
    queries: list[Query] = []
    for works, n, inside in ((kept, n_in, True), (out, n_out, False)):
        titled = [w for w in works if title_of(w)]
        for work in rng.sample(titled, min(n, len(titled))):
            b, case = header_query(work, rng)
            b.update(expected_doi=work["DOI"] if inside else None,
                     case=("" if inside else "not-in-catalog:") + case, noise=[])
            queries.append(b)
    rng.shuffle(queries)
    for i, q in enumerate(queries):
        q["id"] = f"headers-{i:05d}"
    return list(kept), queries


# --- hard ------------------------------------------------------------------------------

#: titles written for the translated-title and non-Latin cases
HARD_TEXTS = DATA_DIR / "hard_texts.json"

GENERIC = ["Editorial", "Introduction", "Reply", "Preface", "Foreword", "Book Reviews",
           "Letter to the Editor", "Response", "Comment", "Conclusion"]


class HardBuilder:
    """The hard set: a catalog of the kept works plus each case's extra records, and
    queries tagged with their case."""

    def __init__(self, rng: random.Random, kept: list[Work], out: list[Work],
                 strings: dict[str, dict[str, str]]) -> None:
        self.rng = rng
        self.strings = strings
        self.catalog: dict[str, Work] = {w["DOI"]: w for w in kept}
        self.out = [w for w in out if title_of(w) and w.get("author")]
        # full journal articles, unique by (container, volume, first page) in the
        # catalog, so a query without a title still has one right answer
        jvp = Counter((container_of(w), w.get("volume"), first_page_of(w)) for w in kept)
        self.pool = [w for w in kept if w["type"] == "journal-article" and title_of(w)
                     and w.get("author") and year_of(w) and w.get("volume") and w.get("page")
                     and len((title_of(w) or "").split()) >= 4
                     and jvp[(container_of(w), w.get("volume"), first_page_of(w))] == 1]
        rng.shuffle(self.pool)
        self.queries: list[Query] = []
        self.serial = 0

    def take(self, n: int) -> list[Work]:
        taken, self.pool = self.pool[:n], self.pool[n:]
        return taken

    def new_doi(self, base: Work) -> str:
        self.serial += 1
        return f"{base['DOI'].split('/')[0]}/hard.{self.serial:04d}"

    def add(self, work: Work) -> Work:
        work.setdefault("indexed", INDEXED)
        self.catalog[work["DOI"]] = work
        return work

    def q(self, case: str, expected: str | None, noise: list[str] | None = None,
          **fields: Any) -> None:
        fields.update(expected_doi=expected, case=case, noise=noise or [])
        self.queries.append(fields)

    def ref(self, case: str, work: Work, expected: str | None) -> None:
        styles = self.strings.get(work["DOI"])
        if styles:
            text = strip_label(styles[pick_style(self.rng, styles)])
        else:
            text = reference_string(work)
        text, noise = damage_reference(text, self.rng, 1)
        self.q(case, expected, noise, unstructured=text)

    def header(self, case: str, work: Work, expected: str | None, **override: Any) -> None:
        b = biblio_of(work)
        b.update(override)
        self.q(case, expected, **b)

    def sibling(self, base: Work, **fields: Any) -> Work:
        w = {k: v for k, v in base.items() if k not in ("DOI",)}
        w["DOI"] = self.new_doi(base)
        w.update(fields)
        return self.add(w)

    # each case -------------------------------------------------------------------

    def notices(self) -> None:
        """Errata, corrections, retractions, replies that share the article's title."""
        forms: list[tuple[str, Callable[[str], str]]] = [
            ("erratum-same-title", lambda t: t),
            ("erratum", lambda t: f"Erratum: {t}"),
            ("correction", lambda t: f"Correction to: {t}"),
            ("corrigendum", lambda t: f"Corrigendum to \u201c{t}\u201d"),
            ("retraction", lambda t: f"Retraction notice to \u201c{t}\u201d"),
            ("reply", lambda t: f"Reply to: Comment on \u201c{t}\u201d"),
        ]
        for name, make in forms:
            for base in self.take(6):
                year = year_of(base) or 2000
                later = self.rng.random() < 0.5
                first = first_page_of(base) or "1"
                page = str(int(first) + self.rng.randint(30, 400)) if first.isdigit() \
                    else f"{first}{self.rng.randint(2, 9)}"
                notice = self.sibling(
                    base, title=[make(title_of(base) or "")],
                    issued={"date-parts": [[year + (1 if later else 0)]]}, page=page,
                    volume=str(int(base["volume"]) + 1) if later and base["volume"].isdigit()
                    else base["volume"])
                if self.rng.random() < 0.5:
                    notice["update-to"] = [{"DOI": base["DOI"], "type": name.split("-")[0],
                                            "label": name.split("-")[0].capitalize()}]
                self.ref(f"notice:{name}:query-article-ref", base, base["DOI"])
                self.header(f"notice:{name}:query-article-header", base, base["DOI"],
                            volume=None, issue=None, pages=None, first_page=None,
                            last_page=None)
                self.header(f"notice:{name}:query-notice", notice, notice["DOI"])
        # Some publishers retitle the retracted article itself ("RETRACTED: ...") and
        # publish a notice beside it; a reference still cites the original title.
        for base in self.take(6):
            title = title_of(base) or ""
            notice = self.sibling(base, title=[f"Retraction notice to \u201c{title}\u201d"],
                                  page=None)
            notice.pop("page")
            self.ref("notice:retracted:query-article-ref", base, base["DOI"])
            base["title"] = [f"RETRACTED: {title}"]
            self.header("notice:retracted:query-article-header", base, base["DOI"], title=title)
            self.header("notice:retracted:query-notice", notice, notice["DOI"])

    def components(self) -> None:
        for base in self.take(12):
            for k in range(self.rng.randint(1, 3)):
                kind = self.rng.choice("gt")
                comp = {"DOI": f"{base['DOI']}.{kind}{k + 1:03d}", "type": "component",
                        "title": list(base["title"]), "indexed": INDEXED}
                if self.rng.random() < 0.5:
                    comp["container-title"] = list(base.get("container-title") or [])
                    comp["issued"] = base["issued"]
                self.add(comp)
            self.ref("component:query-article-ref", base, base["DOI"])
            self.header("component:query-article-header", base, base["DOI"])

    def book_reviews(self) -> None:
        for base in self.take(8):
            title = title_of(base) or ""
            book = self.sibling(base, type="book", publisher="Springer",
                                **{"container-title": [], "volume": None, "page": None})
            for k in ("container-title", "volume", "page", "issue"):
                book.pop(k, None)
            reviewer = self.rng.choice(self.out)["author"][:1]
            review = self.sibling(base, title=[title], author=reviewer,
                                  page=str(self.rng.randint(100, 900)))
            self.catalog.pop(base["DOI"])  # the catalog holds the book and its review
            self.header("book-review:query-book", book, book["DOI"])
            self.header("book-review:query-review", review, review["DOI"])

    def another_year(self) -> None:
        for i, base in enumerate(self.take(24)):
            title = title_of(base) or ""
            words = title.split()
            variant = rng_variant(self.rng, words)
            year = (year_of(base) or 2000) + self.rng.choice([-3, -2, 2, 3, 5])
            sib_fields = {"title": [variant], "issued": {"date-parts": [[year]]},
                          "volume": str(self.rng.randint(1, 90)),
                          "page": f"{self.rng.randint(1, 900)}-{self.rng.randint(901, 999)}"}
            if i % 2 == 0:
                sib = self.sibling(base, **sib_fields)
                self.ref("another-year:query-base-ref", base, base["DOI"])
                self.header("another-year:query-sibling-header", sib, sib["DOI"])
            else:
                # the other year's work is not in the catalog: matching base is wrong
                ghost = dict(base, **sib_fields)
                self.header("another-year:absent-sibling-header", ghost, None)
                self.q("another-year:absent-sibling-ref", None, [],
                       unstructured=reference_string(ghost))

    def conference_journal(self) -> None:
        for i, base in enumerate(self.take(16)):
            year = (year_of(base) or 2000) - 1
            title = title_of(base) or ""
            conf_title = title.split(":")[0] if ":" in title else title
            conf_fields = {"type": "proceedings-article", "title": [conf_title],
                           "issued": {"date-parts": [[year]]},
                           "container-title": [f"Proceedings of the {year} International "
                                               f"Conference on {self.rng.choice(CONF_TOPICS)}"],
                           "page": f"{self.rng.randint(1, 500)}-{self.rng.randint(501, 520)}"}
            if i % 2 == 0:
                conf = self.sibling(base, **conf_fields)
                conf.pop("volume", None)
                conf.pop("issue", None)
                self.ref("conference-journal:query-journal-ref", base, base["DOI"])
                self.ref("conference-journal:query-conference-ref", conf, conf["DOI"])
                self.header("conference-journal:query-journal-header", base, base["DOI"])
            else:
                ghost = dict(base, **conf_fields)
                ghost.pop("volume", None)
                self.q("conference-journal:absent-conference-ref", None, [],
                       unstructured=reference_string(ghost))

    def generic_titles(self) -> None:
        for base in self.take(30):
            title = self.rng.choice(GENERIC)
            base["title"] = [title]
            if self.rng.random() < 0.5:
                self.header("generic-title:full", base, base["DOI"])
            else:
                self.q("generic-title:full-ref", base["DOI"], [],
                       unstructured=reference_string(base))
        for title in GENERIC[:6]:
            self.q("generic-title:title-only", None, [], title=title)
            self.q("generic-title:title-year", None, [], title=title, date="2015")

    def languages(self) -> None:
        texts = orjson.loads(HARD_TEXTS.read_bytes())
        for pair in texts["translated"]:
            orig, english = pair["original"], pair["english"]
            base = self.take(1)[0]
            if self.rng.random() < 0.5:
                base["title"] = [orig]
                case = "translated-title:catalog-original"
            else:
                base["title"] = [f"{orig} / {english}"]
                case = "translated-title:catalog-bilingual"
            self.header(case + ":query-english", base, base["DOI"], title=english)
            self.header(case + ":query-original", base, base["DOI"], title=orig)
        for item in texts["non_latin"]:
            title, journal, english = item["title"], item["journal"], item["english"]
            base = self.take(1)[0]
            base.update(title=[title], author=[dict(a, sequence="first" if i == 0 else
                                                    "additional")
                                               for i, a in enumerate(item["authors"])],
                        **{"container-title": [journal]})
            self.header("non-latin:header", base, base["DOI"])
            self.q("non-latin:ref", base["DOI"], ["line-breaks"],
                   unstructured=line_breaks(reference_string(base), self.rng, 30))
            self.header("non-latin:query-english-title", base, base["DOI"], title=english)
            b = biblio_of(base)
            b["title"] = mojibake(title)
            self.q("mojibake:non-latin", base["DOI"], ["mojibake"], **b)
        accented = [w for w in self.pool if any(ord(c) > 127 for c in
                                                (title_of(w) or "") + str(w.get("author")))]
        for base in accented[:15]:
            self.pool.remove(base)
            b = biblio_of(base)
            b["title"] = mojibake(b["title"])
            for a in b["authors"]:
                a["full_name"], a["surname"] = mojibake(a["full_name"]), mojibake(a["surname"])
            self.q("mojibake:header", base["DOI"], ["mojibake"], **b)
            self.q("mojibake:ref", base["DOI"], ["mojibake"],
                   unstructured=mojibake(reference_string(base)))

    def missing_fields(self) -> None:
        for base in self.take(15):
            self.header("missing:no-year", base, base["DOI"], date=None)
        for base in self.take(15):
            self.header("missing:surname-only", base, base["DOI"],
                        authors=[{"surname": base["author"][0]["family"]}], journal=None,
                        volume=None, issue=None, pages=None, first_page=None, last_page=None)
        for base in self.take(15):
            abbr = abbreviate_journal(container_of(base) or "", dots=self.rng.random() < 0.5)
            self.header("missing:abbrev-journal", base, base["DOI"], journal=abbr,
                        authors=[{"surname": base["author"][0]["family"]}], title=None
                        if self.rng.random() < 0.3 else title_of(base))
        for base in self.take(20):
            journal = container_of(base) or ""
            if self.rng.random() < 0.5:
                journal = abbreviate_journal(journal, dots=self.rng.random() < 0.5)
            fields: dict[str, Any] = {"journal": journal, "volume": base["volume"],
                                      "first_page": first_page_of(base)}
            if self.rng.random() < 0.5:
                fields["date"] = str(year_of(base))
            if self.rng.random() < 0.5:
                fields["authors"] = [{"surname": base["author"][0]["family"]}]
            self.q("missing:no-title-journal-volume-page", base["DOI"], **fields)

    def wrong_doi(self) -> None:
        bases = self.take(40)
        for i, base in enumerate(bases):
            other = bases[(i + 1) % len(bases)]
            kind = i % 4
            if kind == 0:
                self.header("wrong-doi:other-catalog-work", base, base["DOI"], doi=other["DOI"])
            elif kind == 1:
                typo = base["DOI"][:-1] + ("7" if base["DOI"][-1] != "7" else "3")
                self.header("wrong-doi:typo-not-in-catalog", base, base["DOI"], doi=typo)
            elif kind == 2:
                absent = self.out[i]
                self.header("wrong-doi:work-absent", absent, None, doi=other["DOI"])
            else:
                self.header("verified-doi:correct", base, base["DOI"], doi=base["DOI"].upper()
                            if self.rng.random() < 0.3 else base["DOI"])

    def sparse_catalog(self) -> None:
        for base in self.take(40):
            sparse = {"DOI": base["DOI"], "type": "journal-article", "indexed": INDEXED,
                      "title": base["title"],
                      "author": [{"family": base["author"][0]["family"], "sequence": "first"}],
                      "short-container-title": [abbreviate_journal(container_of(base) or "")],
                      "volume": base["volume"], "page": first_page_of(base)}
            self.catalog[base["DOI"]] = sparse
            self.ref("sparse-catalog:ref", base, base["DOI"])
            if self.rng.random() < 0.5:
                self.header("sparse-catalog:header", base, base["DOI"])

    def build(self) -> tuple[list[Work], list[Query]]:
        self.notices()
        self.components()
        self.book_reviews()
        self.another_year()
        self.conference_journal()
        self.generic_titles()
        self.languages()
        self.missing_fields()
        self.wrong_doi()
        self.sparse_catalog()
        for i, q in enumerate(self.queries):
            q["id"] = f"hard-{i:05d}"
        return sorted(self.catalog.values(), key=lambda w: w["DOI"]), self.queries


CONF_TOPICS = ["Pattern Recognition", "Signal Processing", "Materials Science",
               "Biomedical Engineering", "Education Technology", "Power Systems"]


def rng_variant(rng: random.Random, words: list[str]) -> str:
    """A similar title: a word changed, a part number added, or a subtitle."""
    kind = rng.randrange(3)
    if kind == 0 and len(words) > 3:
        w = list(words)
        w[rng.randrange(1, len(w))] = rng.choice(["further", "revisited", "new", "extended"])
        return " ".join(w)
    if kind == 1:
        return " ".join(words) + rng.choice([" II", ": Part 2", " (continued)"])
    return " ".join(words) + rng.choice([": an update", ": a follow-up study",
                                          ": ten years on"])


# --- pairs (fuzzycat) --------------------------------------------------------------------


def release_work(r: dict[str, Any]) -> Work:
    authors = [{"given": c.get("given_name"), "family": c.get("surname") or (
        (c.get("raw_name") or "").split()[-1:] or [""])[0]}
               for c in r["contribs"] if c.get("role") in (None, "author") and
               (c.get("surname") or c.get("raw_name"))]
    work: Work = {"DOI": r["doi"].lower(), "type": r.get("crossref_type") or "other",
                  "indexed": INDEXED}
    if r.get("title"):
        work["title"] = [r["title"]]
    if authors:
        work["author"] = [dict({k: v for k, v in a.items() if v},
                               sequence="first" if i == 0 else "additional")
                          for i, a in enumerate(authors)]
    if r.get("release_year"):
        work["issued"] = {"date-parts": [[r["release_year"]]]}
    if r.get("container_name"):
        work["container-title"] = [r["container_name"]]
    for src, dst in (("volume", "volume"), ("issue", "issue"), ("pages", "page"),
                     ("publisher", "publisher")):
        if r.get(src):
            work[dst] = r[src]
    return work


def build_pairs() -> tuple[list[Work], list[Query]]:
    """fuzzycat's verdicts as queries: the catalog holds the second release of each
    pair; the first is the query. EXACT/STRONG: expect the second's DOI; DIFFERENT:
    expect null (unless the first release is itself in the catalog)."""
    pairs = list(read_gz_lines(SOURCE_DIR / "fuzzycat_pairs.jsonl.gz"))
    catalog: dict[str, Work] = {}
    for p in pairs:
        if p["status"] in ("EXACT", "STRONG", "DIFFERENT") and p["b"]["doi"]:
            catalog[p["b"]["doi"].lower()] = release_work(p["b"])
    gold: dict[str, set[str | None]] = {}
    first: dict[str, dict[str, Any]] = {}
    reasons: dict[str, str] = {}
    for p in pairs:
        a, b = p["a"], p["b"]
        if p["status"] not in ("EXACT", "STRONG", "DIFFERENT") or not a.get("title"):
            continue
        key = a["ident"]
        first[key] = a
        reasons[key] = f"{p['status']}:{p['reason'] or 'NONE'}"
        g = gold.setdefault(key, set())
        if a.get("doi") and a["doi"].lower() in catalog:
            g.add(a["doi"].lower())
        if p["status"] != "DIFFERENT" and b.get("doi") and b["doi"].lower() in catalog:
            g.add(b["doi"].lower())
        if not g and p["status"] == "DIFFERENT":
            g.add(None)
    queries: list[Query] = []
    for key in sorted(first):
        g = gold[key]
        real = {d for d in g if d}
        if len(real) > 1 or (real and None in g) or not g:
            continue  # two right answers, or a verdict without a catalog record
        expected = next(iter(real)) if real else None
        b = biblio_of(release_work(dict(first[key], doi=first[key].get("doi") or "")))
        b.update(id=f"pairs-{len(queries):05d}", expected_doi=expected,
                 case=f"fuzzycat:{reasons[key]}", noise=[])
        queries.append(b)
    return sorted(catalog.values(), key=lambda w: w["DOI"]), queries


# --- main --------------------------------------------------------------------------------


def build_all(seed: int) -> dict[str, tuple[list[Work], list[Query]]]:
    kept, out, strings = rme_works()
    return {
        "refs": build_refs(random.Random(f"{seed}:refs"), kept, out, strings),
        "headers": build_headers(random.Random(f"{seed}:headers"), kept, out),
        "hard": HardBuilder(random.Random(f"{seed}:hard"),
                            [dict(w) for w in kept], out, strings).build(),
        "pairs": build_pairs(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=25)
    parser.add_argument("--out", type=Path, default=DATA_DIR)
    args = parser.parse_args()
    for name, (catalog, queries) in build_all(args.seed).items():
        write_gz_lines(args.out / name / "catalog.jsonl.gz", catalog)
        write_gz_lines(args.out / name / "queries.jsonl.gz", queries)
        n_null = sum(q["expected_doi"] is None for q in queries)
        print(f"{name:8} {len(catalog):6,} works  {len(queries):5,} queries "
              f"({n_null:,} expecting no match)")


if __name__ == "__main__":
    main()
