"""Repairs for the systematic encoding problems of upstream reference strings.

Applied before parsing, in this order:

1. HTML entities, including double-escaped ones (``&amp;amp;`` -> ``&``).
2. Inline markup (``<i>``, ``<jats:italic>``, ``<sup>``) removed, its text kept.
3. Mojibake (UTF-8 read as Latin-1/cp1252: ``CafÃ©``) repaired with ftfy, only
   when the string looks broken, so correct text is never touched.
4. Control characters and zero-width characters dropped; every run of
   whitespace (tabs, newlines, NBSP, thin spaces) becomes one space.
5. A string that is the same text twice (``A. Title. 2001.A. Title. 2001.``)
   keeps one copy.
6. Unicode NFC, so composed and decomposed accents compare equal.
"""

from __future__ import annotations

import html
import re
import unicodedata

from ftfy import fix_encoding
from ftfy.badness import is_bad

_TAG = re.compile(r"</?[A-Za-z][\w:.-]*(?:\s[^<>]*)?/?>")
_DROP = {cp: None for cp in [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F,
                              *range(0x80, 0xA0), 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0xAD]}
_MIN_DOUBLED = 10


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
        if is_bad(text):
            text = fix_encoding(text)
        text = unicodedata.normalize("NFC", text)
    text = " ".join(text.translate(_DROP).split())
    return undouble(text)
