"""Realistic synthetic Crossref works, to pad a matching catalog to 10^4..10^6 records.

Deterministic (a seed gives the same works, byte for byte) and fast (orjson lines,
well over 50,000 works/s on one core). What makes them realistic:

- title words are drawn from the words of ~4,000 real Crossref titles (the works
  rebuilt from Crossref's reference-matching-evaluation, bench/build/match_works.py) with
  their observed frequencies, which follow Zipf's law; content words are glued by
  the function words and shapes of real titles ("X of Y in Z", "X: a Y study");
- surnames are the real authors' surnames of those works (they come from every
  continent), plus given names from many cultures;
- journals are the real container titles, each with an ISO 4-style abbreviation
  (``short-container-title``) made from a table of common title-word abbreviations;
- years 1950-2024 skewed to recent ones, volumes consistent with the year, pages,
  issues; types: journal articles, proceedings articles, book chapters, and a few
  figure components, errata and generic titles ("Editorial", "Introduction"); a share
  of journal articles are *sparse*, like records built from deposited references:
  title, first author's surname, abbreviated journal, volume and first page, no year.

Use as a module (``SynthWorks(seed).works(n)``) or a command:

  python bench/build/match_synth.py N [--seed 1] [--sparse 0.2] > works.jsonl
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import orjson
from match_works import INDEXED, container_of, rme_works, title_of

DOI_PREFIX = "10.5555"  # Crossref's test prefix: never a real work's DOI

FUNCTION_WORDS = frozenset(
    [
        "a", "an", "the", "of", "in", "on", "for", "and", "or", "with", "to", "from", "by", "at",
        "as", "its", "into", "via", "under", "between", "among", "during", "after", "before",
        "over", "about", "against", "within", "without", "through", "is", "are", "using", "based",
        "toward", "towards", "than", "vs", "de", "la", "le", "les", "des", "du", "et", "en", "el",
        "y",
    ])

SHAPES = [
    "{A} {B} of {C} {D}", "{A} of {B} {C} in {D} {E}", "{A} {B} and {C} {D}",
    "{A} {B} {C}: a {D} {E}", "The {A} of {B} {C} on {D} {E}", "{A} {B} in {C} {D} {E}",
    "{A} and {B} of {C} {D} with {E} {F}", "On the {A} {B} of {C} {D}",
    "{A} {B} {C} for {D} {E} {F}", "{A} {B} of {C}: {D} from {E} {F}",
    "Effect of {A} {B} on {C} {D} in {E}", "{A} {B} {C} {D} using {E} {F}",
]
ERRATUM_FORMS = [("Erratum: ", ""), ("Correction to: ", ""), ("Corrigendum to \u201c", "\u201d"),
                 ("Retraction notice to \u201c", "\u201d")]
GENERIC_TITLES = ["Editorial", "Introduction", "Reply", "Preface", "Foreword", "Book Reviews",
                  "Letter to the Editor", "Erratum", "Index", "Contents", "Obituary",
                  "Announcements", "In This Issue", "Correspondence", "Commentary"]

#: given names by culture; surnames come from the real works
GIVEN = {
    "en": [
        "James", "Mary", "John", "Patricia", "Robert", "Jennifer", "Michael", "Linda", "David",
        "Elizabeth", "Sarah", "Thomas", "Karen", "Daniel", "Nancy", "Matthew", "Laura", "Andrew",
        "Emily",
    ],
    "zh": [
        "Wei", "Fang", "Jing", "Lei", "Min", "Yan", "Jun", "Hui", "Ying", "Hao", "Xiaoming",
        "Lihua", "Jianguo", "Xiuying", "Zhiqiang", "Yifan", "Chen", "Qiang", "Ling", "Tao",
    ],
    "ja": [
        "Hiroshi", "Takashi", "Yuki", "Kenji", "Akiko", "Satoshi", "Naoko", "Haruto", "Yui",
        "Kazuo", "Tomoko", "Masahiro", "Keiko", "Daisuke", "Emi",
    ],
    "ko": ["Min-jun", "Seo-yeon", "Ji-hoon", "Ha-eun", "Dong-hyun", "Soo-jin", "Jae-won", "Eun-ji"],
    "in": [
        "Rajesh", "Priya", "Amit", "Sunita", "Arjun", "Kavya", "Vikram", "Lakshmi", "Sanjay",
        "Ananya", "Ravi", "Deepika",
    ],
    "ar": [
        "Mohammed", "Fatima", "Ahmed", "Aisha", "Omar", "Layla", "Youssef", "Mariam", "Hassan",
        "Nour",
    ],
    "es": [
        "José", "María", "Juan", "Carmen", "Luis", "Ana", "Carlos", "Lucía", "Javier", "Isabel",
        "Pablo", "Sofía", "João", "Francisca", "Tiago",
    ],
    "de": [
        "Jürgen", "Anna", "Klaus", "Ursula", "Stefan", "Katrin", "Matthias", "Birgit", "Jörg",
        "Sabine",
    ],
    "fr": [
        "Jean", "Marie", "Pierre", "Françoise", "Michel", "Hélène", "Éric", "Céline", "Amélie",
        "Luc",
    ],
    "ru": [
        "Sergei", "Olga", "Dmitry", "Natalia", "Alexei", "Irina", "Vladimir", "Tatiana", "Yuri",
        "Elena",
    ],
    "af": [
        "Chukwuemeka", "Ngozi", "Kwame", "Amina", "Oluwaseun", "Abebe", "Wanjiru", "Tendai", "Kofi",
    ],
    "tr": ["Mehmet", "Ayşe", "Mustafa", "Zeynep", "Emre", "Elif", "Can", "Şule"],
    "pl": ["Piotr", "Agnieszka", "Krzysztof", "Małgorzata", "Tomasz", "Katarzyna", "Łukasz"],
    "vi": ["Nguyễn", "Minh", "Thu", "Hương", "Quang", "Anh", "Đức"],
}

#: ISO 4-style abbreviations of frequent journal title words (first ones win; a word
#: absent here is kept whole, as ISO 4 keeps short words)
ABBREV = {
    "journal": "J", "international": "Int", "american": "Am", "european": "Eur",
    "british": "Br", "japanese": "Jpn", "chinese": "Chin", "review": "Rev", "reviews": "Rev",
    "research": "Res", "science": "Sci", "sciences": "Sci", "scientific": "Sci",
    "chemistry": "Chem", "chemical": "Chem", "physics": "Phys", "physical": "Phys",
    "biology": "Biol", "biological": "Biol", "biochemistry": "Biochem", "medicine": "Med",
    "medical": "Med", "clinical": "Clin", "engineering": "Eng", "applied": "Appl",
    "society": "Soc", "social": "Soc", "annals": "Ann", "proceedings": "Proc",
    "transactions": "Trans", "letters": "Lett", "materials": "Mater", "environmental": "Environ",
    "environment": "Environ", "molecular": "Mol", "technology": "Technol", "psychology": "Psychol",
    "education": "Educ", "economics": "Econ", "management": "Manag", "national": "Natl",
    "academy": "Acad", "communications": "Commun", "surgery": "Surg", "experimental": "Exp",
    "therapy": "Ther", "pharmacology": "Pharmacol", "computer": "Comput", "computing": "Comput",
    "mathematics": "Math", "mathematical": "Math", "statistics": "Stat", "bulletin": "Bull",
    "quarterly": "Q", "history": "Hist", "studies": "Stud", "analysis": "Anal",
    "development": "Dev", "nursing": "Nurs", "health": "Health", "public": "Public",
    "association": "Assoc", "geology": "Geol", "geophysical": "Geophys", "agricultural": "Agric",
    "nutrition": "Nutr", "veterinary": "Vet", "dental": "Dent", "neurology": "Neurol",
    "psychiatry": "Psychiatry", "cardiology": "Cardiol", "oncology": "Oncol", "cancer": "Cancer",
    "microbiology": "Microbiol", "immunology": "Immunol", "ecology": "Ecol", "genetics": "Genet",
    "electrical": "Electr", "electronics": "Electron", "mechanical": "Mech", "energy": "Energy",
    "information": "Inf", "systems": "Syst", "advances": "Adv", "archives": "Arch",
    "canadian": "Can", "australian": "Aust", "german": "Ger", "french": "Fr",
    "industrial": "Ind", "polymer": "Polym", "letter": "Lett", "philosophical": "Philos",
    "magazine": "Mag", "current": "Curr", "structural": "Struct", "organic": "Org",
    "inorganic": "Inorg", "theoretical": "Theor", "nuclear": "Nucl", "optics": "Opt",
    "optical": "Opt", "technical": "Tech", "world": "World", "pediatrics": "Pediatr",
    "obstetrics": "Obstet", "gynecology": "Gynecol", "radiology": "Radiol",
    "pathology": "Pathol", "physiology": "Physiol", "anatomy": "Anat", "zoology": "Zool",
    "botany": "Bot", "plant": "Plant", "animal": "Anim", "food": "Food", "water": "Water",
}
_DROP = frozenset([
    "of", "the", "and", "for", "in", "on", "de", "la", "des", "der", "die", "und", "a", "an", "&",
])
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]+")


def abbreviate_journal(name: str, dots: bool = True) -> str:
    """"Journal of Biological Chemistry" -> "J. Biol. Chem." (or "J Biol Chem")."""
    out = []
    for word in name.replace(":", " ").split():
        low = word.lower().strip(",.")
        if low in _DROP or not low:
            continue
        abbr = ABBREV.get(low)
        if abbr is None:
            out.append(word.strip(",."))
        elif abbr == word.strip(",.") or len(abbr) == len(low):
            out.append(abbr)
        else:
            out.append(abbr + ("." if dots else ""))
    return " ".join(out) or name


class SynthWorks:
    """A deterministic stream of synthetic Crossref works (bare work objects)."""

    def __init__(self, seed: int = 1, sparse: float = 0.2, prefix: str = DOI_PREFIX) -> None:
        self.seed = seed
        self.sparse = sparse
        self.prefix = prefix
        kept, out, _ = rme_works()
        real = kept + out
        words: Counter[str] = Counter()
        surnames: set[str] = set()
        journals: set[str] = set()
        for work in real:
            title = title_of(work)
            if title:
                words.update(w.lower() for w in _WORD.findall(title)
                             if w.lower() not in FUNCTION_WORDS and len(w) > 2)
            surnames.update(a["family"] for a in work.get("author") or [] if a.get("family"))
            c = container_of(work)
            if c and work["type"] == "journal-article":
                journals.add(c)
        # each word as often as it was seen: a uniform pick is a pick by frequency
        self.vocab = [w for w, c in words.most_common() for _ in range(c)]
        self.surnames = sorted(surnames)
        self.journals = [(j, abbreviate_journal(j)) for j in sorted(journals)]
        self.cultures = sorted(GIVEN)

    # random() and an index rather than choice()/randint(): a third of the time
    def _title(self, rnd: Callable[[], float]) -> str:
        vocab, n = self.vocab, len(self.vocab)
        w = [vocab[int(rnd() * n)] for _ in range(6)]
        return SHAPES[int(rnd() * len(SHAPES))].format(
            A=w[0].capitalize(), B=w[1], C=w[2], D=w[3], E=w[4], F=w[5])

    def _authors(self, rng: random.Random) -> list[dict[str, str]]:
        rnd = rng.random
        n = min(1 + int(rng.expovariate(0.45)), 12)
        given = GIVEN[self.cultures[int(rnd() * len(self.cultures))]]
        surnames, ns, ng = self.surnames, len(self.surnames), len(given)
        out = []
        for i in range(n):
            g = given[int(rnd() * ng)]
            out.append({"given": g if rnd() < 0.6 else g[0] + ".",
                        "family": surnames[int(rnd() * ns)],
                        "sequence": "first" if i == 0 else "additional"})
        return out

    def works(self, n: int, start: int = 0) -> Iterator[dict[str, Any]]:
        rng = random.Random(f"{self.seed}:{start}")
        rnd = rng.random
        journals, nj = self.journals, len(self.journals)
        last_title = "Editorial"
        for i in range(start, start + n):
            doi = f"{self.prefix}/synth.{self.seed}.{i}"
            journal, abbr = journals[int(rnd() * nj)]
            # most works are recent (exponential back from 2024), a fifth spread wider
            if rnd() < 0.2:
                year = 1950 + int(rnd() * 75)
            else:
                year = max(1900, 2024 - int(rng.expovariate(0.08)))
            volume = str(max(1, year - 1950 + int(rnd() * 70) - 30))
            first = 1 + int(rnd() * 3000)
            last = first + int(rnd() * 26)
            kind = rnd()
            work: dict[str, Any] = {"DOI": doi, "indexed": INDEXED, "type": "journal-article"}
            if kind < 0.015:
                # a figure of the previous work: same title, a component DOI
                fig = 1 + int(rnd() * 9)
                work.update(type="component", title=[last_title],
                            DOI=f"{self.prefix}/synth.{self.seed}.{i - 1}.g{fig:03d}")
                yield work
                continue
            if kind < 0.025:
                prefix, suffix = ERRATUM_FORMS[int(rnd() * len(ERRATUM_FORMS))]
                title = prefix + last_title + suffix
            elif kind < 0.04:
                title = GENERIC_TITLES[int(rnd() * len(GENERIC_TITLES))]
            else:
                title = self._title(rnd)
            authors = self._authors(rng)
            if kind >= 0.04 and rnd() < self.sparse:
                # a record built from a deposited reference: no year, surname only
                work.update(title=[title], author=[{"family": authors[0]["family"],
                                                    "sequence": "first"}],
                            **{"short-container-title": [abbr]}, volume=volume,
                            page=str(first))
                yield work
                continue
            r = rnd()
            if r < 0.05:
                work["type"] = "proceedings-article"
                journal = f"Proceedings of the {year} {journal} Conference"
                abbr = f"Proc. {year} {abbr} Conf."
            elif r < 0.1:
                work["type"] = "book-chapter"
            work.update(
                title=[title], author=authors,
                issued={"date-parts": [[year, 1 + int(rnd() * 12)]]},
                **{"container-title": [journal], "short-container-title": [abbr]},
                volume=volume, issue=str(1 + int(rnd() * 12)), page=f"{first}-{last}",
            )
            if kind >= 0.04:
                last_title = title  # an erratum's or a component's title is its article's
            yield work

    def lines(self, n: int, start: int = 0) -> Iterator[bytes]:
        for work in self.works(n, start):
            yield orjson.dumps(work) + b"\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("n", type=int)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sparse", type=float, default=0.2,
                        help="share of journal articles that are sparse records")
    args = parser.parse_args()
    gen = SynthWorks(args.seed, args.sparse)
    t0 = time.perf_counter()
    out = sys.stdout.buffer
    for line in gen.lines(args.n):
        out.write(line)
    dt = time.perf_counter() - t0
    print(f"{args.n:,} works in {dt:.2f} s ({args.n / dt:,.0f} works/s)", file=sys.stderr)


if __name__ == "__main__":
    main()
