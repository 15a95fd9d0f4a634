"""The one folding of bibliographic text for matching, and what it tells.

Titles, names and journal titles are compared folded: mojibake undone
(``textfix.readable``), markup and entities dropped (Crossref titles carry
``<i>``, ``<sub>`` and MathML), compatibility forms and accents removed, case
folded, and every run of non-word characters one space. Letters of every script
stay: a Chinese or Russian title folds to itself, lower-cased; CJK ideographs
and kana become one token each, as they are written without spaces.
"""

from __future__ import annotations

import html
import re
import unicodedata
from functools import lru_cache
from typing import NamedTuple

from rapidfuzz.distance import Indel
from rapidfuzz.fuzz import partial_ratio

from sandcrawler.core.textfix import readable

_TAG = re.compile(r"<[^>]{0,200}>")
_NON_WORD = re.compile(r"[\W_]+")
# CJK ideographs, kana, hangul syllables: one token per character
_CJK = re.compile("([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff])")
_SPACES = re.compile(r"\s+")
_YEAR = re.compile(r"(?<!\d)(1[5-9]\d\d|20\d\d|2100)(?!\d)")

#: words that say nothing about which work a title is
STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "de", "del", "der", "des", "di", "die",
    "do", "du", "el", "en", "et", "for", "from", "how", "in", "is", "it", "la", "las", "le",
    "les", "los", "of", "on", "or", "per", "the", "to", "und", "von", "with", "zu", "zur"})

#: section headings a header extractor takes for the title: never a work's title
SECTION_HEADINGS = frozenset({
    "original article", "research article", "review article", "original research",
    "original paper", "research paper", "full paper", "short communication", "article",
    "short report", "brief report", "case report", "letters", "communication",
    "technical note", "research", "mini review", "original contribution",
    "original investigation", "clinical study", "research letter", "regular article",
    "articles", "original articles", "research articles", "scientific article",
})

#: titles that many works share: agreement on them alone identifies nothing
GENERIC_TITLES = frozenset({
    "introduction", "editorial", "reply", "preface", "foreword", "index", "contents",
    "table of contents", "letter to the editor", "letters to the editor", "letter",
    "correspondence", "erratum", "errata", "correction", "corrigendum", "retraction",
    "news", "book review", "book reviews", "reviews", "abstracts", "announcements",
    "in this issue", "editorial board", "acknowledgements", "acknowledgments",
    "acknowledgement to reviewers", "front matter", "back matter", "cover", "obituary",
    "discussion", "conclusion", "conclusions", "summary", "commentary", "comment",
    "response", "author reply", "authors reply", "reply to comment", "in memoriam",
    "guest editorial", "editors note", "editor s note", "notes", "miscellany",
    "introduction to the special issue", "research highlights", "highlights",
    "issue information", "masthead", "title page", "untitled", "abstract",
    "review", "perspective", "viewpoint", "opinion",
    "bibliography", "references", "appendix", "glossary", "epilogue", "prologue",
    "afterword", "chapter", "part", "frontmatter", "backmatter",
}) | SECTION_HEADINGS

# A notice about another work (or a part of one) often repeats that work's title
# ("Correction: <title>", "Figure 2", a review headed by the book's title). Read
# on the title before folding: its colon is what tells "Correction: X" from
# "Correction of myopia".
_AFTER = r"\s*(?:[:.\-\u2013\u2014(\[]|(?:to|for|in)\b|$)"
_NOTICE = re.compile(
    r"^\W*(?:"
    r"(?P<erratum>(?:errat(?:um|a)|corrigend(?:um|a)|corrections?|addendum|"
    r"author correction|publisher correction|notice of correction)" + _AFTER + r")|"
    r"(?P<retraction>(?:retraction(?: note| notice)?|"
    r"notice of retraction|expression of concern)" + _AFTER + r"|retraction of\b)|"
    r"(?P<reply>(?:reply|response|rejoinder)\s*(?:[:.\-\u2013\u2014]|$|to\s+(?:the\s+|a\s+)?"
    r"(?:comments?|letter|critique|reviewers?|commentary|correspondence|discussion|editor|"
    r"reply|response|dr|prof)\b)|reply\s+to\b|authors?\W{0,2}s?\s+(?:reply|response)\b|"
    r"(?:comments?|commentary)\s+on\b|re\s*:)|"
    r"(?P<review>book\s+reviews?\b)|"
    r"(?P<component>(?:fig(?:ure)?s?\.?\s*s?\d+|tables?\s*s?\d+|supplementa(?:ry|l)\s+"
    r"(?:material|data|information|figures?|tables?|file)|appendix\s+[a-z0-9]\b|"
    r"peer\s+review(?:\s+report)?|decision\s+letter|author\s+response)\b)"
    r")",
    re.IGNORECASE)


