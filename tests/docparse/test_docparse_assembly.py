"""The cascade's assembly, without its models: labelled tokens to a header
biblio, to reference strings, text with broken words rejoined, the TEI written
and read back by what reads GROBID's, and the pages a long PDF is read at."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import grobid_tei_xml
from grobid_tei_xml.types import GrobidAddress, GrobidAffiliation, GrobidAuthor, GrobidBiblio

from sandcrawler.docparse.assembly.cascade import cascade, page_ranges
from sandcrawler.docparse.assembly.header import LinkedAffiliation, LinkedAuthor, build_header
from sandcrawler.docparse.assembly.references import reference_strings
from sandcrawler.docparse.assembly.tei import TeiOptions, extraction_tei
from sandcrawler.docparse.layout.elements import Token
from sandcrawler.docparse.layout.text import join_tokens
from sandcrawler.records.extraction import Extraction
from sandcrawler.records.statuses import ExtractStatus
from sandcrawler.refs.reading import refs_from_tei


def _tokens(*lines: str, page: int = 0) -> list[Token]:
    """Tokens of lines of text (words and punctuation apart, as GROBID's), one
    line under the other."""
    out = []
    for n, line in enumerate(lines):
        x = 72.0
        words = line.split(" ")
        for w, word in enumerate(words):
            parts = [p for p in _split(word) if p]
            for i, part in enumerate(parts):
                last = i == len(parts) - 1
                out.append(Token(part, "Times", 10.0, False, False, x, 100.0 + 12 * n,
                                 6.0 * len(part), 10.0, page,
                                 space_after=last and w < len(words) - 1))
                x += 6.0 * len(part) + (3.0 if last else 0.0)
    return out


def _split(word: str) -> list[str]:
    parts, current = [], ""
    for ch in word:
        if ch.isalnum():
            current += ch
        else:
            parts += [current, ch]
            current = ""
    return [*parts, current]


def _labelled(*fields: tuple[str, str]) -> tuple[list[Token], list[str]]:
    """(label, text) fields, one line each -> tokens, and labels with GROBID's I-
    mark on each field's first token; a label ending in "+" continues the field
    before it on a new line."""
    tokens = _tokens(*(text for _, text in fields))
    labels: list[str] = []
    line_of = [int((t.y - 100.0) / 12) for t in tokens]
    for n, (label, _) in enumerate(fields):
        count = line_of.count(n)
        name = label.rstrip("+")
        first = name if label.endswith("+") else f"I-{name}"
        labels += [first] + [name] * (count - 1)
    return tokens, labels


def test_join_tokens_rejoins_a_word_broken_across_lines() -> None:
    tokens = _tokens("DNA methyl-", "ation modulates cell-", "Type occupancy")
    assert join_tokens(tokens) == "DNA methylation modulates cell- Type occupancy"


def test_join_tokens_keeps_spacing_of_punctuation() -> None:
    assert join_tokens(_tokens("Smith, J. (2001). A title.")) == "Smith, J. (2001). A title."


@dataclass
class _Models:
    """Name and affiliation models answering from a table."""

    def authors(self, text: str) -> list[LinkedAuthor]:
        out = []
        for part in text.split(" and "):
            *given, last = part.replace("1", "").replace("2", "").split()
            markers = [m for m in ("1", "2") if m in part]
            out.append(LinkedAuthor(GrobidAuthor(full_name=" ".join([*given, last]),
                                                 given_name=" ".join(given), surname=last),
                                    markers))
        return out

    def affiliations(self, text: str) -> list[LinkedAffiliation]:
        marker, _, rest = text.partition(" ")
        return [LinkedAffiliation(GrobidAffiliation(institution=rest.split(",")[0],
                                                    address=GrobidAddress(country="USA")),
                                  marker)]


def _journal_line(text: str) -> GrobidBiblio:
    return GrobidBiblio(authors=[], journal="eLife", volume="3", first_page="e01234",
                        date="2099")


def test_build_header_fields_authors_affiliations_and_journal_line() -> None:
    tokens, labels = _labelled(
        ("<reference>", "eLife 2014;3:e01234"), ("<title>", "A Title of"),
        ("<title>+", "Things"), ("<author>", "Ann Lee 1 and Bo Chan 2"),
        ("<affiliation>", "1 Alpha University, Seattle"),
        ("<affiliation>", "2 Beta Institute, Boston"), ("<date>", "Received 12 March 2014"),
        ("<pubnum>", "doi: 10.7554/eLife.01234"), ("<abstract>", "Abstract We show things."),
        ("<keyword>", "Keywords: DNA; CTCF"))
    header = build_header(tokens, labels, _Models(), _journal_line)
    b = header.biblio
    assert b.title == "A Title of Things"
    assert [a.full_name for a in b.authors] == ["Ann Lee", "Bo Chan"]
    assert [a.affiliation.institution if a.affiliation else None for a in b.authors] == \
        ["Alpha University", "Beta Institute"]
    assert b.date == "2014-03-12"  # the header's date, not the journal line's
    assert b.doi == "10.7554/eLife.01234"
    assert (b.journal, b.volume, b.first_page) == ("eLife", "3", "e01234")
    assert header.abstract == "We show things."
    assert header.keywords == ["DNA", "CTCF"]


def test_build_header_without_fields_is_empty_not_an_error() -> None:
    tokens = _tokens("Some running text")
    header = build_header(tokens, ["<other>"] * len(tokens), _Models(), _journal_line)
    assert header.biblio.title is None and header.biblio.authors == []
    assert header.abstract is None and header.keywords == []


def test_a_name_printed_again_is_one_author() -> None:
    tokens, labels = _labelled(("<author>", "Roberto Castro and Agustín Ruíz"),
                               ("<other>", "Correspondence:"),
                               ("<author>", "Roberto Castro"))
    header = build_header(tokens, labels, _Models(), _journal_line)
    assert [a.surname for a in header.biblio.authors] == ["Castro", "Ruíz"]


def test_a_long_name_printed_again_is_one_author_though_the_model_cuts_it() -> None:
    """Rev Saúde Pública 38 (shared data, pt-rsp-38-1-18446): the corresponding
    author's name alone, which the name model reads as two persons."""
    tokens, labels = _labelled(
        ("<author>", "Roseli Mieko Yamamoto Nomura, Eliane Aparecida Alves e Marcelo Zugaib"),
        ("<other>", "Correspondência:"), ("<author>", "Roseli Mieko Yamamoto Nomura"))
    header = build_header(tokens, labels, cascade(), _journal_line)
    assert [a.surname for a in header.biblio.authors] == ["Nomura", "Alves", "Zugaib"]


def test_one_affiliation_without_markers_is_everyones() -> None:
    tokens, labels = _labelled(("<author>", "Ann Lee and Bo Chan"),
                               ("<affiliation>", "X Gamma College, Paris"))
    b = build_header(tokens, labels, _Models(), _journal_line).biblio
    assert {a.affiliation.institution if a.affiliation else None for a in b.authors} == \
        {"Gamma College"}


def test_reference_strings_split_at_each_reference_with_its_label() -> None:
    tokens, labels = _labelled(
        ("<other>", "References"), ("<label>", "[1]"), ("<reference>", "Smith J. A first title."),
        ("<reference>+", "Nature 2001;409:1-5."), ("<label>", "[2]"),
        ("<reference>", "Doe A. Second work on things. Cell 1999."), ("<other>", "12"))
    refs = reference_strings(tokens, labels)
    assert [(r.label, r.text) for r in refs] == [
        ("1", "Smith J. A first title. Nature 2001;409:1-5."),
        ("2", "Doe A. Second work on things. Cell 1999."),
    ]
    assert len(reference_strings(tokens, labels, limit=1)) == 1


def _zone(*lines: tuple[str, float, float, bool]) -> tuple[list[Token], list[str]]:
    """(text, x, y, starts a reference) lines of a references zone -> tokens and labels."""
    tokens: list[Token] = []
    labels: list[str] = []
    for text, x, y, starts in lines:
        words = text.split()
        for i, word in enumerate(words):
            tokens.append(Token(word, "Times", 9.0, False, False, x + 40.0 * i, y, 36.0,
                                9.0, 0, space_after=i < len(words) - 1))
            labels.append("I-<reference>" if starts and i == 0 else "<reference>")
    return tokens, labels


def _indented(*lines: tuple[str, float, bool]) -> tuple[list[Token], list[str]]:
    """(text, x, starts a reference) lines, one under the other."""
    return _zone(*((text, x, 100.0 + 12 * n, starts)
                   for n, (text, x, starts) in enumerate(lines)))


def test_a_hanging_indents_margin_starts_a_reference_the_model_ran_on() -> None:
    """Érudit's author-year list (fr-incantation, shared data): the model ran
    "Baudelaire (1868)" into the reference before it."""
    tokens, labels = _indented(
        ("Aragon, Louis (1970). Le mouvement perpétuel, précédé", 90.0, True),
        ("de Feu de joie. Paris, Gallimard.", 104.0, False),
        ("Baudelaire, Charles (1975). OEuvres complètes. Gallimard.", 90.0, True),
        ("Baudelaire, Charles (1868). Les fleurs du mal, précédées", 90.0, False),
        ("d'une notice de Théophile Gautier. Paris, Calmann-Lévy.", 104.0, False),
        ("Binet, Laurent (2015). La septième fonction du langage.", 90.0, True),
        ("Paris, Grasset.", 104.0, False))
    refs = [r.text for r in reference_strings(tokens, labels)]
    assert [r.split(" (")[0] for r in refs] == \
        ["Aragon, Louis", "Baudelaire, Charles", "Baudelaire, Charles", "Binet, Laurent"]


def test_lines_indented_the_other_way_are_left_to_the_model() -> None:
    """A first-line indent: the margin is where references go on, never start."""
    tokens, labels = _indented(
        ("Aragon, Louis (1970). Le mouvement perpétuel, précédé", 104.0, True),
        ("de Feu de joie. Paris, Gallimard.", 90.0, False),
        ("Baudelaire, Charles (1975). OEuvres complètes, tome premier,", 104.0, True),
        ("Gallimard, Paris.", 90.0, False),
        ("Binet, Laurent (2015). La septième fonction du langage.", 104.0, True),
        ("Paris, Grasset, second edition.", 90.0, False))
    assert len(reference_strings(tokens, labels)) == 3


def _spaced(*lines: tuple[str, float, bool]) -> tuple[list[Token], list[str]]:
    """(text, space before the line, starts a reference) lines at one margin."""
    ys = list(itertools.accumulate(space for _, space, _ in lines))
    return _zone(*((text, 72.0, 100.0 + y, starts)
                   for (text, _, starts), y in zip(lines, ys, strict=True)))


def test_references_set_apart_by_space_start_where_the_space_is() -> None:
    """An SSOAR paper (de-ssoar-22077, shared data): a blank line between
    references, the model starting one after a line's usual spacing and running
    three on."""
    tokens, labels = _spaced(
        ("AMS (1999), Berufslexikon 1, Wien.", 0.0, True),
        ("Bauer, Adelheid (1997), Geschlechtsspezifische Unterschiede im", 31.0, True),
        ("österreichischen Bildungswesen, S. 13-29.", 15.5, False),
        ("Biffl, Gudrun (1996), Ausbildung und Erwerbstätigkeit der Frauen.", 31.0, True),
        ("Erhebung nach nationaler und EU-Methode.", 15.5, False),
        ("Bundesministerium für Arbeit (1997), Information zum Bericht (IFA", 31.0, False),
        ("Bremen) und Stellungnahme.", 15.5, True),
        ("Europäische Kommission (1999), Jahresbericht der Kommission.", 31.0, False),
        ("Feigl, Susanne (1997), Frauen in Wien: Situationsbericht 1996,", 31.0, True),
        ("Zahlen, Fakten und Probleme.", 15.5, False),
        ("MA 57 für Frauenförderung (Hrsg.)", 15.5, False),
        ("Gross, Inge (1994), Die wirtschaftliche und soziale Rolle der Frau.", 31.0, True),
        ("Herausgegeben vom Bundesministerium.", 15.5, False),
        ("IBW (1999), Berufsreifeprüfung. Eine erste Evaluierung. Wien.", 31.0, True),
        ("Krüger, Helga (1992), Frauen und Bildung. Wege der Aneignung.", 31.0, True),
        ("Landler, Frank (1997), Das österreichische Bildungswesen in Zahlen.", 31.0, True),
        ("Lechner, Ferdinand (1999), Wiener Mädchenbericht. Wien.", 31.0, True),
        ("Leitner, Andrea (1998), Evaluation des Bildungskontos. Wien.", 31.0, True),
        ("OECD (1997), Thematic Review of the Transition. Paris.", 31.0, True))
    refs = [r.text for r in reference_strings(tokens, labels)]
    assert [r.split(" (")[0] for r in refs] == [
        "AMS", "Bauer, Adelheid", "Biffl, Gudrun", "Bundesministerium für Arbeit",
        "Europäische Kommission", "Feigl, Susanne", "Gross, Inge", "IBW", "Krüger, Helga",
        "Landler, Frank", "Lechner, Ferdinand", "Leitner, Andrea", "OECD"]
    assert refs[3].endswith("(IFA Bremen) und Stellungnahme.")


def test_evenly_spaced_references_are_left_to_the_model() -> None:
    tokens, labels = _spaced(
        ("AMS (1999), Berufslexikon 1, Wien.", 0.0, True),
        ("Bauer, Adelheid (1997), Geschlechtsspezifische Unterschiede im", 12.0, True),
        ("österreichischen Bildungswesen, S. 13-29.", 12.0, False),
        ("Biffl, Gudrun (1996), Ausbildung und Erwerbstätigkeit der Frauen.", 12.0, True),
        ("Bundesministerium für Arbeit (1997), Information zum Bericht (IFA", 12.0, False),
        ("Bremen) 1997, Graz.", 12.0, True),
        ("Gross, Inge (1994), Die wirtschaftliche und soziale Rolle der Frau.", 12.0, True))
    assert len(reference_strings(tokens, labels)) == 5


def test_a_running_foot_the_references_took_in_twice_is_dropped() -> None:
    foot = "Journal of Cosmology and Astroparticle Physics 10 (2008) 003"
    tokens, labels = _labelled(
        ("<reference>", "Räsänen S, 2004 J. Cosmol. Astropart. Phys. 11 010"),
        ("<reference>", foot), ("<reference>", "Krasiński A and Hellaby C, 2002 PRD 65"),
        ("<reference>", foot))
    assert [r.text for r in reference_strings(tokens, labels)] == [
        "Räsänen S, 2004 J. Cosmol. Astropart. Phys. 11 010",
        "Krasiński A and Hellaby C, 2002 PRD 65"]


def test_page_ranges_read_the_start_and_the_end_of_a_long_pdf() -> None:
    assert page_ranges(12, 100) == [(0, 11)]
    assert page_ranges(2000, 100) == [(0, 49), (1950, 1999)]
    assert page_ranges(101, 100) == [(0, 49), (51, 100)]


def test_extraction_tei_reads_back_as_grobid_tei() -> None:
    header = GrobidBiblio(
        authors=[GrobidAuthor(full_name="Ann Lee", given_name="Ann", surname="Lee",
                              affiliation=GrobidAffiliation(institution="Alpha University"))],
        title="A Title of Things", doi="10.7554/elife.01234", journal="eLife", volume="3",
        date="2014")
    refs = [GrobidBiblio(authors=[GrobidAuthor(full_name="J Smith", surname="Smith")],
                         title="A first title", journal="Nature", date="2001",
                         unstructured="Smith J. A first title. Nature 2001;409:1-5.",
                         volume="409", first_page="1", last_page="5")]
    found = Extraction(ExtractStatus.SUCCESS, header=header, abstract="We show <things> & more.",
                       keywords=["DNA"], references=refs)
    # the raw strings only when asked for (GROBID's includeRawCitations)
    assert b"raw_reference" not in extraction_tei(found)
    tei = extraction_tei(found, TeiOptions(raw_citations=True))
    doc = grobid_tei_xml.parse_document_xml(tei.decode())
    assert doc.header.title == "A Title of Things"
    assert doc.header.doi == "10.7554/elife.01234"
    assert doc.header.journal == "eLife"
    assert doc.header.authors[0].surname == "Lee"
    assert doc.header.authors[0].affiliation is not None
    assert doc.header.authors[0].affiliation.institution == "Alpha University"
    assert doc.abstract == "We show <things> & more."
    [ref] = refs_from_tei(tei)
    assert ref["unstructured"] == refs[0].unstructured
    assert (ref["title"], ref["journal"], ref["volume"], ref["first_page"]) == \
        ("A first title", "Nature", "409", "1")


def test_extraction_json_has_the_cli_contract() -> None:
    found = Extraction(ExtractStatus.SUCCESS,
                       header=GrobidBiblio(authors=[GrobidAuthor(full_name="Ann Lee")],
                                           title="T", doi="10.1/x"),
                       references=[GrobidBiblio(authors=[], unstructured="Ref one.")],
                       pages=3, pages_read=3, reader="pdfalto")
    line = found.to_json("a.pdf")
    assert line["path"] == "a.pdf" and line["status"] == "success"
    assert line["header"]["title"] == "T"
    assert line["header"]["authors"] == [{"full_name": "Ann Lee"}]
    assert [r["unstructured"] for r in line["references"]] == ["Ref one."]
    assert line["abstract"] is None
    assert line["pages"] == 3
