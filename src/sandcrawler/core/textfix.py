"""Text from documents made readable where it was decoded with the wrong charset.

Two faults are common in titles and names from publishers' pages, XML and PDF
information dictionaries: Windows-1252 bytes read as ISO-8859-1 (C1 control
characters for quotes and dashes), and UTF-8 read as Latin-1 or cp1252
(mojibake). ftfy repairs both; it runs only when the text shows one of them,
so correct text is never touched (docs/architecture.md, "Text decoded with
the wrong charset").
"""

from __future__ import annotations

import re

from ftfy import TextFixerConfig, fix_text

#: C1 controls, or a character that starts UTF-8-as-Latin-1 mojibake (U+00C2..U+00F4)
_SUSPECT = re.compile("[\u0080-\u009f\u00c2-\u00f4]")
_CONFIG = TextFixerConfig(unescape_html=False, fix_line_breaks=False,
                          fix_character_width=False, uncurl_quotes=False,
                          normalization=None, explain=False)


def readable(text: str) -> str:
    """``text`` with C1 controls read as the cp1252 characters they were, and
    mojibake undone; unchanged when it shows neither."""
    if not _SUSPECT.search(text):
        return text
    return fix_text(text, _CONFIG)
