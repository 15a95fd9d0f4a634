"""Two-page article PDFs that print the document's own DOI where publishers
print it, each with its truth, for the cascade's identifier tests and bench:
the same short article (``article_pdf.Article``) typeset by headless Chromium
with the DOI under the title, in a running foot, in Elsevier's or PLOS's
first-page lines, broken across lines, with a soft hyphen, in a margin stamp,
or only in the XMP; and variants printing only cited works' DOIs (truth None).

Each page is a ``div`` of A4 with its own margins (``@page`` margin boxes print
nothing in Chromium), so a running foot repeats at the bottom of every page and
a margin stamp is not clipped. Own DOIs use the test prefix 10.5555, except
where a publisher's shape is the point, with made-up suffixes.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from pathlib import Path

from sandcrawler_testkit.article_pdf import PARAGRAPH, Article, render_pdf

#: the cited work's DOI the negative variants (and some positive ones) print
CITED_DOI = "10.1038/35013100"
CITED_FOOTNOTE = f"1 Bell AC, et al. (2000) Nature 405:482. doi:{CITED_DOI}"
CITED_IN_BODY = (f"Boundary elements lose their insulator function when methylated "
                 f"(Bell and Felsenfeld, doi:{CITED_DOI}).")


@dataclass(frozen=True)
class Slots:
    """What a variant adds to the article, as HTML (already escaped)."""

    #: the small line above the title
    journal_line: str = "Journal of Test Genomics 12 (2019) 101&#8211;118"
    #: lines right under the title
    under_title: str = ""
    #: the foot printed at the bottom of every page
    running_foot: str = ""
    #: the footnote area at the bottom of the first page (over the left column)
    first_footnote: str = ""
    #: a stamp rotated -90 degrees in the left margin, of the first page only
    #: or (``stamp_every_page``) of every page
    stamp: str = ""
    stamp_every_page: bool = False
    #: a sentence set at the end of the body's first paragraph
    body_sentence: str = ""


@dataclass(frozen=True)
class Placement:
    """One variant: its name, what it shows, its HTML and its truth."""

    name: str
    description: str
    #: the DOI the page prints as the document's own (None: it prints none)
    expected: str | None
    slots: Slots
    #: a DOI to write into the file's XMP metadata after rendering
    xmp_doi: str | None = None
    article: Article = field(default_factory=Article)

    @property
    def printed(self) -> bool:
        """Whether the pages print the document's own DOI (not just the XMP)."""
        return self.expected is not None and self.xmp_doi != self.expected

    def html(self) -> str:
        return placement_html(self.article, self.slots)

    def render(self, directory: Path, chromium: str = "/usr/bin/chromium") -> Path:
        out = render_pdf(self.html(), directory / f"{self.name}.pdf", chromium)
        if self.xmp_doi:
            add_xmp_doi(out, self.xmp_doi)
        return out


def _e(text: str) -> str:
    return html.escape(text, quote=False)


OWN = "10.5555/jtg.2019.0042"
ELSEVIER = "10.1016/j.jtgen.2004.01.002"
PLOS = "10.1371/journal.pone.9213978"
#: a DOI with a word a soft hyphen can go in ("jour\u00adnal")
WORDY = "10.5555/journal.jtg.2019.0042"
#: a DOI too long for a narrow box: the browser breaks it across two lines
LONG = "10.5555/jtg.2019.supplementary.material.0042"


