"""One query against one catalog record: evidence in points, and the reasons.

Each field both sides have adds points when it agrees and takes points away
when it disagrees (docs/matching.md has the table); a field only one side has
says nothing. A field a reference's parser missed is looked for in the string
itself. Some disagreements are *conflicts* (another year, a title that differs):
a conflicting candidate is never a match (docs/matching.md, "Comparing a
query with a record").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz.distance import Indel
from rapidfuzz.fuzz import partial_ratio

from sandcrawler.match.query import Query
from sandcrawler.match.records import CatalogRecord
from sandcrawler.match.text import (
    CONFERENCE_WORDS,
    container_in_string,
    containers_similar,
    content_tokens,
    is_generic,
    is_one_word,
    journals_agree,
    page_digits,
    surname_last,
    title_numbers,
)

# points per verdict
TITLE_SAME, TITLE_SIMILAR, TITLE_CLOSE, TITLE_DIFFERS = 4.0, 3.0, 1.0, -3.0
#: what a generic title ("Introduction") can add at most
TITLE_GENERIC_CAP = 1.0
#: what a title of one word can add at most
TITLE_ONE_WORD_CAP = 3.0
AUTHOR_SAME, AUTHOR_PRESENT, AUTHOR_DIFFERS, AUTHOR_IN_STRING = 1.5, 0.7, -1.5, 1.2
#: co-authors agreeing besides the first: three or more, two, one
AUTHORS_MANY, AUTHORS_SAME, AUTHORS_ONE = 1.5, 1.0, 0.5
#: all of four or more authors agreeing, the first one first
AUTHORS_ALL = 1.0
YEAR_SAME, YEAR_NEAR, YEAR_DIFFERS, YEAR_IN_STRING = 1.0, 0.3, -2.5, 0.7
JOURNAL_SAME, JOURNAL_SIMILAR, JOURNAL_IN_STRING, JOURNAL_DIFFERS = 1.0, 0.5, 0.7, -0.7
VOLUME_SAME, VOLUME_DIFFERS, VOLUME_IN_STRING = 1.0, -1.5, 0.4
PAGE_SAME, PAGE_DIFFERS, PAGE_IN_STRING = 1.5, -1.5, 0.6
ISSUE_SAME, ISSUE_DIFFERS = 0.3, -0.3
#: journal, volume and first page all agreeing: a work located without its title
#: (with the year, a match even when the first author's name is garbled)
LOCATOR_SAME = 2.0
#: the record is a notice (erratum, reply, figure) and the query is not, or the reverse
RECORD_NOTICE, QUERY_NOTICE, OTHER_NOTICE = -3.0, -1.5, -1.0
IDENTIFIER_AGREES = 3.0
#: the container taken for the title, and the first author, a co-author and the
#: year agreeing
CONTAINER_TEAM = 1.5

#: work types whose date is the version's own: a year off is another version
#: (precision first: a proceedings paper cited with its volume's later year is
#: missed, rather than a journal article taken for its conference version)
_DATED_VERSIONS = frozenset({"posted-content", "proceedings-article"})
#: the names of preprint servers (folded): a citation of the preprint names one
_PREPRINT_SERVERS = re.compile(
    r"\b(?:arxiv|biorxiv|medrxiv|chemrxiv|ssrn|research square|preprints?|psyarxiv|socarxiv"
    r"|osf preprints|eartharxiv|techrxiv|authorea|scielo preprints|zenodo|qeios"
    r"|cold spring harbor laboratory|social science research network)\b", re.IGNORECASE)

#: title similarity (0..1) thresholds of the verdicts
SAME, SIMILAR, CLOSE = 0.95, 0.88, 0.75


@dataclass(frozen=True, slots=True)
class Evidence:
    record: CatalogRecord
    points: float
    reasons: tuple[str, ...]
    #: a disagreement no agreement outweighs (a different year, a different title)
    conflict: bool
    title_same: bool
    #: the only conflict is that the record is a notice and the input names none:
    #: an identifier the input carries (the notice's own DOI) still verifies it
    notice_only: bool = False

    def agreeing(self) -> int:
        """How many fields besides the title agree."""
        return sum(1 for r in self.reasons
                   if r.endswith(":same") and not r.startswith(("title", "locator")))


def _conference_elsewhere(q: Query, rec: CatalogRecord) -> bool:
    """The string names a conference outside its title, and the record is no
    conference's: the record's venue is not the one cited."""
    return q.names_a_conference and rec.type != "proceedings-article" \
        and not any(CONFERENCE_WORDS.search(t) for t in (*rec.titles, *rec.journals))


def _preprint_venue(journal: str | None) -> bool:
    return bool(journal) and _PREPRINT_SERVERS.search(journal or "") is not None


def _numbers_differ(q: Query, title: str, from_raw: bool) -> bool:
    """The record's title and the query's name different numbers (part I and
    part II of a series, a report for another year), or one of them ends in a
    part's number the other has not ("…, part ii", "… (2)")."""
    theirs = title_numbers(title)
    if from_raw:
        return bool(theirs) and not theirs <= set(q.raw.split())
    ours = title_numbers(q.title)
    if ours and theirs:
        return ours != theirs
    only, numbered = (ours, q.title) if ours else (theirs, title)
    return bool(only & set(numbered.split()[-2:]))


