"""The name and affiliation models' features: the token's own text (case,
digits, prefixes and suffixes, punctuation kind, word shape), its neighbours,
where line breaks fall, training-lexicon and gazetteer hits, as in GROBID's name
and affiliation feature vectors; plus the spacing around a token, which carries
what layout would (a marker glued to a name was a superscript).
"""

from __future__ import annotations

import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import NamedTuple

from sandcrawler.tagging.scoring import OTHER, plain
from sandcrawler.tagging.tokens import Token, tokenize

#: characters read per text at most (the tokenizer's own time is bounded too)
MAX_CHARS = 40_000
#: a word is in the training lexicon when it is seen this often, mostly in one field
LEXICON_MIN_COUNT = 2
LEXICON_MIN_SHARE = 0.6


def normalize(text: str) -> str:
    """The text as models see it: compatibility forms folded ("¹" -> "1", "ﬁ" -> "fi"),
    as in training."""
    return unicodedata.normalize("NFKC", text[:MAX_CHARS])


_PUNCT = {"(": "OPEN", "[": "OPEN", ")": "CLOSE", "]": "CLOSE", ".": "DOT", ",": "COMMA",
          "-": "HYPHEN", "\u2013": "HYPHEN", '"': "QUOTE", "'": "QUOTE", "`": "QUOTE",
          ";": "SEMI", ":": "COLON", "*": "STAR", "&": "AMP", "/": "SLASH", "@": "AT"}


def _shape(text: str) -> str:
    """Word shape with runs collapsed: "Smith" -> "Aa", "MA" -> "A", "02139" -> "9"."""
    out: list[str] = []
    for ch in text:
        c = "A" if ch.isupper() else "a" if ch.isalpha() else "9" if ch.isdigit() else ch
        if not out or out[-1] != c:
            out.append(c)
    return "".join(out)


_STATUS = {d: {st: f"{d or ''}ls={st}" for st in ("START", "IN", "END")} for d in (-1, 0, 1)}
_LINE_POS = tuple(f"lp={k}" for k in range(6))
_POS = tuple(f"pos={k}" for k in range(10))


class _Tok(NamedTuple):
    """What a token is, wherever it stands, and what it tells its neighbours (the
    strings made once per distinct token, not once per position)."""

    word: str  # lower case
    own: tuple[str, ...]
    as_prev: tuple[str, ...]  # to the token after it
    as_next: tuple[str, ...]  # to the token before it
    as_prev2: tuple[str, ...]
    as_next2: tuple[str, ...]
    as_prev3: str
    as_next3: str


class Gazetteers:
    """Phrases (lower-case token tuples) by category: countries, person titles...
    Tokens inside a match carry ``gz=<category>``."""

    def __init__(self, phrases: Mapping[str, Iterable[Sequence[str]]]):
        self.phrases = {cat: sorted({tuple(p) for p in ps if p}) for cat, ps in phrases.items()}
        self._first: dict[str, list[tuple[tuple[str, ...], str]]] = defaultdict(list)
        for cat, ps in self.phrases.items():
            for p in ps:
                self._first[p[0]].append((p, cat))
        for entries in self._first.values():
            entries.sort(key=lambda e: -len(e[0]))

    def to_json(self) -> dict[str, list[list[str]]]:
        return {cat: [list(p) for p in ps] for cat, ps in self.phrases.items()}

    def match(self, words: Sequence[str]) -> list[set[str]]:
        out: list[set[str]] = [set() for _ in words]
        first = self._first
        for i, w in enumerate(words):
            for phrase, cat in first.get(w, ()):
                n = len(phrase)
                if tuple(words[i : i + n]) == phrase:
                    for j in range(i, i + n):
                        out[j].add(cat)
        return out


def phrases_of(texts: Iterable[str]) -> list[list[str]]:
    """Gazetteer entries from plain strings, tokenized as texts are."""
    return [[t.text.lower() for t in tokenize(normalize(s))] for s in texts]


