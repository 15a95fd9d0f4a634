"""Layout tokens from PDFium's text page (pypdfium2): the cascade's in-process
layout reader, beside pdfalto's (``alto``). Characters become words here, and
fonts are read as pdfalto reads them; ``geometry`` makes the words into lines,
blocks and tokens. It runs native code on untrusted files: the caller runs it
in the sandbox. How the two readers compare: docs/extraction.md.
"""

from __future__ import annotations

import ctypes
import math
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from sandcrawler.core.mime import sniff_mime
from sandcrawler.core.pdf_bytes import scan
from sandcrawler.docparse.layout.elements import Layout, LayoutError, Page
from sandcrawler.docparse.layout.geometry import Font, Word, layout_page
from sandcrawler.docparse.layout.pdfium_calls import (
    Frame,
    get_font_info,
    get_font_size,
    get_loose_box,
    get_matrix,
    get_origin,
    get_text,
    get_text_object,
    get_unicode,
    is_generated,
    is_hyphen,
    text_object_font,
)
from sandcrawler.docparse.layout.pdfium_drawings import read_drawings
from sandcrawler.process.memory import anon_rss

READER = "pdfium"

# Where one text object's characters end and the next one's begin, pdfalto's
# rules for a new word: a gap wider than WORD_GAP (times the font size), a start
# more than BACKWARD back over the last character, a baseline moved by more than
# BASELINE_SHIFT points. Inside one object PDFium inserts a space wherever its
# pen jumps (measured on the real papers: 12 of 42,000 words have a gap over
# 0.1 of their size between two of their characters).
WORD_GAP = 0.1
BACKWARD = 0.3
BASELINE_SHIFT = 1.0

#: page objects visited per page for its images and drawings (a map drawn with a
#: million paths is counted up to here: GROBID's features ask only whether there
#: are any near a block)
MAX_PAGE_OBJECTS = 50_000
MAX_FORM_DEPTH = 8
#: characters either side of an accent drawn out of place where its letter is looked for
ACCENT_REACH = 300
#: PDFium keeps what each loaded page parsed until its document closes; once this
#: much more memory is in use the document is closed and opened afresh (as the
#: text loop of pdf/extract.py does, for the same reason)
REOPEN_GROWTH = 128 * 2**20

# PDF font descriptor flags (PDF 32000-1:2008, table 123)
_SYMBOLIC_FLAG = 1 << 2
_ITALIC_FLAG = 1 << 6
_FORCE_BOLD_FLAG = 1 << 18
_BOLD_NAME = re.compile("bold|heavy|black|_bd")
_ITALIC_NAME = re.compile("italic|oblique|_it")
_SUBSET_PREFIX = re.compile(r"^[A-Z]{6}\+")
_ENCRYPT = re.compile(rb"/Encrypt\b")
_SURROGATE = re.compile("[\ud800-\udfff]")
#: a word: a run of characters that are neither whitespace nor control
#: characters (C0 controls are glyphs without Unicode, dropped; 2 is PDFium's
#: mark of a hyphen ending a line, kept)
_RUN = re.compile(r"[^\s\x00\x01\x03-\x1f\u200b\ufeff]+")
#: PDFium's line-end hyphen: 2 per character, 0xFFFE in its page text
_HYPHENS = "\x02\ufffe"

#: spacing accents (and combining marks) that TeX and others draw over a letter,
#: and the combining mark each stands for
_ACCENTS = {
    "\u00b4": "\u0301", "`": "\u0300", "\u00a8": "\u0308", "\u02c6": "\u0302",
    "^": "\u0302", "\u02dc": "\u0303", "~": "\u0303", "\u00b8": "\u0327",
    "\u02c7": "\u030c", "\u02d8": "\u0306", "\u02d9": "\u0307", "\u02da": "\u030a",
    "\u02db": "\u0328", "\u02dd": "\u030b", "\u00af": "\u0304", "\u02c9": "\u0304",
}
_ACCENT = re.compile("[" + re.escape("".join(_ACCENTS)) + "\u0300-\u036f]")
#: TeX puts an accent on a dotless i or j
_DOTLESS = {"\u0131": "i", "\u0237": "j"}