def _title_similarity(q: Query, rec: CatalogRecord) -> tuple[float, bool]:
    """The best similarity of the query's title (or reference string) to any of
    the record's titles, and whether it came from the reference string. Titles
    whose numbers differ are at most ``CLOSE`` - 0.01: never the same."""
    best, from_raw, best_title = 0.0, False, ""
    for t in rec.titles:
        if q.title:
            s = Indel.normalized_similarity(q.title, t)
            if s < SAME:
                short, long_ = (q.title, t) if len(q.title) <= len(t) else (t, q.title)
                if long_.startswith(short + " ") and len(content_tokens(short)) >= 2:
                    s = max(s, 0.93)  # a title with its subtitle, or without
                elif len(short) >= 20 and len(short.split()) >= 3 \
                        and len(short) >= 0.3 * len(long_):
                    # bilingual titles, a translation in brackets
                    s = max(s, 0.96 * partial_ratio(short, long_) / 100)
            if s > best:
                best, from_raw, best_title = s, False, t
        # a short title is found by chance in a long string: only longer ones
        if q.raw and len(t) >= 30 and len(t.split()) >= 4:
            s = 0.98 * partial_ratio(t, q.raw) / 100
            if s > best:
                best, from_raw, best_title = s, True, t
    if best >= CLOSE and _numbers_differ(q, best_title, from_raw):
        best = CLOSE - 0.01
    return best, from_raw


def _surname_agrees(a: str, b: str) -> bool:
    if a == b:
        return True
    la, lb = surname_last(a), surname_last(b)
    if la == lb and len(la) > 1:
        return True
    # transliterations and OCR: "Müller"/"Mueller" fold to "muller"/"mueller"
    if len(a) >= 4 and Indel.normalized_similarity(a, b) >= 0.85:
        return True
    # a short name a letter off by OCR's usual confusions ("Zbang" for Zhang)
    return min(len(a), len(b)) >= 5 and _ocr_skeleton(a) == _ocr_skeleton(b)


# the glyphs OCR takes for one another, each group reduced to one
_OCR_PAIRS = (("rn", "m"), ("cl", "d"), ("vv", "w"))
_OCR_GLYPHS = str.maketrans({"b": "h", "e": "c", "u": "n", "1": "l", "i": "l", "0": "o",
                             "5": "s"})


@lru_cache(maxsize=4096)
def _ocr_skeleton(name: str) -> str:
    for src, dst in _OCR_PAIRS:
        name = name.replace(src, dst)
    return name.translate(_OCR_GLYPHS)


def _surname_truncated(a: str, b: str) -> bool:
    """One name is the other cut short (at least 4 letters and half of it)."""
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    return len(short) >= 4 and len(short) * 2 >= len(long_) and long_.startswith(short) \
        and short != long_