@lru_cache(maxsize=65536)
def fold(text: str) -> str:
    """``text`` folded for comparison (see the module's note); "" for no words."""
    if not text:
        return ""
    if text.isascii():  # most titles: no mojibake, accents or scripts to handle
        if "<" in text:
            text = _TAG.sub(" ", text)
        if "&" in text:
            text = html.unescape(text)
        if text.isascii():
            return _NON_WORD.sub(" ", text.lower()).strip()
    text = readable(text)
    if "<" in text:
        text = _TAG.sub(" ", text)
    if "&" in text:
        text = html.unescape(text)
    text = unicodedata.normalize("NFKD", text)
    if not text.isascii():
        text = "".join(c for c in text if not unicodedata.combining(c))
    text = _NON_WORD.sub(" ", text.casefold())
    if not text.isascii():
        text = _CJK.sub(r" \1 ", text)
    return _SPACES.sub(" ", text).strip()


def tokens(folded: str) -> list[str]:
    return folded.split()


def content_tokens(folded: str) -> list[str]:
    """The words of a folded title that can tell works apart."""
    return [t for t in folded.split() if t not in STOPWORDS]


_ROMAN = frozenset({"ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x", "xi", "xii", "xiii",
                    "xiv", "xv", "xvi", "xvii", "xviii", "xix", "xx"})
_ORDINAL_BEFORE = frozenset({"part", "paper", "series", "phase", "type", "volume", "vol", "no"})


_DIGIT = re.compile(r"\d")


@lru_cache(maxsize=8192)
def title_numbers(folded_title: str) -> frozenset[str]:
    """The numbers a title holds ("part ii", "2020", "type 1", "c10h12n2o3"):
    two titles alike but for them are two works (a series, a yearly report)."""
    words = folded_title.split()
    out: set[str] = set()
    if _DIGIT.search(folded_title):
        for w in words:
            if w.isdigit():
                out.add(str(int(w)) if len(w) < 6 else w)
            elif sum(c.isdigit() for c in w) >= 2:
                # a formula, a strain, a gene: "c10h12n2o3", "h1n1", "p53"; one
                # digit in a word is more often OCR's ("on1ine", "wor1d")
                out.add(w)
    if not _ROMAN.isdisjoint(words) or "i" in words:
        for i, w in enumerate(words):
            if w in _ROMAN or (w == "i" and i > 0 and words[i - 1] in _ORDINAL_BEFORE):
                out.add(w)
    return frozenset(out)


def is_generic(folded_title: str) -> bool:
    """A title that many works share ("Introduction"), or no word at all."""
    return folded_title in GENERIC_TITLES or not content_tokens(folded_title) \
        or len(folded_title) < 3


def is_one_word(folded_title: str) -> bool:
    """A title of one word ("Bisanji", "Cancer"): it identifies, less surely."""
    return len(content_tokens(folded_title)) == 1


# what a header extractor may take for a title: boilerplate of the page
_BOILERPLATE = re.compile(
    r"\b(?:open access|contents lists available|this article (?:appeared|is)|"
    r"terms (?:and|&)? ?conditions|full terms|"
    r"all rights reserved|creative commons|downloaded from|journal homepage|"
    r"available online|accepted manuscript|author manuscript|copyright|"
    r"published by|elsevier|springer|wiley|doi \d)\b")
