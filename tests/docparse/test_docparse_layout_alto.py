"""pdfalto's layout (docparse/layout_alto.py): real PDFs, PDFs written here,
broken ones, the limits, and the ALTO scanner against an XML parser."""

from __future__ import annotations

import subprocess
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from sandcrawler.docparse.layout.alto import find_pdfalto, parse_alto_text, read_layout_alto
from sandcrawler.docparse.layout.elements import LayoutError
from sandcrawler.docparse.layout.tokens import split
from sandcrawler.records.statuses import LayoutStatus
from tests.helpers.paths import SHARED_DATA
from tests.helpers.skips import unavailable

PDFS = SHARED_DATA / "pdfs"


@pytest.fixture(scope="module")
def pdfalto() -> str:
    found = find_pdfalto()
    if found is None:
        unavailable("pdfalto is not installed (pip install pdfalto)", "PDFALTO")
    return found


def shared_pdf(name: str) -> Path:
    path = PDFS / name
    if not path.is_file():
        unavailable(f"{path} is not there", "SHARED_DATA")
    return path


def write_pdf(path: Path, pages: list[list[str]], font: str = "Helvetica-Bold") -> Path:
    """A small valid PDF: each page's lines in one font at 12 pt, 14 pt apart."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(len(pages)))
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    font_object = 3 + 2 * len(pages)
    for i, lines in enumerate(pages):
        shown = " ".join(f"({line}) '" for line in lines)
        content = f"BT /F1 12 Tf 72 720 Td 14 TL {shown} ET".encode()
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R "
            f"/Resources << /Font << /F1 {font_object} 0 R >> >> >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content))
    objects.append(f"<< /Type /Font /Subtype /Type1 /BaseFont /{font} >>".encode())
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objects):
        offsets.append(len(out))
        out += f"{i + 1} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    path.write_bytes(bytes(out))
    return path


def test_a_written_pdf(pdfalto: str, tmp_path: Path) -> None:
    pdf = write_pdf(
        tmp_path / "doc.pdf",
        [["A Study of Things", "Jane Doe and John Roe"], ["1. Doe, J. (1999) Things."]],
    )
    layout = read_layout_alto(pdf, timeout=30)
    assert layout.reader == "pdfalto"
    assert [p.number for p in layout.pages] == [0, 1]
    assert (layout.pages[0].width, layout.pages[0].height) == (612.0, 792.0)
    assert [line.text for line in layout.lines()] == [
        "A Study of Things",
        "Jane Doe and John Roe",
        "1. Doe, J. (1999) Things.",
    ]
    study = layout.lines()[0].tokens[1]
    assert (study.text, study.page, study.bold, study.italic, study.size) == (
        "Study",
        0,
        True,
        False,
        12.0,
    )
    assert study.font.lower() == "helvetica-bold"
    assert study.x > layout.lines()[0].tokens[0].x and 70 < study.y < 90
    # a String cut into tokens: each has its share of the String's width
    one, dot = layout.lines()[2].tokens[:2]
    assert (one.text, dot.text, one.space_after, dot.space_after) == ("1", ".", False, True)
    assert one.width == pytest.approx(dot.width) and dot.x == pytest.approx(one.x + one.width)
    # a line's last token has no space after it
    assert all(not line.tokens[-1].space_after for line in layout.lines())


def test_page_range(pdfalto: str, tmp_path: Path) -> None:
    pdf = write_pdf(tmp_path / "doc.pdf", [[f"Page {i}"] for i in range(1, 6)])
    layout = read_layout_alto(pdf, timeout=30, first_page=1, last_page=3)
    # pages keep their number in the PDF
    assert [p.number for p in layout.pages] == [1, 2, 3]
    assert [line.text for line in layout.lines()] == ["Page 2", "Page 3", "Page 4"]
    assert all(line.tokens[0].page == p for line, p in zip(layout.lines(), (1, 2, 3), strict=True))
    assert len(read_layout_alto(pdf, timeout=30, max_pages=2).pages) == 2
    assert len(read_layout_alto(pdf, timeout=30, first_page=3, max_pages=10).pages) == 2


def test_a_pdf_without_text_has_pages_without_blocks(pdfalto: str, tmp_path: Path) -> None:
    pdf = write_pdf(tmp_path / "blank.pdf", [[], []])
    layout = read_layout_alto(pdf, timeout=30)
    assert len(layout.pages) == 2
    assert layout.lines() == []


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"not a PDF at all\n",
        b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog",
        b"%PDF-1.7\n" + bytes(range(256)) * 40,
    ],
    ids=["empty", "text", "truncated", "garbage"],
)
def test_broken_files_fail_with_a_status(pdfalto: str, tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "broken.pdf"
    path.write_bytes(content)
    with pytest.raises(LayoutError) as caught:
        read_layout_alto(path, timeout=30)
    assert caught.value.status == LayoutStatus.LAYOUT_FAILED
    assert "pdfalto" in str(caught.value)


def test_a_truncated_real_pdf(pdfalto: str, tmp_path: Path) -> None:
    whole = shared_pdf("Wang-paperAVE2008.pdf").read_bytes()
    path = tmp_path / "cut.pdf"
    path.write_bytes(whole[: len(whole) // 3])
    try:
        layout = read_layout_alto(path, timeout=30)
    except LayoutError as e:  # pdfalto may give up, or read what it can
        assert e.status == LayoutStatus.LAYOUT_FAILED
    else:
        assert layout.pages


def test_timeout(pdfalto: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # long enough that pdfalto cannot finish before the wait begins, even when a
    # loaded machine runs the child to its end before the parent (20 pages could)
    pdf = write_pdf(tmp_path / "doc.pdf", [["words"] * 40] * 400)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    with pytest.raises(LayoutError) as caught:
        # pdfalto's 40 MB binary does not even load in a tenth of a millisecond
        read_layout_alto(pdf, timeout=0.0001)
    assert caught.value.status == LayoutStatus.LAYOUT_TIMEOUT
    assert "time limit" in str(caught.value)
    # its temporary directory is gone, as after a run that went well
    assert list(scratch.iterdir()) == []
    read_layout_alto(pdf, timeout=30)
    assert list(scratch.iterdir()) == []


def test_memory_limit(pdfalto: str, tmp_path: Path) -> None:
    pdf = write_pdf(tmp_path / "doc.pdf", [["words"]])
    with pytest.raises(LayoutError) as caught:
        read_layout_alto(pdf, timeout=30, memory_limit=20 * 2**20)
    assert caught.value.status in (LayoutStatus.LAYOUT_MEMORY_LIMIT, LayoutStatus.LAYOUT_FAILED)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(LayoutError, match="no such file"):
        read_layout_alto(tmp_path / "nothing.pdf", timeout=30)


@pytest.mark.parametrize(
    "name",
    ["Wang-paperAVE2008.pdf", "0807.3577.pdf", "two_pages.pdf", "submission_363.pdf"],
)
def test_real_pdfs(pdfalto: str, name: str) -> None:
    layout = read_layout_alto(shared_pdf(name), timeout=60, memory_limit=2**30)
    lines = layout.lines()
    assert layout.pages and lines
    assert all(line.tokens for line in lines)
    assert all(t.text and not t.text.isspace() for line in lines for t in line.tokens)
    assert all(0 <= t.page < 100 for line in lines for t in line.tokens)
    if name == "Wang-paperAVE2008.pdf":
        assert lines[0].text == "Information Synthesis for Answer Validation"
        assert [round(g.y) for g in layout.pages[2].graphic_boxes if not g.vector] == [99, 153, 207]
        assert (layout.pages[2].bitmaps, layout.pages[2].graphics) == (3, 1)
        superscript = lines[2].tokens[0]  # "1 Saarland University"
        assert (superscript.text, superscript.superscript) == ("1", True)


def test_the_scanner_reads_what_an_xml_parser_reads(pdfalto: str, tmp_path: Path) -> None:
    pdf = shared_pdf("0807.3577.pdf")
    out = tmp_path / "out.xml"
    subprocess.run(
        [pdfalto, "-fullFontName", "-noLineNumbers", "-onlyGraphsCoord", str(pdf), str(out)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    text = out.read_text(encoding="utf-8")
    layout = parse_alto_text(text)
    root = ET.fromstring(out.read_bytes())
    ns = root.tag[: root.tag.index("}") + 1]
    contents = [
        s.get("CONTENT") for s in root.iter(ns + "String") if (s.get("CONTENT") or "").strip()
    ]
    words = [t.text for line in layout.lines() for t in line.tokens]
    assert words == [w for c in contents for w in split(c or "")]
    assert len(layout.pages) == len(list(root.iter(ns + "Page")))
    assert sum(len(p.graphic_boxes) for p in layout.pages) == len(
        list(root.iter(ns + "Illustration"))
    )


def test_broken_alto_is_read_up_to_the_break() -> None:
    alto = (
        '<?xml version="1.0"?><alto xmlns="http://www.loc.gov/standards/alto/ns-v3#">'
        '<Styles><TextStyle ID="f0" FONTFAMILY="times" FONTSIZE="10" FONTSTYLE="italics"/></Styles>'
        '<Layout><Page ID="Page1" PHYSICAL_IMG_NR="1" WIDTH="600" HEIGHT="800"><PrintSpace>'
        '<TextBlock ID="b1"><TextLine><String ID="w1" CONTENT="R&amp;D&#233;" HPOS="10" '
        'VPOS="20" WIDTH="30" HEIGHT="10" STYLEREFS="f0"/><SP/><String ID="w2" CONTENT="x" '
        'HPOS="50" VPOS="20" WIDTH="5" HEIGHT="10" STYLEREFS="f0"/></TextLine></TextBlock>'
        '<TextBlock ID="b2"><TextLine><String ID="w3" CONTENT="cut'
    )
    layout = parse_alto_text(alto)
    assert [line.text for line in layout.lines()] == ["R&Dé x"]
    assert layout.lines()[0].tokens[0].italic
    with pytest.raises(LayoutError):
        parse_alto_text("<html>not ALTO</html>")
