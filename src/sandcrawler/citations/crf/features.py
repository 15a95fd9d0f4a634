"""Token features for the citation CRF.

Two layers: what a token is on its own (word, shape, length, year-likeness,
identifier kind, lexicon memberships), cached by token text because reference
lists repeat the same words endlessly; and where it is (position in the string,
inside quotes or brackets, after a year, its neighbours), computed per string.
Two forms of the same attributes, in the same order: strings (:class:`Featurizer`:
training, python-crfsuite) and packed for the direct tagger (:class:`PackedFeaturizer`).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Generic, NamedTuple, TypeVar

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


#: shape by the translated text it depends on alone ("Xxxxx" for every 5-letter
#: capitalised word): the repeats are collapsed once per pattern
_SHAPES: dict[str, str] = {}
#: entries a per-text memo holds before it starts again
CACHE_MAX = 200_000


def _shape(text: str) -> str:
    """``shape(text)``, memoised."""
    key = text.translate(_SHAPE_MAP)
    found = _SHAPES.get(key)
    if found is None:
        if len(_SHAPES) >= CACHE_MAX:
            _SHAPES.clear()
        found = _SHAPES[key] = shape(text)
    return found


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


def _kind_shape(text: str) -> tuple[str, str]:
    """``(_kind(text), shape(text))``, at once for the common ASCII words and numbers."""
    if text.isascii():
        if text.isalpha():
            if text.islower():
                return "lower", "x"
            if text.isupper():
                return ("upper1" if len(text) == 1 else "upper"), "X"
            if text[0].isupper() and text[1:].islower():
                return "cap", "Xx"
        elif text.isdigit():
            return _kind(text), "d"
    return _kind(text), _shape(text)



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
# what a token does to the state carried along the string (``step``)
_TOGGLE_QUOTE, _OPEN_PAREN, _CLOSE_PAREN, _YEAR, _PERIOD = 1, 2, 3, 4, 5


def _bracket_steps() -> dict[str, int]:
    """The step of a text that is in ``_QUOTES``, ``_OPEN`` or ``_CLOSE`` (tested in
    that order, as substrings: every substring of each)."""
    steps: dict[str, int] = {}
    for step, chars in ((_CLOSE_PAREN, _CLOSE), (_OPEN_PAREN, _OPEN), (_TOGGLE_QUOTE, _QUOTES)):
        steps.update({chars[a:b]: step for a in range(len(chars) + 1)
                      for b in range(a, len(chars) + 1)})
    return steps


_STEPS = _bracket_steps()

#: one form of a group of attributes: a tuple of strings, or packed bytes
A = TypeVar("A", tuple[str, ...], bytes)


class _Cached(NamedTuple, Generic[A]):
    """Everything about a token that does not depend on where it stands."""

    word: str  # the lower-cased word (its shape when long: URLs, DOIs)
    kind: str
    step: int  # what it does to the carried state: _TOGGLE_QUOTE, ..., or 0
    own: A  # its own features
    as_prev: A  # features it gives the token after it
    as_next: A  # ... and the token before it
    as_prev2: A
    as_next2: A
    #: the words after it that make a known bigram with it: their bigram attributes
    #: (``bi-`` of the next token, ``bi+`` of this one; "" when unknown); None when
    #: there are none
    after: Mapping[str, tuple[str, str]] | None


#: a NamedTuple made without its Python-level ``__new__``
_new = tuple.__new__


def _single(attr: str) -> tuple[str, ...]:
    return (attr,)


def _any(attr: str) -> bool:
    return True


class _TokenTable(Generic[A]):
    """Per token text, its :class:`_Cached` in one form: ``one`` makes the form of
    one attribute, ``encode`` of several; attributes outside ``known`` (when given)
    are dropped. Groups of attributes that many texts share (shape, kind, lexicon,
    length) are encoded once per group."""

    def __init__(self, lexicons: Lexicons, known: frozenset[str] | None,
                 one: Callable[[str], A], encode: Callable[[tuple[str, ...]], A],
                 after: Callable[[str], Mapping[str, tuple[str, str]] | None] | None = None,
                 vocabulary: tuple[frozenset[str], frozenset[str]] | None = None,
                 firsts: frozenset[str] = frozenset()):
        """``vocabulary``: the words of the known ``w=`` attributes, and of the known
        ``-1w=``, ``1w=``, ``-2w=`` and ``2w=``: a word in neither is looked up no
        further. ``after``: the bigrams of a word of ``firsts``."""
        self.words = lexicons.words
        self.keep: Callable[[str], bool] = known.__contains__ if known is not None else _any
        self.one: Callable[[str], A] = one
        self.encode: Callable[[tuple[str, ...]], A] = encode
        self.after = after
        self.vocabulary = vocabulary
        self.firsts = firsts
        self.empty: A = encode(())
        self.table: dict[str, _Cached[A]] = {}
        self._classes: dict[str, tuple[A, A, A]] = {}
        self._digits: dict[int, A] = {}

    def get(self, text: str) -> _Cached[A]:
        return self.table.get(text) or self.make(text)

    def make(self, text: str) -> _Cached[A]:
        table, classes = self.table, self._classes
        if len(table) >= CACHE_MAX:
            table.clear()
        if len(classes) >= CACHE_MAX:
            classes.clear()
        one, keep, empty = self.one, self.keep, self.empty
        lower = text.lower()
        kind, sh = _kind_shape(text)
        lex = self.words.get(lower, "-")
        n = len(text)
        size = n if n < 5 else (5 if n < 8 else 8)
        key = f"{sh}\x00{kind}\x00{lex}\x00{size}"  # a string: not tracked by the GC
        group = classes.get(key)
        if group is None:
            encode = self.encode
            group = classes[key] = (
                encode((f"sh={sh}", f"k={kind}", f"lex={lex}", f"len={size}")),
                encode((f"-1k={kind}", f"-1lex={lex}")),
                encode((f"1k={kind}", f"1lex={lex}")),
            )
        if kind in ("cap", "lower", "upper") and n > 3:
            prefix, suffix = f"p3={lower[:3]}", f"s3={lower[-3:]}"
            tail = ((one(prefix) if keep(prefix) else empty)
                    + (one(suffix) if keep(suffix) else empty))
        elif kind == "num":
            digits = min(n, 6)
            tail = self._digits.get(digits) or self._digits.setdefault(
                digits, self.encode((f"dl={digits}",)))
        else:
            tail = empty
        word = lower if n < 12 else sh
        step = _STEPS.get(text) or (
            _YEAR if kind == "year" else _PERIOD if text == "." else 0)
        vocabulary = self.vocabulary
        if vocabulary is None or lower in vocabulary[0]:
            w = f"w={lower}"
            own = (one(w) if keep(w) else empty) + group[0] + tail
        else:
            own = group[0] + tail
        if vocabulary is None or word in vocabulary[1]:
            before, after = f"-1w={word}", f"1w={word}"
            before2, after2 = f"-2w={word}", f"2w={word}"
            as_prev = (one(before) if keep(before) else empty) + group[1]
            as_next = (one(after) if keep(after) else empty) + group[2]
            as_prev2 = one(before2) if keep(before2) else empty
            as_next2 = one(after2) if keep(after2) else empty
        else:
            as_prev, as_next, as_prev2, as_next2 = group[1], group[2], empty, empty
        successors = self.after
        found = table[text] = _new(_Cached, (
            word, kind, step, own, as_prev, as_next, as_prev2, as_next2,
            successors(word) if successors is not None and word in self.firsts else None,
        ))
        return found


class Featurizer:
    """Attribute strings per token. ``known``: the attributes the model has weights
    for. Others cannot change the labelling, and CRFsuite would still look each one
    up (a fifth of the tagging time), so they are dropped; in training every
    attribute is kept."""

    def __init__(self, lexicons: Lexicons, known: frozenset[str] | None = None):
        self.lexicons = lexicons
        self.known = known
        self.tokens: _TokenTable[tuple[str, ...]] = _TokenTable(lexicons, known, _single,
                                                                self._keep)

    def _keep(self, feats: tuple[str, ...]) -> tuple[str, ...]:
        known = self.known
        return feats if known is None else tuple([f for f in feats if f in known])

    def sequence(self, tokens: Sequence[Token]) -> list[list[str]]:
        n = len(tokens)
        get, make = self.tokens.table.get, self.tokens.make
        known = self.known
        info = [get(t.text) or make(t.text) for t in tokens]
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
            step = me.step
            if step == _TOGGLE_QUOTE:
                quote = not quote
            elif step == _OPEN_PAREN:
                paren = True
            elif step == _CLOSE_PAREN:
                paren = False
            elif step == _YEAR:
                if years < 2:
                    years += 1
            elif (step == _PERIOD and periods < 6 and i > 0 and i + 1 < n
                  and tokens[i + 1].space_before and len(tokens[i - 1].text) > 1):
                periods += 1
        return out


def _rests(attributes: Sequence[str], prefix: str) -> list[str]:
    """What follows ``prefix`` in each of the sorted ``attributes`` that start with it."""
    start = bisect_left(attributes, prefix)
    end = bisect_left(attributes, prefix[:-1] + chr(ord(prefix[-1]) + 1))
    n = len(prefix)
    return [a[n:] for a in attributes[start:end]]


class PackedFeaturizer:
    """The attributes of :meth:`Featurizer.sequence`, known ones only, packed by
    ``pack`` and ``pack_one`` (``DirectTagger``'s): one bytes item per token, in the
    same order, so that the direct tagger sums the same weights in the same order.
    ``attributes``: the known attributes, sorted (the model header's list), where
    the bigrams of a word are found. Cached: each token text's attributes and the
    words that make a known bigram after it, and each combination of the
    per-position attributes (position, years, periods, spaces, quotes, brackets)."""

    def __init__(self, featurizer: Featurizer, pack: Callable[[Iterable[str]], bytes],
                 pack_one: Callable[[str], bytes], attributes: Sequence[str]):
        known = featurizer.known
        if known is None:
            raise ValueError("packed features are for a trained model: known attributes")
        self.known = known
        self.attributes = attributes
        self.pack = pack
        self.pack_one = pack_one
        self._successors: dict[str, dict[str, tuple[str, str]] | None] = {}
        self._bigrams: dict[str, bytes] = {}  # attribute -> packed
        # the words of the word attributes, and the first words of the bigrams
        family = frozenset(_rests(attributes, "-1w=")).union(
            _rests(attributes, "1w="), _rests(attributes, "-2w="), _rests(attributes, "2w="))
        bigrams = [*_rests(attributes, "bi-="), *_rests(attributes, "bi+=")]
        firsts = {b.partition("|")[0] for b in bigrams}
        # a bigram "a|b|c" is ("a", "b|c") or ("a|b", "c"): both are its first words
        for more in [b for b in bigrams if b.count("|") > 1]:
            firsts.update(more[:k] for k, c in enumerate(more) if c == "|")
        self.tokens: _TokenTable[bytes] = _TokenTable(
            featurizer.lexicons, known, pack_one, self._encode, self._after,
            (frozenset(_rests(attributes, "w=")), family), frozenset(firsts))
        self._contexts: list[bytes | None] = [None] * (10 * 3 * 7 * 8)
        self._position_codes: dict[int, list[int]] = {}
        # the token beyond either end: BOUND as a neighbour, no bigram, no state
        self._bound: _Cached[bytes] = _new(_Cached, (
            "\x00", "", 0, b"", self._encode((_BOUNDS[-1],)), self._encode((_BOUNDS[1],)),
            self._encode((_BOUNDS[-2],)), self._encode((_BOUNDS[2],)), None))
        self._space_next = self._encode(("spn",))

    def _encode(self, attrs: tuple[str, ...]) -> bytes:
        known = self.known
        return self.pack([a for a in attrs if a in known])

    def _after(self, word: str) -> dict[str, tuple[str, str]] | None:
        """The words ``b`` such that ``bi-={word}|{b}`` or ``bi+={word}|{b}`` is known,
        with those two attributes ("" for one that is not): the sorted attributes
        that start with ``bi-={word}|`` are exactly those."""
        successors = self._successors
        if word in successors:
            return successors[word]
        if len(successors) >= CACHE_MAX:
            successors.clear()
        attributes = self.attributes
        found: dict[str, tuple[str, str]] = {}
        for side, head in enumerate((f"bi-={word}|", f"bi+={word}|")):
            i = bisect_left(attributes, head)
            while i < len(attributes) and attributes[i].startswith(head):
                attr = attributes[i]
                nxt = attr[len(head):]
                minus, plus = found.get(nxt, ("", ""))
                found[nxt] = (attr, plus) if side == 0 else (minus, attr)
                i += 1
        successors[word] = found or None
        return found or None

    def _bigram(self, attr: str) -> bytes:
        blobs = self._bigrams
        if len(blobs) >= CACHE_MAX:
            blobs.clear()
        found = blobs[attr] = self.pack_one(attr)
        return found

    def _context(self, code: int) -> bytes:
        """The per-position attributes of ``code`` (see ``sequence``)."""
        rest, paren = divmod(code, 2)
        rest, quote = divmod(rest, 2)
        rest, space = divmod(rest, 2)
        rest, periods = divmod(rest, 7)
        pos, years = divmod(rest, 3)
        attrs = [_POS[pos], _YEARS[years], _DOTS[periods]]
        if space:
            attrs.append("sp")
        if quote:
            attrs.append("inq")
        if paren:
            attrs.append("inp")
        found = self._contexts[code] = self._encode(tuple(attrs))
        return found

    def _bases(self, n: int) -> list[int]:
        """The position part of ``sequence``'s context code, per token of ``n``."""
        found = self._position_codes.get(n)
        if found is None:
            if len(self._position_codes) >= CACHE_MAX:
                self._position_codes.clear()
            found = self._position_codes[n] = [(10 * i // n) * 168 for i in range(n)]
        return found

    def sequence(self, texts: Sequence[str], spaces: Sequence[bool]) -> list[bytes]:
        """The items of the tokens ``texts`` (``spaces``: whitespace before each;
        ``tagging.tokens.token_columns``)."""
        n = len(texts)
        if not n:
            return []
        get, make = self.tokens.table.get, self.tokens.make
        info = [get(text) or make(text) for text in texts]
        # two tokens of BOUND before and after: no edge needs a test of its own
        bound = self._bound
        rows = [bound, bound, *info, bound, bound]
        space_next = self._space_next
        spaced_next = [space_next if s else b"" for s in spaces[1:]]
        spaced_next.append(b"")
        bases = self._bases(n)
        contexts, context = self._contexts, self._context
        packed_bigrams, bigram = self._bigrams.get, self._bigram
        join = b"".join
        out: list[bytes] = []
        append = out.append
        # the context code: 168 * position decile + 56 * years + 8 * periods
        # + 4 * space before + 2 * inside quotes + inside brackets
        quote = paren = False
        years = periods = state = 0
        last = n - 1
        minus = b""  # bi- of this token: the bigram of the previous token and this one
        before, before2 = bound, bound
        for i, me in enumerate(info):
            after = rows[i + 3]
            followers = me.after
            pair = followers.get(after.word) if followers is not None else None
            if pair is None:
                plus = b""
            else:
                plus = (packed_bigrams(pair[1]) or bigram(pair[1])) if pair[1] else b""
            code = bases[i] + state + 4 if spaces[i] else bases[i] + state
            append(join((me.own, contexts[code] or context(code), before.as_prev, minus,
                         before2.as_prev2, after.as_next, plus, rows[i + 4].as_next2,
                         spaced_next[i])))
            minus = b"" if pair is None or not pair[0] else (
                packed_bigrams(pair[0]) or bigram(pair[0]))
            before2, before = before, me
            step = me.step
            if step:
                if step == _TOGGLE_QUOTE:
                    quote = not quote
                elif step == _OPEN_PAREN:
                    paren = True
                elif step == _CLOSE_PAREN:
                    paren = False
                elif step == _YEAR:
                    if years < 2:
                        years += 1
                elif (periods < 6 and 0 < i < last and spaces[i + 1]
                      and len(texts[i - 1]) > 1):
                    periods += 1
                state = years * 56 + periods * 8 + quote * 2 + paren
        return out