class Featurizer:
    """GROBID's name and affiliation feature columns (the token, its case and
    digits, prefixes and suffixes, punctuation kind, word shape, line status,
    lexicon hits) over a window of neighbours, computed from text; plus the
    spacing around a token, which carries what layout would (a marker glued to a
    name was a superscript)."""

    def __init__(self, lexicon: Mapping[str, str], gazetteers: Gazetteers):
        self.lexicon = dict(lexicon)
        self.gazetteers = gazetteers
        self.token = lru_cache(maxsize=100_000)(self._token)

    def _token(self, text: str) -> _Tok:
        lower = text.lower()
        first = text[0]
        if text.isdigit():
            digit, case = "ALLDIGIT", "NOCAPS"
        else:
            digit = "DIGIT" if any(c.isdigit() for c in text) else "NODIGIT"
            letters = [c for c in text if c.isalpha()]
            case = ("ALLCAP" if letters and all(c.isupper() for c in letters)
                    else "INITCAP" if first.isupper() else "NOCAPS")
        punct = _PUNCT.get(text, "PUNCT" if len(text) == 1 and not text.isalnum() else "NO")
        shape = _shape(text)
        lex = self.lexicon.get(lower, "-")
        n = len(text)
        own = [f"t={text}", f"w={lower}", f"cap={case}", f"dig={digit}", f"pun={punct}",
               f"shp={shape}", f"lex={lex}", f"len={min(n, 6)}"]
        if n > 1 and not text.isdigit():
            own.extend(f"p{k}={text[:k]}" for k in range(1, min(n, 4) + 1))
            own.extend(f"s{k}={text[-k:]}" for k in range(1, min(n, 4) + 1))
        if text.isdigit():
            own.append(f"nd={min(n, 6)}")
        near = (f"w={lower}", f"cap={case}", f"dig={digit}", f"pun={punct}", f"shp={shape}",
                f"lex={lex}")
        far = (f"w={lower}", f"pun={punct}", f"lex={lex}")
        return _Tok(lower, tuple(own), tuple("-1" + f for f in near), tuple("1" + f for f in near),
                    tuple("-2" + f for f in far), tuple("2" + f for f in far),
                    f"-3w={lower}", f"3w={lower}")

    def sequence(self, text: str, tokens: Sequence[Token]) -> list[list[str]]:
        n = len(tokens)
        if not n:
            return []
        info = [self.token(t.text) for t in tokens]
        gaz = self.gazetteers.match([t.word for t in info])
        # a line break between tokens i-1 and i
        breaks = [i == 0 or "\n" in text[tokens[i - 1].end : tokens[i].start]
                  for i in range(n)]
        status = ["START" if breaks[i] else
                  "END" if i + 1 == n or breaks[i + 1] else "IN" for i in range(n)]
        gaz_feats = [tuple(f"gz={c}" for c in sorted(g)) for g in gaz]
        out: list[list[str]] = []
        paren = 0
        since_break = 0
        for i, tok in enumerate(tokens):
            me = info[i]
            since_break = 0 if breaks[i] else since_break + 1
            feats = [*me.own, *gaz_feats[i], _STATUS[0][status[i]], _LINE_POS[min(since_break, 5)],
                     _POS[10 * i // n]]
            if tok.space_before:
                feats.append("sp")
            if paren:
                feats.append("inp")
            if i > 0:
                feats.extend(info[i - 1].as_prev)
                feats.extend("-1" + g for g in gaz_feats[i - 1])
                feats.append(_STATUS[-1][status[i - 1]])
            else:
                feats.append("-1BOUND")
            if i + 1 < n:
                feats.extend(info[i + 1].as_next)
                feats.extend("1" + g for g in gaz_feats[i + 1])
                feats.append(_STATUS[1][status[i + 1]])
            else:
                feats.append("1BOUND")
            if i > 1:
                feats.extend(info[i - 2].as_prev2)
            else:
                feats.append("-2BOUND")
            if i + 2 < n:
                feats.extend(info[i + 2].as_next2)
            else:
                feats.append("2BOUND")
            if i > 2:
                feats.append(info[i - 3].as_prev3)
            if i + 3 < n:
                feats.append(info[i + 3].as_next3)
            if i > 0:
                feats.append(f"b-={info[i - 1].word}|{me.word}")
                if i > 1:
                    feats.append(f"b--={info[i - 2].word}|{info[i - 1].word}")
            if i + 1 < n:
                feats.append(f"b+={me.word}|{info[i + 1].word}")
                if tokens[i + 1].space_before:
                    feats.append("spn")
                if i + 2 < n:
                    feats.append(f"b++={info[i + 1].word}|{info[i + 2].word}")
            out.append(feats)
            if tok.text in "([":
                paren += 1
            elif tok.text in ")]" and paren:
                paren -= 1
        return out


def build_lexicon(sequences: Iterable[tuple[Sequence[Token], Sequence[str]]]) -> dict[str, str]:
    """Words (two letters or more) that mostly occur inside one kind of field of the
    training data: forenames, surnames, institution words, towns."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for tokens, labels in sequences:
        for tok, label in zip(tokens, labels, strict=True):
            if len(tok.text) > 1 and tok.text.isalpha():
                counts[tok.text.lower()][plain(label)] += 1
    words: dict[str, str] = {}
    for word in sorted(counts):
        label, n = counts[word].most_common(1)[0]
        if (label != OTHER and n >= LEXICON_MIN_COUNT
                and n / sum(counts[word].values()) >= LEXICON_MIN_SHARE):
            words[word] = label.strip("<>")
    return words
