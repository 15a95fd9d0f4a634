"""Sequence labelling of short plain texts (a header's author names, its
affiliations) with a linear-chain CRF trained on GROBID's TEI corpora
(docs/extraction-names.md).

These models see text, not layout: features come from the token's own text, its
neighbours, and where line breaks fall, as in GROBID's name and affiliation
feature vectors. Tokens are the citation parser's (``citations.crf.tokens``), so
a model labels the very tokens it was trained on.

Labels are GROBID's (``<surname>``, ``<institution>``, ``<other>``...), with its
``I-`` mark on the first token of each field: two fields of one label side by
side ("1,2" then "*"; two institutions) stay two fields.

The model file is ``crffile``'s (the citation model's layout) with its own magic
line; its JSON header holds the model's name, labels, lexicons, parameters and
corpus summary.
"""

from __future__ import annotations

import tempfile
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from sandcrawler.core.errors import ConfigError
from sandcrawler.tagging.corpus import LabelledText, LabelOf, TeiReading, folds_of
from sandcrawler.tagging.corpus import read_corpus as read_tei_corpus
from sandcrawler.tagging.crf import BASE_PARAMS, CrfTagger, ModelKind
from sandcrawler.tagging.scoring import OTHER, FieldScores, fields, plain
from sandcrawler.tagging.tokens import Token, tokenize

KIND = ModelKind("text CRF", b"sandcrawler text CRF\n")
#: tokens labelled in one CRF pass; an author list or affiliation block rarely has
#: 300. Longer input is labelled in pieces cut at line breaks.
CHUNK_TOKENS = 400
#: tokens labelled per text at most; the rest is left ``<other>`` so that time per
#: call stays bounded whatever the caller hands in
MAX_TOKENS = 4000
#: characters read per text at most (the tokenizer's own time is bounded too)
MAX_CHARS = 40_000

DEFAULT_PARAMS: dict[str, Any] = {**BASE_PARAMS, "c1": 0.05, "c2": 0.01, "max_iterations": 300}

#: a word is in the training lexicon when it is seen this often, mostly in one field
LEXICON_MIN_COUNT = 2
LEXICON_MIN_SHARE = 0.6


def normalize(text: str) -> str:
    """The text as models see it: compatibility forms folded ("¹" -> "1", "ﬁ" -> "fi"),
    as in training."""
    return unicodedata.normalize("NFKC", text[:MAX_CHARS])


def reading(unit: str, label_of: LabelOf) -> TeiReading:
    """How a name or affiliation corpus is read: NFKC-folded as texts are tagged,
    ``<lb/>`` and ``<pb/>`` line breaks, fields written glued kept apart."""
    return TeiReading(unit, label_of, OTHER, normalize=normalize)


def read_corpus(directory: Path, unit: str, label_of: LabelOf) -> list[LabelledText]:
    """The sequences of every ``*.xml`` of a directory, in a stable order (sorted
    file names, document order)."""
    return read_tei_corpus(directory, reading(unit, label_of))


# --- features --------------------------------------------------------------------

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


# --- the model -----------------------------------------------------------------


