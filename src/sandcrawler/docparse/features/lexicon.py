"""The word lists GROBID's feature vectors look words up in (common words, names,
locations), shipped as package data (sources in lexicons/SOURCES.md), and how
to rebuild them from GROBID's tree: ``python -m
sandcrawler.docparse.features.lexicon GROBID_DIR GROBID_GIT_DIR``. What each
list holds: docs/extraction.md, "Notes by module".
"""

from __future__ import annotations

import gzip
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

_MONTH_NAMES = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
)  # fmt: skip
#: GROBID's month names and their three-letter abbreviations (``FeatureFactory.MONTHS``)
MONTHS = frozenset(_MONTH_NAMES) | {m[:3] for m in _MONTH_NAMES}

_FILES = {
    "dictionary": "dictionary.txt.gz",
    "names": "names.txt.gz",
    "locations": "locations.txt.gz",
}
# the column of GROBID's header feature files that is the location flag, and
# their width (docs/extraction.md)
_HEADER_LOCATION_COLUMN = 24
_HEADER_COLUMNS = 32


@dataclass(frozen=True, slots=True)
class Lexicon:
    dictionary: frozenset[str]
    names: frozenset[str]
    locations: frozenset[str]

    def common(self, word: str) -> bool:
        """GROBID's ``test_common``: the lower-cased word, without one final
        ``. , : ;``, is a dictionary word; a word with a hyphen (or a space) is
        one when both its halves around the first one are."""
        s = word.strip().lower()
        if not s:
            return False
        if s[-1] in ".,:;":
            s = s[:-1]
        cut = s.find("-")
        if cut == -1:
            cut = s.find(" ")
        if cut != -1:
            return s[:cut] in self.dictionary and s[cut + 1 :] in self.dictionary
        return s in self.dictionary

    def name(self, word: str) -> bool:
        """GROBID's ``test_names``: a known first or last name."""
        return word.lower() in self.names


@cache
def default_lexicon() -> Lexicon:
    """The shipped lists (read once per process)."""
    return Lexicon(**{key: frozenset(_read(name)) for key, name in _FILES.items()})


def _read(name: str) -> list[str]:
    data = resources.files("sandcrawler.docparse").joinpath("lexicons", name).read_bytes()
    return gzip.decompress(data).decode("utf-8").splitlines()


# building the lists from GROBID's repository ----------------------------------


def dictionary_words(english_wf: bytes) -> set[str]:
    """The lower-case word forms of GROBID's ``english.wf`` (a word form, a tab,
    its lemma and tag, a line each). GROBID reads it as UTF-8; its few Latin-1
    bytes become U+FFFD there too, so such words never match."""
    words = set()
    for line in _lines(english_wf):
        # GROBID's tokenizer skips empty fields: a leading tab is no word
        word = next((f for f in line.split("\t") if f), "")
        if word and word == word.lower():
            words.add(word)
    return words


def _lines(data: bytes) -> list[str]:
    # Java's readLine: lines end at \n, \r or \r\n, nothing else
    return re.split(r"\r\n|\r|\n", data.decode("utf-8", "replace"))


def name_words(files: Iterable[bytes]) -> set[str]:
    """The names of GROBID's name lists: each line's first field, cut at a tab
    or a hyphen, lower-cased."""
    names = set()
    for data in files:
        for line in _lines(data):
            for part in line.replace("-", "\t").split("\t"):
                if part:
                    names.add(part.lower().strip())
                    break
    return names


def location_words(raw_files: Iterable[Path]) -> set[str]:
    """Words that GROBID's header feature files flag as a location at every
    one of their occurrences, lower-cased. A word flagged only some of the
    time is a piece of a longer place name ("new" in "New York"), or
    punctuation inside one; those are left out."""
    seen: Counter[str] = Counter()
    flagged: Counter[str] = Counter()
    for path in raw_files:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            cols = line.split(" ")
            if len(cols) != _HEADER_COLUMNS:
                continue
            word = cols[0].lower()
            seen[word] += 1
            if cols[_HEADER_LOCATION_COLUMN] == "1":
                flagged[word] += 1
    return {w for w, n in flagged.items() if n == seen[w]}


def header_raw_files(grobid_dir: Path) -> list[Path]:
    """GROBID's header feature files: its corpus and its evaluation set."""
    base = grobid_dir / "grobid-trainer" / "resources" / "dataset" / "header"
    return sorted((base / "corpus" / "raw").glob("*")) + sorted(
        (base / "evaluation" / "raw").glob("*")
    )


def _git_show(git_dir: Path, path: str) -> bytes:
    return subprocess.run(
        ["git", "-C", str(git_dir), "show", f"HEAD:{path}"],
        check=True,
        capture_output=True,
    ).stdout


def build(grobid_dir: Path, git_dir: Path, out_dir: Path) -> dict[str, int]:
    """Write the three lists into ``out_dir``; how many words each has."""
    lexicon = "grobid-home/lexicon/"
    lists = {
        "dictionary": dictionary_words(_git_show(git_dir, lexicon + "wordforms/english.wf")),
        "names": name_words(
            _git_show(git_dir, lexicon + "names/" + name)
            for name in (
                "names.female",
                "names.male",
                "firstname.5k",
                "names.family",
                "lastname.5k",
            )
        ),
        "locations": location_words(header_raw_files(grobid_dir)),
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    for key, words in lists.items():
        text = "\n".join(sorted(words)) + "\n"
        # mtime 0: the same lists give the same bytes
        (out_dir / _FILES[key]).write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
    return {key: len(words) for key, words in lists.items()}


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python -m sandcrawler.docparse.features.lexicon GROBID_DIR GROBID_GIT_DIR")
    here = Path(__file__).resolve().parent / "lexicons"
    print(build(Path(sys.argv[1]), Path(sys.argv[2]), here))
