"""Token features for the citation CRF.

Two layers: what a token is on its own (word, shape, length, year-likeness,
identifier kind, lexicon memberships), cached by token text because reference
lists repeat the same words endlessly; and where it is (position in the string,
inside quotes or brackets, after a year, its neighbours), computed per string.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import NamedTuple

from sandcrawler.tagging.tokens import Token

#: fields whose vocabulary is worth a lexicon: names, venues and imprints are open
#: classes where sharing weight across many rare words helps
LEXICON_LABELS = ("author", "editor", "journal", "booktitle", "publisher", "location",
                  "institution", "title")
LEXICON_MIN_COUNT = 2
LEXICON_MIN_SHARE = 0.6

_SHAPE_MAP = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
    "X" * 26 + "x" * 26 + "d" * 10,
)
_REPEATS = re.compile(r"(.)\1+")
_OPEN = "([{"
_CLOSE = ")]}"
_QUOTES = "\"“”„«»"


def shape(text: str) -> str:
    """Case and digit pattern with repeats collapsed: "Smith" -> "Xx", "1977" -> "d",
    "O'Neil" -> "X'Xx"; letters outside ASCII count by their case."""
    s = text.translate(_SHAPE_MAP)
    if not s.isascii():
        s = "".join(
            ("X" if c.isupper() else "x") if c.isalpha() else ("d" if c.isdigit() else c)
            for c in s
        )
    return _REPEATS.sub(r"\1", s)


def _kind(text: str) -> str:
    if len(text) > 4:
        if "://" in text or text.startswith("www."):
            return "url"
        if text.startswith("10.") and "/" in text:
            return "doi"
        if text[:6].lower() == "arxiv:":
            return "arxiv"
    if text.isdigit():
        if len(text) == 4 and 1500 <= int(text) <= 2099:
            return "year"
        return "num"
    if text.isalpha():
        if text.isupper():
            return "upper1" if len(text) == 1 else "upper"
        if text[0].isupper():
            return "cap"
        return "lower"
    return "punct" if len(text) == 1 else "other"


class Lexicons:
    """Words that mostly occur inside one field of the training data (author names,
    journal words, publishers, places), built from that data."""

    def __init__(self, words: Mapping[str, str]):
        self.words = dict(words)

    @classmethod
    def build(cls, sequences: Iterable[tuple[Sequence[Token], Sequence[str]]]) -> Lexicons:
        counts: dict[str, Counter[str]] = defaultdict(Counter)
        for tokens, labels in sequences:
            for tok, label in zip(tokens, labels, strict=True):
                if tok.text.isalpha() and len(tok.text) > 1:
                    counts[tok.text.lower()][label] += 1
        words: dict[str, str] = {}
        for word in sorted(counts):
            total = sum(counts[word].values())
            label, n = counts[word].most_common(1)[0]
            if (label in LEXICON_LABELS and n >= LEXICON_MIN_COUNT
                    and n / total >= LEXICON_MIN_SHARE):
                words[word] = label
        return cls(words)


_POS = tuple(f"pos={k}" for k in range(10))
_YEARS = tuple(f"yrs={k}" for k in range(3))
_DOTS = tuple(f"dots={k}" for k in range(7))
_BOUNDS = {d: f"{d}w=BOUND" for d in (-2, -1, 1, 2)}


class _Cached(NamedTuple):
    """Everything about a token that does not depend on where it stands."""

    word: str  # the lower-cased word (its shape when long: URLs, DOIs)
    kind: str
    own: tuple[str, ...]  # its own features
    as_prev: tuple[str, ...]  # features it gives the token after it
    as_next: tuple[str, ...]  # ... and the token before it
    as_prev2: tuple[str, ...]
    as_next2: tuple[str, ...]


class Featurizer:
    """``known``: the attributes the model has weights for. Others cannot change the
    labelling, and CRFsuite would still look each one up (a fifth of the tagging time),
    so they are dropped; in training every attribute is kept."""

    def __init__(self, lexicons: Lexicons, known: frozenset[str] | None = None):
        self.lexicons = lexicons
        self.known = known
        self.cached = lru_cache(maxsize=200_000)(self._cached)

    def _keep(self, feats: Iterable[str]) -> tuple[str, ...]:
        known = self.known
        return tuple(feats) if known is None else tuple(f for f in feats if f in known)

    def _cached(self, text: str) -> _Cached:
        lower = text.lower()
        kind = _kind(text)
        sh = shape(text)
        lex = self.lexicons.words.get(lower, "-")
        n = len(text)
        own = [f"w={lower}", f"sh={sh}", f"k={kind}", f"lex={lex}",
               f"len={n if n < 5 else (5 if n < 8 else 8)}"]
        if kind in ("cap", "lower", "upper") and n > 3:
            own.append(f"p3={lower[:3]}")
            own.append(f"s3={lower[-3:]}")
        if kind == "num":
            own.append(f"dl={min(n, 6)}")
        word = lower if n < 12 else sh
        keep = self._keep
        return _Cached(
            word, kind, keep(own),
            keep((f"-1w={word}", f"-1k={kind}", f"-1lex={lex}")),
            keep((f"1w={word}", f"1k={kind}", f"1lex={lex}")),
            keep((f"-2w={word}",)), keep((f"2w={word}",)),
        )

    def sequence(self, tokens: Sequence[Token]) -> list[list[str]]:
        n = len(tokens)
        cached = self.cached
        known = self.known
        info = [cached(t.text) for t in tokens]
        out: list[list[str]] = []
        quote = paren = False
        years = periods = 0
        for i, tok in enumerate(tokens):
            me = info[i]
            feats = [*me.own, _POS[10 * i // n], _YEARS[years], _DOTS[periods]]
            if tok.space_before:
                feats.append("sp")
            if quote:
                feats.append("inq")
            if paren:
                feats.append("inp")
            if i > 0:
                prev = info[i - 1]
                feats.extend(prev.as_prev)
                bigram = f"bi-={prev.word}|{me.word}"
                if known is None or bigram in known:
                    feats.append(bigram)
                if i > 1:
                    feats.extend(info[i - 2].as_prev2)
                else:
                    feats.append(_BOUNDS[-2])
            else:
                feats.append(_BOUNDS[-1])
                feats.append(_BOUNDS[-2])
            if i + 1 < n:
                nxt = info[i + 1]
                feats.extend(nxt.as_next)
                bigram = f"bi+={me.word}|{nxt.word}"
                if known is None or bigram in known:
                    feats.append(bigram)
                if i + 2 < n:
                    feats.extend(info[i + 2].as_next2)
                else:
                    feats.append(_BOUNDS[2])
                if tokens[i + 1].space_before:
                    feats.append("spn")
            else:
                feats.append(_BOUNDS[1])
                feats.append(_BOUNDS[2])
            out.append(feats)
            text = tok.text
            if text in _QUOTES:
                quote = not quote
            elif text in _OPEN:
                paren = True
            elif text in _CLOSE:
                paren = False
            elif me.kind == "year":
                if years < 2:
                    years += 1
            elif (text == "." and periods < 6 and i > 0 and i + 1 < n
                  and tokens[i + 1].space_before and len(tokens[i - 1].text) > 1):
                periods += 1
        return out
