"""The damage a reference or a header suffers between a PDF and a matcher, as
deterministic functions of a ``random.Random`` (used by bench/build/match_data.py).

- line breaks where the PDF's lines ended, and words hyphenated across them
  ("struc-\\ntures"), as GROBID leaves them in raw reference strings;
- OCR confusions (rn/m, l/1, O/0, ligatures, c/e, dropped accents);
- the reference's label kept ("[12] ", "12. ");
- a string cut short or run on into the page's footer (a segmentation error);
- mojibake: UTF-8 bytes read as Windows-1252.
"""

from __future__ import annotations

import random
import re
import unicodedata

_OCR = [("rn", "m"), ("m", "rn"), ("l", "1"), ("O", "0"), ("fi", "\ufb01"), ("fl", "\ufb02"),
        ("e", "c"), ("cl", "d"), ("h", "b"), ("I", "l"), ("S", "5"), (",", "."), ("u", "n")]
_LONG_WORD = re.compile(r"[^\W\d_]{7,}")
_FOOTERS = ["Page 12 of 18", "123", "Downloaded from https://academic.oup.com/ on 12 May 2019",
            "J. Sci. 2017", "\u00a9 2016 Elsevier Ltd. All rights reserved.", "- 7 -"]


def line_breaks(text: str, rng: random.Random, width: int = 70) -> str:
    """Break at the space nearest every ``width`` characters (a column of a PDF)."""
    out = []
    col = 0
    w = width + rng.randint(-15, 15)
    for i, ch in enumerate(text):
        if ch == " " and col >= w and i < len(text) - 5:
            out.append("\n")
            col = 0
            w = width + rng.randint(-15, 15)
            continue
        out.append(ch)
        col += 1
    return "".join(out)


def hyphenate(text: str, rng: random.Random) -> str:
    """One long word split across a line end: "structures" -> "struc-\\ntures"."""
    words = list(_LONG_WORD.finditer(text))
    if not words:
        return text
    m = rng.choice(words)
    cut = m.start() + rng.randint(3, len(m.group()) - 3)
    return text[:cut] + "-\n" + text[cut:]


def ocr_errors(text: str, rng: random.Random, n: int = 2) -> str:
    for _ in range(n):
        src, dst = rng.choice(_OCR)
        spots = [m.start() for m in re.finditer(re.escape(src), text)]
        if spots:
            i = rng.choice(spots)
            text = text[:i] + dst + text[i + len(src):]
    return text


def strip_accents(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", text)
                   if unicodedata.category(c) != "Mn")


def mojibake(text: str) -> str:
    """UTF-8 read as Windows-1252 ("é" -> "Ã©"); the five bytes that code page leaves
    undefined become the Latin-1 control characters, as lenient decoders do."""
    out = []
    for b in text.encode("utf-8"):
        try:
            out.append(bytes([b]).decode("cp1252"))
        except UnicodeDecodeError:
            out.append(chr(b))
    return "".join(out)


def label(text: str, rng: random.Random, n: int) -> str:
    return rng.choice([f"[{n}] ", f"{n}. ", f"{n} ", f"({n}) "]) + text


def damage_reference(text: str, rng: random.Random, n: int) -> tuple[str, list[str]]:
    """A raw reference string as GROBID may extract it from a PDF, and the damage done."""
    kinds: list[str] = []
    if rng.random() < 0.05:
        text = text[: max(30, int(len(text) * 0.8))]
        kinds.append("truncated")
    if rng.random() < 0.05:
        text = text + " " + rng.choice(_FOOTERS)
        kinds.append("footer")
    if rng.random() < 0.15:
        text = ocr_errors(text, rng, rng.randint(1, 3))
        kinds.append("ocr")
    if rng.random() < 0.05:
        text = strip_accents(text)
        kinds.append("no-accents")
    if rng.random() < 0.25:
        text = label(text, rng, rng.randint(1, 80))
        kinds.append("label")
    if rng.random() < 0.7:
        text = line_breaks(text, rng)
        kinds.append("line-breaks")
        if rng.random() < 0.5:
            text = hyphenate(text, rng)
            kinds.append("hyphenation")
    return text, kinds
