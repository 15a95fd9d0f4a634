"""Extract the public labelled data that the matching evaluation is built from
(bench/data/match/SOURCES.md says what each file is, where it came from and under
which licence).

Run once, with the public repositories' git directories at hand (the snapshots are
read with ``git show``, no work tree needed):

  python bench/build/match_sources.py \\
      --rme /path/to/CrossRef/reference-matching-evaluation.git \\
      --fuzzycat /path/to/miku/fuzzycat.git

It writes, under bench/data/match/source/:

  rme_styles.jsonl.gz     one line per DOI of Crossref's "analysis 1" samples: the DOI,
                          whether Crossref's experiment kept the work in its index
                          (``in_index``), and the reference string citeproc rendered
                          for it in each of 8 citation styles;
  rme_real_nodoi.jsonl.gz the real reference strings of Crossref's 2,000-reference
                          sample that its annotators found no DOI for;
  fuzzycat_pairs.jsonl.gz fuzzycat's labelled release pairs (verify.csv) with both
                          releases' bibliographic fields (from tests/data/release/).

Everything else (the evaluation sets) is derived from these by bench/build/match_data.py.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import subprocess
from pathlib import Path
from typing import Any

import orjson

SOURCE_DIR = Path(__file__).resolve().parents[1] / "data" / "match" / "source"

#: the citation styles of Crossref's analysis-1 data set, file name -> our short name
RME_STYLES = {
    "apa": "apa",
    "american-chemical-society": "acs",
    "american-institute-of-physics": "aip",
    "chicago-author-date": "chicago",
    "harvard3": "harvard",
    "ieee": "ieee",
    "modern-language-association": "mla",
    "elsevier-without-titles": "elsevier",
}
RME_DIR = "analyses/1_unstructured_analysis/data/datasets"
RME_REAL = "analyses/3_unstructured_real_evaluation/data/unstructured_orig.json"


def git_show(git_dir: Path, path: str) -> bytes:
    return subprocess.run(["git", "--git-dir", str(git_dir), "show", f"HEAD:{path}"],
                          check=True, capture_output=True).stdout


def git_head(git_dir: Path) -> str:
    return subprocess.run(["git", "--git-dir", str(git_dir), "rev-parse", "HEAD"],
                          check=True, capture_output=True, text=True).stdout.strip()


def write_gz_lines(path: Path, rows: list[dict[str, Any]]) -> None:
    """Deterministic gzip (no file name, mtime 0): a rerun gives the same bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    body = b"".join(orjson.dumps(r) + b"\n" for r in rows)
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw,
                                                mtime=0, compresslevel=9) as gz:
        gz.write(body)


def extract_rme(git_dir: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rows: dict[str, dict[str, Any]] = {}
    for prefix, in_index in (("", True), ("excluded-", False)):
        for style, short in RME_STYLES.items():
            data = orjson.loads(git_show(git_dir, f"{RME_DIR}/dataset-{prefix}{style}.json"))
            # the data set lists its DOIs in the order of its entries; entries of
            # works kept out of the index carry no DOI themselves
            for doi, entry in zip(data["dataset_dois"], data["dataset"], strict=True):
                row = rows.setdefault(doi.lower(), {"doi": doi.lower(), "in_index": in_index,
                                                    "styles": {}})
                if entry["ref_string"]:
                    row["styles"][short] = entry["ref_string"]
    real = orjson.loads(git_show(git_dir, RME_REAL))["dataset"]
    nodoi = [{"ref_string": e["ref_string"]} for e in real
             if e["target_gt"]["DOI"] is None and e["ref_string"]]
    return sorted(rows.values(), key=lambda r: r["doi"]), nodoi


def fatcat_fields(release: dict[str, Any]) -> dict[str, Any]:
    """The bibliographic fields of a fatcat release that a Crossref work also has."""
    extra = release.get("extra") or {}
    return {
        "ident": release.get("ident"),
        "work_id": release.get("work_id"),
        "doi": (release.get("ext_ids") or {}).get("doi"),
        "title": release.get("title"),
        "original_title": release.get("original_title"),
        "subtitle": release.get("subtitle"),
        "release_type": release.get("release_type"),
        "release_year": release.get("release_year"),
        "release_date": release.get("release_date"),
        "container_name": release.get("container_name")
        or (release.get("container") or {}).get("name")
        or extra.get("container_name"),
        "volume": release.get("volume"),
        "issue": release.get("issue"),
        "pages": release.get("pages"),
        "publisher": release.get("publisher"),
        "language": release.get("language"),
        "crossref_type": (extra.get("crossref") or {}).get("type"),
        "contribs": [
            {"raw_name": c.get("raw_name"), "given_name": c.get("given_name"),
             "surname": c.get("surname"), "role": c.get("role")}
            for c in release.get("contribs") or []
        ],
    }


def extract_fuzzycat(git_dir: Path) -> list[dict[str, Any]]:
    text = git_show(git_dir, "tests/data/verify.csv").decode()
    out = []
    for row in csv.reader(io.StringIO(text)):
        if len(row) < 3 or not row[0].strip():
            continue
        a, b, status = row[0].strip(), row[1].strip(), row[2].strip()
        reason = row[3].strip() if len(row) > 3 else ""
        try:
            ra = orjson.loads(git_show(git_dir, f"tests/data/release/{a}"))
            rb = orjson.loads(git_show(git_dir, f"tests/data/release/{b}"))
        except subprocess.CalledProcessError:
            continue  # a pair whose release file the repository does not hold
        out.append({"a": fatcat_fields(ra), "b": fatcat_fields(rb),
                    "status": status.removeprefix("Status."), "reason": reason})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rme", type=Path, required=True,
                        help="git dir of CrossRef/reference-matching-evaluation")
    parser.add_argument("--fuzzycat", type=Path, required=True,
                        help="git dir of miku/fuzzycat (internetarchive/fuzzycat)")
    parser.add_argument("--out", type=Path, default=SOURCE_DIR)
    args = parser.parse_args()
    styles, nodoi = extract_rme(args.rme)
    write_gz_lines(args.out / "rme_styles.jsonl.gz", styles)
    write_gz_lines(args.out / "rme_real_nodoi.jsonl.gz", nodoi)
    pairs = extract_fuzzycat(args.fuzzycat)
    write_gz_lines(args.out / "fuzzycat_pairs.jsonl.gz", pairs)
    print(f"rme {git_head(args.rme)}: {len(styles)} works, {len(nodoi)} real strings without DOI")
    print(f"fuzzycat {git_head(args.fuzzycat)}: {len(pairs)} labelled pairs")


if __name__ == "__main__":
    main()
