"""The cascade's full text end to end on real PDFs, against GROBID's own
annotation of the same PDFs, with models that never saw them.

Truth: GROBID's fulltext training data (``grobid-trainer/resources/dataset/
fulltext/{corpus,evaluation}/tei``) annotates the body of some PDFs that are in
GROBID's test resources (and ``../shared/data/pdfs``): section heads
(``<head>``), paragraphs (``<p>``) and reference callouts (``<ref
type="biblio">``). For each such PDF, a fulltext model is trained on the
corpus **without that document** (leave one out; the shipped segmentation,
header, reference-segmenter and citation models are used as they are), the
PDF goes through the whole cascade (``extract_document``, full text) and:

- **section titles**: precision and recall of heads, a head found when the
  Levenshtein similarity (1 - distance / longer length) of the lower-cased,
  space-collapsed texts is >= 0.8 (number and title together);
- **paragraphs**: recall of the truth's paragraphs (>= 40 characters) by
  Levenshtein >= 0.8 against any paragraph found, as GROBID's end-to-end
  evaluation matches paragraphs;
- **paragraphs, joined**: the same, with the truth's paragraphs that go on a
  sentence across a page or column joined (GROBID's annotators cut them where
  the break falls; a reader, and JATS, has one paragraph);
- **callouts linked**: the truth's reference callouts against ours in reading
  order (the same text, taken in turn, whatever the paragraphs), those found,
  and those whose target is the right reference (also within matched
  paragraphs alone, as before): for "[12]" / "12", the reference printed
  with label 12; for author-year, the reference whose first author's surname
  is in the callout and whose year is the callout's.

GROBID's published PMC figures (doc/benchmarks/Benchmarking-pmc.md, GROBID
0.8, end to end on 1,943 PMC PDFs) are printed beside: they are over other
PDFs, and with GROBID's mixed CRF/deep-learning models.

Run:  python bench/eval/fulltext_e2e.py [--grobid DIR] [--pdfs DIR ...] [--json FILE]
                                      [--only DOC ...] [--models DIR]
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
import orjson
from _common import REPO, SHARED_DATA, print_header, skip
from rapidfuzz.distance import Levenshtein

from sandcrawler.config import ExtractSettings
from sandcrawler.docparse.assembly.cascade import extract_document
from sandcrawler.docparse.crf.columns import train_model
from sandcrawler.records.extraction import Extraction, ExtractRequest

DATASET = Path("grobid-trainer/resources/dataset/fulltext")
#: GROBID 0.8 on 1,943 PMC PDFs (Benchmarking-pmc.md): soft section_title F1,
#: paragraphs by Levenshtein >= 0.8, reference callouts (reference_citation) soft F1
GROBID_PMC = {"section titles F1": 75.83, "paragraphs (Levenshtein) F1": 63.3,
              "reference callouts F1": 62.75, "citation contexts F1": 76.26}
MIN_PARAGRAPH = 40
SIMILAR = 0.8


@dataclass
class Truth:
    heads: list[str] = field(default_factory=list)
    paragraphs: list[tuple[str, list[str]]] = field(default_factory=list)


@dataclass
class Scores:
    heads: int = 0
    heads_found: int = 0
    heads_given: int = 0
    heads_right: int = 0
    paragraphs: int = 0
    paragraphs_found: int = 0
    callouts: int = 0
    callouts_found: int = 0
    callouts_linked: int = 0
    callouts_right: int = 0
    doc_callouts: int = 0
    doc_callouts_found: int = 0
    doc_callouts_right: int = 0

    def add(self, other: Scores) -> None:
        for name in vars(self):
            setattr(self, name, getattr(self, name) + getattr(other, name))


def norm(text: str) -> str:
    return " ".join(text.lower().split())


def similar(a: str, b: str) -> bool:
    return Levenshtein.normalized_similarity(norm(a), norm(b)) >= SIMILAR


def text_of(el: ET.Element) -> str:
    return " ".join("".join(el.itertext()).split())


def read_truth(path: Path, *, joined: bool = False) -> Truth:
    """The annotation's heads and paragraphs. ``joined``: a paragraph that goes
    on a sentence across a page or column (the next ``<p>`` starts in lower case
    after one that ends no sentence) is one, as a reader (and JATS) has it;
    GROBID's annotators cut it where the break falls."""
    root = ET.parse(path).getroot()
    out = Truth()
    for el in root.iter():
        if el.tag == "head":
            out.heads.append(text_of(el))
        elif el.tag == "p":
            refs = [text_of(r) for r in el.iter("ref") if r.get("type") == "biblio"]
            text = text_of(el)
            if joined and out.paragraphs and goes_on(out.paragraphs[-1][0], text):
                before, before_refs = out.paragraphs.pop()
                text, refs = f"{before} {text}", before_refs + refs
            out.paragraphs.append((text, refs))
    return out