def placements() -> list[Placement]:
    """Every variant, in a fixed order."""
    e = _e
    return [
        Placement("header-doi-label", "'DOI: 10.5555/…' on its own line under the title",
                  OWN, Slots(under_title=f"<p class=doiline>DOI: {e(OWN)}</p>")),
        Placement("header-doi-colon", "'doi:10.5555/…' under the title, a cited DOI in "
                  "the body", OWN,
                  Slots(under_title=f"<p class=doiline>doi:{e(OWN)}</p>",
                        body_sentence=e(CITED_IN_BODY))),
        Placement("header-journal-line", "the journal line above the title ends in "
                  "'https://doi.org/10.5555/…'", OWN,
                  Slots(journal_line="Journal of Test Genomics 12 (2019) 101&#8211;118 "
                        f"&#8226; https://doi.org/{e(OWN)}")),
        Placement("running-foot-https", "'https://doi.org/10.5555/…' in a foot on every "
                  "page", OWN,
                  Slots(running_foot="Journal of Test Genomics 12 (2019) 101&#8211;118 "
                        f"&#8195; https://doi.org/{e(OWN)}")),
        Placement("running-foot-dx", "'http://dx.doi.org/10.5555/…' in a foot on every "
                  "page, a cited work's DOI in a first-page footnote", OWN,
                  Slots(running_foot=f"http://dx.doi.org/{e(OWN)} &#8195; 0022-2836/&#169; "
                        "2019 The Authors",
                        first_footnote=f"<p>{e(CITED_FOOTNOTE)}</p>")),
        Placement("elsevier-footnote", "Elsevier's first-page footnote: '0022-2836/$ - see "
                  "front matter © 2004 Elsevier Ltd. All rights reserved. doi:10.1016/…'",
                  ELSEVIER,
                  Slots(journal_line="J. Test Genomics (2004) 336, 1&#8211;10",
                        first_footnote="<p>* Corresponding author. E-mail address: "
                        "maurano@example.edu</p><p>0022-2836/$ - see front matter &#169; 2004 "
                        f"Elsevier Ltd. All rights reserved. doi:{e(ELSEVIER)}</p>")),
        Placement("split-after-dot", "a DOI too long for its box, broken after a dot "
                  "(a break opportunity after each dot and slash)", LONG,
                  Slots(under_title="<p class=doiline>DOI: <span class='narrow wide'>"
                        + _breakable(LONG) + "</span></p>")),
        Placement("split-anywhere", "a DOI too long for its box, broken by the browser "
                  "wherever the box ends (word-break: break-all)", LONG,
                  Slots(under_title="<p class=doiline>DOI: <span class='narrow anywhere'>"
                        f"{e(LONG)}</span></p>")),
        Placement("soft-hyphen", "a soft hyphen (U+00AD) inside a word of the DOI "
                  "('jour&shy;nal'), where no line breaks", WORDY,
                  Slots(under_title=f"<p class=doiline>doi:{e(WORDY[:12])}&#173;"
                        f"{e(WORDY[12:])}</p>")),
        Placement("soft-hyphen-break", "a soft hyphen inside a DOI too long for its box: "
                  "the line breaks there and prints a hyphen", LONG,
                  Slots(under_title="<p class=doiline>DOI: <span class='narrow soft'>"
                        f"{e(LONG[:23])}&#173;{e(LONG[23:])}</span></p>")),
        Placement("plos-citation", "PLOS's citation line in the first-page foot: "
                  "'Citation: Smith J, Doe A, et al. (2019) … https://doi.org/10.1371/…', a "
                  "cited DOI in the body", PLOS,
                  Slots(first_footnote="<p><b>Citation:</b> Maurano MT, Wang H, John S, et "
                        "al. (2019) Methylation of binding sites shapes transcription factor "
                        "occupancy. PLoS ONE 14(3): e9213978. https://doi.org/" + e(PLOS)
                        + "</p><p><b>Editor:</b> Jane Roe, University of Somewhere, UNITED "
                        "STATES</p><p><b>Received:</b> October 2, 2018; <b>Accepted:</b> "
                        "February 20, 2019</p>",
                        body_sentence=e(CITED_IN_BODY))),
        Placement("stamp-first-page", "only in a stamp rotated in the first page's left "
                  "margin: 'Downloaded from … doi:10.5555/…'", OWN,
                  Slots(stamp="Downloaded from https://journals.example.org/jtg by guest on "
                        f"12 May 2024 &#183; doi:{e(OWN)}")),
        Placement("stamp-every-page", "only in a stamp rotated in the left margin of every "
                  "page, a URL with the DOI in its path (Wiley's)", OWN,
                  Slots(stamp="15213773, 2019, 12, Downloaded from "
                        f"https://onlinelibrary.example.com/doi/{e(OWN)} by Test University, "
                        "Online Library on [12/05/2024]. See the Terms and Conditions",
                        stamp_every_page=True)),
        Placement("cited-only", "no DOI of its own; a cited work's DOI in a first-page "
                  "footnote reference and in the body's text", None,
                  Slots(first_footnote=f"<p>{e(CITED_FOOTNOTE)}</p>",
                        body_sentence=e(CITED_IN_BODY))),
        Placement("cited-only-no-et-al", "no DOI of its own; a footnote reference with two "
                  "authors and no 'et al.': '1 Bell AC, Felsenfeld G (2000) Nature "
                  "405:482-485. doi:…'", None,
                  Slots(first_footnote="<p>1 Bell AC, Felsenfeld G (2000) Nature "
                        f"405:482&#8211;485. doi:{e(CITED_DOI)}</p>",
                        body_sentence=e(CITED_IN_BODY))),
        Placement("xmp-only", "no DOI printed; the file's XMP metadata (prism:doi) names "
                  "it", OWN, Slots(), xmp_doi=OWN),
    ]