def _chunks(text: str, tokens: Sequence[Token]) -> list[tuple[int, int]]:
    """[start, end) token ranges of at most CHUNK_TOKENS, cut at a line break where
    there is one in the second half of a chunk."""
    out: list[tuple[int, int]] = []
    start, n = 0, len(tokens)
    while start < n:
        end = min(start + CHUNK_TOKENS, n)
        if end < n:
            for k in range(end, start + CHUNK_TOKENS // 2, -1):
                if "\n" in text[tokens[k - 1].end : tokens[k].start]:
                    end = k
                    break
        out.append((start, end))
        start = end
    return out


@dataclass
class TextCrfModel:
    tagger: CrfTagger
    featurizer: Featurizer

    @property
    def meta(self) -> dict[str, Any]:
        return self.tagger.header

    @property
    def name(self) -> str:
        return str(self.meta.get("model", ""))

    @classmethod
    def load(cls, path: Path | str) -> TextCrfModel:
        tagger = CrfTagger.load(Path(path), KIND)
        lexicon = tagger.header.pop("lexicon", None)
        gazetteers = tagger.header.pop("gazetteers", None)
        if not isinstance(lexicon, dict) or not isinstance(gazetteers, dict):
            raise ConfigError(f"{path}: model header lacks its lexicons")
        return cls(tagger, Featurizer(lexicon, Gazetteers(gazetteers)))

    def label(self, text: str) -> tuple[str, list[Token], list[str]]:
        """(the normalized text, its tokens, a GROBID label per token)."""
        text = normalize(text)
        tokens = tokenize(text)
        head = tokens[:MAX_TOKENS]
        labels: list[str] = []
        for a, b in _chunks(text, head):
            piece = head[a:b]
            labels.extend(self.tagger.tag(self.featurizer.sequence(text, piece)))
        labels.extend([OTHER] * (len(tokens) - len(head)))
        return text, tokens, labels


def _training_pairs(texts: Sequence[LabelledText]) -> list[tuple[str, list[Token], list[str]]]:
    out = []
    for t in texts:
        tokens = tokenize(t.text)
        if tokens:
            out.append((t.text, tokens, t.token_labels(tokens)))
    return out


def train(
    name: str,
    texts: Sequence[LabelledText],
    out: Path,
    gazetteers: Gazetteers,
    params: dict[str, Any] | None = None,
    info: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Train on ``texts`` and write the model to ``out`` atomically. Deterministic:
    the same texts in the same order give the same file."""
    pairs = _training_pairs(texts)
    if not pairs:
        raise ConfigError(f"no training sequences for {name}")
    params = {**DEFAULT_PARAMS, **(params or {})}
    lexicon = build_lexicon((tokens, labels) for _, tokens, labels in pairs)
    featurizer = Featurizer(lexicon, gazetteers)
    tagger = CrfTagger.train(KIND, ((featurizer.sequence(text, tokens[a:b]), labels[a:b])
                                    for text, tokens, labels in pairs
                                    for a, b in _chunks(text, tokens)), params)
    header = tagger.save(Path(out), {
        "model": name,
        "labels": sorted({plain(x) for _, _, labels in pairs for x in labels}),
        "sequences": len(pairs),
        "tokens": sum(len(t) for _, t, _ in pairs),
        **(info or {}),
        "lexicon": lexicon,
        "gazetteers": gazetteers.to_json(),
    })
    header.pop("lexicon")
    header.pop("gazetteers")
    return header


def score(model: TextCrfModel, texts: Iterable[LabelledText]) -> FieldScores:
    scores = FieldScores()
    for t in texts:
        _, tokens, predicted = model.label(t.text)
        scores.add(t.token_labels(tokens), predicted)
    return scores


def _run_fold(name: str, train_texts: Sequence[LabelledText], test_texts: Sequence[LabelledText],
              gazetteers: Gazetteers, params: dict[str, Any] | None) -> FieldScores:
    with tempfile.TemporaryDirectory(prefix="sandcrawler-fold-") as tmp:
        path = Path(tmp) / "fold.crfmodel"
        train(name, train_texts, path, gazetteers, params)
        return score(TextCrfModel.load(path), test_texts)


def cross_validate(
    name: str,
    texts: Sequence[LabelledText],
    gazetteers: Gazetteers,
    folds: int = 10,
    params: dict[str, Any] | None = None,
    jobs: int = 1,
    on_fold: Callable[[int, FieldScores], None] | None = None,
) -> FieldScores:
    """k-fold cross-validation: train on k-1 folds, score the held-out one, counts
    summed over the folds."""
    total = FieldScores()
    pairs = folds_of(texts, folds)
    if jobs <= 1:
        for k, (tr, te) in enumerate(pairs):
            result = _run_fold(name, tr, te, gazetteers, params)
            total.merge(result)
            if on_fold:
                on_fold(k, result)
        return total
    with ProcessPoolExecutor(jobs) as pool:
        futures = [pool.submit(_run_fold, name, tr, te, gazetteers, params) for tr, te in pairs]
        for k, fut in enumerate(futures):
            result = fut.result()
            total.merge(result)
            if on_fold:
                on_fold(k, result)
    return total


def labelled_fields(text: str, tokens: Sequence[Token], labels: Sequence[str]
                    ) -> list[tuple[str, str]]:
    """(label, text) of each field as the scorer cuts them, ``<other>`` included; the
    text runs from the field's first token to its last, spacing as written."""
    return [(name, text[tokens[a].start : tokens[b - 1].end])
            for name, a, b in fields(labels)]
