"""Repairs for the systematic encoding problems of upstream reference strings.

Applied before parsing, in this order: HTML entities (double-escaped ones
included); inline markup removed, its text kept; mojibake repaired with ftfy,
only when the string looks broken; control and zero-width characters dropped,
white space folded; a string that is the same text twice keeps one copy;
Unicode NFC (docs/refs.md, "Cleaning of unstructured strings").
"""

from __future__ import annotations

import html
import re
import unicodedata

from ftfy import fix_encoding
from ftfy.badness import is_bad

_TAG = re.compile(r"</?[A-Za-z][\w:.-]*(?:\s[^<>]*)?/?>")
# Control characters (C0 but tab/newline/CR, DEL, C1), zero-width characters, soft hyphen.
_DROP = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200d\u2060\ufeff\xad]")
_MIN_DOUBLED = 10
# UTF-8 read as Latin-1/cp1252 always shows a lead byte as one of U+00C2..U+00F4;
# only strings with one of those are worth ftfy's (much slower) detector.
_MOJIBAKE_LEAD = re.compile("[\u00c2-\u00f4]")


def undouble(text: str) -> str:
    """``X X`` (optionally with a space or punctuation between the copies) -> ``X``."""
    n = len(text)
    for sep_len in (0, 1, 2):
        half = (n - sep_len) // 2
        if half < _MIN_DOUBLED or 2 * half + sep_len != n:
            continue
        if text[:half] == text[half + sep_len :] and not text[half : half + sep_len].strip(" .,;"):
            return text[:half]
    return text


def clean_unstructured(text: str) -> str:
    if "&" in text:
        for _ in range(3):
            unescaped = html.unescape(text)
            if unescaped == text:
                break
            text = unescaped
    if "<" in text:
        text = _TAG.sub("", text)
    if not text.isascii():
        if _MOJIBAKE_LEAD.search(text) and is_bad(text):
            text = fix_encoding(text)
        text = unicodedata.normalize("NFC", text)
    text = " ".join(_DROP.sub("", text).split())
    return undouble(text)