def read_layout_pdfium(
    source: str | Path | bytes,
    *,
    first_page: int = 0,
    last_page: int | None = None,
    max_pages: int | None = None,
    max_tokens: int | None = None,
) -> Layout:
    """The layout of a PDF (a path, or its bytes) as PDFium reads it: pages
    ``first_page`` to ``last_page`` (0-based, inclusive; None: to the end), at
    most ``max_pages`` of them, and tokens up to ``max_tokens`` (the page that
    reaches it is cut there and later pages are not read). ``Page.number`` is
    the page's number in the document.

    Raises ``LayoutError`` (``layout-failed``) for a file it cannot read: not a
    PDF, damaged, encrypted, without pages; the message says which. A page
    without text is not an error: it has no blocks."""
    src = bytes(source) if isinstance(source, bytes | bytearray | memoryview) else str(source)
    head = _read_head(src)
    if not head:
        raise LayoutError("the file is empty")
    if sniff_mime(head) != "application/pdf":
        raise LayoutError(f"the bytes are {sniff_mime(head)}, not a PDF")
    doc = _open(src)
    try:
        count = len(doc)
        if count == 0:
            raise LayoutError("the PDF has no pages")
        last = count - 1 if last_page is None else min(last_page, count - 1)
        numbers = range(max(0, first_page), last + 1)
        if max_pages is not None:
            numbers = numbers[:max(0, max_pages)]
        layout = Layout(reader=READER)
        budget = math.inf if max_tokens is None else max_tokens
        failed: list[int] = []
        for page in _pages(doc, src, numbers, failed):
            layout.pages.append(page)
            budget -= sum(len(line.tokens) for block in page.blocks for line in block.lines)
            if budget <= 0:
                _cut(page, int(-budget))
                break
        if layout.pages and len(failed) == len(layout.pages):
            raise LayoutError("PDFium can load none of the pages asked for")
        return layout
    except pdfium.PdfiumError as e:
        raise LayoutError(f"PDFium failed part-way: {e}") from e
    finally:
        doc.close()


def _read_head(src: bytes | str) -> bytes:
    if isinstance(src, bytes):
        return src[:8192]
    try:
        with open(src, "rb") as f:
            return f.read(8192)
    except OSError as e:
        raise LayoutError(f"cannot read {src}: {e.strerror}") from e


def _open(src: bytes | str) -> pdfium.PdfDocument:
    try:
        return pdfium.PdfDocument(src)
    except pdfium.PdfiumError as e:
        # PDFium's error code is its thread's last error, which a failure that
        # sets none leaves from an earlier file (pdf/extract.py): the bytes decide
        if _has_encrypt(src):
            raise LayoutError("the PDF needs a password") from e
        said = "" if "password" in str(e).lower() else f": {e}"  # a stale code (above)
        raise LayoutError(f"PDFium cannot open the file{said}") from e


def _has_encrypt(src: bytes | str) -> bool:
    return scan(src, _ENCRYPT)


def _cut(page: Page, drop: int) -> None:
    """Drop the page's last ``drop`` tokens (the token budget ran out in it)."""
    while drop > 0 and page.blocks:
        block = page.blocks[-1]
        while drop > 0 and block.lines:
            line = block.lines[-1]
            keep = max(0, len(line.tokens) - drop)
            drop -= len(line.tokens) - keep
            del line.tokens[keep:]
            if line.tokens:
                line.tokens[-1].space_after = False
            else:
                block.lines.pop()
        if not block.lines:
            page.blocks.pop()


def _pages(doc: pdfium.PdfDocument, src: bytes | str, numbers: range,
           failed: list[int]) -> Iterator[Page]:
    """The pages, each read and closed in turn; the numbers of those PDFium
    cannot load go to ``failed``."""
    current = doc
    base = anon_rss()
    try:
        for number in numbers:
            if anon_rss() - base > REOPEN_GROWTH:
                current.close()  # closing ``doc`` twice is a no-op in pypdfium2
                current = pdfium.PdfDocument(src)
                base = anon_rss()
            try:
                page = current[number]
            except pdfium.PdfiumError:
                # a page PDFium cannot load is a page without text; the rest
                # of the document is still read
                failed.append(number)
                yield Page(number=number, width=0.0, height=0.0)
                continue
            try:
                yield _read_page(page, number)
            finally:
                page.close()
    finally:
        if current is not doc:
            current.close()



