"""Scholarly-article PDFs typeset by a real browser, for the extraction cascade's
tests: a journal line, a large bold title, authors with affiliation markers,
affiliations, an abstract, keywords, two columns of body text and a numbered
bibliography, laid out the way publishers' HTML-to-PDF pipelines lay them out.

Chromium's headless ``--print-to-pdf`` writes the PDF (real fonts, real font
sizes and weights, text in reading order): what the layout readers then see is
what a real tool made, not a hand-written content stream. ``Article`` holds the
truth the tests compare with.
"""

from __future__ import annotations

import html
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

PARAGRAPH = (
    "Transcription factors bind short sequence motifs that occur millions of times in a "
    "genome, yet only a small fraction of these sites is occupied in any given cell type. "
    "We measured occupancy across many cell types and compared it with the methylation "
    "state of each site, which lets us separate the effect of the sequence itself from "
    "that of its chemical modification. The results hold across the conditions we tried. "
)


@dataclass
class Article:
    title: str = "Methylation of binding sites shapes transcription factor occupancy"
    authors: list[tuple[str, str]] = field(default_factory=lambda: [
        ("Matthew T. Maurano", "1"), ("Hao Wang", "1"), ("Sam John", "2"),
        ("Theresa K. Canfield", "1,2")])
    affiliations: list[tuple[str, str]] = field(default_factory=lambda: [
        ("1", "Department of Genome Sciences, University of Washington, Seattle, WA 98195, "
              "USA"),
        ("2", "Division of Oncology, Fred Hutchinson Cancer Center, Seattle, WA 98109, USA")])
    journal_line: str = "Journal of Test Genomics 12 (2019) 101-118"
    doi: str = "10.5555/jtg.2019.0042"
    abstract: str = ("The nuclear genome of every cell harbors millions of unoccupied "
                     "recognition sequences. We show that methylation restricts binding "
                     "at a small set of variable sites.")
    keywords: list[str] = field(default_factory=lambda: ["DNA methylation", "chromatin",
                                                         "gene regulation"])
    references: list[str] = field(default_factory=lambda: [
        "Bell AC, Felsenfeld G. Methylation of a CTCF-dependent boundary controls imprinted "
        "expression of the Igf2 gene. Nature. 2000;405(6785):482-485.",
        "Stadler MB, Murr R, Burger L, et al. DNA-binding factors shape the mouse methylome "
        "at distal regulatory regions. Nature. 2011;480:490-495.",
        "Thurman RE, Rynes E, Humbert R, et al. The accessible chromatin landscape of the "
        "human genome. Nature. 2012;489(7414):75-82. doi:10.1038/nature11232",
        "Wang H, Maurano MT, Qu H, et al. Widespread plasticity in CTCF occupancy linked to "
        "DNA methylation. Genome Research. 2012;22(9):1680-1688.",
        "Jones PA. Functions of DNA methylation: islands, start sites, gene bodies and "
        "beyond. Nature Reviews Genetics. 2012;13(7):484-492.",
        "Domcke S, Bardet AF, Adrian Ginno P, et al. Competition between DNA methylation and "
        "transcription factors determines binding of NRF1. Nature. 2015;528:575-579.",
    ])
    paragraphs: int = 6

    def html(self) -> str:
        e = html.escape
        authors = ", ".join(f"{e(n)}<sup>{e(m)}</sup>" for n, m in self.authors)
        affs = "".join(f"<p class=aff><sup>{e(m)}</sup> {e(t)}</p>" for m, t in self.affiliations)
        body = "".join(f"<p>{e(PARAGRAPH)}</p>" for _ in range(self.paragraphs))
        refs = "".join(f"<li>{e(r)}</li>" for r in self.references)
        return f"""<!doctype html><html><head><meta charset=utf-8><style>
@page {{ size: A4; margin: 2cm; }}
body {{ font-family: "DejaVu Serif", "Liberation Serif", serif; font-size: 10pt; }}
.journal {{ font-size: 8pt; font-style: italic; }}
h1 {{ font-size: 20pt; font-weight: bold; margin: 12pt 0; }}
.authors {{ font-size: 11pt; }}
.aff {{ font-size: 8pt; margin: 2pt 0; }}
.abstract {{ margin: 12pt 0; }}
.body {{ column-count: 2; column-gap: 1cm; text-align: justify; }}
h2 {{ font-size: 12pt; font-weight: bold; }}
ol {{ font-size: 8.5pt; padding-left: 1.5em; }}
</style></head><body>
<p class=journal>{e(self.journal_line)} &#8226; https://doi.org/{e(self.doi)}</p>
<h1>{e(self.title)}</h1>
<p class=authors>{authors}</p>
{affs}
<div class=abstract><b>Abstract</b> {e(self.abstract)}</div>
<p><b>Keywords:</b> {e("; ".join(self.keywords))}</p>
<div class=body><h2>1 Introduction</h2>{body}</div>
<h2>References</h2>
<ol>{refs}</ol>
</body></html>"""


def render_pdf(page_html: str, out: Path, chromium: str = "/usr/bin/chromium",
               timeout: float = 60.0) -> Path:
    """``page_html`` printed to ``out`` by headless Chromium."""
    source = out.with_suffix(".html")
    source.write_text(page_html, encoding="utf-8")
    subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
         f"--user-data-dir={out.parent / '.chromium-profile'}",
         f"--print-to-pdf={out}", source.as_uri()],
        check=True, capture_output=True, timeout=timeout)
    return out
