"""Where a PDF prints its own DOI: ``sandcrawler extract --header-only`` on an
article typeset by headless Chromium with its DOI in each placement publishers
use, against the truth each variant carries (``sandcrawler_testkit.doi_placements``):
a labelled line under the title, the journal line, a running foot on every page,
Elsevier's first-page footnote, a DOI broken across two lines, a soft hyphen in
it, PLOS's citation line, a rotated margin stamp, only the file's XMP metadata;
and variants that print only cited works' DOIs (a footnote reference, the body),
whose truth is no DOI.

Prints, per variant, the DOI expected, the DOI given and the verdict (right,
missed, wrong), then issue 41's figures:

- found right, of the variants that print their own DOI (goal >= 0.95);
- wrong DOIs given, over every variant (a cited work's, one cut short; goal 0);
- on the variants that print only cited works' DOIs, DOIs given (goal 0);
- the DOI of the XMP metadata, when the pages print none.

If pdf2doi (PyPI, not a dependency) is importable, it runs on the same files,
offline (no web validation, no web search, nothing written into the files,
no arXiv-to-DOI look-up; a socket guard fails any connection it tries), and its
figures are printed beside ours. ``--pdf2doi-path DIR`` adds a directory it was
installed into (``pip install --target DIR pdf2doi``) at the end of sys.path, so
the project's environment stays as it is.

Skips (exit 0) when Chromium is missing.

Run:  python bench/eval/printed_dois.py [--keep DIR] [-j N] [--options OPTS]
                                        [--command CMD] [--chromium PATH]
                                        [--only NAME ...] [--pdf2doi-path DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for _common.py
import orjson
from _common import add_extract_options, bench_env, print_header, resolve_command, skip

from sandcrawler_testkit.doi_placements import Placement, placements

GOAL_FOUND = 0.95
CHROMIUM = "/usr/bin/chromium"


@dataclass(frozen=True, slots=True)
class Verdict:
    given: str | None
    verdict: str  # right, missed, wrong


def judge(expected: str | None, given: str | None) -> Verdict:
    given = given.strip().lower() if given else None
    if given == (expected.lower() if expected else None):
        return Verdict(given, "right")
    return Verdict(given, "missed" if given is None else "wrong")


@dataclass(slots=True)
class Figures:
    printed: int = 0
    printed_right: int = 0
    wrong: int = 0
    cited_only: int = 0
    cited_only_given: int = 0
    metadata_only: int = 0
    metadata_only_right: int = 0

    def add(self, p: Placement, v: Verdict) -> None:
        self.wrong += v.verdict == "wrong"
        if p.expected is None:
            self.cited_only += 1
            self.cited_only_given += v.given is not None
        elif p.printed:
            self.printed += 1
            self.printed_right += v.verdict == "right"
        else:
            self.metadata_only += 1
            self.metadata_only_right += v.verdict == "right"

    @property
    def share(self) -> float:
        return self.printed_right / self.printed if self.printed else 0.0


# --- running the tools -------------------------------------------------------------------


def run_extract(command: Sequence[str], options: Sequence[str], paths: Sequence[Path],
                jobs: int, workdir: Path) -> tuple[dict[str, dict[str, Any]], str, int, float]:
    """The command's lines by path, its stderr, its exit code and its wall time."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        [*command, "extract", "--header-only", "-j", str(jobs), *options, *map(str, paths)],
        env=bench_env(workdir), cwd=workdir, capture_output=True, stdin=subprocess.DEVNULL,
        check=False)
    wall = time.perf_counter() - t0
    lines = [orjson.loads(x) for x in proc.stdout.splitlines() if x.strip()]
    by_path = {str(Path(line.get("path", "")).resolve()): line for line in lines}
    return by_path, proc.stderr.decode(errors="replace"), proc.returncode, wall


@contextlib.contextmanager
def no_network() -> Iterator[None]:
    """Any connection attempted in the block fails (pdf2doi must stay offline)."""
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("network access refused by bench/eval/printed_dois.py")
    with (mock.patch.object(socket.socket, "connect", refuse),
          mock.patch.object(socket.socket, "connect_ex", refuse),
          mock.patch.object(socket, "create_connection", refuse)):
        yield


def load_pdf2doi(extra: Path | None) -> tuple[Any, str]:
    """pdf2doi set up offline, and its version; (None, why) when it is not there."""
    if extra is not None:
        sys.path.append(str(extra))
    try:
        with warnings.catch_warnings():  # its PyMuPDF warns of its own `fitz` name
            warnings.simplefilter("ignore", FutureWarning)
            import pdf2doi  # type: ignore[import-not-found]
    except ImportError as e:
        return None, f"pdf2doi not installed ({e})"
    from importlib.metadata import PackageNotFoundError, version
    try:
        v = version("pdf2doi")
    except PackageNotFoundError:
        v = "?"
    # pdf2doi 1.x: module-wide settings, no keyword arguments on pdf2doi()
    config = pdf2doi.config
    config.set("verbose", False)
    config.set("webvalidation", False)  # a DOI is checked by its pattern, not at doi.org
    config.set("websearch", False)  # no Google search by title or first characters
    config.set("save_identifier_metadata", False)  # the files are left as they are
    config.set("replace_arxivID_by_DOI_when_available", False)  # no arXiv look-up
    return pdf2doi, v