def _read_page(page: pdfium.PdfPage, number: int) -> Page:
    left, bottom, right, top = page.get_bbox()
    frame = Frame(left, bottom, right, top, page.get_rotation() % 360)
    width, height = frame.size
    out = Page(number=number, width=round(width, 2), height=round(height, 2))
    read_drawings(page, frame, out)
    textpage = page.get_textpage()
    try:
        words = _words(textpage, frame)
    finally:
        textpage.close()
    out.blocks = layout_page(words, number)
    return out


def _page_text(textpage: int, count: int) -> str | None:
    """The page's characters in one call, when PDFium's page text has one UTF-16
    unit per character (it drops or rewrites a few, and a character beyond the
    BMP takes two: then None, and each character is asked for)."""
    buffer = ctypes.create_string_buffer((count + 1) * 2)
    written = get_text(textpage, 0, count, buffer)
    if written != count + 1:
        return None
    text = buffer.raw[:count * 2].decode("utf-16-le", errors="surrogatepass")
    if len(text) != count or _SURROGATE.search(text):
        return None
    return text


class _Chars:
    """A page's characters: their text (one call for the page), and what PDFium
    says of each when first asked: the text object that drew it, its loose box
    on the displayed page, its baseline. Most characters are never asked about
    (a word needs its ends), and each ctypes call costs more than PDFium's work
    behind it. ``index`` maps a place in ``text`` to PDFium's (None: the same;
    accents put on their letters drop characters)."""

    __slots__ = ("_boxes", "_objects", "_rect", "frame", "index", "text", "textpage")

    def __init__(self, text: str, textpage: int, frame: Frame,
                 index: list[int] | None = None) -> None:
        self.text = text
        self.textpage = textpage
        self.frame = frame
        self.index = index
        self._boxes: dict[int, tuple[float, float, float, float]] = {}
        self._objects: dict[int, int | None] = {}
        self._rect = pdfium_c.FS_RECTF()

    def pdfium_index(self, i: int) -> int:
        return i if self.index is None else self.index[i]

    def obj(self, i: int) -> int | None:
        """The text object that drew character ``i`` (None: PDFium made it)."""
        found = self._objects.get(i, 0)
        if found == 0:
            found = self._objects[i] = get_text_object(self.textpage, self.pdfium_index(i))
        return found

    def box(self, i: int) -> tuple[float, float, float, float]:
        """Character ``i``'s (x0, y0, x1, y1) on the displayed page."""
        found = self._boxes.get(i)
        if found is None:
            r = self._rect
            get_loose_box(self.textpage, self.pdfium_index(i), ctypes.addressof(r))
            found = self._boxes[i] = self.frame.box(r.left, r.bottom, r.right, r.top)
        return found

    def baseline(self, i: int) -> float:
        """Character ``i``'s baseline: its origin's distance from the page's top."""
        x, y = ctypes.c_double(), ctypes.c_double()
        get_origin(self.textpage, self.pdfium_index(i), ctypes.byref(x), ctypes.byref(y))
        return self.frame.y(x.value, y.value)

    def breaks(self, k: int, base: float, size: float) -> bool:
        """Character ``k`` does not continue the word before it, as pdfalto
        decides: it starts past a gap, or well back over the word, or on
        another baseline (``base``, the word's)."""
        gap = self.box(k)[0] - self.box(k - 1)[2]
        return gap > WORD_GAP * size or gap < -BACKWARD * size \
            or abs(self.baseline(k) - base) > BASELINE_SHIFT