def _breakable(doi: str) -> str:
    """``doi`` escaped, with a break opportunity (``<wbr>``) after each dot and slash."""
    return re.sub(r"([./])", r"\1<wbr>", _e(doi))


def placement_html(article: Article, slots: Slots) -> str:
    """The article of ``article`` as two explicit A4 pages, with ``slots``."""
    e = _e
    authors = ", ".join(f"{e(n)}<sup>{e(m)}</sup>" for n, m in article.authors)
    affs = "".join(f"<p class=aff><sup>{e(m)}</sup> {e(t)}</p>" for m, t in article.affiliations)
    first = f"<p>{e(PARAGRAPH)} {slots.body_sentence}</p>"
    page1_body = first + f"<p>{e(PARAGRAPH)}</p>"
    page2_body = "".join(f"<p>{e(PARAGRAPH)}</p>" for _ in range(3))
    refs = "".join(f"<li>{e(r)}</li>" for r in article.references)
    foot = f"<div class=runfoot>{slots.running_foot}</div>" if slots.running_foot else ""
    stamp = f"<div class=stamp>{slots.stamp}</div>" if slots.stamp else ""
    note = f"<div class=footnote>{slots.first_footnote}</div>" if slots.first_footnote else ""
    return f"""<!doctype html><html><head><meta charset=utf-8><style>
@page {{ size: 210mm 297mm; margin: 0; }}
html, body {{ margin: 0; padding: 0; }}
body {{ font-family: "DejaVu Serif", "Liberation Serif", serif; font-size: 10pt; }}
.page {{ position: relative; width: 210mm; height: 296mm; box-sizing: border-box;
        padding: 20mm 20mm 25mm 20mm; overflow: hidden; break-after: page; }}
.page:last-child {{ break-after: auto; }}
.journal {{ font-size: 8pt; font-style: italic; margin: 0; }}
h1 {{ font-size: 20pt; font-weight: bold; margin: 10pt 0; }}
.doiline {{ font-size: 9pt; margin: 4pt 0 8pt 0; }}
.narrow {{ display: inline-block; width: 14em; vertical-align: top; }}
.wide {{ width: 18em; }}
.anywhere {{ word-break: break-all; }}
.soft {{ hyphens: manual; }}
.authors {{ font-size: 11pt; margin: 6pt 0; }}
.aff {{ font-size: 8pt; margin: 2pt 0; }}
.abstract {{ margin: 10pt 0; }}
.body {{ column-count: 2; column-gap: 1cm; text-align: justify; }}
.body p {{ margin: 0 0 6pt 0; }}
h2 {{ font-size: 12pt; font-weight: bold; margin: 8pt 0; }}
ol {{ font-size: 8.5pt; padding-left: 1.5em; }}
.footnote {{ position: absolute; left: 20mm; width: 80mm; bottom: 30mm; font-size: 7.5pt;
            border-top: 0.5pt solid black; padding-top: 2pt; }}
.footnote p {{ margin: 1pt 0; }}
.runfoot {{ position: absolute; left: 20mm; right: 20mm; bottom: 12mm; font-size: 7.5pt;
           text-align: center; }}
.stamp {{ position: absolute; left: 9mm; top: 250mm; width: 230mm; font-size: 7pt;
         white-space: nowrap; transform: rotate(-90deg); transform-origin: left top; }}
</style></head><body>
<div class=page>
<p class=journal>{slots.journal_line}</p>
<h1>{e(article.title)}</h1>
{slots.under_title}
<p class=authors>{authors}</p>
{affs}
<div class=abstract><b>Abstract</b> {e(article.abstract)}</div>
<p><b>Keywords:</b> {e("; ".join(article.keywords))}</p>
<div class=body><h2>1 Introduction</h2>{page1_body}</div>
{note}{foot}{stamp}
</div>
<div class=page>
<div class=body>{page2_body}</div>
<h2>References</h2>
<ol>{refs}</ol>
{foot}{stamp if slots.stamp_every_page else ""}
</div>
</body></html>"""


