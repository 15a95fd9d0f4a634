"""The header's title from its tokens: by its type where the model missed it,
and without the translation printed below it.

SciELO, Redalyc and many OJS journals print the article's title and then its
English (or Spanish, Portuguese) translation in another weight or slant; the
header model labels both as the title. They are told apart by a line whose type
changes and whose function words are another language's. docs/extraction.md,
"Notes by module", has the rules.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sandcrawler.docparse.layout.elements import Token
from sandcrawler.docparse.layout.text import join_tokens, line_spans
from sandcrawler.tagging.scoring import BEGIN, fields, plain


def _vocab(words: str) -> frozenset[str]:
    return frozenset(words.split())


#: the commonest function words of titles, per language (a word in several
#: lists counts for each of them)
FUNCTION_WORDS: dict[str, frozenset[str]] = {
    "en": _vocab("the of and in on for with to a an from by at as its their is are "
                 "between among into using versus after during under towards"),
    "pt": _vocab("o os a as da das do dos de em no na nos nas e com para por um uma sua "
                 "seu suas seus entre sobre pela pelo pelas pelos ao aos à às como"),
    "es": _vocab("el la los las del de en y con para por un una su sus entre sobre al "
                 "como contra desde hacia según"),
    "fr": _vocab("le la les des du de en et dans pour par un une sur aux au avec entre "
                 "sa son ses est chez selon"),
    "de": _vocab("der die das den dem des und in im von vom zu zur zum mit für auf bei "
                 "eine ein einer eines zwischen über nach aus als"),
    "it": _vocab("il lo la gli le di del della dei delle e in con per un una nel nella "
                 "tra su sul sulla"),
}
#: the translation is a title of its own: at least this many words
MIN_WORDS = 3
#: the title's type is at least this much larger than the header's usual type
TITLE_TYPE = 1.3
TITLE = "<title>"
#: what the model may have taken a title for (never a journal line, an
#: identifier or an affiliation printed large)
_MAY_BE_TITLE = frozenset({TITLE, "<abstract>", "<other>"})
_ADDRESS_AT_END = re.compile(r"^(?:https?://|www\.)\S+\s+|\s+(?:https?://|www\.)\S+$",
                             re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)?")


def languages(text: str) -> frozenset[str]:
    """The languages whose function words ``text`` holds most of (several on a
    tie; none when it holds no function word)."""
    words = [w.casefold() for w in _WORD.findall(text)]
    hits = {lang: sum(w in vocab for w in words) for lang, vocab in FUNCTION_WORDS.items()}
    best = max(hits.values())
    return frozenset(lang for lang, n in hits.items() if n == best) if best else frozenset()


def main_title(tokens: Sequence[Token]) -> str:
    """The title's tokens up to a translation printed below it, as text, without
    a web address at either end (a repository's cover page: "www.ssoar.info")."""
    spans = line_spans(tokens)
    styles = [_style(tokens[s:e]) for s, e in spans]
    text = join_tokens(tokens)
    for i in range(1, len(spans)):
        if _same_type(styles[i], styles[i - 1]):
            continue
        before, after = join_tokens(tokens[:spans[i][0]]), join_tokens(tokens[spans[i][0]:])
        if len(_WORD.findall(after)) < MIN_WORDS:
            continue
        ours, theirs = languages(before), languages(after)
        if ours and theirs and not ours & theirs:
            text = before
            break
    return _ADDRESS_AT_END.sub("", text)


def retitle(tokens: Sequence[Token], labels: Sequence[str]) -> list[str]:
    """The labels with the title the page's type shows: the lines in the
    header's largest type when the model labelled no title, or the rest of those
    lines (in the very same type) when it labelled only the first of them."""
    spans = line_spans(tokens)
    found = largest_type([tokens[s:e] for s, e in spans])
    if found is None:
        return list(labels)
    first, last = found[0], found[1] - 1
    start, end = spans[first][0], spans[last][1]
    title = next(((s, e) for label, s, e in fields(labels)
                  if label == TITLE and join_tokens(tokens[s:e])), None)
    # a line taken for an author may join a title in its type, never be one
    allowed = _MAY_BE_TITLE | ({"<author>"} if title else set())
    if any(plain(label) not in allowed for label in labels[start:end]):
        return list(labels)
    if title is not None:
        s, e = title
        if not (start <= s and e <= end) or (s, e) == (start, end):
            return list(labels)
        # the lines next to the model's title in its very type join it
        styles = [_style(tokens[a:b]) for a, b in spans]
        at = next(i for i in range(first, last + 1) if spans[i][0] <= s < spans[i][1])
        lo = hi = at
        while lo > first and styles[lo - 1] == styles[at]:
            lo -= 1
        while hi < last and styles[hi + 1] == styles[at]:
            hi += 1
        start, end = min(s, spans[lo][0]), max(e, spans[hi][1])
    out = list(labels)
    out[start:end] = [BEGIN + TITLE] + [TITLE] * (end - start - 1)
    if end < len(out) and not out[end].startswith(BEGIN):
        out[end] = BEGIN + plain(out[end])
    return out


def largest_type(lines: Sequence[Sequence[Token]]) -> tuple[int, int] | None:
    """(first, end) of the first page's first run of lines in its largest type,
    when that type stands out and the run reads as a title (three words at
    least): where a title is printed."""
    first = [i for i, line in enumerate(lines) if line and line[0].page == 0]
    if not first:
        return None
    sizes = sorted((t.size, len(t.text)) for i in first for t in lines[i])
    half, seen, usual = sum(n for _, n in sizes) / 2, 0, 0.0
    for size, n in sizes:
        seen += n
        if seen >= half:
            usual = size
            break
    size_of = {i: _style(lines[i])[2] for i in first}
    worded = [i for i in first if len(_WORD.findall(join_tokens(lines[i]))) >= 2]
    if not worded:
        return None
    top = max(size_of[i] for i in worded)
    if usual <= 0 or top < TITLE_TYPE * usual:  # a text layer without sizes says nothing
        return None
    run: list[int] = []
    for i in first:
        if abs(size_of[i] - top) <= 0.1 * top:
            run.append(i)
        elif run:
            break
    text = " ".join(join_tokens(lines[i]) for i in run)
    if len(_WORD.findall(text)) < MIN_WORDS:
        return None
    return run[0], run[-1] + 1


def _style(line: Sequence[Token]) -> tuple[bool, bool, float]:
    """Bold, italic and size of most of the line's letters (a word in italics
    or a larger initial inside a line is not the line's type)."""
    weights: dict[tuple[bool, bool, float], int] = {}
    for t in line:
        key = (t.bold, t.italic, round(t.size, 1))
        weights[key] = weights.get(key, 0) + len(t.text)
    return max(weights, key=lambda k: weights[k])


def _same_type(a: tuple[bool, bool, float], b: tuple[bool, bool, float]) -> bool:
    """Sizes within a tenth of each other are one size."""
    return a[:2] == b[:2] and abs(a[2] - b[2]) <= 0.1 * max(a[2], b[2])