class _Fonts:
    """Each text object's font, size and direction, read once (at the first of
    its characters met) and shared by all of them; a font's name and style are
    read once per font."""

    def __init__(self, textpage: int, rotation: int) -> None:
        self.textpage = textpage
        self.rotation = rotation
        self.by_object: dict[int, Font] = {}
        self.by_key: dict[Font, Font] = {}
        self.faces: dict[int, tuple[str, bool, bool]] = {}
        self.buffer = ctypes.create_string_buffer(256)
        self.flags = ctypes.c_int()
        self.matrix = pdfium_c.FS_MATRIX()

    def of(self, obj: int | None, index: int) -> Font:
        if obj:
            font = self.by_object.get(obj)
            if font is None:
                font = self.by_object[obj] = self._read(text_object_font(obj) or 0, index)
            return font
        return self._read(0, index)

    def _read(self, handle: int, index: int) -> Font:
        tp = self.textpage
        face = self.faces.get(handle) if handle else None
        if face is None:
            face = self._face(index)
            if handle:
                self.faces[handle] = face
        name, bold, italic = face
        m = self.matrix
        if not get_matrix(tp, index, ctypes.byref(m)):
            m.a, m.b, m.c, m.d = 1.0, 0.0, 0.0, 1.0
        # the text state's size (Tf) scaled by the text and graphics matrices:
        # often ``1 Tf`` and a scaling matrix
        size = get_font_size(tp, index) * math.hypot(m.c, m.d)
        angle = math.degrees(math.atan2(m.b, m.a)) - self.rotation
        quarter = round(angle / 90.0)
        direction = (quarter * 90) % 360 if abs(angle - quarter * 90) < 2.0 else None
        font = Font(name, round(size, 2), bold, italic, direction)
        return self.by_key.setdefault(font, font)

    def _face(self, index: int) -> tuple[str, bool, bool]:
        """The font's name, and whether it is bold and italic as pdfalto decides
        (module docstring)."""
        tp = self.textpage
        n = get_font_info(tp, index, self.buffer, len(self.buffer), ctypes.byref(self.flags))
        if n > len(self.buffer):
            self.buffer = ctypes.create_string_buffer(n)
            n = get_font_info(tp, index, self.buffer, len(self.buffer), ctypes.byref(self.flags))
        name = _SUBSET_PREFIX.sub("", self.buffer.raw[:max(0, n - 1)].decode("utf-8", "replace"))
        flags = self.flags.value if n else 0
        lower = name.lower()
        bold = bool(flags & _FORCE_BOLD_FLAG) or _BOLD_NAME.search(lower) is not None
        italic = bool(flags & _ITALIC_FLAG and not flags & _SYMBOLIC_FLAG) \
            or _ITALIC_NAME.search(lower) is not None
        return name, bold, italic


def _words(textpage_obj: pdfium.PdfTextPage, frame: Frame) -> list[Word]:
    textpage = ctypes.cast(textpage_obj.raw, ctypes.c_void_p).value or 0
    count = pdfium_c.FPDFText_CountChars(textpage_obj)
    if count <= 0:
        return []
    text = _page_text(textpage, count)
    if text is None:
        text = "".join([chr(get_unicode(textpage, i)) for i in range(count)])
    if "\x02" in text:
        # 2 marks a hyphen ending a line, or is a glyph without Unicode
        text = "".join(c if c != "\x02" or is_hyphen(textpage, i) else "\x01"
                       for i, c in enumerate(text))
    chars = _Chars(text, textpage, frame)
    if _ACCENT.search(text):
        chars = _compose_accents(chars, textpage)
    text = chars.text
    fonts = _Fonts(textpage, frame.rotation)
    offsets: dict[Font, tuple[float, float]] = {}
    words: list[Word] = []
    end = 0
    for run in _RUN.finditer(text):
        start, stop = run.span()
        brk = "\r" in text[end:start] or "\n" in text[end:start]
        end = stop
        first = chars.obj(start)
        if first and (stop - start == 1 or chars.obj(stop - 1) == first):
            # one text object drew the run (objects draw their characters one
            # after another): one font, and PDFium put a space wherever its pen
            # jumped
            font = fonts.of(first, chars.pdfium_index(start))
            words.append(_word(chars, start, stop, font, brk, offsets))
            continue
        # several objects drew it: where one ends and the next begins, the pen
        # may have moved. A change of font alone does not end a word (pdfalto
        # keeps "{name}" in a symbol font and a text font as one word, in the
        # font of its first character)
        font = fonts.of(first, chars.pdfium_index(start))
        baseline = chars.baseline(start) if font.direction == 0 else 0.0
        for k in range(start + 1, stop):
            obj = chars.obj(k)
            if obj and obj == chars.obj(k - 1):
                continue
            other = fonts.of(obj, chars.pdfium_index(k))
            if other.direction != font.direction \
                    or (font.direction == 0 and chars.breaks(k, baseline, font.size)):
                words.append(_word(chars, start, k, font, brk, offsets))
                start, font, brk = k, other, False
                baseline = chars.baseline(start) if font.direction == 0 else 0.0
        words.append(_word(chars, start, stop, font, brk, offsets))
    return words


