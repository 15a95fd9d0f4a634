"""Layout tokens from pdfalto, GROBID's own layout program, run as a separate
program (it is GPL-2.0: its binary from the ``pdfalto`` wheel, never imported)
in a temporary directory with time, memory and output limits. Its ALTO XML is
read the way GROBID reads it, so that the features computed from it mean what
GROBID's training files mean (docs/extraction.md, "Notes by module").
"""

from __future__ import annotations

import html
import itertools
import os
import re
import resource
import select
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Callable
from pathlib import Path

from sandcrawler.docparse.layout.elements import (
    Block,
    Graphic,
    Layout,
    LayoutError,
    Line,
    Page,
    Token,
)
from sandcrawler.docparse.layout.tokens import spans
from sandcrawler.records.statuses import LayoutStatus

__all__ = ["LayoutError", "find_pdfalto", "parse_alto", "parse_alto_text", "read_layout_alto"]

#: the ALTO pdfalto writes may not exceed this (a hostile PDF can make it huge)
MAX_OUTPUT_BYTES = 512 * 2**20
#: how much of pdfalto's stderr an error message quotes
_STDERR_TAIL = 400
# GROBID's options, and graphics as coordinates only (module docstring)
_OPTIONS = ("-fullFontName", "-noLineNumbers", "-onlyGraphsCoord")


def find_pdfalto() -> str | None:
    """The pdfalto binary: beside this Python (a virtualenv's bin/, where the
    wheel installs it), in the scripts directory, or on PATH."""
    here = Path(sys.executable).parent / "pdfalto"
    if os.access(here, os.X_OK):
        return str(here)
    scripts = Path(sysconfig.get_path("scripts")) / "pdfalto"
    if os.access(scripts, os.X_OK):
        return str(scripts)
    return shutil.which("pdfalto")


def read_layout_alto(
    path: str | os.PathLike[str],
    *,
    timeout: float,
    memory_limit: int | None = None,
    max_pages: int | None = None,
    first_page: int = 0,
    last_page: int | None = None,
) -> Layout:
    """The layout of the PDF at ``path``, pages ``first_page`` to ``last_page``
    (0-based, inclusive; ``last_page`` None: to the end), at most ``max_pages``
    of them. ``memory_limit`` is pdfalto's address space in bytes.

    Raises ``LayoutError``: ``layout-timeout``, ``layout-memory-limit``,
    ``layout-failed`` (pdfalto missing, failed or gave unreadable output). A PDF
    without text is not an error: its pages have no blocks."""
    binary = find_pdfalto()
    if binary is None:
        raise LayoutError("pdfalto is not installed (pip install pdfalto)")
    source = Path(path).resolve()
    if not source.is_file():
        raise LayoutError(f"no such file: {source}")
    last = last_page
    if max_pages is not None:
        limit = first_page + max_pages - 1
        last = limit if last is None else min(last, limit)
    if last is not None and last < first_page:
        return Layout(reader="pdfalto")
    with tempfile.TemporaryDirectory(prefix="sandcrawler-alto-") as tmp:
        out = Path(tmp) / "layout.xml"
        cmd = [binary, *_OPTIONS, "-f", str(first_page + 1)]
        if last is not None:
            cmd += ["-l", str(last + 1)]
        # absolute paths: a name starting with "-" is never read as an option
        cmd += [str(source), str(out)]
        _run(cmd, tmp, timeout, memory_limit)
        if not out.is_file() or out.stat().st_size == 0:
            raise LayoutError("pdfalto wrote no layout (not a PDF it can read?)")
        return parse_alto(out, first_page=first_page)


def _limits(memory_limit: int | None) -> Callable[[], None]:
    def apply() -> None:
        # runs in the child between fork and exec: resource calls only
        if memory_limit is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
        resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_OUTPUT_BYTES, MAX_OUTPUT_BYTES))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


def _run(cmd: list[str], cwd: str, timeout: float, memory_limit: int | None) -> None:
    # stderr goes to a file, not a pipe: a damaged PDF can make pdfalto write
    # megabytes of complaints, of which the message quotes the last lines
    errors = Path(cwd) / "stderr.txt"
    with errors.open("wb") as err:
        try:
            proc = subprocess.Popen(
                cmd,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                preexec_fn=_limits(memory_limit),
            )
        except OSError as e:
            raise LayoutError(f"pdfalto could not be run: {e}") from e
        try:
            returncode = _wait(proc, timeout)
        except subprocess.TimeoutExpired as e:
            proc.kill()
            proc.wait()
            raise LayoutError(
                f"pdfalto ran past its time limit ({timeout:g} s)", LayoutStatus.LAYOUT_TIMEOUT
            ) from e
    if returncode == 0:
        return
    with errors.open("rb") as f:
        f.seek(max(0, errors.stat().st_size - _STDERR_TAIL))
        stderr = f.read().decode("utf-8", "replace").strip()
    lowered = stderr.lower()
    # out of address space: the allocator or the loader says so (a native
    # program may also just crash: a signal, reported as a failure)
    if memory_limit is not None and any(m in lowered for m in _OUT_OF_MEMORY):
        raise LayoutError(
            f"pdfalto ran out of its memory allowance ({memory_limit // 2**20} MB)",
            LayoutStatus.LAYOUT_MEMORY_LIMIT,
        )
    how = f"signal {-returncode}" if returncode < 0 else f"exit {returncode}"
    raise LayoutError(f"pdfalto failed ({how}): {stderr or 'no message'}")