def goes_on(before: str, text: str) -> bool:
    return not re.search(r"[.?!:][\"')\]]*$", before) and text[:1].islower()


def leave_one_out(dataset: Path, doc: str, out: Path) -> Path:
    """A fulltext model trained on the corpus without ``doc``."""
    corpus = out / "corpus"
    for part in ("raw", "tei"):
        (corpus / part).mkdir(parents=True)
        for f in (dataset / "corpus" / part).iterdir():
            if not f.name.startswith(doc + "."):
                (corpus / part / f.name).symlink_to(f)
    models = out / "models"
    models.mkdir()
    train_model("fulltext", corpus, models / "fulltext.crfmodel")
    shutil.rmtree(corpus)
    return models


_YEAR = re.compile(r"(1[89]\d\d|20\d\d)")


def right_reference(callout: str, piece: str, target: str | None, found: Extraction) -> bool:
    """Whether ``target`` is the reference the truth's ``callout`` names, for the
    ``piece`` of it that our callout is ("[1" of "[1, 2, 3]")."""
    if target is None or not target.startswith("b"):
        return False
    ref = found.references[int(target[1:])]
    numbers = re.findall(r"\d+", callout)
    if numbers and not _YEAR.search(callout):
        mine = re.findall(r"\d+", piece)
        return bool(ref.id) and bool(mine) and mine[0] in numbers \
            and re.sub(r"\D", "", ref.id or "") == mine[0]
    year = _YEAR.search(callout)
    surname = (ref.authors[0].surname or ref.authors[0].full_name or "") if ref.authors \
        else ""
    words = surname.split()
    return bool(year and words and words[-1].lower() in callout.lower()
                and year.group(1) in (ref.date or ref.unstructured or ""))


def piece_of(mine: str, callout: str) -> bool:
    """Our callout is the truth's or a piece of it: its text inside the truth's,
    and its numbers whole numbers of the truth's ("2" is no piece of "[28]")."""
    if not norm(mine) or norm(mine) not in norm(callout):
        return False
    return set(re.findall(r"\d+", mine)) <= set(re.findall(r"\d+", callout))


def score(truth: Truth, found: Extraction) -> Scores:
    s = Scores()
    body = found.body
    assert body is not None
    heads = [" ".join(filter(None, (sec.number, sec.head))) for sec in body.sections
             if sec.head]
    s.heads, s.heads_given = len(truth.heads), len(heads)
    s.heads_found = sum(any(similar(t, h) for h in heads) for t in truth.heads)
    s.heads_right = sum(any(similar(h, t) for t in truth.heads) for h in heads)
    paragraphs = [p for sec in body.sections for p in sec.paragraphs]
    # every callout of the truth against ours in reading order, whatever the
    # paragraphs: the same text, taken in turn (a truth callout cut into several
    # of ours counts by the first inside it)
    ours = [c for p in paragraphs for c in p.callouts if norm(c.text)]
    at = 0
    for ref in (r for _, refs in truth.paragraphs for r in refs):
        s.doc_callouts += 1
        for k in range(at, min(len(ours), at + 12)):
            if piece_of(ours[k].text, ref):
                s.doc_callouts_found += 1
                s.doc_callouts_right += right_reference(ref, ours[k].text, ours[k].target,
                                                        found)
                at = k + 1
                break
    for text, refs in truth.paragraphs:
        if len(text) < MIN_PARAGRAPH:
            continue
        s.paragraphs += 1
        match = next((p for p in paragraphs if similar(text, p.text)), None)
        s.callouts += len(refs)
        if match is None:
            continue
        s.paragraphs_found += 1
        for ref in refs:
            # a truth callout may be cut into several of ours ("[1, 2]"): the first
            # of ours inside its text stands for it
            mine = [c for c in match.callouts if piece_of(c.text, ref)]
            if not mine:
                continue
            s.callouts_found += 1
            if mine[0].target is not None:
                s.callouts_linked += 1
            if right_reference(ref, mine[0].text, mine[0].target, found):
                s.callouts_right += 1
    return s