# a running head: "HERNIA 1 (1997) 37", "Tissue Antigens 24 (2008) 58-59", or a
# book's or volume-less series' with no volume ("The Wiley Blackwell Encyclopedia
# of Health, Illness, Behavior and Society (2014) 1120": then nothing may follow)
_RUNNING_HEAD = re.compile(
    r"^(?P<journal>[^\W\d][\w .,&'-]{1,160}?)(?:[ ,.]+(?:vol\.? ?)?(?P<volume>\d{1,4}))?"
    r"(?:[ ,.]*\((?P<issue>[\w-]{1,8})\))?[ ,.]*\((?P<year>1[5-9]\d\d|20\d\d)\)"
    r"[ ,.:]*(?:pp?\.? ?)?(?P<page>[A-Za-z]?\d{1,6})", re.IGNORECASE)
# what may follow a volume-less head's first page: its last page
_HEAD_END = re.compile(r"(?:\s*[-\u2013]\s*[A-Za-z]?\d{1,6})?\W*", re.IGNORECASE)


# an article that was retracted keeps its title behind a mark: it is the article
_RETRACTED = re.compile(r"^\W*(?:retracted(?: article)?|withdrawn)\s*[:.\-\u2013\u2014]\s*",
                        re.IGNORECASE)


def unmarked(title: str) -> str | None:
    """A retracted article's title without its "RETRACTED:" mark (None when
    it has none)."""
    m = _RETRACTED.match(title)
    return title[m.end():] if m else None


class RunningHead(NamedTuple):
    """What a running head prints: volume and issue None when it prints none."""

    journal: str
    volume: str | None
    issue: str | None
    year: str
    page: str


def running_head(title: str) -> RunningHead | None:
    """A running head taken for the title, with its journal, volume, issue, year
    and page."""
    text = title.strip()
    m = _RUNNING_HEAD.match(text)
    if m is None or (m["volume"] is None and not _HEAD_END.fullmatch(text, m.end())):
        return None
    return RunningHead(m["journal"], m["volume"], m["issue"], m["year"], m["page"])


# an author list in the title's place: "G. V. Rao and K. S. J. Rao", "M. F. ANGEL, F. ZHANG"
_AUTHOR_LIST = re.compile(
    r"^(?:(?:[A-Z]\.(?:[ -]?[A-Z]\.)*\s*)+[A-Z][\w'\u2019-]+(?:\s*(?:,|and|&)\s*)?){1,30}$")


def author_list_surnames(title: str) -> list[str] | None:
    """The surnames of a title that is an author list ("G. V. Rao and K. S. J. Rao"),
    else None."""
    text = title.strip()
    if not _AUTHOR_LIST.match(text):
        return None
    names = re.findall(r"(?:[A-Z]\.(?:[ -]?[A-Z]\.)*\s*)+([A-Z][\w'\u2019-]+)", text)
    return names or None


def is_garbage_title(folded_title: str, surnames: tuple[str, ...]) -> bool:
    """Not a title: page boilerplate, a section heading, or the author list (two
    of the authors' surnames, and few other words)."""
    if folded_title in SECTION_HEADINGS or _BOILERPLATE.search(folded_title):
        return True
    if len(surnames) >= 2 or (surnames and len(folded_title.split()) <= 4):
        words = [w for w in content_tokens(folded_title) if len(w) > 1]  # no initials
        names = {surname_last(s) for s in surnames}
        hits = sum(1 for w in words if w in names)
        if hits >= min(2, len(names)) and hits * 2 > len(words):
            return True
    return False


def notice_kind(title: str) -> str | None:
    """``erratum``, ``retraction``, ``reply``, ``review`` or ``component`` when
    the title (as written, not folded) reads as a notice about, or a part of,
    another work."""
    m = _NOTICE.match(readable(title)) if title else None
    return m.lastgroup if m else None


def year_of(value: object) -> int | None:
    """The year in a date as biblios write it ("2001", "2001-05-03", "May 2001")."""
    if isinstance(value, int):
        return value if 1500 <= value <= 2100 else None
    if not isinstance(value, str):
        return None
    m = _YEAR.search(value)
    return int(m.group(1)) if m else None


_PAGE = re.compile(r"[A-Za-z]{0,3}\d+[A-Za-z]?|[ivxlcdm]+", re.IGNORECASE)