_OUT_OF_MEMORY = ("out of memory", "bad_alloc", "cannot allocate", "failed to map segment")


def _wait(proc: subprocess.Popen[bytes], timeout: float) -> int:
    """The exit status, waiting at most ``timeout`` seconds. A pidfd wakes us
    when the child exits (``Popen.wait`` with a timeout polls with growing sleeps,
    which adds up to the run's own length again to short runs)."""
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # not Linux >= 5.3
        return proc.wait(timeout)
    try:
        ready, _, _ = select.select([pidfd], [], [], timeout)
    finally:
        os.close(pidfd)
    if not ready:
        raise subprocess.TimeoutExpired(proc.args, timeout)
    return proc.wait()


# ALTO reading -----------------------------------------------------------------


def _number(value: str | None) -> float:
    if not value:
        return 0.0
    try:
        return float(value)
    except ValueError:
        return 0.0


class _Style:
    __slots__ = ("bold", "font", "italic", "size", "subscript", "superscript")

    def __init__(self, font: str, size: float, style: str) -> None:
        self.font = font
        self.size = size
        style = style.lower()
        # pdfalto writes "bold", "italics", "superscript", "subscript", space-separated
        self.bold = "bold" in style
        self.italic = "italic" in style
        self.superscript = "superscript" in style
        self.subscript = "subscript" in style


_DEFAULT_STYLE = _Style("default", 0.0, "")


#: a word pdfalto cut after its "fi"/"fl"/"ff" ligature ("científi" "cas"): the
#: next String starts where it ends, a space is wider than this part of the size
_LIGATURE_END = re.compile(r"(?:f[fil]|ff[il]|[\ufb00-\ufb04])$")
_NO_GAP = 0.05


def _join_ligatures(tokens: list[Token]) -> None:
    # every line of every page passes here: the cheap tests first
    for a, b in itertools.pairwise(tokens):
        if a.space_after and a.text[-1:] in "fil\ufb00\ufb01\ufb02\ufb03\ufb04" \
                and b.text[:1].islower() and _LIGATURE_END.search(a.text) \
                and b.x - (a.x + a.width) < _NO_GAP * a.size:
            a.space_after = False


# pdfalto's ALTO is read with a scanner of its tags rather than an XML parser:
# the file is machine-written (libxml2 escapes every value and quotes every
# attribute with double quotes; no comments, CDATA or DTD), a tag scanner reads
# it 5 to 10 times faster than ElementTree (a 46-page article: 0.03 s against
# 0.3 s), it expands no entity but the XML ones, and a file broken part way is
# read up to the break. tests/docparse/test_docparse_layout_alto.py checks it against an
# XML parser on real files.
_TAG = re.compile(r"<(/?)(\w+(?::\w+)?)([^>]*)>")
_ATTR = re.compile(r'([\w:.-]+)="([^"]*)"')
# a String as pdfalto writes it, attributes in its order (the general way, a
# dict of the attributes, takes three times as long)
_STRING = re.compile(
    r'\s+ID="[^"]*" CONTENT="([^"]*)" HPOS="([^"]*)" VPOS="([^"]*)" WIDTH="([^"]*)"'
    r' HEIGHT="([^"]*)" STYLEREFS="([^"]*)"'
)


def _attrs(raw: str) -> dict[str, str]:
    found = dict(_ATTR.findall(raw))
    if "&" in raw:
        for key, value in found.items():
            if "&" in value:
                found[key] = html.unescape(value)
    return found


def parse_alto(path: str | os.PathLike[str], *, first_page: int = 0) -> Layout:
    """Read pdfalto's ALTO file into a ``Layout`` (module docstring)."""
    text = Path(path).read_bytes().decode("utf-8", "replace")
    return parse_alto_text(text, first_page=first_page)


