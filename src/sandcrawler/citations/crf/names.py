"""Author and editor strings split into persons, the way GROBID reports them.

GROBID gives initials without their dots, the first forename as ``given_name``,
further forenames as ``middle_name``, and ``full_name`` as forenames then surname
("Quine, W. V. O." -> given "W", middle "V O", surname "Quine", full "W V O Quine").

Handled: "J. Smith", "Smith J", "Smith JA", "Smith, J.", "Smith, John", "John
Smith", lists joined by commas, semicolons, "and" and "&", "et al.", surname
particles ("de", "van der"), and names in CJK scripts (family name first).
"""

from __future__ import annotations

import re
from functools import lru_cache

from grobid_tei_xml.types import GrobidAuthor

_ET_AL = re.compile(r"\b(?:et\.?\s*al\b\.?|and\s+others\b|u\.\s*a\.|et\s+coll\b\.?)", re.I)
_EDITOR_WORDS = re.compile(
    r"\(?\b(?:eds?|editors?|edited\s+by|hrsg|hg|dir|coord)\b\.?\)?|\((?:eds?|ed)\.?\)", re.I
)
# "et", "y", "e" join names only in lower case: upper case they are initials
_GROUP_SEP = re.compile(r"\s*(?:;|\b(?:[Aa]nd|AND|[Uu]nd|et|y|e)\b|&)\s*")
# an initial: one capital (or two for Ch/Th/Sz style), optional dot, maybe hyphenated
_INITIAL = re.compile(r"^(?:[^\W\d_][a-z]?\.|[^\W\d_])(?:-(?:[^\W\d_][a-z]?\.?))?$")
_INITIALS_BLOCK = re.compile(r"^[A-Z]{1,3}$")  # "JA" in "Smith JA"
_PARTICLES = {"de", "da", "del", "della", "der", "den", "di", "do", "dos", "du", "la", "le",
              "van", "von", "ten", "ter", "zu", "st", "st.", "al", "el", "bin", "ibn"}
_SUFFIXES = {"jr", "jr.", "sr", "sr.", "ii", "iii", "iv"}
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_STRIP = " \t,;:.()[]{}*†‡§\"'“”"


# names repeat from reference to reference: a word's verdicts are memoised
@lru_cache(maxsize=1 << 16)
def _is_initial(word: str) -> bool:
    return bool(_INITIAL.match(word)) and word[0].isupper()


@lru_cache(maxsize=1 << 16)
def _initial_like(word: str) -> bool:
    """An initial, or a block of them like "JA"."""
    return _is_initial(word) or bool(_INITIALS_BLOCK.match(word))


def _initials_only(words: list[str]) -> bool:
    return bool(words) and all(map(_initial_like, words))


def _no_initials(words: list[str]) -> bool:
    """Looks like a surname alone: no initials in it, not a block like "JA"."""
    return not any(map(_is_initial, words)) and not _initials_only(words)


_GLUED_INITIAL = re.compile(r"(?<=[^\W\d_]\.)(?=[^\W\d_])")


def _words(piece: str) -> list[str]:
    # "P.J." and "J.Smith" are several words
    if "." in piece:
        piece = _GLUED_INITIAL.sub(" ", piece)
    return [w for w in piece.split() if w.strip(_STRIP)]


def _forenames(words: list[str]) -> list[str]:
    """Initials lose their dots; a block like "JA" is two initials."""
    out: list[str] = []
    for w in words:
        w = w.strip(",;:")
        if len(w) > 1 and _INITIALS_BLOCK.match(w):
            out.extend(w)
        else:
            out.append(w.replace(".", "") if _is_initial(w) else w.rstrip("."))
    return [w for w in out if w]


def _person(
    surname_words: list[str], forename_words: list[str], written: str | None = None
) -> GrobidAuthor | None:
    """``written``: the name as written, for scripts that put the family name first."""
    surname = " ".join([w.strip(",;") for w in surname_words]).strip(_STRIP)
    forenames = _forenames(forename_words)
    if not surname and not forenames:
        return None
    if not surname:  # only initials or one given name: report what we have as the surname
        surname, forenames = " ".join(forenames), []
    given = forenames[0] if forenames else None
    middle = " ".join(forenames[1:]) or None
    full = written or " ".join([*forenames, surname])
    return GrobidAuthor(full_name=full, given_name=given, middle_name=middle, surname=surname)


def _split_direct(words: list[str]) -> GrobidAuthor | None:
    """One name written without a comma: "J. Smith", "Smith J", "John de Smith"."""
    if len(words) > 1:  # "Jr" alone is a name
        words = [w for w in words if w.lower().rstrip(".") not in _SUFFIXES]
    if not words:
        return None
    if len(words) == 1:
        word = words[0]
        if 2 <= len(word) <= 4 and not word.isascii() and _CJK.search(word):
            return _person([word[0]], [word[1:]], written=word)
        return _person([word], [])
    if not words[0].isascii() and _CJK.search(words[0]):  # CJK: family name first
        return _person(words[:1], words[1:], written=" ".join(words))
    # "Smith J", "Smith JA", "Abel T.", "Bromm V. K.": trailing initials
    k = len(words)
    while k > 0 and _initial_like(words[k - 1]):
        k -= 1
    if 0 < k < len(words) and not _is_initial(words[0]):
        return _person(words[:k], words[k:])
    # "J. Smith", "John Smith", "W.-P. de Roever": surname is the last word plus the
    # particles before it
    s = len(words) - 1
    while s > 1 and words[s - 1].lower() in _PARTICLES:
        s -= 1
    return _person(words[s:], words[:s])


def split_names(text: str, *, editors: bool = False) -> list[GrobidAuthor]:
    """Persons named in an author (or editor) field; never raises."""
    text = _ET_AL.sub(" ", text)
    if editors:
        text = _EDITOR_WORDS.sub(" ", text)
    text = text.strip(_STRIP + " ")
    if not text:
        return []
    # groups are split by ";", "and", "&"; pieces by commas
    groups = [[_words(piece) for piece in g.split(",")]
              for g in _GROUP_SEP.split(text) if g and g.strip(_STRIP)]
    pieces = [words for group in groups for words in group if words]
    # "Smith, John" as the whole field, or in groups of two: surname, given names
    pairs_everywhere = (text.isascii() or not _CJK.search(text)) and all(
        len(g) == 2 and len(g[0]) == 1 and 1 <= len(g[1]) <= 2 for g in groups
    )
    persons: list[GrobidAuthor | None] = []
    i = 0
    while i < len(pieces):
        words = pieces[i]
        nxt = pieces[i + 1] if i + 1 < len(pieces) else None
        if (nxt is not None and _no_initials(words)
                and (_initials_only(nxt) or pairs_everywhere)):
            persons.append(_person(words, nxt))  # "Smith, J." / "Smith, John"
            i += 2
        else:
            persons.append(_split_direct(words))
            i += 1
    return [p for p in persons if p is not None and any(map(str.isalpha, p.surname or ""))]