def first_page(pages: str | None) -> str | None:
    """The first page of a range as a comparable key: "123-130" -> "123",
    "e1002345" -> "e1002345", "S12-S19" -> "s12"; None when there is none."""
    if not pages:
        return None
    m = _PAGE.search(pages)
    return m.group(0).lower() if m else None


def page_digits(page: str) -> str:
    """A page key's digits, for "e1234" against "1234" (electronic numbers)."""
    return "".join(c for c in page if c.isdigit())


def number_key(value: str | None) -> str | None:
    """A volume or issue as a key: "Vol. 12" -> "12", "12(3)" stays "12 3"."""
    if not value:
        return None
    key = fold(value)
    for prefix in ("vol ", "volume ", "no ", "issue ", "nr "):
        if key.startswith(prefix):
            key = key[len(prefix):]
    return key or None


def surname_key(name: str | None) -> str:
    """A surname folded, particles kept ("van der Berg" -> "van der berg")."""
    return fold(name or "")


def surname_last(key: str) -> str:
    """The last word of a folded surname ("van der berg" -> "berg")."""
    return key.rsplit(" ", 1)[-1] if key else key


_JOURNAL_SKIP = frozenset({"of", "the", "and", "for", "in", "on", "de", "la", "le", "der",
                           "und", "et", "des", "a", "an", "fur", "i",
                           # series and sections, which abbreviations often drop
                           "series", "ser", "section", "sect", "part", "pt"})


def _abbreviates(short: str, word: str) -> bool:
    """``short`` abbreviates ``word``: a prefix ("biol" of "biological") or a
    contraction with the first letter kept ("natl" of "national")."""
    if not short or short[0] != word[0]:
        return False
    if word.startswith(short):
        return True
    it = iter(word)
    return all(c in it for c in short)


#: words that name a conference (folded); not "proceedings", which names
#: journals too ("Proceedings of the Royal Society B")
CONFERENCE_WORDS = re.compile(r"\b(?:conference|symposium|workshop|congress)\b")


def containers_similar(a: str, b: str) -> bool:
    """Two folded journal or book names the same but for OCR damage
    ("world journal of gastroentcrology") or a cut ("journal of experimental
    psychology learning memory and")."""
    return Indel.normalized_similarity(a, b) >= 0.85 or (len(a) >= 12 and partial_ratio(a, b) >= 90)


def containers_agree(a: str, b: str) -> bool:
    """Two folded journal or book names of one venue: the same, abbreviated
    (``journals_agree``) or damaged (``containers_similar``)."""
    return journals_agree(a, b) or containers_similar(a, b)


def container_in_string(name: str, raw: str, *, ocr: bool = True) -> bool:
    """A folded journal or book name inside a folded reference string: as words,
    or (``ocr``; 12 characters or more) as a near-copy damaged by OCR ("journal
    of the 5ociety of mechanical engineers")."""
    if len(name) >= 4 and f" {name} " in f" {raw} ":
        return True
    return ocr and len(name) >= 12 and partial_ratio(name, raw) >= 90


def journals_agree(a: str, b: str) -> bool:
    """Two folded journal titles name the same journal: equal, or one
    abbreviates the other word by word ("j biol chem" / "journal of biological
    chemistry"; "proc natl acad sci usa" / "proceedings of the national academy
    of sciences of the united states of america")."""
    if not a or not b:
        return False
    if a == b:
        return True
    ta = [t for t in a.split() if t not in _JOURNAL_SKIP]
    tb = [t for t in b.split() if t not in _JOURNAL_SKIP]
    if not ta or not tb:
        return False
    short, long_ = (ta, tb) if len("".join(ta)) <= len("".join(tb)) else (tb, ta)
    if "".join(short) == "".join(long_):  # "PLoS ONE" / "PLOSONE"
        return True
    j = 0
    for s in short:
        if j >= len(long_):
            return False
        if _abbreviates(s, long_[j]):
            j += 1
        elif len(s) > 1 and s == "".join(w[0] for w in long_[j:j + len(s)]):
            j += len(s)  # an acronym of the next words ("usa")
        else:
            return False
    # every word of the short form, in order, and nothing of the long one left:
    # "Nature" is not "Nature Genetics"
    return j == len(long_)