def parse_alto_text(text: str, *, first_page: int = 0) -> Layout:
    """``parse_alto`` of the file's text."""
    layout = Layout(reader="pdfalto")
    styles: dict[str, _Style] = {}
    page: Page | None = None
    block: Block | None = None
    line: Line | None = None
    # GROBID keeps the last non-zero coordinate when a String has a zero one
    last = [0.0, 0.0, 0.0, 0.0]
    for m in _TAG.finditer(text):
        closing, name, raw = m.groups()
        name = name[name.rfind(":") + 1 :]
        empty = raw.endswith("/")
        if name == "String":
            if line is not None and page is not None:
                fixed = _STRING.match(raw)
                if fixed is not None:
                    content, hpos, vpos, width, height, styleref = fixed.groups()
                    _string(
                        content,
                        hpos,
                        vpos,
                        width,
                        height,
                        styleref,
                        line,
                        page.number,
                        styles,
                        last,
                    )
                else:
                    a = _attrs(raw)
                    _string(
                        a.get("CONTENT"),
                        a.get("HPOS"),
                        a.get("VPOS"),
                        a.get("WIDTH"),
                        a.get("HEIGHT"),
                        a.get("STYLEREFS"),
                        line,
                        page.number,
                        styles,
                        last,
                    )
        elif name == "TextLine":
            if closing or empty:
                if line is not None and line.tokens and block is not None:
                    line.tokens[-1].space_after = False
                    _join_ligatures(line.tokens)
                    block.lines.append(line)
                line = None
            else:
                line = Line()
        elif name == "TextBlock":
            if closing or empty:
                if block is not None and block.lines and page is not None:
                    page.blocks.append(block)
                block = None
            else:
                block = Block()
        elif name == "Illustration":
            if page is not None and not closing:
                _graphic(_attrs(raw), page)
        elif name == "Page":
            if closing:
                page = None
            elif not empty:
                page = _page(_attrs(raw), first_page + len(layout.pages))
                layout.pages.append(page)
        elif name == "TextStyle" and not closing:
            attrs = _attrs(raw)
            sid = attrs.get("ID")
            if sid:
                styles[sid] = _Style(
                    attrs.get("FONTFAMILY") or "default",
                    _number(attrs.get("FONTSIZE")),
                    attrs.get("FONTSTYLE") or "",
                )
    if not layout.pages:
        raise LayoutError("pdfalto's output holds no page")
    return layout


def _page(attrs: dict[str, str], fallback: int) -> Page:
    # PHYSICAL_IMG_NR is the page's 1-based number in the PDF (with -f, not the
    # index in this file)
    nr = _number(attrs.get("PHYSICAL_IMG_NR"))
    return Page(
        number=int(nr) - 1 if nr >= 1 else fallback,
        width=_number(attrs.get("WIDTH")),
        height=_number(attrs.get("HEIGHT")),
    )


def _graphic(attrs: dict[str, str], page: Page) -> None:
    kind = attrs.get("TYPE")
    # GROBID: TYPE "svg" is a vector drawing, any other a bitmap; without a TYPE
    # the file's extension says
    vector = kind == "svg" if kind else ".svg" in (attrs.get("FILEID") or "")
    page.graphic_boxes.append(
        Graphic(
            x=_number(attrs.get("HPOS")),
            y=_number(attrs.get("VPOS")),
            width=_number(attrs.get("WIDTH")),
            height=_number(attrs.get("HEIGHT")),
            vector=vector,
        )
    )
    if vector:
        page.graphics += 1
    else:
        page.bitmaps += 1


def _string(
    content: str | None,
    hpos: str | None,
    vpos: str | None,
    width_: str | None,
    height_: str | None,
    styleref: str | None,
    line: Line,
    page: int,
    styles: dict[str, _Style],
    last: list[float],
) -> None:
    if not content:
        return
    if "&" in content:
        content = html.unescape(content)
    values: tuple[float, ...]
    try:
        values = (abs(float(hpos or 0)), abs(float(vpos or 0)), abs(float(width_ or 0)),
                  abs(float(height_ or 0)))  # fmt: skip
    except ValueError:
        values = tuple(abs(_number(v)) for v in (hpos, vpos, width_, height_))
    if 0.0 in values:
        last[:] = [v if v != 0.0 else old for v, old in zip(values, last, strict=True)]
    else:
        last[:] = values
    x, y, width, height = last
    text, found = spans(content)
    if not found:
        return
    style = styles.get(styleref or "", _DEFAULT_STYLE)
    total = len(text)
    tokens = line.tokens
    font, size, bold, italic = style.font, style.size, style.bold, style.italic
    superscript, subscript = style.superscript, style.subscript
    for start, end, space in found:
        # positional: a third of the time of keywords, for every token of a document
        tokens.append(
            Token(
                text[start:end],
                font,
                size,
                bold,
                italic,
                x + width * start / total,
                y,
                width * (end - start) / total,
                height,
                page,
                superscript,
                subscript,
                space,
            )
        )
    # a space follows every String unless it ends in a hyphen (GROBID's rule)
    tokens[-1].space_after = not text.endswith("-")
