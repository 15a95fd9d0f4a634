"""GROBID's tokens: how a layout reader cuts a run of text (an ALTO ``String``,
a PDFium word) into the tokens GROBID's feature files hold one row per, so that
tokens mean what the training files mean. The rules, from GROBID, are in
docs/extraction.md ("Layout tokens" and "Notes by module").
"""

from __future__ import annotations

import re

# GROBID's delimiters: its "full punctuation" set and the whitespace/control
# characters it adds to it. The space is a delimiter too.
PUNCTUATION = (
    "([ \u2022*,:;?.!/)-\u2212\u2013\u2010\u00ab\u00bb\u201e\"\u201c\u201d\u2018\u2019'`$#@]*"
    "\u2666\u2665\u2663\u2660\u00a0\u3002\u3001\uff0c\u30fb\uff08\uff09"
)
DELIMITERS = frozenset("\n\r\t\f\u00a0\u200c" + PUNCTUATION)

# Unicode's dash punctuation (category Pd, as of Unicode 14) plus the minus
# sign: all become "-". Listed rather than derived from unicodedata at import
# time (scanning every code point costs a noticeable start-up).
_DASHES = (
    "\u002d\u058a\u05be\u1400\u1806\u2010\u2011\u2012\u2013\u2014\u2015\u2e17\u2e1a"
    "\u2e3a\u2e3b\u2e40\u2e5d\u301c\u3030\u30a0\ufe31\ufe32\ufe58\ufe63\uff0d\U00010ead"
    "\u2212"
)
_HORIZONTAL_SPACES = (
    "\u0009\u0020\u00a0\u1680\u180e\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
# U+2028 and U+2029 are in both lists; as in GROBID, the horizontal-space
# replacement runs first, so they become spaces.
_LINE_BREAKS = "\u000c\u000a\u000d\u000b\u0085"
_LOW_LINES = "\u005f\u203f\u2040\u2054\ufe4d\ufe4e\ufe4f\uff3f\ufe33\ufe34"
_VERTICAL_LINES = "\u007c\u01c0\u05c0\u2223\u2758"
_BULLETS = (
    "\u2022\u2023\u25e6\u2043\u204c\u204d\u2219\u25d8\u29be\u29bf\u23fa\u25cf\u26ab\u2b24\u00b7"
)
_OPEN_PARENS = "\u0028\uff08\u27ee\u2985\u2768\u276a\u27ec"
_CLOSE_PARENS = "\u0029\uff09\u27ef\u2986\u2769\u276b\u27ed"

# Second pass (GROBID's token "clean"): ligatures, quotes, more bullets, the
# asterisk operator, and footnote markers which get a space before them.
_CLEAN: dict[str, str] = {
    "\ufb00": "ff",
    "\ufb01": "fi",
    "\ufb02": "fl",
    "\ufb03": "ffi",
    "\ufb04": "ffl",
    "\ufb06": "st",
    "\ufb05": "ft",
    "\u00e6": "ae",
    "\u00c6": "AE",
    "\u0153": "oe",
    "\u0152": "OE",
    "\u201c": '"',
    "\u201d": '"',
    "\u201e": '"',
    "\u201f": '"',
    "\u2019": "'",
    "\u2018": "'",
    "\u2217": " * ",
    **dict.fromkeys(
        "\u2022\u2023\u2043\u204c\u204d\u2219\u25c9\u25d8\u25e6\u2619\u2765\u2767\u29be\u29bf", "•"
    ),
    **{c: " " + c for c in "\u2020\u2021\u00a7\u00b6\u204b\u01c2"},
}


def _build_table() -> dict[int, str]:
    # (normalise's shortcut for printable ASCII relies on this table changing
    # no printable ASCII character; tests/docparse/test_docparse_tokens.py checks it)
    first: dict[str, str] = {}
    # later assignments win, in the reverse of GROBID's order, so that the
    # first replacement GROBID applies is the one kept
    for chars, to in (
        (_CLOSE_PARENS, ")"),
        (_OPEN_PARENS, "("),
        (_BULLETS, "•"),
        (_VERTICAL_LINES, "|"),
        (_LOW_LINES, "_"),
        (_DASHES, "-"),
        (_LINE_BREAKS, "\n"),
        (_HORIZONTAL_SPACES, " "),
    ):
        for c in chars:
            first[c] = to
    table: dict[int, str] = {}
    for c in set(first) | set(_CLEAN):
        once = first.get(c, c)
        twice = _CLEAN.get(once, once)
        if twice != c:
            table[ord(c)] = twice
    return table


_TABLE = _build_table()
_WHITESPACE = frozenset(" \n\r\t\f\u00a0")


def normalise(text: str) -> str:
    """The characters GROBID's layout reading replaces (steps 1 and 2 above),
    the text trimmed at both ends."""
    if text.isascii() and text.isprintable():
        # nothing to replace: the table maps ASCII only where it is a control
        # character (most words of most documents take this way)
        return text.strip()
    # "\r\n" is one line break, not two
    return text.strip().replace("\r\n", "\n").translate(_TABLE).strip()


# a run of non-delimiters, or one delimiter (compiled once: layout readers call
# this for every word of every page)
_PIECES = re.compile(
    "[^"
    + re.escape("".join(sorted(DELIMITERS)))
    + "]+|["
    + re.escape("".join(sorted(DELIMITERS)))
    + "]"
)


#: a token of a normalised text: ``text[start:end]``, and whether whitespace
#: follows it within the text
Span = tuple[int, int, bool]


def spans(text: str) -> tuple[str, list[Span]]:
    """``text`` normalised, and its tokens as spans of it. Offsets matter to
    layout readers: GROBID gives each token of a word its share of the word's
    width in proportion to its length in this normalised text."""
    text = normalise(text)
    if text.isalnum():  # most words: one token, no delimiter in it
        return text, [(0, len(text), False)]
    out: list[Span] = []
    whitespace = _WHITESPACE
    pos = 0
    for piece in _PIECES.findall(text):
        end = pos + len(piece)
        if piece in whitespace:
            if out:
                out[-1] = (out[-1][0], out[-1][1], True)
        elif piece != "\u200c":
            out.append((pos, end, False))
        pos = end
    return text, out


def split_spaced(text: str) -> list[tuple[str, bool]]:
    """The tokens of ``text`` (normalised first), each with whether whitespace
    follows it within ``text``."""
    norm, found = spans(text)
    return [(norm[a:b], space) for a, b, space in found]


def split(text: str) -> list[str]:
    """The tokens of ``text`` as GROBID cuts them, whitespace left out:
    ``split("Smith†, J.(1999a)")`` is ``["Smith", "†", ",", "J", ".", "(",
    "1999a", ")"]``."""
    norm, found = spans(text)
    return [norm[a:b] for a, b, _ in found]