def run_pdf2doi(module: Any, path: Path) -> tuple[str | None, str]:
    """pdf2doi's DOI for ``path`` (None for none or for an arXiv id) and its method."""
    with no_network():
        try:
            result = module.pdf2doi(str(path))
        except OSError as e:
            return None, f"error: {e}"
    if not result or not result.get("identifier"):
        return None, "-"
    if str(result.get("identifier_type", "")).lower() != "doi":
        return None, f"{result.get('identifier_type')} {result.get('identifier')}"
    return str(result["identifier"]), str(result.get("method", ""))


# --- printing ------------------------------------------------------------------------------


def print_figures(name: str, f: Figures, placements_: Sequence[Placement]) -> None:
    ok = f.share >= GOAL_FOUND
    print(f"   {name}:")
    print(f"     own DOI printed, found right: {f.printed_right} of {f.printed} = "
          f"{f.share:.1%} (goal >= {GOAL_FOUND:.0%}: {'met' if ok else 'NOT met'})")
    print(f"     wrong DOIs given: {f.wrong} of {len(placements_)} variants (goal 0: "
          f"{'met' if f.wrong == 0 else 'NOT met'})")
    print(f"     only cited works' DOIs printed, a DOI given: {f.cited_only_given} of "
          f"{f.cited_only} (goal 0)")
    print(f"     DOI only in the XMP metadata, found right: {f.metadata_only_right} of "
          f"{f.metadata_only}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", type=Path, default=None, metavar="DIR",
                        help="render the PDFs into DIR (and keep them) instead of a temp dir")
    parser.add_argument("-j", "--jobs", type=int, default=2, metavar="N",
                        help="-j for sandcrawler extract (default: 2)")
    add_extract_options(parser)
    parser.add_argument("--chromium", default=CHROMIUM, metavar="PATH",
                        help=f"the Chromium that typesets the PDFs (default: {CHROMIUM})")
    parser.add_argument("--only", nargs="+", default=None, metavar="NAME",
                        help="only these variants")
    parser.add_argument("--pdf2doi-path", type=Path, default=None, metavar="DIR",
                        help="a directory pdf2doi was pip-installed into with --target")
    args = parser.parse_args()

    chromium = shutil.which(args.chromium)
    if not chromium:
        skip(f"no Chromium at {args.chromium} to typeset the test articles")
    variants = [p for p in placements() if not args.only or p.name in args.only]
    if not variants:
        sys.exit(f"no variant named {', '.join(args.only or [])}")
    command = resolve_command(args.command)
    options = shlex.split(args.options)
    print_header(f"the document's own DOI wherever the first page prints it: {len(variants)} "
                 f"variants typeset by {chromium}, sandcrawler extract --header-only "
                 f"-j {args.jobs} {args.options}".rstrip())
    pdf2doi, about = load_pdf2doi(args.pdf2doi_path)
    print(f"   pdf2doi {about}, offline" if pdf2doi else f"   {about}: its column is left out")

    with tempfile.TemporaryDirectory(prefix="sandcrawler-bench-") as tmp:
        where = args.keep or Path(tmp) / "pdfs"
        where.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        paths = [p.render(where, chromium) for p in variants]
        print(f"   rendered {len(paths)} PDFs into {where} in {time.perf_counter() - t0:.1f} s")
        lines, stderr, code, wall = run_extract(command, options, paths, args.jobs, Path(tmp))
        shown = " ".join([*command, "extract", "--header-only", "-j", str(args.jobs),
                          args.options]).strip()
        print(f"   {shown}: exit {code}, {len(lines)} lines, wall {wall:.1f} s")
        if code != 0:
            print("   its stderr ends:\n     " + "\n     ".join(stderr.strip().splitlines()[-10:]))
        if code != 0 and not lines:
            sys.exit(f"sandcrawler extract failed (exit {code}) and gave no line")
        theirs: dict[str, tuple[str | None, str]] = {}
        if pdf2doi:
            t0 = time.perf_counter()
            theirs = {p.name: run_pdf2doi(pdf2doi, path) for p, path in zip(variants, paths,
                                                                            strict=True)}
            print(f"   pdf2doi: {time.perf_counter() - t0:.1f} s")

    ours, other = Figures(), Figures()
    print("-- per variant (expected | sandcrawler: given, verdict"
          + (" | pdf2doi: given, verdict, method)" if pdf2doi else ")"))
    for p, path in zip(variants, paths, strict=True):
        line = lines.get(str(path.resolve())) or {}
        status = line.get("status", "(no line)")
        v = judge(p.expected, (line.get("header") or {}).get("doi"))
        ours.add(p, v)
        row = (f"   {p.name:20} {p.expected or '(none)':46} | {v.given or '-':46} "
               f"{v.verdict:6}")
        if status != "success":
            row += f" [{status}: {line.get('error', '')}]"
        if pdf2doi:
            doi, method = theirs[p.name]
            w = judge(p.expected, doi)
            other.add(p, w)
            row += f" | {w.given or '-':46} {w.verdict:6} {method}"
        print(row)
    print("-- what each variant prints")
    for p in variants:
        print(f"   {p.name:20} {p.description}")
    print("-- overall")
    print_figures("sandcrawler extract --header-only", ours, variants)
    if pdf2doi:
        print_figures(f"pdf2doi {about}, offline", other, variants)


if __name__ == "__main__":
    main()
