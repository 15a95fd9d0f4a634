"""GROBID's tokenisation of layout text (docparse/tokens.py, docs/extraction.md
"Layout tokens")."""

from __future__ import annotations

import sys
import unicodedata

import pytest

from sandcrawler.docparse.layout import tokens
from sandcrawler.docparse.layout.tokens import normalise, spans, split, split_spaced


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("word", ["word"]),
        ("Smith†, J.(1999a)", ["Smith", "†", ",", "J", ".", "(", "1999a", ")"]),
        # letters and digits stay together, as in GROBID's default tokenizer
        ("H2O", ["H2O"]),
        ("LT-Lab,", ["LT", "-", "Lab", ","]),
        ("rwang@coli.uni-sb.de", ["rwang", "@", "coli", ".", "uni", "-", "sb", ".", "de"]),
        # ligatures unfolded, curly quotes straightened, dashes to "-"
        ("\ufb01nal", ["final"]),
        ("\u201cword\u201d", ['"', "word", '"']),
        ("a\u2013b\u2212c", ["a", "-", "b", "-", "c"]),
        ("\u00e6ther", ["aether"]),
        # the asterisk operator and footnote markers become tokens of their own
        ("x\u2217y", ["x", "*", "y"]),
        ("Neumann\u2021", ["Neumann", "\u2021"]),
        # full-width and CJK punctuation
        ("\uff08a\uff09\u3002", ["(", "a", ")", "\u3002"]),
        ("", []),
        ("   ", []),
        ("\u200c", []),
    ],
)
def test_split(text: str, expected: list[str]) -> None:
    assert split(text) == expected


def test_whitespace_is_space_after() -> None:
    assert split_spaced(" a b\u2009c\td\r\ne ") == [
        ("a", True),
        ("b", True),
        ("c", True),
        ("d", True),
        ("e", False),
    ]
    assert split_spaced("Smith\u2020") == [("Smith", True), ("\u2020", False)]


def test_spans_are_offsets_of_the_normalised_text() -> None:
    text, found = spans("\ufb01rst-rate,")
    assert text == "first-rate,"
    assert [text[a:b] for a, b, _ in found] == ["first", "-", "rate", ","]
    assert found[0] == (0, 5, False)


def test_the_ascii_shortcut_changes_nothing() -> None:
    # normalise() returns printable ASCII trimmed but otherwise as it is: the
    # table must not touch any printable ASCII character
    for code in range(0x20, 0x7F):
        c = chr(code)
        assert tokens._TABLE.get(code, c) == c, repr(c)


def test_dashes_are_unicode_dash_punctuation() -> None:
    # the listed dashes are Unicode's Pd category and the minus sign (a later
    # Unicode may add dashes; the list is of Unicode 14, Python 3.11's)
    pd = {chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Pd"}
    assert set(tokens._DASHES) <= pd | {"\u2212"}
    if unicodedata.unidata_version == "14.0.0":
        assert set(tokens._DASHES) == pd | {"\u2212"}
    assert all(normalise(d) == "-" for d in tokens._DASHES)