def compare(q: Query, rec: CatalogRecord) -> Evidence:
    points = 0.0
    reasons: list[str] = []
    conflict = notice_only = False
    raw_words = q.raw_words

    # --- title ---
    title_same = title_conflict = False
    if (q.title or q.raw) and rec.titles:
        sim, from_raw = _title_similarity(q, rec)
        if sim >= SAME:
            verdict, p = "same", TITLE_SAME
            title_same = True
        elif sim >= SIMILAR:
            verdict, p = "similar", TITLE_SIMILAR
        elif sim >= CLOSE:
            verdict, p = "close", TITLE_CLOSE
        elif q.title:
            verdict, p = "differs", TITLE_DIFFERS
            conflict = title_conflict = True
        else:
            verdict, p = "", 0.0  # a reference string that does not hold it: no verdict
        if verdict:
            if p > TITLE_ONE_WORD_CAP and (is_one_word(q.title) or is_one_word(rec.titles[0])):
                p = TITLE_ONE_WORD_CAP
            if p > TITLE_GENERIC_CAP and (q.generic_title or is_generic(rec.titles[0])):
                p = TITLE_GENERIC_CAP
                reasons.append("title:generic")
            points += p
            reasons.append(f"title:{verdict}" + ("-in-string" if from_raw and p > 0 else ""))

    # --- authors ---
    if rec.surnames:
        others = 0
        if len(q.surnames) > 1 and len(rec.surnames) > 1:
            others = sum(1 for s in q.surnames[1:6]
                         if any(_surname_agrees(s, r) for r in rec.surnames[1:8]))
        elif raw_words:
            others = sum(1 for r in rec.surnames[1:4] if surname_last(r) in raw_words)
        if q.surnames:
            first = q.surnames[0]
            if _surname_agrees(first, rec.surnames[0]):
                points += AUTHOR_SAME
                reasons.append("first-author:same")
            elif any(_surname_agrees(first, s) for s in rec.surnames[1:]):
                points += AUTHOR_PRESENT
                reasons.append("first-author:present")
            elif raw_words and surname_last(rec.surnames[0]) in raw_words:
                points += AUTHOR_IN_STRING
                reasons.append("first-author:in-string")
            elif _surname_truncated(first, rec.surnames[0]):
                # an extraction cut the name ("Schlä" for "Schläpfer")
                points += AUTHOR_PRESENT
                reasons.append("first-author:truncated")
            elif len(q.surnames) > 1 and _surname_agrees(q.surnames[1], rec.surnames[0]):
                # the first "author" is something else an extraction took for one
                # (a place, "Cambridge England"): the record's first comes second
                points += AUTHOR_PRESENT
                reasons.append("first-author:shifted")
            elif others >= 2:
                # the co-authors agree: the first name is mangled, not another's
                reasons.append("first-author:unreadable")
            else:
                points += AUTHOR_DIFFERS
                reasons.append("first-author:differs")
        elif raw_words and surname_last(rec.surnames[0]) in raw_words:
            points += AUTHOR_IN_STRING
            reasons.append("first-author:in-string")
        if others >= 3:
            points += AUTHORS_MANY
            reasons.append("authors:same")
            if len(q.surnames) >= 4 and others >= len(q.surnames) - 1 \
                    and len(rec.surnames) >= len(q.surnames) - 1 \
                    and _surname_agrees(q.surnames[0], rec.surnames[0]):
                # every author of four or more, the first first: a team's list
                # is nearly a fingerprint (a second work of the team, same year,
                # makes the answer ambiguous)
                points += AUTHORS_ALL
                reasons.append("authors:all")
        elif others >= 2:
            points += AUTHORS_SAME
            reasons.append("authors:same")
        elif others == 1:
            points += AUTHORS_ONE
            reasons.append("authors:one-more")
    author_ok = any(r in ("first-author:same", "first-author:in-string") for r in reasons)

    # --- year ---
    if rec.years:
        if q.year:
            d = min(abs(q.year - y) for y in rec.years)
            if d == 0:
                points += YEAR_SAME
                reasons.append("year:same")
            elif raw_words and any(str(y) in raw_words for y in rec.years):
                # the parse took another number for the year; the string has the work's
                points += YEAR_IN_STRING
                reasons.append("year:in-string")
            elif d == 1:
                points += YEAR_NEAR
                reasons.append("year:near")
            else:
                points += YEAR_DIFFERS
                reasons.append("year:differs")
                conflict = True
        elif raw_words and any(str(y) in raw_words for y in rec.years):
            points += YEAR_IN_STRING
            reasons.append("year:in-string")

    # --- journal, volume, issue, page ---
    # A reference string's parse may put a number in the wrong field: a value
    # of the record's that the string holds counts, less, as agreement.
    journal_ok = volume_ok = issue_ok = False
    # the page's verdict first: the OCR'd journal check below is asked only
    # where it could complete a locator (it costs a fuzzy search of the string)
    page_verdict = ""
    if rec.page:
        digits = page_digits(rec.page)
        if q.page and (q.page == rec.page or (digits and page_digits(q.page) == digits)):
            page_verdict = "same"
        elif rec.page in raw_words:
            page_verdict = "in-string"
        elif q.page:
            page_verdict = "differs"
    page_ok = page_verdict in ("same", "in-string")
    if rec.journals:
        verdict = ""
        if q.journal and any(journals_agree(q.journal, j) for j in rec.journals):
            verdict, p = "same", JOURNAL_SAME
        elif q.journal and any(containers_similar(q.journal, j) for j in rec.journals):
            verdict, p = "similar", JOURNAL_SIMILAR
        elif q.raw and any(container_in_string(j, q.raw, ocr=page_ok) for j in rec.journals):
            verdict, p = "in-string", JOURNAL_IN_STRING
        elif q.journal:
            verdict, p = "differs", JOURNAL_DIFFERS
        if verdict:
            points += p
            reasons.append(f"journal:{verdict}")
            journal_ok = verdict != "differs"
    if rec.volume:
        if q.volume == rec.volume:
            points += VOLUME_SAME
            reasons.append("volume:same")
            volume_ok = True
        elif rec.volume in raw_words:
            points += VOLUME_IN_STRING
            reasons.append("volume:in-string")
            volume_ok = True
        elif q.volume:
            points += VOLUME_DIFFERS
            reasons.append("volume:differs")
    if page_verdict:
        points += {"same": PAGE_SAME, "in-string": PAGE_IN_STRING, "differs": PAGE_DIFFERS}[
            page_verdict]
        reasons.append(f"page:{page_verdict}")
    if rec.issue and rec.issue in raw_words:
        issue_ok = True  # the string holds it (its parse may have put it elsewhere)
    elif q.issue and rec.issue:
        issue_ok = q.issue == rec.issue
        points += ISSUE_SAME if issue_ok else ISSUE_DIFFERS
        reasons.append("issue:same" if issue_ok else "issue:differs")
    # a work with no volume (a book's chapter, a proceedings paper, a series
    # numbered by issue) is located by its container and first page, within its
    # year when the input gives one: a series' pages recur every year (a parsed
    # reference's issue is too often another number to decide it). A series
    # numbered by issue prints a page 31 in each of its issues of a year: its
    # issue, or its first author, says which
    within_year = not q.year or issue_ok or any(r in reasons for r in ("year:same",
                                                                       "year:in-string"))
    one_place = not rec.issue or issue_ok or author_ok
    if journal_ok and page_ok and (volume_ok or (not rec.volume and within_year and one_place)):
        points += LOCATOR_SAME
        reasons.append("locator:same")
        if title_conflict and author_ok and "year:differs" not in reasons:
            # journal, volume, page and first author agree: the "title" is not
            # this work's title but something an extractor took for it (the
            # journal's name, the authors, a running head)
            points -= TITLE_DIFFERS
            reasons.append("title:not-a-title")
            conflict = False

    if conflict and "year:differs" in reasons and "locator:same" in reasons \
            and not title_conflict \
            and any(r.startswith(("title:same", "title:similar")) for r in reasons):
        # the title, journal, volume and page agree: the year the parse found is
        # another number of the string (a year in the title, a book reviewed)
        conflict = False
        reasons.append("year:ignored")
    if title_conflict and "title:not-a-title" not in reasons and rec.journals and q.title and any(
            containers_similar(q.title, j) for j in rec.journals) \
            and ("first-author:same" in reasons
                 or {"first-author:in-string", "locator:same"} <= set(reasons)) \
            and "year:differs" not in reasons \
            and ("page:same" in reasons or "page:in-string" in reasons
                 or any(r.startswith("authors:") for r in reasons)):
        # the parse took the book or proceedings for the title ("Advances in
        # Intelligent Systems and Computing (2014) 61"): the container agrees
        points -= TITLE_DIFFERS
        reasons.append("title:is-the-container")
        conflict = False
        if "year:same" in reasons and any(r.startswith("authors:") for r in reasons):
            # a reference without a title ("Kim, T.; Cheong, S. 2007 International
            # Conference on ... 2007."): the team, in the proceedings or book it
            # names, in that year, locates the paper as a volume and page would
            points += CONTAINER_TEAM
    if "year:near" in reasons and ("journal:differs" in reasons or "page:differs" in reasons
                                   or (rec.type in _DATED_VERSIONS
                                       and "journal:same" not in reasons)
                                   or (not journal_ok and _conference_elsewhere(q, rec))):
        # a year apart in another venue or at other pages, or from a preprint or
        # a proceedings paper: another version of the work (the conference paper
        # of a journal article, the preprint of an article), not this record;
        # a header naming the paper's own proceedings a year early is dated
        # online first, not another version
        conflict = True
        reasons.append("version:differs")
    elif q.journal and _preprint_venue(q.journal) and rec.type not in (None, "posted-content") \
            and rec.journals and not any(_preprint_venue(j) for j in rec.journals):
        # the input cites the preprint; the record is the published version (not
        # a server's own record typed otherwise: "SSRN Electronic Journal"; nor a
        # record naming no venue, which may be the server's own typed "other")
        conflict = True
        reasons.append("version:differs")
    elif rec.type == "posted-content" and q.journal and not journal_ok \
            and not _preprint_venue(q.journal):
        # the input names a journal or proceedings that is no preprint server and
        # the record is a preprint: the published version is cited (without a
        # year, nothing else tells the two apart)
        conflict = True
        reasons.append("version:differs")
    elif "journal:differs" in reasons and "page:differs" in reasons \
            and not any(r.startswith("year:") for r in reasons):
        # another venue at other pages, and no year to say it is this record:
        # another version (a conference paper's journal article), as a year
        # apart would say
        conflict = True
        reasons.append("version:differs")
    if "page:differs" in reasons and (not q.title or "title:is-the-container" in reasons) \
            and not any(r.startswith("title:") and r.endswith("-in-string") for r in reasons):
        # no title was compared (none, or set aside): the authors, journal and
        # volume fit every paper of a team's series in one volume; the first
        # page is what tells them apart
        conflict = True

    # --- notices: errata, replies, figures share the article's title ---
    if rec.kind != q.kind:
        if rec.kind and not q.kind:
            # a notice (an erratum, a retraction) is never the work it notices:
            # with the article absent, a match would name the wrong DOI; only the
            # notice's own place (its page) says the input cites the notice
            if "locator:same" not in reasons:
                # cited by its own journal, volume and page, it is the notice
                points += RECORD_NOTICE
            reasons.append(f"record:{rec.kind}")
            if not page_ok:
                notice_only = not conflict
                conflict = True
        elif q.kind and not rec.kind:
            points += QUERY_NOTICE
            reasons.append(f"query:{q.kind}")
        else:
            points += OTHER_NOTICE
            reasons.append(f"record:{rec.kind}")

    return Evidence(rec, points, tuple(reasons), conflict, title_same, notice_only)