def _word(chars: _Chars, start: int, end: int, font: Font, brk: bool,
          offsets: dict[Font, tuple[float, float]]) -> Word:
    if font.direction == 0:
        x0, y0, x1, y1 = chars.box(start)
        if end - start > 1:
            x1 = max(x1, chars.box(end - 1)[2])
        # a character's loose box is as tall as its font's ascent and descent
        # make it, from its baseline: PDFium is asked once per font, and again
        # for a box of another height (a font without those metrics)
        height = y1 - y0
        known = offsets.get(font)
        if known is not None and abs(known[0] - height) < 0.01:
            baseline = y1 + known[1]
        else:
            baseline = chars.baseline(start)
            offsets[font] = (height, baseline - y1)
    else:
        # turned text: the characters' boxes together
        corners = [chars.box(i) for i in range(start, end)]
        x0, y0 = min(c[0] for c in corners), min(c[1] for c in corners)
        x1, y1 = max(c[2] for c in corners), max(c[3] for c in corners)
        baseline = y1
    text = chars.text[start:end]
    if "\x02" in text or "\ufffe" in text:
        text = text.replace("\x02", "-").replace("\ufffe", "-")
    return Word(text, font, x0, y0, x1, y1, baseline, brk)


def _compose_accents(chars: _Chars, textpage: int) -> _Chars:
    """Accents drawn as characters of their own put on the letter under them,
    as pdfalto does (an acute accent over a dotless i is an i with an acute);
    with them go the spaces PDFium put around an accent drawn out of its place
    in the line."""
    text = list(chars.text)
    dropped: set[int] = set()
    for match in _ACCENT.finditer(chars.text):
        i = match.start()
        base = _letter_under(chars, i)
        if base is None:
            continue
        letter = text[base]
        mark = _ACCENTS.get(text[i], text[i])
        composed = unicodedata.normalize("NFC", _DOTLESS.get(letter, letter) + mark)
        if len(composed) != 1:
            continue  # no such precomposed letter: the accent stays a character
        text[base] = composed
        dropped.add(i)
        before, after = i - 1, i + 1
        while before >= 0 and text[before].isspace() and is_generated(textpage, before):
            before -= 1
        while after < len(text) and text[after].isspace() and is_generated(textpage, after):
            after += 1
        if before >= 0 and after < len(text) and after - before > 2 \
                and not text[before].isspace() and not text[after].isspace():
            _, tb, rb, bb = chars.box(before)
            la, ta, _, _ = chars.box(after)
            size = max(1.0, bb - tb)
            if abs(ta - tb) <= BASELINE_SHIFT and -BACKWARD * size <= la - rb <= WORD_GAP * size:
                dropped.update(range(before + 1, after))
    if not dropped:
        return chars
    keep = [k for k in range(len(text)) if k not in dropped]
    return _Chars("".join(text[k] for k in keep), chars.textpage, chars.frame, keep)


def _letter_under(chars: _Chars, i: int) -> int | None:
    """The letter an accent is drawn over: one whose box holds the accent's
    middle, on the same line; the neighbours first, then the whole page."""
    x0, _, x1, y1 = chars.box(i)
    middle = (x0 + x1) / 2
    text = chars.text
    n = len(text)

    def under(k: int) -> bool:
        if not 0 <= k < n or not text[k].isalpha():
            return False
        left, top, right, bottom = chars.box(k)
        return left - 0.5 <= middle <= right + 0.5 and abs(bottom - y1) < max(bottom - top, 1.0)

    for k in (i + 1, i - 1, i + 2, i - 2):
        if under(k):
            return k
    # drawn out of its place (then PDFium puts spaces around it): the letter is
    # elsewhere on the line, looked for within a stretch of the text that
    # bounds the work per accent
    if not (i == 0 or text[i - 1].isspace()) or not (i + 1 == n or text[i + 1].isspace()):
        return None
    for k in range(max(0, i - ACCENT_REACH), min(n, i + ACCENT_REACH)):
        if under(k):
            return k
    return None