_STARTXREF = re.compile(rb"startxref\s+(\d+)\s+%%EOF\s*$")
_TRAILER = re.compile(rb"trailer\s*<<(.*?)>>\s*startxref", re.DOTALL)


def add_xmp_doi(path: Path, doi: str) -> None:
    """Append to the PDF at ``path`` an incremental update that gives its catalog
    an XMP metadata stream naming ``doi`` (``prism:doi``, ``dc:identifier``), as
    publishers' files carry it. Chromium writes a classic cross-reference table
    and a catalog that is a plain dictionary; other shapes are refused."""
    data = path.read_bytes()
    start = _STARTXREF.search(data)
    trailers = _TRAILER.findall(data)
    if not start or not trailers:
        raise ValueError(f"{path}: no classic trailer to update")
    trailer = trailers[-1]
    root = re.search(rb"/Root\s+(\d+)\s+0\s+R", trailer)
    size = re.search(rb"/Size\s+(\d+)", trailer)
    info = re.search(rb"/Info\s+(\d+\s+0\s+R)", trailer)
    if not root or not size:
        raise ValueError(f"{path}: trailer without /Root or /Size")
    catalog_num = int(root.group(1))
    catalog = re.search(rb"\n%d 0 obj\s*(<<.*?>>)\s*endobj" % catalog_num, data, re.DOTALL)
    if not catalog or b"/Metadata" in catalog.group(1):
        raise ValueError(f"{path}: catalog not found, or it has metadata already")
    meta_num = int(size.group(1))
    packet = _xmp_packet(doi).encode()
    body = catalog.group(1)
    new_catalog = body[:2] + b"/Metadata %d 0 R\n" % meta_num + body[2:]
    out = bytearray(data if data.endswith(b"\n") else data + b"\n")
    offsets = {}
    offsets[meta_num] = len(out)
    out += (b"%d 0 obj\n<</Type /Metadata /Subtype /XML /Length %d>>\nstream\n"
            % (meta_num, len(packet)) + packet + b"\nendstream\nendobj\n")
    offsets[catalog_num] = len(out)
    out += b"%d 0 obj\n" % catalog_num + new_catalog + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n"
    for num in sorted(offsets):
        out += b"%d 1\n%010d 00000 n \n" % (num, offsets[num])
    out += (b"trailer\n<</Size %d /Root %d 0 R%s /Prev %s>>\nstartxref\n%d\n%%%%EOF\n"
            % (meta_num + 1, catalog_num, b" /Info " + info.group(1) if info else b"",
               start.group(1), xref))
    path.write_bytes(bytes(out))


def _xmp_packet(doi: str) -> str:
    d = html.escape(doi)
    return f"""<?xpacket begin="\ufeff" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/">
 <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
  <rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/"
      xmlns:prism="http://prismstandard.org/namespaces/basic/2.0/">
   <dc:identifier>doi:{d}</dc:identifier>
   <prism:doi>{d}</prism:doi>
   <prism:url>https://doi.org/{d}</prism:url>
  </rdf:Description>
 </rdf:RDF>
</x:xmpmeta>
<?xpacket end="w"?>"""