def pct(a: int, b: int) -> float:
    return round(100 * a / b, 2) if b else 0.0


def f1(p: float, r: float) -> float:
    return round(2 * p * r / (p + r), 2) if p + r else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--grobid", type=Path, default=REPO.parent / "grobid",
                        help="a GROBID checkout (its training data)")
    parser.add_argument("--pdfs", type=Path, nargs="*",
                        default=[SHARED_DATA / "pdfs", REPO.parent / "grobid"])
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--only", nargs="*", default=None, metavar="DOC",
                        help="only these documents (their file names' stems)")
    parser.add_argument("--models", type=Path, default=None, metavar="DIR",
                        help="keep each leave-one-out model in DIR/<doc>/ and reuse it "
                             "when there (training one takes minutes)")
    args = parser.parse_args()
    dataset = args.grobid / DATASET
    if not dataset.is_dir():
        skip(f"no GROBID fulltext dataset at {dataset}")
    pdfs: dict[str, Path] = {}
    for d in args.pdfs:
        for p in sorted(d.rglob("*.pdf")) if d.is_dir() else ():
            pdfs.setdefault(p.stem, p)
    docs = []
    for part in ("corpus", "evaluation"):
        for tei in sorted((dataset / part / "tei").glob("*.tei.xml")):
            stem = tei.name.split(".training.fulltext")[0]
            if stem in pdfs and stem not in [d[0] for d in docs] \
                    and (args.only is None or stem in args.only):
                docs.append((stem, tei))
    if not docs:
        skip("none of the annotated PDFs is here")
    print_header("full text end to end (leave-one-out fulltext models)")
    total, total_joined = Scores(), Scores()
    rows = []
    for stem, tei in docs:
        with tempfile.TemporaryDirectory() as tmp:
            kept = args.models / stem if args.models is not None else None
            if kept is not None and (kept / "models" / "fulltext.crfmodel").exists():
                models = kept / "models"
            else:
                models = leave_one_out(dataset, stem, kept or Path(tmp))
            settings = ExtractSettings(models=models)
            found = extract_document(pdfs[stem], settings, request=ExtractRequest(full=True))
        s = score(read_truth(tei), found)
        j = score(read_truth(tei, joined=True), found)
        total.add(s)
        total_joined.add(j)
        rows.append({"doc": stem, "status": str(found.status), **vars(s),
                     "joined": vars(j)})
        print(f"{stem:28} heads {s.heads_found}/{s.heads} (given {s.heads_given}) · "
              f"paragraphs {s.paragraphs_found}/{s.paragraphs} (joined "
              f"{j.paragraphs_found}/{j.paragraphs}) · callouts found "
              f"{s.doc_callouts_found}/{s.doc_callouts}, right {s.doc_callouts_right}")
    hp, hr = pct(total.heads_right, total.heads_given), pct(total.heads_found, total.heads)
    figures = {
        "documents": len(docs),
        "section titles P": hp, "section titles R": hr, "section titles F1": f1(hp, hr),
        "paragraphs recall (Levenshtein >= 0.8)": pct(total.paragraphs_found, total.paragraphs),
        "paragraphs recall, truth joined across mid-sentence breaks":
            pct(total_joined.paragraphs_found, total_joined.paragraphs),
        "callouts found (reading order)": pct(total.doc_callouts_found, total.doc_callouts),
        "callouts linked to the right reference, of those found":
            pct(total.doc_callouts_right, total.doc_callouts_found),
        "callouts linked to the right reference, of all":
            pct(total.doc_callouts_right, total.doc_callouts),
        "callouts found in matched paragraphs": pct(total.callouts_found, total.callouts),
        "  of those, linked right": pct(total.callouts_right, total.callouts_found),
    }
    print()
    for k, v in figures.items():
        print(f"{k:58} {v}")
    print("\nGROBID 0.8 end to end on 1,943 PMC PDFs (Benchmarking-pmc.md), for scale:")
    for k, v in GROBID_PMC.items():
        print(f"{k:58} {v}")
    if args.json:
        args.json.write_bytes(orjson.dumps({"figures": figures, "documents": rows},
                                           option=orjson.OPT_INDENT_2))


if __name__ == "__main__":
    main()
